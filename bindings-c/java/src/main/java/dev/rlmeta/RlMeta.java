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
     * The level (0, 1 or 2) of a metadata partition read to its end, on a cluster without the
     * finalized feature: the higher of its level record's ({@code recordLevel} 0..2, or -1 when it
     * holds none) and the level the topic's {@code cleanup.policy} implies ({@code delete}: 0,
     * {@code compact,delete} or {@code compact}: at least 1), since level 1's retention expires the
     * level records. An unknown policy or level throws {@link RlMetaException.InvalidArgument}.
     * A null {@code cleanupPolicy} (not known: reading topic configs may not be permitted) gives
     * the level where no policy could raise it (a level record of 1 or 2), else -1 (unknown).
     */
    public static native int partitionLevelWithPolicy(int recordLevel, String cleanupPolicy);

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
