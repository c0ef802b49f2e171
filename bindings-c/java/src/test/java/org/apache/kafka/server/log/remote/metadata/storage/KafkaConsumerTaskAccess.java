package org.apache.kafka.server.log.remote.metadata.storage;

import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.utils.Time;

/**
 * Test-only bridge to Kafka 4.4.0's package-private {@code ConsumerTask}: the broker's own loop that
 * decides which records of {@code __remote_log_metadata} reach its {@link RemotePartitionMetadataStore},
 * which user partitions are cleared when they leave, and which metadata partitions are read again
 * from the beginning when a partition comes back. Only forwards; the judge of the reload tests.
 */
public final class KafkaConsumerTaskAccess {
    private final ConsumerTask task;

    public KafkaConsumerTaskAccess(RemotePartitionMetadataStore store, int metadataPartitions,
                                   Consumer<byte[], byte[]> consumer) {
        task = new ConsumerTask(store, new RemoteLogMetadataTopicPartitioner(metadataPartitions), consumer,
                1L, 10L, Time.SYSTEM);
    }

    public void add(Set<TopicIdPartition> partitions) {
        task.addAssignmentsForPartitions(partitions);
    }

    public void remove(Set<TopicIdPartition> partitions) {
        task.removeAssignmentsForPartitions(partitions);
    }

    /** One iteration of the task's loop: a pending assignment, one poll, its records, readiness. */
    public void ingest() {
        task.ingestRecords();
    }

    public long readOffset(int metadataPartition) {
        return task.readOffsetForMetadataPartition(metadataPartition).orElse(-1L);
    }

    public void close() {
        task.close();
    }
}
