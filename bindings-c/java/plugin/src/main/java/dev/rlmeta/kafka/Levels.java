package dev.rlmeta.kafka;

import java.util.Set;
import java.util.concurrent.atomic.AtomicLongArray;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.RlMeta;
import dev.rlmeta.RlMetaException;

/**
 * The feature level of each metadata partition, as the consumer reads it: the level records it
 * applied, the end offset it first saw (read to it with no level record: level 0), the cluster's
 * finalized feature and the topic's cleanup.policy, and the level writes use (the core's rule,
 * {@link RlMeta#writeLevel}). Everything here is under this object's lock.
 *
 * <p>It never decides a level itself (the core does) and never reads the topic or the cluster:
 * the consumer thread tells it what it read, the manager what the cluster said.
 */
final class Levels {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    static final int UNKNOWN_LEVEL = -1;

    private final String topic;
    private final int[] levels;           // per metadata partition: 0..2, or UNKNOWN_LEVEL
    private final long[] levelOffsets;
    private final boolean[] levelRecordSeen;
    private final long[] endAtFirstRead;  // per metadata partition: end offset when first assigned (-1: never)
    private final int[] writeLevels;      // per metadata partition: the level last used for writes, or -1
    private int finalizedLevel = -1;
    private String cleanupPolicy;         // of the metadata topic; null until read

    Levels(String topic, int numPartitions) {
        this.topic = topic;
        this.levels = new int[numPartitions];
        this.levelOffsets = new long[numPartitions];
        this.levelRecordSeen = new boolean[numPartitions];
        this.endAtFirstRead = new long[numPartitions];
        this.writeLevels = new int[numPartitions];
        java.util.Arrays.fill(writeLevels, UNKNOWN_LEVEL);
        java.util.Arrays.fill(levels, UNKNOWN_LEVEL);
        java.util.Arrays.fill(levelOffsets, -1);
        java.util.Arrays.fill(endAtFirstRead, -1);
    }

    /**
     * The level writes to a metadata partition use, or UNKNOWN_LEVEL: the core's rule
     * ({@link RlMeta#writeLevel}, the one the migration tool reads the level with) over what this
     * consumer read: the finalized feature, the partition's level record, the topic's cleanup.policy.
     */
    synchronized int level(int metadataPartition) {
        int mp = metadataPartition;
        int record = levels[mp] == UNKNOWN_LEVEL ? -2 : levelRecordSeen[mp] ? levels[mp] : -1;
        int level;
        try {
            level = RlMeta.writeLevel(finalizedLevel, record, cleanupPolicy);
        } catch (RlMetaException e) {
            log.warn("rlmeta: {}-{}: level unknown: {}", topic, mp, e.getMessage());
            return UNKNOWN_LEVEL;
        }
        if (level < 0) {
            return UNKNOWN_LEVEL;
        }
        if (level != writeLevels[mp]) {
            log.info("rlmeta: {}-{}: writes at remote.log.metadata.version level {} (was {}; level record {}, "
                    + "cleanup.policy {})", topic, mp, level, writeLevels[mp] < 0 ? "unknown" : writeLevels[mp],
                    levelRecordSeen[mp] ? levels[mp] : "none", cleanupPolicy);
            writeLevels[mp] = level;
        }
        return level;
    }

    /** The topic's cleanup.policy as last read from the cluster (null: not read yet, the level stays unknown). */
    synchronized void setCleanupPolicy(String policy) {
        if (policy != null && !policy.equals(cleanupPolicy)) {
            log.info("rlmeta: {} cleanup.policy is {} (was {})", topic, policy, cleanupPolicy == null ? "not read" : cleanupPolicy);
            cleanupPolicy = policy;
        }
    }

    /** The finalized feature level, or -1 where the cluster finalizes none (stock 4.4.0). */
    synchronized void setFinalizedLevel(int level) {
        if (level != finalizedLevel) {
            log.info("rlmeta: remote.log.metadata.version finalized by the cluster: {}", level < 0 ? "none" : level);
        }
        finalizedLevel = level;
    }

    /** A level record applied at `offset` of a metadata partition. */
    synchronized void setLevel(int mp, int level, long offset) {
        levelRecordSeen[mp] = true;
        if (levels[mp] != level) {
            log.info("rlmeta: {}-{}: remote.log.metadata.version level {} (level record at offset {})", topic, mp,
                    level, offset);
        }
        levels[mp] = level;
        levelOffsets[mp] = offset;
    }

    /** A metadata partition assigned with `end` its end offset: kept if it is the first time. */
    synchronized void assigned(int mp, Long end) {
        if (endAtFirstRead[mp] < 0) {
            endAtFirstRead[mp] = end;
        }
    }

    /**
     * A partition read to its first-seen end with no level record: level 0 (nobody migrated it).
     * True if some partition's level became known now.
     */
    synchronized boolean readToEnd(Set<Integer> assignedMeta, AtomicLongArray positions) {
        boolean changed = false;
        for (int p : assignedMeta) {
            if (levels[p] == UNKNOWN_LEVEL && !levelRecordSeen[p] && endAtFirstRead[p] >= 0
                    && positions.get(p) >= endAtFirstRead[p]) {
                levels[p] = 0;
                log.info("rlmeta: {}-{}: remote.log.metadata.version level 0 (read to offset {}, no level record)",
                        topic, p, endAtFirstRead[p]);
                changed = true;
            }
        }
        return changed;
    }

    /** The dump's fields (JSON, no braces): "finalizedLevel", "cleanupPolicy", "levels". */
    String json() {
        int finalized;
        String policy;
        int[] ls;
        synchronized (this) { // copied under the lock, written after it is released
            finalized = finalizedLevel;
            policy = cleanupPolicy;
            ls = levels.clone();
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\"finalizedLevel\":").append(finalized).append(",\"cleanupPolicy\":")
                .append(policy == null ? "null" : "\"" + policy + "\"").append(",\"levels\":[");
        for (int p = 0; p < ls.length; p++) {
            sb.append(p == 0 ? "" : ",").append(ls[p]);
        }
        return sb.append(']').toString();
    }
}
