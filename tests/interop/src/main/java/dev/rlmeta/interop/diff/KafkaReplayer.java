package dev.rlmeta.interop.diff;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.server.log.remote.metadata.storage.DiffStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.RemotePartitionMetadataStore;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;

/**
 * Feeds events to one Kafka 4.4.0 {@link RemotePartitionMetadataStore} the way Kafka's
 * ConsumerTask does (spec §6.7), and asks it the replay queries.
 *
 * <ul>
 *   <li>a user partition is loaded ({@code maybeLoadPartition}) before its first event or its
 *       markInitialized, whichever comes first (ConsumerTask loads every assigned partition);
 *   <li>every value is deserialized with Kafka's {@link RemoteLogMetadataSerde} and handed to
 *       {@code handleRemoteLogMetadata}; a record is applied only if its offset is above the
 *       last offset applied for its user partition (ConsumerTask.shouldProcess), and that offset
 *       is remembered only after the handler returned normally, as ConsumerTask does;
 *   <li>an exception thrown by the handler (IllegalArgumentException for an update to
 *       COPY_SEGMENT_STARTED, ...) would stop Kafka's consumer thread: here the event is skipped
 *       and counted, as the shared replay vectors do (kafka-test-drop-event-on-invalid-state-transition);
 *   <li>tombstones (null values) are not given to Kafka (a 4.4.0 ConsumerTask would die on them);
 *       they are counted only.
 * </ul>
 */
final class KafkaReplayer {
    /** What the events said about one user partition, for the query planner. */
    static final class Seen {
        final TopicIdPartition tp;
        final LinkedHashSet<Integer> epochs = new LinkedHashSet<>();
        final LinkedHashSet<Uuid> segmentIds = new LinkedHashSet<>();
        final List<RemoteLogSegmentMetadata> segments = new ArrayList<>();

        Seen(TopicIdPartition tp) {
            this.tp = tp;
        }
    }

    final RemotePartitionMetadataStore store = new RemotePartitionMetadataStore();
    private final RemoteLogMetadataSerde serde;
    private final Set<TopicIdPartition> loaded = new HashSet<>();
    private final Map<TopicIdPartition, Long> lastApplied = new HashMap<>();
    final LinkedHashMap<TopicIdPartition, Seen> seen = new LinkedHashMap<>();
    /** Event outcome counters (sorted for stable printing). */
    final Map<String, Long> outcomes = new TreeMap<>();

    KafkaReplayer(RemoteLogMetadataSerde serde) {
        this.serde = serde;
    }

    private void count(String what) {
        outcomes.merge(what, 1L, Long::sum);
    }

    private Seen seen(TopicIdPartition tp) {
        return seen.computeIfAbsent(tp, Seen::new);
    }

    private void load(TopicIdPartition tp) {
        if (loaded.add(tp)) store.maybeLoadPartition(tp);
    }

    void apply(Ev e) {
        if (e.isMark()) {
            load(e.mark);
            seen(e.mark);
            store.markInitialized(e.mark);
            count("markInitialized");
            return;
        }
        if (e.isTombstone()) {
            count(e.key == null ? "tombstone (null key)" : "tombstone");
            return;
        }
        RemoteLogMetadata m = serde.deserialize(e.value);
        TopicIdPartition tp;
        try {
            tp = m.topicIdPartition(); // ConsumerTask.shouldProcess asks this first
        } catch (RuntimeException ex) {
            // a RemoteLogSegmentMetadataSnapshot: UnsupportedOperationException, the consumer would stop
            count("record: " + m.getClass().getSimpleName() + " (Kafka threw " + ex.getClass().getSimpleName() + ", skipped)");
            return;
        }
        load(tp);
        Seen s = seen(tp);
        String type;
        if (m instanceof RemoteLogSegmentMetadata) {
            RemoteLogSegmentMetadata sm = (RemoteLogSegmentMetadata) m;
            s.segmentIds.add(sm.remoteLogSegmentId().id());
            s.epochs.addAll(sm.segmentLeaderEpochs().keySet());
            s.segments.add(sm);
            type = "segment " + sm.state();
        } else if (m instanceof RemoteLogSegmentMetadataUpdate) {
            RemoteLogSegmentMetadataUpdate u = (RemoteLogSegmentMetadataUpdate) m;
            s.segmentIds.add(u.remoteLogSegmentId().id());
            type = "update " + u.state();
        } else if (m instanceof RemotePartitionDeleteMetadata) {
            type = "partitionDelete " + ((RemotePartitionDeleteMetadata) m).state();
        } else {
            type = m.getClass().getSimpleName();
        }
        count("record: " + type);
        Long last = lastApplied.get(tp);
        if (last != null && e.offset <= last) {
            count("skipped by ConsumerTask (offset <= last applied)");
            return;
        }
        try {
            store.handleRemoteLogMetadata(m);
            lastApplied.put(tp, e.offset);
        } catch (RuntimeException ex) {
            count("Kafka threw (event skipped): " + ex.getClass().getSimpleName());
        }
    }

    // ------------------------------------------------------------------------------ queries

    /** A replay query and Kafka's answer to it. */
    static final class Query {
        final String op;
        final TopicIdPartition tp;
        final Integer leaderEpoch;
        final Long offset;
        final Uuid segmentId;
        /** String id, Long, Integer, List of String ids, or null. */
        Object expect;
        String error;
        Boolean ordered;

        Query(String op, TopicIdPartition tp, Integer leaderEpoch, Long offset, Uuid segmentId) {
            this.op = op;
            this.tp = tp;
            this.leaderEpoch = leaderEpoch;
            this.offset = offset;
            this.segmentId = segmentId;
        }
    }

    /** Asks Kafka's store; may block 100 ms (4.4.0 waits that long for an uninitialized cache). */
    void answer(Query q) {
        try {
            switch (q.op) {
                case "segmentFor": {
                    Optional<RemoteLogSegmentMetadata> m =
                            DiffStoreAccess.remoteLogSegmentMetadata(store, q.tp, q.offset, q.leaderEpoch);
                    q.expect = m.map(x -> x.remoteLogSegmentId().id().toString()).orElse(null);
                    break;
                }
                case "highestOffsetForEpoch":
                    q.expect = DiffStoreAccess.highestLogOffset(store, q.tp, q.leaderEpoch).orElse(null);
                    break;
                case "listSegments": {
                    q.ordered = false;
                    List<String> ids = new ArrayList<>();
                    Iterator<RemoteLogSegmentMetadata> it = DiffStoreAccess.listRemoteLogSegments(store, q.tp);
                    while (it.hasNext()) ids.add(it.next().remoteLogSegmentId().id().toString());
                    q.expect = ids;
                    break;
                }
                case "listSegmentsForEpoch": {
                    q.ordered = true;
                    List<RemoteLogSegmentMetadata> list = new ArrayList<>();
                    Iterator<RemoteLogSegmentMetadata> it =
                            DiffStoreAccess.listRemoteLogSegments(store, q.tp, q.leaderEpoch);
                    while (it.hasNext()) list.add(it.next());
                    q.ordered = !hashOrderMatters(list, DiffStoreAccess.unreferencedSegmentIds(store, q.tp, q.leaderEpoch));
                    List<String> ids = new ArrayList<>();
                    for (RemoteLogSegmentMetadata m : list) ids.add(m.remoteLogSegmentId().id().toString());
                    q.expect = ids;
                    break;
                }
                case "segmentState": {
                    Integer state = null;
                    Iterator<RemoteLogSegmentMetadata> it = DiffStoreAccess.listRemoteLogSegments(store, q.tp);
                    while (it.hasNext()) {
                        RemoteLogSegmentMetadata m = it.next();
                        if (m.remoteLogSegmentId().id().equals(q.segmentId)) {
                            state = (int) m.state().id();
                            break;
                        }
                    }
                    q.expect = state;
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown op " + q.op);
            }
        } catch (RemoteResourceNotFoundException e) {
            q.error = "notFound";
            q.expect = null;
        } catch (ReplicaNotAvailableException e) {
            q.error = "notInitialized";
            q.expect = null;
        } catch (RemoteStorageException e) {
            throw new IllegalStateException("unexpected " + e, e);
        }
    }

    /**
     * Kafka lists an epoch's segments as: those in offsetToId (key order), then the unreferenced
     * hash set, the whole stable-sorted by start offset. The order is Kafka's own (and rlmeta must
     * match it) unless two listed segments that both come from the hash set share a start offset.
     */
    static boolean hashOrderMatters(List<RemoteLogSegmentMetadata> list, Set<RemoteLogSegmentId> unreferenced) {
        Set<Long> starts = new HashSet<>();
        for (RemoteLogSegmentMetadata m : list) {
            if (unreferenced.contains(m.remoteLogSegmentId()) && !starts.add(m.startOffset())) return true;
        }
        return false;
    }
}
