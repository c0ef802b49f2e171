package dev.rlmeta.kafka;

import java.util.Iterator;
import java.util.Optional;
import java.util.function.BooleanSupplier;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PackedValues;
import dev.rlmeta.RlMetaException;

/**
 * The reads: each of Kafka's lookups asked of the store with no lock of ours (the store lets
 * lookups run in parallel, and with its apply), its answer decoded with Kafka's serde, and the
 * store's refusals turned into the exceptions Kafka expects (ReplicaNotAvailableException while a
 * partition is rebuilt or not loaded yet, RemoteResourceNotFoundException, RemoteStorageException).
 * A store found unusable (poisoned) is handed to the consumer for a rebuild.
 *
 * <p>It never changes the store and never learns anything from a lookup (the manager observes
 * epochs before asking).
 */
final class Lookups {
    @FunctionalInterface
    interface Query<T> {
        T run(MetadataStore s, long msb, long lsb, int partition);
    }

    private final String topic;
    private final int numPartitions;
    private final HeldPartitions held;
    private final MetadataConsumer consumer;
    private final BooleanSupplier closed;
    private final RemoteLogMetadataSerde serde;

    Lookups(PluginConfig cfg, HeldPartitions held, MetadataConsumer consumer, BooleanSupplier closed,
            RemoteLogMetadataSerde serde) {
        this.topic = cfg.topic;
        this.numPartitions = cfg.numPartitions;
        this.held = held;
        this.consumer = consumer;
        this.closed = closed;
        this.serde = serde;
    }

    <T> T query(TopicIdPartition tp, Query<T> q) throws RemoteStorageException {
        MetadataStore s = held.store();
        if (s == null) {
            throw new IllegalStateException("the rlmeta metadata manager is not configured or is closed");
        }
        if (!consumer.serving()) {
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is being rebuilt from "
                    + topic + (consumer.down() != null ? " (the metadata consumer died: " + consumer.down() + ")" : ""));
        }
        long msb = tp.topicId().getMostSignificantBits();
        long lsb = tp.topicId().getLeastSignificantBits();
        try {
            // no lock of ours: the store lets lookups run in parallel, and with its apply
            return q.run(s, msb, lsb, tp.partition());
        } catch (IllegalStateException e) { // the store was replaced (a rebuild) or closed under us
            if (closed.getAsBoolean()) {
                throw e;
            }
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is being rebuilt from " + topic);
        } catch (RlMetaException.Internal e) {
            if (unusable(s, msb, lsb, tp.partition())) {
                consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                throw new ReplicaNotAvailableException("the remote log metadata store is unusable (" + e.getMessage()
                        + ") and is being rebuilt from " + topic);
            }
            throw new RemoteStorageException("rlmeta lookup for " + tp + " failed: " + e.getMessage(), e);
        } catch (RlMetaException.NotFound e) {
            throw new RemoteResourceNotFoundException("no remote log metadata for " + tp + ": " + e.getMessage());
        } catch (RlMetaException.NotInitialized e) {
            int mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions);
            if (consumer.stopped(mp)) {
                throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is unavailable: " + topic
                        + "-" + mp + " stopped after its records failed to apply again and again (see the broker's log)");
            }
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is not loaded yet");
        } catch (RlMetaException e) {
            throw new RemoteStorageException("rlmeta lookup for " + tp + " failed: " + e.getMessage(), e);
        }
    }

    /** Whether the store fails every call (its lock poisoned by a panic), not just one lookup. */
    private static boolean unusable(MetadataStore s, long msb, long lsb, int partition) {
        try {
            s.isInitialized(msb, lsb, partition);
            return false;
        } catch (RlMetaException.Internal e) {
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** RemoteLogMetadataManager#isReady: the store serves the partition (read to its end, no rebuild under way). */
    boolean isReady(TopicIdPartition tp) {
        MetadataStore s = held.store();
        if (s == null || !consumer.serving()) {
            return false;
        }
        try {
            return s.isInitialized(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                    tp.partition());
        } catch (RlMetaException.Internal e) {
            consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
            return false;
        } catch (IllegalStateException e) { // replaced (a rebuild) or closed under us
            return false;
        }
    }

    RemoteLogSegmentMetadata segment(byte[] bytes) {
        return (RemoteLogSegmentMetadata) serde.deserialize(bytes);
    }

    Optional<RemoteLogSegmentMetadata> optionalSegment(byte[] bytes) {
        return bytes == null ? Optional.empty() : Optional.of(segment(bytes));
    }

    Iterator<RemoteLogSegmentMetadata> segments(PackedValues all) {
        return new SegmentIterator(all, serde);
    }
}
