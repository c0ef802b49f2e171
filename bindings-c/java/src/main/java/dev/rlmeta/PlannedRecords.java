package dev.rlmeta;

/**
 * The records the write planner asks the host to produce, in order: {@code keys[i]} is the UTF-8
 * KIP-1266 key text of record i, {@code values[i]} its value, or null for a tombstone.
 * Built by {@link MetadataStore#plan}.
 */
public final class PlannedRecords {
    /** UTF-8 KIP-1266 key text of each record. */
    public final byte[][] keys;
    /** The value of each record; a null entry is a tombstone. */
    public final byte[][] values;

    PlannedRecords(byte[][] keys, byte[][] values) {
        this.keys = keys;
        this.values = values;
    }

    /** The number of records. */
    public int size() {
        return keys.length;
    }
}
