package dev.rlmeta.interop.diff;

import org.apache.kafka.common.TopicIdPartition;

/**
 * One event of a replay vector (vectors README §5): a record of the metadata partition (key
 * and/or value may be null; a null value is a tombstone) or a markInitialized of a user partition.
 */
final class Ev {
    /** Non-null for markInitialized events; then key/value/offset are unused. */
    final TopicIdPartition mark;
    final String key;
    final byte[] value;
    final long offset;

    private Ev(TopicIdPartition mark, String key, byte[] value, long offset) {
        this.mark = mark;
        this.key = key;
        this.value = value;
        this.offset = offset;
    }

    static Ev record(String key, byte[] value, long offset) {
        return new Ev(null, key, value, offset);
    }

    static Ev markInitialized(TopicIdPartition tp) {
        return new Ev(tp, null, null, -1);
    }

    boolean isMark() {
        return mark != null;
    }

    boolean isTombstone() {
        return mark == null && value == null;
    }
}
