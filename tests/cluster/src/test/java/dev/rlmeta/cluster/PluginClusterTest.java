package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.rlmeta.RlMeta;
import dev.rlmeta.cluster.KafkaCluster.Rlmm;
import dev.rlmeta.cluster.MetaTopic.Rec;

/**
 * The cluster scenarios of the plugin: one real KRaft Kafka 4.4.0 cluster (a controller and 3
 * brokers; brokers 1 and 2 load the plugin by remote.log.metadata.manager.class.path, broker 3
 * from its own class path as a jar in libs/ is), started once; scenarios run in order on it.
 * Each prints what it checked.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PluginClusterTest {
    static KafkaCluster c;
    static Admin admin;
    static final Duration TIER_WAIT = Duration.ofSeconds(120);
    static int plugARecords;

    @BeforeAll
    static void start() throws Exception {
        c = new KafkaCluster("plugin", 3,
                Map.of(1, Rlmm.PLUGIN_CLASS_PATH, 2, Rlmm.PLUGIN_CLASS_PATH, 3, Rlmm.PLUGIN_LIBS), Map.of()).start();
        admin = c.admin();
    }

    @AfterAll
    static void stop() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (c != null) {
            c.close();
        }
    }

    static void say(String fmt, Object... args) {
        System.out.printf("[scenario] " + fmt + "%n", args);
    }

    static Map<String, String> topicConfig(String topic) throws Exception {
        Config cfg = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic))).all()
                .get(30, TimeUnit.SECONDS).values().iterator().next();
        Map<String, String> out = new HashMap<>();
        for (ConfigEntry e : cfg.entries()) {
            out.put(e.name(), e.value());
        }
        return out;
    }

    static void alter(String topic, Map<String, String> set) throws Exception {
        ClusterChecks.alter(admin, topic, set);
    }

    static void unset(String topic, Set<String> keys) throws Exception {
        ClusterChecks.unset(admin, topic, keys);
    }

    /** The overrides (d) sets on the metadata topic so that Kafka's log cleaner compacts it within seconds. */
    static final Map<String, String> FAST_CLEANER = ClusterChecks.FAST_CLEANER;

    /**
     * Fails unless the metadata topic is back on the broker defaults, which roll a segment after 7
     * days or 1 GiB: what a scenario writes stays in the active segment, which the cleaner never
     * touches, so the scenario can count the records it wrote. Under (d)'s overrides the cleaner
     * legitimately drops a DELETE_SEGMENT_FINISHED value within seconds (the plugin's tombstone of
     * the same key follows it) and, 2 s later, the tombstones too.
     */
    static void assertMetadataTopicNotCompactedSoon() throws Exception {
        // A topic's configs are described by whichever broker the admin picks, and each learns of a
        // change from the metadata log a moment later: a broker behind still shows the override.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Map<String, String> cfg = topicConfig(MetaTopic.NAME);
        while (Long.parseLong(cfg.get("segment.ms")) < TimeUnit.DAYS.toMillis(1) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            cfg = topicConfig(MetaTopic.NAME);
        }
        assertTrue(Long.parseLong(cfg.get("segment.ms")) >= TimeUnit.DAYS.toMillis(1),
                MetaTopic.NAME + " rolls its segments after " + cfg.get("segment.ms") + " ms: the cleaner would remove "
                        + "the records this scenario counts");
    }

    static JsonNode dump(int broker) {
        return ClusterChecks.dump(c, broker);
    }

    static long counter(int broker, String name) {
        JsonNode n = dump(broker).get("counters").get(name);
        return n == null ? 0 : n.asLong();
    }

    static int leaderEpoch(String topic, int partition) throws Exception {
        TopicPartition tp = new TopicPartition(topic, partition);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS)
                .leaderEpoch().orElseThrow();
    }

    static int leader(String topic, int partition) throws Exception {
        return Tiered.describe(admin, topic)
                .partitions().get(partition).leader().id();
    }

    static List<Rec> recordsOf(Uuid topicId) {
        return MetaTopic.read(c.bootstrap()).stream().filter(r -> r.isFor(topicId.toString())).toList();
    }

    static Set<String> journalSegments(String kind, String topic) {
        return ClusterChecks.journalSegments(c, kind, topic);
    }

    static Set<String> remoteSegmentDirs(String topic) throws java.io.IOException {
        return ClusterChecks.remoteSegmentDirs(c, topic);
    }

    // ------------------------------------------------------------------ scenarios

    @Test
    @Order(1)
    void pluginLoadsByClassPathAndLibsAndCreatesACompactedLevelTwoTopic() throws Exception {
        for (int b : c.brokerIds()) {
            KafkaCluster.await("broker " + b + " plugin initialized", Duration.ofSeconds(60),
                    () -> !c.logLines(b, "rlmeta RLMM initialized on broker " + b).isEmpty());
        }
        // org.apache.kafka.common.utils[.internals].ChildFirstClassLoader: the package differs across versions
        String childFirst = "ChildFirstClassLoader";
        assertFalse(c.logLines(1, childFirst).isEmpty(), "broker 1 did not load the plugin by class.path");
        assertFalse(c.logLines(2, childFirst).isEmpty(), "broker 2 did not load the plugin by class.path");
        assertFalse(c.logLines(3, "loaded by jdk.internal.loader.ClassLoaders$AppClassLoader").isEmpty(),
                "broker 3 did not load the plugin from its own class path (libs/)");
        assertEquals("compact", topicConfig(MetaTopic.NAME).get("cleanup.policy"));
        Map<Integer, List<String>> levels = new TreeMap<>();
        for (Rec r : MetaTopic.read(c.bootstrap())) {
            if (r.levelRecord()) {
                levels.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(new String(r.value(), StandardCharsets.US_ASCII));
            }
        }
        assertEquals(Map.of(0, List.of("2"), 1, List.of("2"), 2, List.of("2")), levels,
                "exactly one level record \"2\" per metadata partition");
        say("plugin initialized on brokers 1, 2 (class.path, ChildFirstClassLoader) and 3 (libs/, app class loader); "
                + "%s created with cleanup.policy=compact and level records %s", MetaTopic.NAME, levels);
    }

    @Test
    @Order(2)
    void tieredRecordsComeBackFromOffsetZero() throws Exception {
        String topic = "plug-a";
        Uuid id = Tiered.create(admin, topic, 3, 2, Tiered.topicConfigs());
        Tiered.produce(c.bootstrap(), topic, 3, 0, 600);
        plugARecords = 600;
        Tiered.awaitTiered(c, admin, topic, 3, 2, TIER_WAIT);
        int n = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 3, 0, 600, Duration.ofSeconds(120));
        Map<TopicPartition, Long> localStart = Tiered.offsets(admin, topic, 3, OffsetSpec.earliestLocal());
        // every record the plugin wrote for the topic: a KIP-1266 key that parses, a value rlmeta decodes,
        // the key's epoch the partition's current leader epoch
        List<Rec> recs = recordsOf(id);
        assertFalse(recs.isEmpty());
        Map<Integer, Integer> epochs = new HashMap<>();
        for (int p = 0; p < 3; p++) {
            epochs.put(p, leaderEpoch(topic, p));
        }
        for (Rec r : recs) {
            assertNotNull(r.key(), "a record with a null key at " + r.partition() + "/" + r.offset());
            RlMeta.keyParse(r.key());
            if (!r.tombstone()) {
                assertNotNull(r.decoded(), "undecodable value at " + r.partition() + "/" + r.offset());
                int p = r.record().get("remoteLogSegmentId") != null
                        ? r.record().get("remoteLogSegmentId").get("topicIdPartition").get("partition").asInt()
                        : -1;
                if (r.apiKey() == 0) {
                    assertEquals(epochs.get(p), r.keyEpoch(), "key epoch of " + r.key());
                }
            }
        }
        long copies = Tiered.journalCount(c, "COPY", topic);
        say("(a) %s: %d uploads, local logs start at %s, %d records read back from offset 0 (remote then local); "
                + "%d metadata records, all keyed (KIP-1266), values decoded, segment keys carry leader epochs %s",
                topic, copies, localStart.values(), n, recs.size(), epochs);
    }

    @Test
    @Order(3)
    void badInputIsCountedAndReportedAndBrokersKeepWorking() throws Exception {
        String topic = "plug-a";
        Map<Integer, Map<String, Long>> before = new HashMap<>();
        for (int b : c.brokerIds()) {
            before.put(b, Map.of("tombstone", counter(b, "tombstone"), "undecodable", counter(b, "undecodable"),
                    "bad-key", counter(b, "bad-key")));
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        byte[] garbage = {0x7f, 0x00, 0x13, 0x37, (byte) 0xff};
        String orphanKey = Uuid.randomUuid() + ":nowhere:0:99:0";
        int nullKeysAccepted = 0;
        int nullKeysRefused = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int mp = 0; mp < 3; mp++) {
                producer.send(new ProducerRecord<>(MetaTopic.NAME, mp, orphanKey.getBytes(StandardCharsets.UTF_8), null)).get();
                producer.send(new ProducerRecord<>(MetaTopic.NAME, mp, (orphanKey + ":UPDATE").getBytes(StandardCharsets.UTF_8), garbage)).get();
                try {
                    producer.send(new ProducerRecord<>(MetaTopic.NAME, mp, null, garbage)).get();
                    nullKeysAccepted++;
                } catch (java.util.concurrent.ExecutionException e) {
                    // a compacted topic (level 2) refuses null keys: Kafka's own guard
                    if (!(e.getCause() instanceof org.apache.kafka.common.InvalidRecordException)) {
                        throw e;
                    }
                    nullKeysRefused++;
                }
                producer.send(new ProducerRecord<>(MetaTopic.NAME, mp, "not a kip-1266 key".getBytes(StandardCharsets.UTF_8), garbage)).get();
            }
        }
        // every broker reads at least one metadata partition: each reports what it read
        for (int b : c.brokerIds()) {
            int broker = b;
            KafkaCluster.await("broker " + b + " counted the bad records", Duration.ofSeconds(30),
                    () -> counter(broker, "tombstone") > before.get(broker).get("tombstone")
                            && counter(broker, "undecodable") + counter(broker, "bad-key")
                               >= before.get(broker).get("undecodable") + before.get(broker).get("bad-key") + 2);
            // expected outcomes are summed up (a line a minute at most), never a line a poll
            assertFalse(c.logLines(b, "by outcome: {").stream().noneMatch(l -> l.contains("tombstone=")),
                    "broker " + b + " logged no tombstone count");
            assertTrue(c.logLines(b, "undecodable record(s) at offsets").size() + c.logLines(b, "bad-key record(s) at offsets").size() > 0,
                    "broker " + b + " logged no undecodable/bad-key line");
            assertTrue(c.isAlive(b));
        }
        // and they keep working: more data is tiered and everything is read back
        long copiesBefore = Tiered.journalCount(c, "COPY", topic);
        Tiered.produce(c.bootstrap(), topic, 3, 600, 300);
        plugARecords = 900;
        KafkaCluster.await(topic + " uploads after the bad input", TIER_WAIT,
                () -> Tiered.journalCount(c, "COPY", topic) >= copiesBefore + 3);
        int n = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 3, 0, 900, Duration.ofSeconds(120));
        StringBuilder counts = new StringBuilder();
        for (int b : c.brokerIds()) {
            counts.append(String.format(" broker %d: tombstone %d, undecodable %d, bad-key %d;", b, counter(b, "tombstone"),
                    counter(b, "undecodable"), counter(b, "bad-key")));
        }
        assertEquals(3, nullKeysRefused + nullKeysAccepted);
        say("(c) a tombstone, a garbage value, an unknown key in each metadata partition (null keys: %d refused by "
                + "the compacted topic, %d accepted): every broker alive, counted and logged them (%s), then %d more "
                + "uploads and %d records read back from 0", nullKeysRefused, nullKeysAccepted,
                counts.toString().trim(), Tiered.journalCount(c, "COPY", topic) - copiesBefore, n);
    }

    @Test
    @Order(4)
    void retentionDeletesRemoteSegmentsWithDeletionRecordsAndTombstones() throws Exception {
        String topic = "plug-b";
        Map<String, String> cfg = new HashMap<>(Tiered.topicConfigs());
        cfg.put("retention.bytes", "32768");
        Uuid id = Tiered.create(admin, topic, 1, 2, cfg);
        Tiered.produce(c.bootstrap(), topic, 1, 0, 400);
        KafkaCluster.await(topic + ": 3 remote deletions by retention", TIER_WAIT,
                () -> journalSegments("DELETE", topic).size() >= 3);
        awaitQuiet(Duration.ofSeconds(4), Duration.ofSeconds(60));
        Set<String> deleted = journalSegments("DELETE", topic);
        KafkaCluster.await(topic + ": DELETE_SEGMENT_FINISHED and tombstones for every deleted segment", Duration.ofSeconds(60), () -> {
            List<Rec> recs = recordsOf(id);
            Set<String> finished = recs.stream().filter(r -> r.apiKey() == 1 && r.state() == 3)
                    .map(r -> r.record().get("remoteLogSegmentId").get("id").asText()).collect(Collectors.toSet());
            return finished.containsAll(deleted) && recs.stream().filter(Rec::tombstone).count() >= deleted.size();
        });
        List<Rec> recs = recordsOf(id);
        long tombstones = recs.stream().filter(Rec::tombstone).count();
        long finished = recs.stream().filter(r -> r.apiKey() == 1 && r.state() == 3).count();
        assertEquals(deleted.size(), finished, "one DELETE_SEGMENT_FINISHED per deleted segment");
        Set<String> remaining = remoteSegmentDirs(topic);
        for (String seg : deleted) {
            assertFalse(remaining.contains(seg), "remote files of deleted segment " + seg + " are still there");
        }
        long logStart = Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).values().iterator().next();
        assertTrue(logStart > 0, "the log start offset did not move");
        say("(b) %s: retention deleted %d remote segments: %d DELETE_SEGMENT_FINISHED records, %d tombstones, their "
                + "remote directories gone (%d segments remain remote), log start offset now %d",
                topic, deleted.size(), finished, tombstones, remaining.size(), logStart);
    }

    @Test
    @Order(5)
    void leadershipMovesAndTheNewLeaderKeepsUploadingUnderItsEpoch() throws Exception {
        String topic = "plug-e";
        Uuid id = Tiered.create(admin, topic, 1, 3, Tiered.topicConfigs());
        Tiered.produce(c.bootstrap(), topic, 1, 0, 200);
        Tiered.awaitTiered(c, admin, topic, 1, 2, TIER_WAIT);
        int oldLeader = leader(topic, 0);
        int oldEpoch = leaderEpoch(topic, 0);
        long copiesBefore = Tiered.journalCount(c, "COPY", topic);
        assertTrue(c.stopBroker(oldLeader), "broker " + oldLeader + " did not stop cleanly");
        // the leader and epoch of the description that showed the change: another broker's cache may lag
        int[] seen = {oldLeader, oldEpoch};
        KafkaCluster.await(topic + " has a new leader", Duration.ofSeconds(60), () -> {
            try {
                seen[0] = leader(topic, 0);
                seen[1] = leaderEpoch(topic, 0);
                return seen[0] != oldLeader && seen[1] > oldEpoch;
            } catch (Exception e) {
                return false;
            }
        });
        int newLeader = seen[0];
        int newEpoch = seen[1];
        String bootstrap = c.brokerIds().stream().filter(b -> b != oldLeader).map(c::bootstrap).collect(Collectors.joining(","));
        Tiered.produce(bootstrap, topic, 1, 200, 200);
        KafkaCluster.await(topic + ": the new leader uploads", TIER_WAIT,
                () -> Tiered.journalCount(c, "COPY", topic) >= copiesBefore + 2);
        KafkaCluster.await(topic + ": segment keys with the new epoch", Duration.ofSeconds(30),
                () -> recordsOf(id).stream().anyMatch(r -> r.apiKey() == 0 && r.keyEpoch() == newEpoch));
        Set<Integer> keyEpochs = recordsOf(id).stream().filter(r -> r.apiKey() == 0).map(Rec::keyEpoch)
                .collect(Collectors.toCollection(TreeSet::new));
        assertTrue(keyEpochs.contains(oldEpoch), "no segment key with the first leader's epoch " + oldEpoch + ": " + keyEpochs);
        int n = Tiered.consumeAllAndCheck(bootstrap, topic, 1, 0, 400, Duration.ofSeconds(120));
        c.restartBroker(oldLeader);
        say("(e) %s: leader %d (epoch %d) stopped; broker %d leads in epoch %d and uploaded %d more segments; "
                + "segment keys carry epochs %s; %d records read back from 0; broker %d back",
                topic, oldLeader, oldEpoch, newLeader, newEpoch, Tiered.journalCount(c, "COPY", topic) - copiesBefore,
                keyEpochs, n, oldLeader);
    }

    static boolean compacted() {
        return ClusterChecks.compacted(c.bootstrap());
    }

    static void awaitQuiet(Duration quiet, Duration limit) {
        ClusterChecks.awaitQuiet(c, quiet, limit);
    }

    @Test
    @Order(6)
    void realCompactionThenARestartRebuildsTheSameState() throws Exception {
        alter(MetaTopic.NAME, FAST_CLEANER);
        try {
            compactThenRestart();
        } finally {
            // later scenarios count the deletion records they cause: the cleaner must leave them alone
            unset(MetaTopic.NAME, FAST_CLEANER.keySet());
        }
        assertMetadataTopicNotCompactedSoon();
        say("(d) then the overrides %s removed from %s: segment.ms back to %s", new TreeSet<>(FAST_CLEANER.keySet()), MetaTopic.NAME,
                topicConfig(MetaTopic.NAME).get("segment.ms"));
    }

    static void compactThenRestart() throws Exception {
        // more uploads so that the metadata partitions roll and the cleaner has dirty segments
        Tiered.produce(c.bootstrap(), "plug-a", 3, plugARecords, 300);
        plugARecords += 300;
        Thread.sleep(3500);
        Tiered.produce(c.bootstrap(), "plug-a", 3, plugARecords, 100);
        plugARecords += 100;
        KafkaCluster.await("the log cleaner compacted " + MetaTopic.NAME, Duration.ofSeconds(90), PluginClusterTest::compacted);
        awaitQuiet(Duration.ofSeconds(8), Duration.ofSeconds(90));
        int broker = 2;
        Thread.sleep(2500); // the dump is rewritten at most once a second
        JsonNode before = dump(broker).get("store");
        assertTrue(c.stopBroker(broker), "broker " + broker + " did not stop cleanly");
        JsonNode atClose = dump(broker).get("store");
        assertEquals(before, atClose, "the store changed between the quiet point and the stop");
        Files.delete(c.dumpFile(broker));
        c.restartBroker(broker);
        ClusterChecks.awaitCaughtUp(c, admin, broker, Duration.ofSeconds(90));
        Thread.sleep(2500);
        JsonNode after = dump(broker).get("store");
        assertEquals(before, after, "broker " + broker + " rebuilt a different state from the compacted topic");
        int n = Tiered.consumeAllAndCheck(c.bootstrap(), "plug-a", 3, 0, plugARecords, Duration.ofSeconds(120));
        say("(d) %s compacted by Kafka's log cleaner (offset gaps seen); broker %d restarted and rebuilt a store "
                + "equal to the one it had (diagnostic dump, %d chars); plug-a: %d records read back from 0",
                MetaTopic.NAME, broker, after.toString().length(), n);
    }

    @Test
    @Order(7)
    void disablingTieredStorageWithDeletionRemovesOnlyThatTopicsRemoteLog() throws Exception {
        assertMetadataTopicNotCompactedSoon();
        String topic = "plug-f";
        Uuid id = Tiered.create(admin, topic, 1, 2, Tiered.topicConfigs());
        Tiered.produce(c.bootstrap(), topic, 1, 0, 300);
        Tiered.awaitTiered(c, admin, topic, 1, 2, TIER_WAIT);
        awaitQuiet(Duration.ofSeconds(4), Duration.ofSeconds(60));
        Set<String> otherBefore = remoteSegmentDirs("plug-a");
        assertFalse(remoteSegmentDirs(topic).isEmpty());
        alter(topic, Map.of("remote.storage.enable", "false", "remote.log.delete.on.disable", "true"));
        KafkaCluster.await(topic + ": every remote segment deleted", TIER_WAIT, () -> {
            try {
                return remoteSegmentDirs(topic).isEmpty()
                        && journalSegments("DELETE", topic).containsAll(journalSegments("COPY", topic));
            } catch (java.io.IOException e) {
                return false;
            }
        });
        Set<String> copied = journalSegments("COPY", topic);
        KafkaCluster.await(topic + ": deletion records and tombstones", Duration.ofSeconds(60), () -> {
            List<Rec> recs = recordsOf(id);
            Set<String> finished = recs.stream().filter(r -> r.apiKey() == 1 && r.state() == 3)
                    .map(r -> r.record().get("remoteLogSegmentId").get("id").asText()).collect(Collectors.toSet());
            return finished.containsAll(copied) && recs.stream().filter(Rec::tombstone).count() >= copied.size();
        });
        long tombstones = recordsOf(id).stream().filter(Rec::tombstone).count();
        Set<String> otherAfter = remoteSegmentDirs("plug-a");
        assertTrue(otherAfter.containsAll(otherBefore), "plug-a lost remote segments: " + otherBefore.size() + " -> " + otherAfter.size());
        int n = Tiered.consumeAllAndCheck(c.bootstrap(), "plug-a", 3, 0, plugARecords, Duration.ofSeconds(120));
        say("(f) %s: tiered storage disabled with remote.log.delete.on.disable=true: its %d remote segments deleted, "
                + "DELETE_SEGMENT_FINISHED for each, %d tombstones; plug-a untouched (%d remote segments kept, %d "
                + "records read back from 0)", topic, copied.size(), tombstones, otherAfter.size(), n);
    }

    /** A HOLD-COPY / HOLD-DELETE line of the file RSM's journal: the segment held and the broker holding it. */
    record Held(String segmentId, long start, long end, String broker) {}

    /** Waits for the file RSM to hold a `kind` (copy/delete) of one of the topic's segments (see FileRemoteStorageManager). */
    static Held awaitHeld(String kind, String topic) {
        String prefix = "HOLD-" + kind.toUpperCase(java.util.Locale.ROOT) + " ";
        KafkaCluster.await(topic + ": a " + kind + " held by the file RSM", TIER_WAIT, () -> c.journal().stream()
                .anyMatch(l -> l.startsWith(prefix) && l.contains(":" + topic + "-")));
        String[] f = c.journal().stream().filter(l -> l.startsWith(prefix) && l.contains(":" + topic + "-"))
                .findFirst().orElseThrow().split(" ");
        return new Held(f[2], Long.parseLong(f[3]), Long.parseLong(f[4]), f[5].substring("broker=".length()));
    }

    /** The segment id of a segment record (apiKey 0) or segment update (apiKey 1), else null. */
    static String segmentId(Rec r) {
        JsonNode rec = r.record();
        return rec == null || rec.get("remoteLogSegmentId") == null ? null : rec.get("remoteLogSegmentId").get("id").asText();
    }

    /** True when the topic holds a record of `apiKey` with `state` for the segment. */
    static boolean hasState(List<Rec> recs, String segmentId, int apiKey, int state) {
        return recs.stream().anyMatch(r -> r.apiKey() == apiKey && r.state() == state && segmentId.equals(segmentId(r)));
    }

    static int[] checkDumps(Uuid id) {
        return ClusterChecks.checkDumps(c, id);
    }

    static int checkAcknowledgedReadable(String topic, Set<Integer> acked, int fromIndex) {
        return ClusterChecks.checkAcknowledgedReadable(c.bootstrap(), topic, 1, acked, fromIndex);
    }

    @Test
    @Order(8)
    void killNineOfTheLeaderBetweenCopyStartedAndFinishedLosesNothingAndLeavesNothingDangling() throws Exception {
        String topic = "plug-g";
        Map<String, String> cfg = new HashMap<>(Tiered.topicConfigs());
        cfg.put("min.insync.replicas", "2");
        Uuid id = Tiered.create(admin, topic, 1, 3, cfg);
        Path hold = c.remoteDir().resolve("hold-copy-" + topic);
        ClusterChecks.BackgroundProducer producer = new ClusterChecks.BackgroundProducer(c.bootstrap(), topic);
        Held held;
        int victim;
        long copiesAtKill;
        try (producer) {
            KafkaCluster.await(topic + ": uploads under way", TIER_WAIT, () -> Tiered.journalCount(c, "COPY", topic) >= 2);
            Files.createFile(hold);
            held = awaitHeld("copy", topic);
            victim = leader(topic, 0);
            assertEquals(Integer.toString(victim), held.broker(), "the upload is held on another broker than the leader");
            // the moment: COPY_SEGMENT_STARTED of the held segment in the topic, its FINISHED not
            KafkaCluster.await(topic + ": COPY_SEGMENT_STARTED of " + held.segmentId(), Duration.ofSeconds(30),
                    () -> hasState(recordsOf(id), held.segmentId(), 0, 0));
            assertFalse(hasState(recordsOf(id), held.segmentId(), 1, 1), "COPY_SEGMENT_FINISHED already written");
            copiesAtKill = Tiered.journalCount(c, "COPY", topic);
            c.killBroker(victim);
            Files.delete(hold);
            assertFalse(hasState(recordsOf(id), held.segmentId(), 1, 1), "COPY_SEGMENT_FINISHED written after the kill");
            Thread.sleep(5000);
        }
        c.restartBroker(victim);
        // the abandoned upload is deleted, or its offsets are uploaded again under another id
        KafkaCluster.await(topic + ": the offsets of " + held.segmentId() + " finished under another id, or it is deleted",
                TIER_WAIT, () -> {
                    List<Rec> recs = recordsOf(id);
                    if (hasState(recs, held.segmentId(), 1, 3)) {
                        return true;
                    }
                    return recs.stream().anyMatch(r -> r.apiKey() == 0 && !held.segmentId().equals(segmentId(r))
                            && r.record().get("startOffset").asLong() <= held.start()
                            && held.start() <= r.record().get("endOffset").asLong()
                            && hasState(recs, segmentId(r), 1, 1));
                });
        awaitQuiet(Duration.ofSeconds(6), Duration.ofSeconds(90));
        Thread.sleep(2500);
        List<Rec> recs = recordsOf(id);
        boolean deleted = hasState(recs, held.segmentId(), 1, 3);
        assertFalse(hasState(recs, held.segmentId(), 1, 1), "the abandoned upload was finished after all");
        int read = checkAcknowledgedReadable(topic, producer.acked, 0);
        assertEquals(0, (long) Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).values().iterator().next());
        int[] segs = checkDumps(id);
        say("(g1) %s: leader %d killed (-9) with segment %s [%d-%d] COPY_SEGMENT_STARTED and not FINISHED (upload held "
                + "by the file RSM, %d uploads done, producer running); after the restart %s; %d sent, %d acknowledged, "
                + "all read back from 0 (%d read), none twice; the 3 brokers' dumps hold the same %d segments, finished "
                + "ones never overlap, %d started-only (each covered by finished segments), none DELETE_SEGMENT_STARTED",
                topic, victim, held.segmentId(), held.start(), held.end(), copiesAtKill,
                deleted ? "it was deleted (DELETE_SEGMENT_FINISHED)" : "its offsets were uploaded again under a new id",
                producer.sent.get(), producer.acked.size(), read, segs[0], segs[1]);
    }

    // Kafka 4.4.0 retries a deletion left DELETE_SEGMENT_STARTED on the partition's leader, in
    // RemoteLogManager.RLMExpirationTask.cleanupExpiredRemoteLogSegments: the walk over the leader's
    // epochs queues every DELETE_SEGMENT_STARTED segment it meets before its first retained one, and
    // a second pass deletes the segments of epochs below the leader's earliest epoch. The held
    // segment is the oldest one of epoch 0, so the new leader meets it in one of the two.
    @Test
    @Order(9)
    void killNineOfTheLeaderBetweenDeleteStartedAndFinishedCompletesTheDeletion() throws Exception {
        assertMetadataTopicNotCompactedSoon();
        String topic = "plug-h";
        Map<String, String> cfg = new HashMap<>(Tiered.topicConfigs());
        cfg.put("min.insync.replicas", "2");
        cfg.put("retention.bytes", "49152");
        Uuid id = Tiered.create(admin, topic, 1, 3, cfg);
        Path hold = c.remoteDir().resolve("hold-delete-" + topic);
        Files.createFile(hold);
        ClusterChecks.BackgroundProducer producer = new ClusterChecks.BackgroundProducer(c.bootstrap(), topic);
        Held held;
        int victim;
        try (producer) {
            held = awaitHeld("delete", topic);
            victim = leader(topic, 0);
            assertEquals(Integer.toString(victim), held.broker(), "the deletion is held on another broker than the leader");
            KafkaCluster.await(topic + ": DELETE_SEGMENT_STARTED of " + held.segmentId(), Duration.ofSeconds(30),
                    () -> hasState(recordsOf(id), held.segmentId(), 1, 2));
            assertFalse(hasState(recordsOf(id), held.segmentId(), 1, 3), "DELETE_SEGMENT_FINISHED already written");
            assertTrue(remoteSegmentDirs(topic).contains(held.segmentId()), "the held segment's files are already gone");
            c.killBroker(victim);
            Files.delete(hold);
            Thread.sleep(3000);
        }
        c.restartBroker(victim);
        KafkaCluster.await(topic + ": DELETE_SEGMENT_FINISHED of " + held.segmentId() + " and its tombstones", TIER_WAIT, () -> {
            List<Rec> recs = recordsOf(id);
            return hasState(recs, held.segmentId(), 1, 3)
                    && recs.stream().anyMatch(r -> r.tombstone() && r.key().contains(":" + held.end() + ":"));
        });
        awaitQuiet(Duration.ofSeconds(6), Duration.ofSeconds(90));
        Thread.sleep(2500);
        List<Rec> recs = recordsOf(id);
        long finishedRecords = recs.stream().filter(r -> r.apiKey() == 1 && r.state() == 3 && held.segmentId().equals(segmentId(r))).count();
        assertEquals(1, finishedRecords, "DELETE_SEGMENT_FINISHED records of " + held.segmentId());
        long tombstones = recs.stream().filter(r -> r.tombstone() && r.key().contains(":" + held.end() + ":")).count();
        int finisher = recs.stream().filter(r -> r.apiKey() == 1 && r.state() == 3 && held.segmentId().equals(segmentId(r)))
                .findFirst().orElseThrow().record().get("brokerId").asInt();
        assertTrue(journalSegments("DELETE", topic).contains(held.segmentId()), "the file RSM never deleted " + held.segmentId());
        assertFalse(remoteSegmentDirs(topic).contains(held.segmentId()), "remote files of " + held.segmentId() + " are still there");
        long logStart = Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).values().iterator().next();
        assertTrue(logStart > held.end(), "log start offset " + logStart + " is not past the deleted segment's end " + held.end());
        int read = checkAcknowledgedReadable(topic, producer.acked, -1);
        int[] segs = checkDumps(id);
        say("(g2) %s: leader %d killed (-9) with segment %s [%d-%d] DELETE_SEGMENT_STARTED and not FINISHED (deletion "
                + "held by the file RSM, producer running); after the restart: one DELETE_SEGMENT_FINISHED (by broker %d), "
                + "%d tombstones of its key, its remote files gone, log start %d; %d sent, %d acknowledged, every one from the log start "
                + "read back (%d read), none twice; the 3 brokers' dumps hold the same %d segments, finished ones never "
                + "overlap, %d started-only (covered), none DELETE_SEGMENT_STARTED",
                topic, victim, held.segmentId(), held.start(), held.end(), finisher, tombstones, logStart, producer.sent.get(),
                producer.acked.size(), read, segs[0], segs[1]);
    }

    /**
     * The plugin's own MBean, read over JMX from a real broker process (broker 1, the plugin loaded
     * by class.path through Kafka's ChildFirstClassLoader), through the JDK's attach API and the
     * broker JVM's local management agent: open types only, no plugin class on this side.
     */
    @Test
    @Order(10)
    void theMBeanIsReadOverJmxFromARealBroker() throws Exception {
        String topic = "jmx-t";
        Tiered.create(admin, topic, 3, 3, Tiered.topicConfigs());
        String id = topicId(topic).toString();
        javax.management.ObjectName name = new javax.management.ObjectName("dev.rlmeta:type=RemoteLogMetadataManager");
        com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(c.pid(1)));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        try (javax.management.remote.JMXConnector jmx = javax.management.remote.JMXConnectorFactory.connect(
                new javax.management.remote.JMXServiceURL(address))) {
            javax.management.MBeanServerConnection mbs = jmx.getMBeanServerConnection();
            // every metadata partition holding a partition of jmx-t (all three brokers hold all three) read to its end
            KafkaCluster.await("broker 1's MBean: every held metadata partition initialized and caught up",
                    Duration.ofSeconds(60), () -> {
                        try {
                            boolean[] init = (boolean[]) mbs.getAttribute(name, "Initialized");
                            long[] lag = (long[]) mbs.getAttribute(name, "Lag");
                            long[] applied = (long[]) mbs.getAttribute(name, "AppliedOffsets");
                            for (int p = 0; p < init.length; p++) {
                                int mp = p;
                                boolean held = List.of(0, 1, 2).stream().anyMatch(up -> RlMeta.metadataPartition(
                                        id, up, init.length) == mp);
                                if (held && (!init[p] || lag[p] != 0 || applied[p] < 1)) {
                                    return false;
                                }
                            }
                            return true;
                        } catch (Exception e) {
                            return false;
                        }
                    });
            javax.management.openmbean.TabularData byOutcome =
                    (javax.management.openmbean.TabularData) mbs.getAttribute(name, "RecordsByOutcome");
            Map<String, Long> outcomes = new TreeMap<>();
            for (Object row : byOutcome.values()) {
                javax.management.openmbean.CompositeData cd = (javax.management.openmbean.CompositeData) row;
                outcomes.put((String) cd.get("key"), (Long) cd.get("value"));
            }
            assertEquals(dev.rlmeta.Outcome.COUNT, outcomes.size(), "outcomes " + outcomes);
            assertTrue(outcomes.get("level-2") >= 1, "no level record counted: " + outcomes);
            int[] levels = (int[]) mbs.getAttribute(name, "WriteLevels");
            long[] applied = (long[]) mbs.getAttribute(name, "AppliedOffsets");
            boolean[] init = (boolean[]) mbs.getAttribute(name, "Initialized");
            for (int p = 0; p < levels.length; p++) {
                if (init[p]) {
                    assertEquals(2, levels[p], "write level of metadata partition " + p);
                }
            }
            assertEquals(Boolean.TRUE, mbs.getAttribute(name, "Serving"));
            assertEquals(0L, mbs.getAttribute(name, "Rebuilds"));
            assertEquals(0L, mbs.getAttribute(name, "ConsumerRestarts"));
            say("broker 1's MBean %s over JMX: records by outcome %s; applied offsets %s, lag %s, initialized %s, "
                    + "write levels %s; serving, 0 rebuilds, 0 restarts, last error %s", name, outcomes,
                    java.util.Arrays.toString(applied), java.util.Arrays.toString((long[]) mbs.getAttribute(name, "Lag")),
                    java.util.Arrays.toString(init), java.util.Arrays.toString(levels), mbs.getAttribute(name, "LastError"));
        }
    }

    static Uuid topicId(String topic) throws Exception {
        return Tiered.describe(admin, topic).topicId();
    }
}
