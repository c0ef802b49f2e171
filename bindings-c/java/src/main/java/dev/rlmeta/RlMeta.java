package dev.rlmeta;

/**
 * rlmeta: Apache Kafka's tiered-storage metadata (the records of {@code __remote_log_metadata}).
 *
 * <p>Every method calls the native rlmeta core. Failures throw an {@link RlMetaException} (the
 * subclass of its kind, with the same error codes as every other rlmeta binding); a null argument
 * throws a {@link NullPointerException}. Records cross as JSON text
 * {@code {"apiKey": .., "version": .., "record": {..}}} with 64-bit numbers as exact JSON numbers.
 *
 * <p>The native library is loaded when this class initialises; see {@link NativeLoader} for the
 * system properties {@code rlmeta.library.path} and {@code rlmeta.extract.dir}.
 */
public final class RlMeta {
    static {
        NativeLoader.load();
    }

    private RlMeta() {}

    /**
     * The native library this class loaded, for a host's log: e.g.
     * {@code "dev/rlmeta/native/linux-aarch64/librlmeta_c-0.1.0.so (os.arch aarch64) from /tmp/..."}
     * for the library of the jar, or {@code "-Drlmeta.library.path /path"}.
     */
    public static String nativeLibrary() {
        return NativeLoader.origin();
    }

    /** The version of the native core, e.g. {@code "0.1.0"}. */
    public static native String version();

    /** Decodes a record value into its JSON document. */
    public static native String decodeValueJson(byte[] value);

    /** Encodes a JSON document (as {@link #decodeValueJson} gives) into the record value bytes. */
    public static native byte[] encodeValueJson(String json);

    /** The KIP-1266 key text of these fields ({@code update} adds {@code :UPDATE}). */
    public static native String keyFormat(
            String topicId, String topic, int partition, long endOffset, int brokerLeaderEpoch, boolean update);

    /** Parses KIP-1266 key text. Only canonical keys parse. */
    public static native RecordKey keyParse(String key);

    /** Parses a KIP-1266 key as read from a record (UTF-8 bytes). */
    public static native RecordKey keyParseBytes(byte[] key);

    /** The KIP-1266 key text that a record value is written under. */
    public static native String keyForValue(byte[] value);

    /** The partition of {@code __remote_log_metadata} (0 .. numPartitions-1) holding a user partition. */
    public static native int metadataPartition(String topicId, int partition, int numPartitions);

    /**
     * The level (0, 1 or 2) writes to one metadata partition use, or -1 while it is unknown (core
     * {@code feature::write_level}, the rule the migration tool reads the topic's level with):
     * {@code finalized} is the cluster's finalized {@code remote.log.metadata.version} (-1: none
     * finalized, whether or not the brokers support it); {@code recordLevel} the partition's last
     * level record (-1: read to its end without one, -2: not read to its end);
     * {@code cleanupPolicy} the topic's policy, null when not read. A bad level or policy throws
     * {@link RlMetaException.InvalidArgument}.
     */
    public static native int writeLevel(int finalized, int recordLevel, String cleanupPolicy);

    /**
     * The configs to create a missing {@code __remote_log_metadata} with, as {@code [name, value,
     * ...]} (core {@code feature::fresh_topic_plan}): its level's configs for {@code finalized}
     * (-1: none finalized, the newest level), {@code retention.ms} only at level 0.
     */
    public static native String[] freshTopicConfigs(int finalized, long metadataTopicRetentionMs);

    /**
     * The level record value to write to every partition of a topic just created (core
     * {@code feature::fresh_topic_plan}), or null when the finalized feature carries the level.
     */
    public static native byte[] freshTopicLevelRecord(int finalized);

    /**
     * The error code of the kind of fault a Kafka exception text names, or 0 when it names none
     * that rlmeta distinguishes (used to compare rlmeta's errors with Kafka's).
     */
    public static native int errorKindForKafkaMessage(String text);

    /** Every error code of the core, in code order. */
    public static native int[] errorCodes();

    /** The stable name of an error code ({@code "truncated"}, ...), or null for an unknown code. */
    public static native String errorKindName(int code);
}
