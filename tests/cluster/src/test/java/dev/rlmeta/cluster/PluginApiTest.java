package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RetriableRemoteStorageException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.rlmeta.RlMeta;
import dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager;

/**
 * The plugin driven directly through Kafka's RemoteLogMetadataManager interface, in this JVM,
 * against a real single Kafka 4.4.0 broker (no RLMM of its own: tiered storage is off on it, so
 * the plugin creates __remote_log_metadata). Checks what RemoteLogManager relies on: exceptions
 * before/without a partition, read-your-writes futures, lookups, refusals, tombstones, the level,
 * and a rebuild from the topic by a fresh instance.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PluginApiTest {
    static final String META = "__remote_log_metadata";
    static KafkaCluster cluster;
    static Admin admin;
    static Path work;
    static RlmetaRemoteLogMetadataManager rlmm;
    static TopicIdPartition tp;
    static String dumpBefore;

    static Map<String, Object> configs(String name) {
        return rlmmConfigs(cluster, work, "rlmeta-api-test-" + name, 20_000);
    }

    /**
     * What a broker passes an RLMM driven by a test directly (as node 100 of `cluster`): a 3-partition
     * metadata topic, the producer's client id, `consume.wait.ms`, and a dump file under `work`.
     */
    static Map<String, Object> rlmmConfigs(KafkaCluster cluster, Path work, String clientId, long consumeWaitMs) {
        Map<String, Object> c = new HashMap<>();
        c.put("remote.log.metadata.common.client.bootstrap.servers", cluster.bootstrap());
        c.put("broker.id", "100");
        c.put("node.id", "100");
        c.put("log.dir", work.toString());
        c.put("remote.log.metadata.topic.num.partitions", "3");
        c.put("remote.log.metadata.topic.replication.factor", "1");
        c.put("remote.log.metadata.topic.min.isr", "1");
        c.put("remote.log.metadata.consume.wait.ms", Long.toString(consumeWaitMs));
        c.put("remote.log.metadata.producer.client.id", clientId);
        c.put(RlmetaRemoteLogMetadataManager.DUMP_PATH, work.resolve(clientId + "-dump.json").toString());
        return c;
    }

    @BeforeAll
    static void start() throws Exception {
        cluster = new KafkaCluster("api", 1, Map.of(), Map.of("remote.log.storage.system.enable", "false")).start();
        admin = cluster.admin();
        work = Files.createDirectories(cluster.work().resolve("rlmm-api"));
        Uuid id = Tiered.create(admin, "api-t", 1, 1, Map.of());
        tp = new TopicIdPartition(id, 0, "api-t");
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

    static RemoteLogSegmentMetadata copyStarted(Uuid segmentId, long start, long end, int epoch) {
        return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp, segmentId), start, end, 1_700_000_000_000L,
                100, System.currentTimeMillis(), 4096, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                Map.of(epoch, start));
    }

    static RemoteLogSegmentMetadataUpdate update(Uuid segmentId, RemoteLogSegmentState state) {
        return new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(tp, segmentId), System.currentTimeMillis(),
                Optional.empty(), state, 100);
    }

    static Throwable failure(CompletableFuture<Void> f) throws InterruptedException {
        try {
            f.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("a future of the plugin did not complete within 30 s");
        }
    }

    static int metadataPartition() {
        return RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), 3);
    }

    @Test
    @Order(1)
    void unknownAndUnloadedPartitions() throws Exception {
        rlmm = new RlmetaRemoteLogMetadataManager();
        rlmm.configure(configs("first"));
        TopicIdPartition other = new TopicIdPartition(Uuid.randomUuid(), 0, "never-held");
        assertThrows(RemoteResourceNotFoundException.class, () -> rlmm.remoteLogSegmentMetadata(other, 0, 0));
        assertThrows(RemoteResourceNotFoundException.class, () -> rlmm.listRemoteLogSegments(other));
        assertFalse(rlmm.isReady(other));
        rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of());
        // held but its metadata partition not read to the end yet: Kafka's retriable error, as TBRLMM
        boolean sawNotAvailable = false;
        if (!rlmm.isReady(tp)) {
            try {
                rlmm.highestOffsetForEpoch(tp, 0);
            } catch (ReplicaNotAvailableException e) {
                sawNotAvailable = true;
            }
        }
        KafkaCluster.await(tp + " ready", Duration.ofSeconds(90), () -> rlmm.isReady(tp));
        assertEquals(Optional.empty(), rlmm.highestOffsetForEpoch(tp, 0));
        assertFalse(rlmm.listRemoteLogSegments(tp).hasNext());
        System.out.printf("[api] a partition never held: RemoteResourceNotFoundException; held before read: %s; "
                + "then ready with no segments%n", sawNotAvailable ? "ReplicaNotAvailableException" : "(already ready)");
        assertTrue(sawNotAvailable, "reads before the partition was initialized did not throw ReplicaNotAvailableException");
    }

    @Test
    @Order(2)
    void freshTopicIsCompactedAtLevelTwo() throws Exception {
        Config cfg = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, META))).all()
                .get().values().iterator().next();
        assertEquals("compact", cfg.get("cleanup.policy").value());
        // core's fresh-topic plan: level 2 sets no retention.ms (the plugin used to set one)
        assertNotEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, cfg.get("retention.ms").source(),
                "a fresh level-2 topic has no retention.ms override");
        List<ConsumerRecord<byte[], byte[]>> all = Tiered.readAll(cluster.bootstrap(), META, Duration.ofSeconds(30));
        Map<Integer, String> levels = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : all) {
            if (r.key() != null && new String(r.key(), StandardCharsets.UTF_8).equals("remote.log.metadata.version")) {
                levels.put(r.partition(), new String(r.value(), StandardCharsets.US_ASCII));
            }
        }
        assertEquals(Map.of(0, "2", 1, "2", 2, "2"), levels);
        assertEquals(2, rlmm.level(metadataPartition()));
        // Kafka 4.4.0 finalizes no remote.log.metadata.version: the level records decide
        assertEquals(-1, MetaTopic.json(rlmm.dumpJson()).get("finalizedLevel").asInt());
        System.out.printf("[api] fresh %s: cleanup.policy=compact, level records %s, no finalized feature, plugin "
                + "level %d%n", META, levels, rlmm.level(metadataPartition()));
        // this instance created the topic: its consumer starts only once the level records are written
        // (else an empty partition read to its end would be taken for level 0)
        double levelsAt = rlmm.startupMillis("level records written");
        double consumerAt = rlmm.startupMillis("consumer created");
        assertTrue(levelsAt >= 0 && consumerAt >= levelsAt, "start order on a created topic: " + rlmm.startupTimeline());
        System.out.printf("[api] created topic: level records written @%.1f ms, then the consumer created @%.1f ms%n",
                levelsAt, consumerAt);
    }

    @Test
    @Order(3)
    void readYourWritesAndLookups() throws Exception {
        Uuid s1 = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(s1, 0, 99, 0)).get(30, TimeUnit.SECONDS);
        // the future completed: the record is applied, so this broker sees it right away
        Iterator<RemoteLogSegmentMetadata> it = rlmm.listRemoteLogSegments(tp);
        RemoteLogSegmentMetadata m = it.next();
        assertEquals(s1, m.remoteLogSegmentId().id());
        assertEquals(RemoteLogSegmentState.COPY_SEGMENT_STARTED, m.state());
        assertEquals(Optional.empty(), rlmm.remoteLogSegmentMetadata(tp, 0, 50)); // not finished: not served
        rlmm.updateRemoteLogSegmentMetadata(update(s1, RemoteLogSegmentState.COPY_SEGMENT_FINISHED)).get(30, TimeUnit.SECONDS);
        RemoteLogSegmentMetadata found = rlmm.remoteLogSegmentMetadata(tp, 0, 50).orElseThrow();
        assertEquals(s1, found.remoteLogSegmentId().id());
        assertEquals(RemoteLogSegmentState.COPY_SEGMENT_FINISHED, found.state());
        assertEquals(0, found.startOffset());
        assertEquals(99, found.endOffset());
        assertEquals(Optional.of(99L), rlmm.highestOffsetForEpoch(tp, 0));
        assertEquals(4096L, rlmm.remoteLogSize(tp, 0));
        assertTrue(rlmm.listRemoteLogSegments(tp, 0).hasNext());
        assertFalse(rlmm.listRemoteLogSegments(tp, 7).hasNext());
        Uuid s2 = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(s2, 100, 199, 0)).get(30, TimeUnit.SECONDS);
        rlmm.updateRemoteLogSegmentMetadata(update(s2, RemoteLogSegmentState.COPY_SEGMENT_FINISHED)).get(30, TimeUnit.SECONDS);
        assertEquals(Optional.of(199L), rlmm.highestOffsetForEpoch(tp, 0));
        assertEquals(s2, rlmm.remoteLogSegmentMetadata(tp, 0, 150).orElseThrow().remoteLogSegmentId().id());
        System.out.println("[api] add/update futures complete after the broker's own consumer applied them: "
                + "lookups right after get() see both segments (0-99, 100-199), highest offset 199, size 8192");
        assertEquals(8192L, rlmm.remoteLogSize(tp, 0));
    }

    @Test
    @Order(4)
    void refusalsAndErrors() throws Exception {
        // a second upload of the same range in the same leader epoch while the first is live: refused, retriably
        Uuid again = Uuid.randomUuid();
        Throwable t = failure(rlmm.addRemoteLogSegmentMetadata(copyStarted(again, 0, 99, 0)));
        assertInstanceOf(RetriableRemoteStorageException.class, t, "refused copy: " + t);
        assertThrows(RemoteResourceNotFoundException.class,
                () -> rlmm.updateRemoteLogSegmentMetadata(update(Uuid.randomUuid(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED)));
        assertThrows(IllegalArgumentException.class,
                () -> rlmm.addRemoteLogSegmentMetadata(new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp, again), 0, 9,
                        1L, 100, 1L, 1, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, Map.of(0, 0L))));
        assertThrows(IllegalArgumentException.class,
                () -> rlmm.updateRemoteLogSegmentMetadata(update(again, RemoteLogSegmentState.COPY_SEGMENT_STARTED)));
        System.out.println("[api] same range, same epoch, first copy live: " + t.getClass().getSimpleName() + " ("
                + t.getMessage() + "); update of an unknown segment: RemoteResourceNotFoundException; bad states: "
                + "IllegalArgumentException");
    }

    @Test
    @Order(5)
    void deletionWritesTombstones() throws Exception {
        RemoteLogSegmentMetadata first = rlmm.remoteLogSegmentMetadata(tp, 0, 50).orElseThrow();
        Uuid s1 = first.remoteLogSegmentId().id();
        rlmm.updateRemoteLogSegmentMetadata(update(s1, RemoteLogSegmentState.DELETE_SEGMENT_STARTED)).get(30, TimeUnit.SECONDS);
        assertEquals(Optional.empty(), rlmm.remoteLogSegmentMetadata(tp, 0, 50));
        rlmm.updateRemoteLogSegmentMetadata(update(s1, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED)).get(30, TimeUnit.SECONDS);
        List<RemoteLogSegmentMetadata> left = new ArrayList<>();
        rlmm.listRemoteLogSegments(tp).forEachRemaining(left::add);
        assertEquals(1, left.size(), "segments left: " + left);
        int tombstones = 0;
        for (ConsumerRecord<byte[], byte[]> r : Tiered.readAll(cluster.bootstrap(), META, Duration.ofSeconds(30))) {
            if (r.value() == null && r.key() != null
                    && new String(r.key(), StandardCharsets.UTF_8).startsWith(tp.topicId().toString() + ":")) {
                tombstones++;
            }
        }
        assertTrue(tombstones >= 1, "no tombstone written for the deleted segment");
        // the refused range is free again: a new upload of 0-99 in epoch 0 is accepted
        Uuid s3 = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(s3, 0, 99, 0)).get(30, TimeUnit.SECONDS);
        rlmm.updateRemoteLogSegmentMetadata(update(s3, RemoteLogSegmentState.COPY_SEGMENT_FINISHED)).get(30, TimeUnit.SECONDS);
        assertEquals(s3, rlmm.remoteLogSegmentMetadata(tp, 0, 50).orElseThrow().remoteLogSegmentId().id());
        System.out.printf("[api] delete started/finished: segment gone from lookups, %d tombstone(s) in %s; "
                + "the range can be uploaded again afterwards%n", tombstones, META);
        dumpBefore = storeDump(rlmm.dumpJson());
    }

    static String storeDump(String dump) {
        int at = dump.indexOf("\"store\":");
        assertTrue(at >= 0, "dump without a store section: " + dump);
        return dump.substring(at);
    }

    @Test
    @Order(6)
    void aFreshInstanceRebuildsTheSameState() throws Exception {
        rlmm.close();
        rlmm = new RlmetaRemoteLogMetadataManager();
        rlmm.configure(configs("second"));
        rlmm.onPartitionLeadershipChanges(Set.of(), Set.of(tp));
        KafkaCluster.await(tp + " ready again", Duration.ofSeconds(90), () -> rlmm.isReady(tp));
        String after = storeDump(rlmm.dumpJson());
        assertEquals(dumpBefore, after, "the rebuilt store differs from the one that wrote the records");
        assertEquals(2, rlmm.level(metadataPartition()));
        System.out.printf("[api] a fresh instance rebuilt the same store from the topic (%d chars of dump equal), level 2%n",
                after.length());
        // an existing topic: the consumer starts before the producer (which only writes need), and the
        // timeline has every step up to all partitions initialized
        KafkaCluster.await("the second instance's start timeline", Duration.ofSeconds(30),
                () -> rlmm.startupMillis("all initialized") >= 0 && rlmm.startupMillis("policy described") >= 0);
        double consumerAt = rlmm.startupMillis("consumer created");
        double producerAt = rlmm.startupMillis("producer created");
        double positionsAt = rlmm.startupMillis("positions");
        double readyAt = rlmm.startupMillis("all initialized");
        assertTrue(consumerAt >= 0 && consumerAt <= producerAt && positionsAt >= consumerAt && readyAt >= positionsAt,
                "start order on an existing topic: " + rlmm.startupTimeline());
        assertEquals(-1, rlmm.startupMillis("level records written"), "level records written to an existing topic");
        System.out.printf("[api] existing topic: consumer created @%.1f ms, before the producer @%.1f ms; positions "
                + "@%.1f ms, all initialized @%.1f ms%n", consumerAt, producerAt, positionsAt, readyAt);
    }

    /**
     * Issue 31: KRaft bumps a partition's epoch while its leader stays (a replica set shrinks) and the
     * manager is told only "you lead it" again. The copy task keeps the epoch it asked with; the
     * segment's own data carries the new one. Before, every such copy was refused for ever ("below
     * epoch 6 of the segment's own data"); now it is keyed with the data's epoch. A broker that no
     * longer leads has its copy refused, retriably.
     */
    @Test
    @Order(7)
    void anEpochBumpUnderTheSameLeaderKeepsTiering() throws Exception {
        rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of());
        KafkaCluster.await(tp + " ready as leader", Duration.ofSeconds(90), () -> rlmm.isReady(tp));
        rlmm.highestOffsetForEpoch(tp, 5); // what a new leader's copy task asks first: its epoch is 5
        rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of()); // the bump: still leader, nothing else said
        Uuid bumped = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(bumped, 300, 399, 6)).get(30, TimeUnit.SECONDS);
        rlmm.updateRemoteLogSegmentMetadata(update(bumped, RemoteLogSegmentState.COPY_SEGMENT_FINISHED)).get(30, TimeUnit.SECONDS);
        assertEquals(bumped, rlmm.remoteLogSegmentMetadata(tp, 6, 350).orElseThrow().remoteLogSegmentId().id());
        Set<String> keys = new java.util.HashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : Tiered.readAll(cluster.bootstrap(), META, Duration.ofSeconds(30))) {
            if (r.key() != null) {
                keys.add(new String(r.key(), StandardCharsets.UTF_8));
            }
        }
        String prefix = tp.topicId() + ":" + tp.topic() + ":" + tp.partition() + ":399:";
        assertTrue(keys.contains(prefix + "6"), "the copy is keyed with the data's epoch 6: " + keys);
        // data of an epoch below the known one: the known epoch
        Uuid older = Uuid.randomUuid();
        rlmm.addRemoteLogSegmentMetadata(copyStarted(older, 400, 499, 4)).get(30, TimeUnit.SECONDS);
        // deposed: the partition is followed here now
        rlmm.onPartitionLeadershipChanges(Set.of(), Set.of(tp));
        Throwable t = failure(rlmm.addRemoteLogSegmentMetadata(copyStarted(Uuid.randomUuid(), 500, 599, 7)));
        assertInstanceOf(RetriableRemoteStorageException.class, t, "a follower's copy: " + t);
        assertTrue(t.getMessage().contains("does not lead"), t.getMessage());
        System.out.println("[api] epoch bump under the same leader (known 5, data 6): copy accepted under key " + prefix
                + "6; a follower's copy refused: " + t.getMessage());
        assertTrue(rlmm.writeLockCount() > 0, "writes took the partition's lock");
        rlmm.onStopPartitions(Set.of(tp));
        assertEquals(0, rlmm.writeLockCount(), "a partition no longer held keeps its write lock");
    }

    /**
     * Issue 31: close() returns within its 10 s deadline even when the cluster is unreachable (it
     * joined each thread for up to 60 s in turn before). The bound here is that deadline plus a
     * margin for a loaded machine, a guard on a documented limit, not a speed measurement.
     */
    @Test
    @Order(8)
    void closeReturnsWithinItsDeadlineWhenTheClusterIsUnreachable() throws Exception {
        int dead;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            dead = s.getLocalPort(); // closed again: nothing listens there
        }
        Map<String, Object> c = configs("unreachable");
        c.put("remote.log.metadata.common.client.bootstrap.servers", "127.0.0.1:" + dead);
        RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
        m.configure(c);
        m.onPartitionLeadershipChanges(Set.of(tp), Set.of());
        Thread.sleep(3_000); // its threads are now retrying the cluster
        long t0 = System.nanoTime();
        m.close();
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf("[api] close() with an unreachable cluster returned in %.1f s (deadline %d s)%n", seconds,
                RlmetaRemoteLogMetadataManager.CLOSE_DEADLINE.getSeconds());
        assertTrue(seconds < RlmetaRemoteLogMetadataManager.CLOSE_DEADLINE.getSeconds() + 5,
                "close() took " + seconds + " s");
    }

    /**
     * Issue 31: a broker's start with 2,000 partitions logs a screenful, not a line per partition
     * (an INFO line per initialized partition before: 2,000 lines here, 100,000 on a large broker).
     */
    @Test
    @Order(9)
    void aStartWithTwoThousandPartitionsFitsOnOneScreen() throws Exception {
        Uuid many = Uuid.randomUuid();
        Set<TopicIdPartition> all = new java.util.HashSet<>();
        for (int p = 0; p < 2_000; p++) {
            all.add(new TopicIdPartition(many, p, "many"));
        }
        List<String> lines;
        try (LogCapture log = LogCapture.start("dev.rlmeta")) {
            RlmetaRemoteLogMetadataManager m = new RlmetaRemoteLogMetadataManager();
            try {
                m.configure(configs("many"));
                m.onPartitionLeadershipChanges(Set.of(), all);
                KafkaCluster.await("2,000 partitions ready", Duration.ofSeconds(90),
                        () -> all.stream().allMatch(m::isReady));
            } finally {
                m.close();
            }
            lines = log.lines();
        }
        System.out.printf("[api] a start with 2,000 partitions logged %d plugin lines:%n  %s%n", lines.size(),
                String.join("\n  ", lines));
        assertTrue(lines.size() <= 40, lines.size() + " lines: " + lines);
    }
}
