package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.rlmeta.RlMeta;
import dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager;

/**
 * The level the plugin writes at when the level records are gone (docs/FEATURE-LEVEL.md): on a
 * real Kafka 4.4.0 broker, __remote_log_metadata is created as stock TBRLMM lays it out
 * (cleanup.policy=delete, no level records), so the plugin writes level 0 (version-0 values, no
 * tombstones); then the topic's policy becomes compact,delete with still no level record (as
 * after level 1's retention expired the level-1 records), and the plugin must write level 1
 * (version-1 values, tombstones on deletion), the higher of the record's level and the policy's.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PluginPolicyLevelTest {
    static final String META = MetaTopic.NAME;
    static final int PARTITIONS = 3;
    static KafkaCluster cluster;
    static Admin admin;
    static Path work;
    static RlmetaRemoteLogMetadataManager rlmm;
    static TopicIdPartition tp;

    @BeforeAll
    static void start() throws Exception {
        cluster = new KafkaCluster("policy", 1, Map.of(), Map.of("remote.log.storage.system.enable", "false")).start();
        admin = cluster.admin();
        work = Files.createDirectories(cluster.work().resolve("rlmm-policy"));
        // the topic as stock TBRLMM creates it (TopicBasedRemoteLogMetadataManager.createMetadataTopic)
        admin.createTopics(List.of(new NewTopic(META, PARTITIONS, (short) 1).configs(Map.of(
                "cleanup.policy", "delete", "retention.ms", "-1", "remote.storage.enable", "false",
                "min.insync.replicas", "1")))).all().get(60, TimeUnit.SECONDS);
        Uuid id = Tiered.create(admin, "policy-t", 1, 1, Map.of());
        tp = new TopicIdPartition(id, 0, "policy-t");
        Map<String, Object> c = new HashMap<>();
        c.put("remote.log.metadata.common.client.bootstrap.servers", cluster.bootstrap());
        c.put("broker.id", "101");
        c.put("node.id", "101");
        c.put("log.dir", work.toString());
        c.put("remote.log.metadata.topic.num.partitions", Integer.toString(PARTITIONS));
        c.put("remote.log.metadata.topic.replication.factor", "1");
        c.put("remote.log.metadata.topic.min.isr", "1");
        c.put("remote.log.metadata.consume.wait.ms", "20000");
        c.put(RlmetaRemoteLogMetadataManager.POLICY_REFRESH_MS, "500");
        c.put(RlmetaRemoteLogMetadataManager.DUMP_PATH, work.resolve("dump.json").toString());
        rlmm = new RlmetaRemoteLogMetadataManager();
        rlmm.configure(c);
        rlmm.onPartitionLeadershipChanges(java.util.Set.of(tp), java.util.Set.of());
        KafkaCluster.await(tp + " ready", Duration.ofSeconds(90), () -> rlmm.isReady(tp));
        // as a new leader's copy task does before its first copy: the newest epoch of its cache
        rlmm.highestOffsetForEpoch(tp, 0);
    }

    @AfterAll
    static void stop() throws Exception {
        if (rlmm != null) {
            rlmm.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    static int metadataPartition() {
        return RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), PARTITIONS);
    }

    static RemoteLogSegmentMetadata copyStarted(Uuid segmentId, long start, long end) {
        return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp, segmentId), start, end, 1_700_000_000_000L,
                101, System.currentTimeMillis(), 4096, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                Map.of(0, start));
    }

    static void update(Uuid segmentId, RemoteLogSegmentState state) throws Exception {
        rlmm.updateRemoteLogSegmentMetadata(new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(tp, segmentId),
                System.currentTimeMillis(), Optional.empty(), state, 101)).get(30, TimeUnit.SECONDS);
    }

    /** Copies a segment, finishes it, deletes it; returns its records in the topic (all keyed to this topic id). */
    static List<MetaTopic.Rec> segmentLifecycle(Uuid s, long start, long end) throws Exception {
        rlmm.addRemoteLogSegmentMetadata(copyStarted(s, start, end)).get(30, TimeUnit.SECONDS);
        update(s, RemoteLogSegmentState.COPY_SEGMENT_FINISHED);
        update(s, RemoteLogSegmentState.DELETE_SEGMENT_STARTED);
        update(s, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED);
        return MetaTopic.read(cluster.bootstrap()).stream()
                .filter(r -> r.partition() == metadataPartition())
                .filter(r -> r.tombstone() ? r.key() != null && r.key().startsWith(tp.topicId() + ":")
                        : r.decoded() != null && r.decoded().toString().contains(s.toString()))
                .toList();
    }

    static String versions(List<MetaTopic.Rec> recs) {
        TreeSet<String> v = new TreeSet<>();
        for (MetaTopic.Rec r : recs) {
            v.add(r.tombstone() ? "tombstone" : "v" + r.decoded().get("version").asInt());
        }
        return v.toString();
    }

    @Test
    @Order(1)
    void stockLayoutIsLevelZero() throws Exception {
        KafkaCluster.await("level 0 known", Duration.ofSeconds(30), () -> rlmm.level(metadataPartition()) == 0);
        List<MetaTopic.Rec> recs = segmentLifecycle(Uuid.randomUuid(), 0, 99);
        assertTrue(recs.size() >= 4, "records of the segment (4 events): " + recs);
        assertTrue(recs.stream().allMatch(r -> r.key() != null && !r.tombstone()), "level 0 wrote a tombstone or a null key");
        assertEquals("[v0]", versions(recs));
        assertFalse(MetaTopic.read(cluster.bootstrap()).stream().anyMatch(MetaTopic.Rec::levelRecord),
                "the plugin wrote a level record to a stock topic");
        System.out.printf("[policy] %s cleanup.policy=delete, no level record: plugin level 0, a segment's "
                + "lifecycle wrote %d keyed records, value versions %s, no tombstones%n", META, recs.size(), versions(recs));
    }

    @Test
    @Order(2)
    void compactDeleteWithoutLevelRecordIsLevelOne() throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, META);
        admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
                new ConfigEntry("cleanup.policy", "compact,delete"), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
        KafkaCluster.await("level 1 from cleanup.policy", Duration.ofSeconds(30),
                () -> rlmm.level(metadataPartition()) == 1);
        List<MetaTopic.Rec> recs = segmentLifecycle(Uuid.randomUuid(), 100, 199);
        List<MetaTopic.Rec> values = recs.stream().filter(x -> !x.tombstone()).toList();
        assertTrue(values.size() >= 4, "values of the segment (4 events): " + recs);
        assertTrue(values.stream().allMatch(x -> x.key() != null && x.decoded().get("version").asInt() == 1),
                "level 1 wrote a value that is not keyed version 1: " + versions(values));
        long tombstones = recs.stream().filter(MetaTopic.Rec::tombstone).count();
        assertTrue(tombstones >= 1, "level 1 wrote no tombstone for the deleted segment");
        assertFalse(MetaTopic.read(cluster.bootstrap()).stream().anyMatch(MetaTopic.Rec::levelRecord),
                "a level record appeared in the topic");
        assertEquals("compact,delete", MetaTopic.json(rlmm.dumpJson()).get("cleanupPolicy").asText());
        System.out.printf("[policy] cleanup.policy=compact,delete, still no level record: plugin level 1, a "
                + "segment's lifecycle wrote %d keyed version-1 values and %d tombstone(s)%n", values.size(), tombstones);
    }
}
