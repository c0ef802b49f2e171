package dev.rlmeta;

/**
 * The byte codes {@link MetadataStore#apply} returns, one per record: what replaying it did. The
 * table is the core's ({@code rlmeta::host::outcome}); the numbers never change.
 */
public final class Outcome {
    static {
        NativeLoader.load();
    }

    private Outcome() {}

    /** Kafka's cache applied the record. */
    public static final byte APPLIED = 0;
    /** An update whose segment record is missing, kept as an orphan (for deletion retries). */
    public static final byte ORPHANED = 1;
    /** Applied, but the record's key does not belong to its value. */
    public static final byte APPLIED_WITH_BAD_KEY = 2;
    /** A null value: a KIP-1266 tombstone. */
    public static final byte TOMBSTONE = 3;
    /** A value that does not decode, or that Kafka's object checks refuse. */
    public static final byte UNDECODABLE = 4;
    /** A snapshot record (api key 3). */
    public static final byte SNAPSHOT_RECORD = 5;
    /**
     * A key that is neither null nor a KIP-1266 key of its value. {@code apply} itself reports a bad
     * key as {@link #APPLIED_WITH_BAD_KEY}, or not at all when the value did not apply.
     */
    public static final byte BAD_KEY = 6;
    /** Kafka's cache logged and dropped the event (an illegal state transition). */
    public static final byte DROPPED = 7;
    /** The record's user partition was deleted by DELETE_PARTITION_FINISHED. */
    public static final byte PARTITION_DELETED = 8;
    /** Not after the last record applied for its user partition (a re-delivery). */
    public static final byte ALREADY_APPLIED = 9;
    /** The level record of {@code remote.log.metadata.version}, carrying level 0. */
    public static final byte LEVEL_0 = 10;
    /** The level record, carrying level 1. */
    public static final byte LEVEL_1 = 11;
    /** The level record, carrying level 2. */
    public static final byte LEVEL_2 = 12;
    /** The level record, carrying no valid level. */
    public static final byte LEVEL_INVALID = 13;
    /**
     * Kafka's cache throws on the event (an update to COPY_SEGMENT_STARTED, a segment record in
     * another state): nothing applied; it stops a stock broker's metadata consumer.
     */
    public static final byte REJECTED = 14;

    /** How many codes there are: every code is in {@code 0 .. COUNT - 1} (the core's table). */
    public static final int COUNT = nativeMax() + 1;

    /**
     * The stable name of an outcome code in the core's table ("applied", "tombstone", ...), or
     * null for a code that names no outcome. Hosts count, log and dump outcomes by these names.
     */
    public static String name(byte code) {
        return nativeName(code);
    }

    /** Whether a record with this outcome would have stopped a stock (pre-KIP-1266) broker's consumer. */
    public static boolean fatalToKafka(byte code) {
        return nativeFatalToKafka(code);
    }

    private static native boolean nativeFatalToKafka(int code);
    private static native String nativeName(int code);
    private static native int nativeMax();
}
