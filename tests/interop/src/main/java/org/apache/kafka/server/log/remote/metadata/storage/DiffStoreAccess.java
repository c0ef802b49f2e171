package org.apache.kafka.server.log.remote.metadata.storage;

import java.lang.reflect.Field;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;

/**
 * Test-only bridge for rlmeta's differential harness (dev.rlmeta.interop.diff): the read methods
 * of Kafka 4.4.0's RemotePartitionMetadataStore and RemoteLogMetadataCache are package-private,
 * so this class lives in their package (inside tests/interop, not in Kafka's jar) and only
 * forwards to them. Nothing here changes what Kafka computes.
 */
public final class DiffStoreAccess {
    private DiffStoreAccess() {}

    /** {@code store.listRemoteLogSegments(tp)} (hash-map order). */
    public static Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(
            RemotePartitionMetadataStore store, TopicIdPartition tp) throws RemoteStorageException {
        return store.listRemoteLogSegments(tp);
    }

    /** {@code store.listRemoteLogSegments(tp, epoch)}. */
    public static Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(
            RemotePartitionMetadataStore store, TopicIdPartition tp, int leaderEpoch)
            throws RemoteStorageException {
        return store.listRemoteLogSegments(tp, leaderEpoch);
    }

    /** {@code store.remoteLogSegmentMetadata(tp, offset, epoch)}. */
    public static Optional<RemoteLogSegmentMetadata> remoteLogSegmentMetadata(
            RemotePartitionMetadataStore store, TopicIdPartition tp, long offset, int leaderEpoch)
            throws RemoteStorageException {
        return store.remoteLogSegmentMetadata(tp, offset, leaderEpoch);
    }

    /** {@code store.highestLogOffset(tp, epoch)}. */
    public static Optional<Long> highestLogOffset(
            RemotePartitionMetadataStore store, TopicIdPartition tp, int leaderEpoch)
            throws RemoteStorageException {
        return store.highestLogOffset(tp, leaderEpoch);
    }

    private static final Field CACHES;

    static {
        try {
            CACHES = RemotePartitionMetadataStore.class.getDeclaredField("idToRemoteLogMetadataCache");
            CACHES.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Counts, for the harness's coverage report, the cache states that only unusual histories
     * reach, for one user partition: FINISHED segments displaced into an epoch's unreferenced set,
     * FINISHED segments an epoch forgot entirely (the "plain put" of a same-start segment),
     * unreferenced ids whose metadata is gone (listing that epoch throws), epochs whose highest
     * offset is above every segment they still list. Reads only; empty if the partition has no cache.
     */
    public static Map<String, Integer> coverage(RemotePartitionMetadataStore store, TopicIdPartition tp) {
        Map<String, Integer> out = new java.util.TreeMap<>();
        RemoteLogMetadataCache cache = caches(store).get(tp);
        if (cache == null) return out;
        for (Map.Entry<Integer, RemoteLogLeaderEpochState> en : cache.leaderEpochEntries.entrySet()) {
            int epoch = en.getKey();
            RemoteLogLeaderEpochState st = en.getValue();
            Collection<RemoteLogSegmentId> unref = st.unreferencedSegmentIds();
            Collection<RemoteLogSegmentId> ref = st.referencedSegmentIds();
            long maxEnd = Long.MIN_VALUE;
            for (RemoteLogSegmentId id : unref) {
                RemoteLogSegmentMetadata m = cache.idToSegmentMetadata.get(id);
                if (m == null) out.merge("epoch lists an id whose metadata is gone", 1, Integer::sum);
                else if (m.state() == org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState.COPY_SEGMENT_FINISHED)
                    out.merge("FINISHED segment displaced to unreferenced", 1, Integer::sum);
            }
            for (RemoteLogSegmentId id : ref) {
                RemoteLogSegmentMetadata m = cache.idToSegmentMetadata.get(id);
                if (m != null) maxEnd = Math.max(maxEnd, m.endOffset());
            }
            for (RemoteLogSegmentMetadata m : cache.idToSegmentMetadata.values()) {
                if (m.state() == org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState.COPY_SEGMENT_FINISHED
                        && m.segmentLeaderEpochs().containsKey(epoch)
                        && !unref.contains(m.remoteLogSegmentId()) && !ref.contains(m.remoteLogSegmentId())) {
                    out.merge("FINISHED segment forgotten by an epoch (plain put)", 1, Integer::sum);
                }
            }
            Long h = st.highestLogOffset();
            if (h != null && (ref.isEmpty() || h > maxEnd)) out.merge("epoch highest offset above what it serves", 1, Integer::sum);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<TopicIdPartition, RemoteLogMetadataCache> caches(RemotePartitionMetadataStore store) {
        try {
            return (Map<TopicIdPartition, RemoteLogMetadataCache>) CACHES.get(store);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The segment ids that RemoteLogLeaderEpochState of {@code leaderEpoch} keeps in its
     * unreferenced hash set (the part of listRemoteLogSegments(tp, epoch) whose relative order
     * is hash-set order); empty if the partition or the epoch has no state.
     */
    public static Set<RemoteLogSegmentId> unreferencedSegmentIds(
            RemotePartitionMetadataStore store, TopicIdPartition tp, int leaderEpoch) {
        RemoteLogMetadataCache cache = caches(store).get(tp);
        if (cache == null) return Set.of();
        RemoteLogLeaderEpochState state = cache.leaderEpochEntries.get(leaderEpoch);
        if (state == null) return Set.of();
        return Set.copyOf(state.unreferencedSegmentIds());
    }
}
