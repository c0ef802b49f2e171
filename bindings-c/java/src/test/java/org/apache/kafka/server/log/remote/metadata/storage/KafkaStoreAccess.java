package org.apache.kafka.server.log.remote.metadata.storage;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;

/**
 * Test-only bridge: the query methods of Kafka 4.4.0's RemotePartitionMetadataStore are
 * package-private, so this class (in rlmeta's test sources, not in Kafka's jar) lives in their
 * package and only forwards to them. The ground truth the MetadataStore tests compare against.
 */
public final class KafkaStoreAccess {
    private KafkaStoreAccess() {}

    public static List<RemoteLogSegmentMetadata> segments(RemotePartitionMetadataStore s, TopicIdPartition tp)
            throws RemoteStorageException {
        return list(s.listRemoteLogSegments(tp));
    }

    public static List<RemoteLogSegmentMetadata> segments(RemotePartitionMetadataStore s, TopicIdPartition tp, int epoch)
            throws RemoteStorageException {
        return list(s.listRemoteLogSegments(tp, epoch));
    }

    /** Kafka's own iterator, as TopicBasedRemoteLogMetadataManager hands it to the broker (benchmarks walk it). */
    public static Iterator<RemoteLogSegmentMetadata> iterator(RemotePartitionMetadataStore s, TopicIdPartition tp)
            throws RemoteStorageException {
        return s.listRemoteLogSegments(tp);
    }

    public static Iterator<RemoteLogSegmentMetadata> iterator(RemotePartitionMetadataStore s, TopicIdPartition tp,
            int epoch) throws RemoteStorageException {
        return s.listRemoteLogSegments(tp, epoch);
    }

    public static Optional<RemoteLogSegmentMetadata> segmentFor(
            RemotePartitionMetadataStore s, TopicIdPartition tp, int epoch, long offset) throws RemoteStorageException {
        return s.remoteLogSegmentMetadata(tp, offset, epoch);
    }

    public static Optional<RemoteLogSegmentMetadata> nextSegmentWithTxnIndex(
            RemotePartitionMetadataStore s, TopicIdPartition tp, int epoch, long offset) throws RemoteStorageException {
        return s.nextSegmentWithTxnIndex(tp, epoch, offset);
    }

    public static Optional<Long> highestOffsetForEpoch(RemotePartitionMetadataStore s, TopicIdPartition tp, int epoch)
            throws RemoteStorageException {
        return s.highestLogOffset(tp, epoch);
    }

    private static List<RemoteLogSegmentMetadata> list(Iterator<RemoteLogSegmentMetadata> it) {
        List<RemoteLogSegmentMetadata> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }
}
