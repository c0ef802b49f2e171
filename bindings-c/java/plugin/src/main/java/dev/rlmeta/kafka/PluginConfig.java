package dev.rlmeta.kafka;

import java.nio.file.Path;
import java.util.Map;

import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig;

/**
 * The manager's configuration, read once in configure(): Kafka's own
 * TopicBasedRemoteLogMetadataManagerConfig (every {@code remote.log.metadata.*} setting and client
 * prefix means what it means there), the broker id, the metadata topic's min.insync.replicas (per
 * Kafka version: {@link KafkaCompat#metadataTopicMinIsr}), and the plugin's own settings
 * ({@link RlmetaRemoteLogMetadataManager#DUMP_PATH}, {@link RlmetaRemoteLogMetadataManager#POLICY_REFRESH_MS}).
 *
 * <p>Immutable. It never talks to the cluster and never starts anything.
 */
final class PluginConfig {
    static final long DEFAULT_POLICY_REFRESH_MS = 60_000;

    final TopicBasedRemoteLogMetadataManagerConfig kafka;
    final Map<String, ?> raw;
    final int brokerId;          // -1: not given
    final String topic;
    final int numPartitions;
    final int topicMinIsr;       // -1: the broker default (KafkaCompat.metadataTopicMinIsr)
    final Path dumpPath;         // null: no dump
    final long policyRefreshMs;

    PluginConfig(Map<String, ?> configs) {
        TopicBasedRemoteLogMetadataManagerConfig c = new TopicBasedRemoteLogMetadataManagerConfig(configs);
        Object id = configs.get("broker.id") != null ? configs.get("broker.id") : configs.get("node.id");
        this.raw = configs;
        this.kafka = c;
        this.brokerId = id == null ? -1 : Integer.parseInt(id.toString());
        this.topic = c.remoteLogMetadataTopicName();
        this.numPartitions = c.metadataTopicPartitionsCount();
        this.topicMinIsr = KafkaCompat.metadataTopicMinIsr(c, configs);
        Object dump = configs.get(RlmetaRemoteLogMetadataManager.DUMP_PATH);
        this.dumpPath = dump == null || dump.toString().isBlank() ? null : Path.of(dump.toString());
        Object refresh = configs.get(RlmetaRemoteLogMetadataManager.POLICY_REFRESH_MS);
        this.policyRefreshMs = refresh == null ? DEFAULT_POLICY_REFRESH_MS
                : Math.max(100, Long.parseLong(refresh.toString()));
    }

    /** remote.log.metadata.consume.wait.ms: the longest a write waits to be applied here. */
    long consumeWaitMs() {
        return kafka.consumeWaitMs();
    }
}
