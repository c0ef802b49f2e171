package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.junit.jupiter.api.Test;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.RlMeta;
import dev.rlmeta.cluster.KafkaCluster.Rlmm;
import dev.rlmeta.cluster.MetaTopic.Rec;

/**
 * The plugin's backfill on a real 3-broker cluster: a null-key history written by stock TBRLMM
 * brokers (uploads and retention deletions), the brokers switched to the plugin, the
 * level moved to 1 as the migration tool does (cleanup.policy=compact,delete, then the level
 * records), and each partition's leader writes its segments again under their KIP-1266 keys.
 * Interrupted twice through a test hook (brokers 1 and 2 stop after 2 backfill records, in the
 * middle of a plan): broker 1 is killed with kill -9, broker 2 loses the partition's leadership
 * (reassignment and a preferred election); the new leaders finish. Then: a replay of the topic
 * without its null-key records equals the full replay and every broker's store (nothing lost,
 * nothing resurrected); Kafka's cleaner compacts the topic for real (null keys gone), a broker
 * restarted rebuilds the same store, and every record is read back from offset 0.
 */
class BackfillTest {
    static final String TOPIC = "bf";
    static final String DELETED = "bf-del";
    static final int PARTITIONS = 3;
    static final int RECORDS = 660;
    static final Pattern PAUSED = Pattern.compile("rlmeta test hook: backfill paused after \\d+ records, in \\S+:(\\S+)-(\\d+) ");
    static final Pattern DONE = Pattern.compile("rlmeta RLMM backfilled \\S+:(\\S+)-(\\d+): (\\d+) segments, (\\d+) records in (\\d+) ms");

    static void say(String fmt, Object... args) {
        System.out.printf("[scenario] " + fmt + "%n", args);
        System.out.flush();
    }

    @Test
    void leadersBackfillNullKeySegmentsThroughKillAndLeadershipChange() throws Exception {
        long t0 = System.nanoTime();
        Map<String, String> extra = Map.of(
                "rlmm.config.rlmeta.policy.refresh.ms", "1000",
                "rlmm.config.rlmeta.backfill.check.ms", "500",
                "rlmm.config.rlmeta.backfill.leader.delay.ms", "1000");
        try (KafkaCluster c = new KafkaCluster("backfill", 3,
                Map.of(1, Rlmm.STOCK, 2, Rlmm.STOCK, 3, Rlmm.STOCK), extra).start();
             Admin admin = c.admin()) {
            // ---- a null-key history, written by stock TBRLMM
            Uuid topicId = Tiered.create(admin, TOPIC, PARTITIONS, 3, Tiered.topicConfigs());
            Map<String, String> sized = new HashMap<>(Tiered.topicConfigs());
            sized.put("retention.bytes", "49152");
            Uuid deletedId = Tiered.create(admin, DELETED, 1, 3, sized);
            Tiered.produce(c.bootstrap(), TOPIC, PARTITIONS, 0, RECORDS);
            Tiered.produce(c.bootstrap(), DELETED, 1, 0, 300);
            Tiered.awaitTiered(c, admin, TOPIC, PARTITIONS, 5, Duration.ofSeconds(180));
            KafkaCluster.await(DELETED + ": remote deletions", Duration.ofSeconds(120),
                    () -> Tiered.journalCount(c, "DELETE", DELETED, 0) >= 3);
            Thread.sleep(3000); // the last uploads' FINISHED records
            Map<String, Uuid> topics = Map.of(TOPIC, topicId, DELETED, deletedId);
            List<Rec> history = MetaTopic.read(c.bootstrap());
            long nullKeys = history.stream().filter(r -> r.key() == null).count();
            assertEquals(history.size(), nullKeys, "stock TBRLMM writes null keys only");
            TreeSet<String> stockLive = replay(history, topics, false);
            assertTrue(replay(history, topics, true).isEmpty(), "without null keys nothing is known yet");
            say("stock history: %d null-key records, %d live segments, %d remote deletions", nullKeys,
                    stockLive.size(), Tiered.journalCount(c, "DELETE", DELETED));

            // ---- the brokers switched to the plugin (all at once: the rolling switch is the journey test's);
            // brokers 1 and 2 with the interrupting hook
            for (int b : List.of(3, 2, 1)) {
                assertTrue(c.stopBroker(b), "broker " + b + " did not stop cleanly");
            }
            for (int b : List.of(1, 2)) {
                c.jvmOptions(b, List.of("-Drlmeta.test.hooks=true", "-Drlmeta.test.backfill.pause.after.records=2"));
            }
            c.restartBrokers(List.of(1, 2, 3), Rlmm.PLUGIN_CLASS_PATH);
            for (int b : List.of(1, 2, 3)) {
                KafkaCluster.await("broker " + b + " plugin initialized", Duration.ofSeconds(60),
                        () -> !c.logLines(b, "rlmeta RLMM initialized on broker " + b).isEmpty());
            }
            // spreads the leaders over the 3 brokers again: broker 1, back first, leads every partition until
            // the others rejoin the ISR, and an election before that leaves broker 2 leading nothing to backfill
            ClusterChecks.electPreferredUntil(admin,
                    "every partition of " + TOPIC + " and " + DELETED + " led by its preferred replica", null,
                    List.of(TOPIC, DELETED), p -> p.leader() != null && p.leader().id() == p.replicas().get(0).id());
            Thread.sleep(1500); // several backfill checks at level 0
            for (int b : List.of(1, 2, 3)) {
                assertTrue(c.logLines(b, "rlmeta RLMM backfilled").isEmpty(), "a backfill at level 0 on broker " + b);
            }

            // ---- level 1, as the migration tool moves it: the topic configs, then the level records
            long tLevel = System.nanoTime();
            ConfigResource meta = new ConfigResource(ConfigResource.Type.TOPIC, MetaTopic.NAME);
            admin.incrementalAlterConfigs(Map.of(meta, List.of(
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact,delete"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("retention.ms", Long.toString(TimeUnit.DAYS.toMillis(7))),
                            AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
            writeLevelRecords(c, 1);

            Map<Integer, TopicPartition> paused = new TreeMap<>();
            for (int b : List.of(1, 2)) {
                KafkaCluster.await("broker " + b + "'s backfill paused by the hook", Duration.ofSeconds(60),
                        () -> pausedIn(c, b) != null);
                paused.put(b, pausedIn(c, b));
            }
            say("level 1 set; the hook stopped the backfill of broker 1 in %s and of broker 2 in %s after 2 records",
                    paused.get(1), paused.get(2));
            // kill -9 of broker 1 in the middle of its backfill
            c.killBroker(1);
            // leadership of broker 2's partition moves to broker 3 in the middle of its backfill
            TopicPartition moved = paused.get(2);
            moveLeader(admin, moved, 3);
            KafkaCluster.await("broker 2's backfill resumed after losing " + moved, Duration.ofSeconds(60),
                    () -> !c.logLines(2, "rlmeta test hook: backfill resumed").isEmpty());
            c.jvmOptions(1, List.of());
            c.restartBroker(1, Rlmm.PLUGIN_CLASS_PATH);

            // ---- complete: every live segment held by keyed records, on every broker
            KafkaCluster.await("the backfill is complete (a replay without null keys equals the full replay)",
                    Duration.ofSeconds(180), () -> {
                        List<Rec> now = MetaTopic.read(c.bootstrap());
                        return replay(now, topics, true).equals(replay(now, topics, false));
                    });
            long backfillMs = (System.nanoTime() - tLevel) / 1_000_000;
            Set<String> done = new HashSet<>();
            int segments = 0;
            int records = 0;
            long fastest = 0; // records/s of the fastest partition one leader backfilled without interruption
            for (int b : List.of(1, 2, 3)) {
                for (String l : c.logLines(b, "rlmeta RLMM backfilled")) {
                    Matcher m = DONE.matcher(l);
                    assertTrue(m.find(), l);
                    done.add(m.group(1) + "-" + m.group(2));
                    segments += Integer.parseInt(m.group(3));
                    records += Integer.parseInt(m.group(4));
                    long ms = Long.parseLong(m.group(5));
                    if (ms > 0) {
                        fastest = Math.max(fastest, Integer.parseInt(m.group(4)) * 1000L / ms);
                    }
                }
            }
            KafkaCluster.await("a 'backfilled' line for every user partition", Duration.ofSeconds(30), () -> {
                Set<String> d = new HashSet<>();
                for (int b : List.of(1, 2, 3)) {
                    for (String l : c.logLines(b, "rlmeta RLMM backfilled")) {
                        Matcher m = DONE.matcher(l);
                        if (m.find()) {
                            d.add(m.group(1) + "-" + m.group(2));
                        }
                    }
                }
                return d.containsAll(Set.of(TOPIC + "-0", TOPIC + "-1", TOPIC + "-2", DELETED + "-0"));
            });
            List<Rec> after = MetaTopic.read(c.bootstrap());
            TreeSet<String> full = replay(after, topics, false);
            TreeSet<String> keyedOnly = replay(after, topics, true);
            assertEquals(full, keyedOnly, "a live segment is held only by null-key records");
            Set<String> deletedIds = new HashSet<>();
            for (String l : c.journal()) {
                String[] f = l.split(" ");
                if (f[0].equals("DELETE") && f.length > 2) {
                    deletedIds.add(f[2]);
                }
            }
            for (String s : full) {
                assertFalse(deletedIds.contains(s.split(" ")[1]), "a deleted segment is live again: " + s);
            }
            for (String s : stockLive) {
                assertTrue(full.contains(s) || deletedIds.contains(s.split(" ")[1]),
                        "a segment of the stock history was lost: " + s);
            }
            long backfillRecords = after.stream().filter(r -> r.key() != null && !r.levelRecord()).count();
            for (int b : List.of(1, 2, 3)) {
                awaitDumpEquals(c, b, topics, full);
            }
            // the MBeans: nothing pending; what each JVM wrote, plus broker 1's 2 records before its kill,
            // is every keyed record in the topic
            long written = 2;
            List<String> beans = new ArrayList<>();
            for (int b : List.of(1, 2, 3)) {
                Map<String, Object> m = backfillBean(c, b);
                assertEquals(0, ((Number) m.get("BackfillPartitionsPending")).intValue(), "broker " + b + ": " + m);
                written += ((Number) m.get("BackfillRecordsWritten")).longValue();
                beans.add("broker " + b + " " + m);
            }
            assertEquals(after.stream().filter(r -> r.key() != null && !r.levelRecord()).count(), written,
                    "the MBeans' BackfillRecordsWritten (+2 of the killed JVM) vs the keyed records: " + beans);
            say("MBeans over JMX: %s", beans);
            say("backfill complete in %d ms after the level records (including the kill, the restart and the "
                    + "leadership move): %d keyed records in the topic for %d live segments; the leaders' lines "
                    + "report %d segments, %d records (fastest partition: %d records/s, each round produced then "
                    + "applied); a replay without null keys == the full replay == the 3 brokers' stores", backfillMs,
                    backfillRecords, full.size(), segments, records, fastest);

            // ---- Kafka's cleaner compacts the topic for real; a restart rebuilds the same store
            admin.incrementalAlterConfigs(Map.of(meta, List.of(
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("segment.ms", "3000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("min.cleanable.dirty.ratio", "0.01"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("min.compaction.lag.ms", "0"), AlterConfigOp.OpType.SET))))
                    .all().get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (true) { // each level record after segment.ms rolls the segment: the cleaner cleans the rolled ones
                writeLevelRecords(c, 2);
                if (MetaTopic.read(c.bootstrap()).stream().noneMatch(r -> r.key() == null)) {
                    break;
                }
                assertTrue(System.nanoTime() < deadline, "Kafka's cleaner left null-key records for 120 s");
                Thread.sleep(3500);
            }
            List<Rec> compacted = MetaTopic.read(c.bootstrap());
            assertEquals(full, replay(compacted, topics, false), "the compacted topic replays to other segments");
            int broker = 2;
            assertTrue(c.stopBroker(broker));
            Files.deleteIfExists(c.dumpFile(broker));
            c.restartBroker(broker);
            awaitDumpEquals(c, broker, topics, full);
            int n = Tiered.consumeAllAndCheck(c.bootstrap(), TOPIC, PARTITIONS, 0, RECORDS, Duration.ofSeconds(120));
            say("compacted by Kafka's cleaner: %d records left, no null key; broker %d restarted and rebuilt the same "
                    + "%d live segments; %s: %d records read back from offset 0; the test took %d s", compacted.size(),
                    broker, full.size(), TOPIC, n, (System.nanoTime() - t0) / 1_000_000_000L);
            assertFalse(full.isEmpty());
        }
    }

    /** The backfill attributes of broker b's dev.rlmeta:type=RemoteLogMetadataManager, read over JMX (attach API). */
    static Map<String, Object> backfillBean(KafkaCluster c, int b) throws Exception {
        javax.management.ObjectName name = new javax.management.ObjectName("dev.rlmeta:type=RemoteLogMetadataManager");
        com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(c.pid(b)));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        Map<String, Object> out = new TreeMap<>();
        try (javax.management.remote.JMXConnector jmx = javax.management.remote.JMXConnectorFactory.connect(
                new javax.management.remote.JMXServiceURL(address))) {
            javax.management.MBeanServerConnection mbs = jmx.getMBeanServerConnection();
            for (String a : List.of("BackfillRecordsWritten", "BackfillPartitionsPending", "BackfillPartitionsDone",
                    "BackfillLastError")) {
                out.put(a, mbs.getAttribute(name, a));
            }
        }
        return out;
    }

    /** The partition the hook paused broker b's backfill in, or null. */
    static TopicPartition pausedIn(KafkaCluster c, int b) {
        for (String l : c.logLines(b, "rlmeta test hook: backfill paused")) {
            Matcher m = PAUSED.matcher(l);
            if (m.find()) {
                return new TopicPartition(m.group(1), Integer.parseInt(m.group(2)));
            }
        }
        return null;
    }

    static void moveLeader(Admin admin, TopicPartition tp, int to) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic());
        List<Integer> replicas = new ArrayList<>();
        replicas.add(to);
        d.partitions().get(tp.partition()).replicas().forEach(n -> {
            if (n.id() != to) {
                replicas.add(n.id());
            }
        });
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas))))
                .all().get(60, TimeUnit.SECONDS);
        ClusterChecks.electPreferredUntil(admin, tp + " led by broker " + to, Set.of(tp), List.of(tp.topic()),
                p -> p.partition() != tp.partition() || p.leader() != null && p.leader().id() == to);
    }

    static void writeLevelRecords(KafkaCluster c, int level) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<byte[], byte[]> pr = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            byte[] key = MetaTopic.LEVEL_KEY.getBytes(StandardCharsets.US_ASCII);
            byte[] value = Integer.toString(level).getBytes(StandardCharsets.US_ASCII);
            for (int mp = 0; mp < 3; mp++) {
                pr.send(new ProducerRecord<>(MetaTopic.NAME, mp, key, value)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * The live segments ("topic id state start-end") a fresh replay of `recs` holds for `topics`
     * (the rlmeta core, as a broker's store replays), with or without the null-key records.
     */
    static TreeSet<String> replay(List<Rec> recs, Map<String, Uuid> topics, boolean dropNullKeys) {
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        TreeSet<String> out = new TreeSet<>();
        try (MetadataStore s = new MetadataStore()) {
            for (Map.Entry<String, Uuid> t : topics.entrySet()) {
                int n = partitionCount(t.getKey());
                for (int p = 0; p < n; p++) {
                    s.loadPartition(t.getValue().getMostSignificantBits(), t.getValue().getLeastSignificantBits(),
                            t.getKey(), p);
                }
            }
            for (int mp = 0; mp < 3; mp++) {
                List<Rec> part = new ArrayList<>();
                for (Rec r : recs) {
                    if (r.partition() == mp && !(dropNullKeys && r.key() == null)) {
                        part.add(r);
                    }
                }
                long[] offsets = new long[part.size()];
                int[] keyLengths = new int[part.size()];
                int[] valueLengths = new int[part.size()];
                java.io.ByteArrayOutputStream data = new java.io.ByteArrayOutputStream();
                for (int i = 0; i < part.size(); i++) {
                    Rec r = part.get(i);
                    offsets[i] = r.offset();
                    byte[] k = r.key() == null ? null : r.key().getBytes(StandardCharsets.UTF_8);
                    keyLengths[i] = k == null ? -1 : k.length;
                    valueLengths[i] = r.value() == null ? -1 : r.value().length;
                    if (k != null) {
                        data.writeBytes(k);
                    }
                    if (r.value() != null) {
                        data.writeBytes(r.value());
                    }
                }
                s.apply(offsets, data.toByteArray(), keyLengths, valueLengths);
            }
            for (Map.Entry<String, Uuid> t : topics.entrySet()) {
                Uuid id = t.getValue();
                int n = partitionCount(t.getKey());
                for (int p = 0; p < n; p++) {
                    s.markInitialized(id.getMostSignificantBits(), id.getLeastSignificantBits(), t.getKey(), p);
                    for (byte[] b : s.segments(id.getMostSignificantBits(), id.getLeastSignificantBits(), p)) {
                        RemoteLogSegmentMetadata m = (RemoteLogSegmentMetadata) serde.deserialize(b);
                        out.add(t.getKey() + "-" + p + " " + m.remoteLogSegmentId().id() + " " + m.state().id() + " "
                                + m.startOffset() + "-" + m.endOffset());
                    }
                }
            }
        }
        return out;
    }

    static int partitionCount(String topic) {
        return topic.equals(TOPIC) ? PARTITIONS : 1;
    }

    /** Waits until broker b's diagnostic dump holds exactly `expected` for `topics`. */
    static void awaitDumpEquals(KafkaCluster c, int b, Map<String, Uuid> topics, TreeSet<String> expected) {
        Map<String, String> names = new HashMap<>();
        topics.forEach((name, id) -> names.put(id.toString(), name));
        TreeSet<String>[] last = new TreeSet[] {null};
        try {
            KafkaCluster.await("broker " + b + "'s store holds the live segments", Duration.ofSeconds(90), () -> {
                try {
                    JsonNode d = MetaTopic.json(Files.readString(c.dumpFile(b)));
                    TreeSet<String> got = new TreeSet<>();
                    for (JsonNode p : d.get("store").get("partitions")) {
                        String name = names.get(p.get("topicIdPartition").get("id").asText());
                        if (name == null || p.get("segments") == null) {
                            continue;
                        }
                        for (JsonNode s : p.get("segments")) {
                            got.add(name + "-" + p.get("topicIdPartition").get("partition").asInt() + " "
                                    + s.get("id").asText() + " " + s.get("state").asInt() + " "
                                    + s.get("startOffset").asLong() + "-" + s.get("endOffset").asLong());
                        }
                    }
                    last[0] = got;
                    return got.equals(expected);
                } catch (java.io.IOException | RuntimeException e) {
                    return false;
                }
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; expected " + expected + ", broker " + b + " holds " + last[0]);
        }
    }

    static {
        RlMeta.class.getName(); // the native library is loaded with rlmeta's classes
    }
}
