package dev.rlmeta.kafka;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicIdPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.RlMetaException;

/**
 * The user partitions this broker holds, as Kafka tells the manager, and the store that holds
 * their metadata: which are loaded into the store, which are led here, the leader epoch Kafka used
 * for each led one, and the store itself (replaced whole by a rebuild, with every held partition
 * loaded again). {@link #lock} is held while the set of held partitions changes and while the
 * store is replaced, never by lookups.
 *
 * <p>It never reads the topic (the consumer does, told which partitions by the manager) and never
 * asks the cluster for an epoch.
 */
final class HeldPartitions {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);
    /** The core's "epoch not known" (Kafka's NO_PARTITION_LEADER_EPOCH). */
    static final int UNKNOWN_EPOCH = dev.rlmeta.Constants.UNKNOWN_EPOCH;

    /** Held while the set of held partitions changes, and while the store is replaced (never by lookups). */
    final Object lock = new Object();
    private final BooleanSupplier closed;
    private volatile MetadataStore store;
    final Set<TopicIdPartition> loaded = ConcurrentHashMap.newKeySet();
    // The leader epoch of partitions this broker leads, as Kafka uses it with this manager: stock
    // Kafka passes no epoch, but a new leader's copy task (RLMCopyTask, a new one per leadership)
    // asks highestOffsetForEpoch for the newest epoch of its leader-epoch cache, which is its own,
    // assigned on becoming leader (Partition.makeLeader), before its first copy
    // (findHighestRemoteOffset, 4.4.0 bytecode). The highest epoch asked since the partition became
    // led here is its epoch; none asked: unknown (the core refuses a copy, retriably).
    private final Map<TopicIdPartition, Integer> knownEpoch = new ConcurrentHashMap<>();
    private final Set<TopicIdPartition> leading = ConcurrentHashMap.newKeySet();

    HeldPartitions(BooleanSupplier closed) {
        this.closed = closed;
    }

    /** The store now (null before configure() and after close()). */
    MetadataStore store() {
        return store;
    }

    /** The first store (configure()). */
    void setStore(MetadataStore s) {
        store = s;
    }

    /** Whether this broker leads the partition. */
    boolean leading(TopicIdPartition tp) {
        return leading.contains(tp);
    }

    /** Whether this broker leads the partition and holds it in the store (the backfill's rule). */
    boolean leads(TopicIdPartition tp) {
        return leading.contains(tp) && loaded.contains(tp);
    }

    /** The leader epoch the plugin knows for a partition (see {@link #knownEpoch}), or -1. */
    int knownLeaderEpoch(TopicIdPartition tp) {
        return knownEpoch.getOrDefault(tp, UNKNOWN_EPOCH);
    }

    /** An epoch Kafka used with this manager for a partition it leads here (the highest seen this term). */
    void observeEpoch(TopicIdPartition tp, int epoch) {
        if (epoch >= 0 && leading.contains(tp)) {
            knownEpoch.merge(tp, epoch, Math::max);
        }
    }

    /**
     * Kafka's leadership change: loads every partition not held yet into the store and returns those
     * the store did not hold (their metadata partition is replayed). A store found unusable is
     * handed to the consumer for a rebuild.
     */
    Set<TopicIdPartition> leadershipChanged(Set<TopicIdPartition> leaders, Set<TopicIdPartition> followers,
                                            MetadataConsumer consumer) {
        // An epoch that moves on under the same leader (a replica set shrinks or grows, an election
        // returns here) is not told to the manager: the core raises the known epoch to the newest
        // epoch of a copied segment's own data (MetadataStore.planAsWriter).
        for (TopicIdPartition tp : leaders) {
            if (leading.add(tp)) {
                knownEpoch.remove(tp); // a new term here: its epoch is not known until Kafka uses it
            }
        }
        for (TopicIdPartition tp : followers) {
            leading.remove(tp);
            knownEpoch.remove(tp);
        }
        Set<TopicIdPartition> all = new HashSet<>(leaders);
        all.addAll(followers);
        Set<TopicIdPartition> replay = new HashSet<>();
        synchronized (lock) { // not while the store is replaced: the fresh one gets every held partition
            MetadataStore s = store;
            for (TopicIdPartition tp : all) {
                if (loaded.add(tp)) {
                    try {
                        // the core says whether the store held it: if not, its metadata partition is replayed
                        if (s.loadPartition(tp.topicId().getMostSignificantBits(),
                                tp.topicId().getLeastSignificantBits(), tp.topic(), tp.partition())) {
                            replay.add(tp);
                        }
                    } catch (RlMetaException.Internal e) {
                        consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                    }
                }
            }
        }
        return replay;
    }

    /** Kafka stopped these partitions here: unloaded from the store, neither led nor with an epoch. */
    void stop(Set<TopicIdPartition> partitions, MetadataConsumer consumer) {
        synchronized (lock) {
            MetadataStore s = store;
            for (TopicIdPartition tp : partitions) {
                if (loaded.remove(tp)) {
                    try {
                        s.unloadPartition(tp.topicId().getMostSignificantBits(),
                                tp.topicId().getLeastSignificantBits(), tp.partition());
                    } catch (RlMetaException.Internal e) {
                        consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                    }
                }
                leading.remove(tp);
                knownEpoch.remove(tp);
            }
        }
    }

    /**
     * Drops the store and puts a fresh one in its place, holding every partition this broker holds
     * (none initialized yet); the consumer then reads their metadata partitions again from the start.
     * Lookups that still hold the old store finish first (its close waits for them).
     */
    MetadataStore replaceStore() {
        MetadataStore fresh = new MetadataStore(true);
        MetadataStore old;
        synchronized (lock) {
            if (closed.getAsBoolean()) {
                fresh.close();
                throw new IllegalStateException("the rlmeta metadata manager is closed");
            }
            for (TopicIdPartition tp : loaded) {
                fresh.loadPartition(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                        tp.topic(), tp.partition());
            }
            old = store;
            store = fresh;
        }
        if (old != null) {
            old.close();
        }
        return fresh;
    }

    /** A user partition read to its end: the store serves it. */
    void markInitialized(TopicIdPartition tp) {
        boolean live = store.markInitialized(tp.topicId().getMostSignificantBits(),
                tp.topicId().getLeastSignificantBits(), tp.topic(), tp.partition());
        // DEBUG: the consumer logs one line for all the partitions a poll initializes
        log.debug("rlmeta RLMM: {} initialized{}", tp, live ? "" : " (its remote log was deleted)");
    }

    /** close(): takes the store away (under the lock) and frees it. */
    void closeStore() {
        MetadataStore s;
        synchronized (lock) {
            s = store;
            store = null;
        }
        if (s != null) {
            s.close();
        }
    }
}
