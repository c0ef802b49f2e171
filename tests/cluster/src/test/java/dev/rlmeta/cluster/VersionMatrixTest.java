package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import dev.rlmeta.cluster.MetaTopic.Rec;

/**
 * The one plugin jar on a real single KRaft node (controller and broker in one JVM) of every Kafka
 * version in rlmeta.matrix.versions, loaded by remote.log.metadata.manager.class.path, two
 * versions at a time. Per version: the plugin configures and initializes; a tiered topic's
 * segments are uploaded and every record is read back from offset 0 (the first ones from remote
 * storage); retention deletes remote segments, each with DELETE_SEGMENT_FINISHED and tombstones in
 * __remote_log_metadata; the node restarts with the plugin on its own class path instead (as a jar
 * in libs/ is), which rebuilds the state from the topic: the topic is read again from its log start
 * (remote segments still among them) and new segments are uploaded; the node's log holds no
 * linkage error. Prints one "[version-matrix] <version>: PASS|FAIL ..." line each.
 */
class VersionMatrixTest {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int RECORDS = 240;
    private static final int MORE = 120;
    private static final List<String> LINKAGE_ERRORS = List.of("NoClassDefFoundError", "NoSuchMethodError",
            "AbstractMethodError", "IncompatibleClassChangeError", "ClassNotFoundException",
            "UnsupportedClassVersionError");

    @Test
    void thePluginOnEveryVersion() throws Exception {
        String list = System.getProperty("rlmeta.matrix.versions", "");
        String dir = System.getProperty("rlmeta.matrix.classpaths", "");
        if (list.isBlank() || dir.isBlank()) {
            throw new IllegalStateException("rlmeta.matrix.versions / rlmeta.matrix.classpaths are not set "
                    + "(make version-matrix-test)");
        }
        int parallel = Integer.getInteger("rlmeta.matrix.parallel", 2);
        Map<String, Future<String>> runs = new LinkedHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(parallel);
        try {
            for (String v : list.split(",")) {
                KafkaVersion kafka = new KafkaVersion(v.trim(), Path.of(dir, v.trim() + ".classpath"));
                runs.put(kafka.version(), pool.submit(() -> scenario(kafka)));
            }
            List<String> failed = new ArrayList<>();
            for (Map.Entry<String, Future<String>> r : runs.entrySet()) {
                try {
                    String what = r.getValue().get(10, TimeUnit.MINUTES);
                    System.out.printf("[version-matrix] %s: PASS %s%n", r.getKey(), what);
                } catch (java.util.concurrent.ExecutionException e) {
                    failed.add(r.getKey());
                    System.out.printf("[version-matrix] %s: FAIL %s%n", r.getKey(), e.getCause());
                    e.getCause().printStackTrace(System.out);
                }
            }
            System.out.flush();
            assertTrue(failed.isEmpty(), "failed on Kafka " + failed);
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(2, TimeUnit.MINUTES);
        }
    }

    private static String scenario(KafkaVersion kafka) throws Exception {
        long t0 = System.nanoTime();
        StringBuilder steps = new StringBuilder();
        String topic = "vm";
        try (KafkaCluster c = KafkaCluster.single("vm-" + kafka, KafkaCluster.Rlmm.PLUGIN_CLASS_PATH, Map.of(), kafka)
                .start(); Admin admin = c.admin()) {
            // loaded by class.path (the broker's child-first plugin loader), configured, initialized
            KafkaCluster.await(kafka + ": the plugin initialized", WAIT,
                    () -> !c.logLines(1, "rlmeta RLMM initialized on broker 1").isEmpty());
            List<String> configured = c.logLines(1, "rlmeta RLMM configured on broker 1");
            assertEquals(1, configured.size(), kafka + ": configure() lines " + configured);
            assertTrue(configured.get(0).contains("ChildFirstClassLoader"),
                    kafka + ": not loaded by the plugin class loader: " + configured.get(0));

            step(steps, "started", t0);
            // tiering, and every record back from offset 0
            Uuid id = Tiered.create(admin, topic, 1, 1, Tiered.topicConfigs(kafka));
            Tiered.produce(c.bootstrap(), topic, 1, 0, RECORDS);
            Tiered.awaitTiered(c, admin, topic, 1, 3, WAIT);
            long localStart = Tiered.offsets(admin, topic, 1, OffsetSpec.earliestLocal()).get(tp(topic));
            int read = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 1, 0, RECORDS, WAIT);
            Set<String> copied = journal(c, "COPY", topic);
            KafkaCluster.await(kafka + ": COPY_SEGMENT_FINISHED of every upload", Duration.ofSeconds(60),
                    () -> segmentsInState(c, id, 1).containsAll(copied));

            step(steps, "tiered+read", t0);
            // retention: remote deletions, DELETE_SEGMENT_FINISHED and tombstones
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    List.of(new AlterConfigOp(new ConfigEntry("retention.bytes", "49152"), AlterConfigOp.OpType.SET))))
                    .all().get(60, TimeUnit.SECONDS);
            KafkaCluster.await(kafka + ": 2 remote deletions by retention", WAIT,
                    () -> journal(c, "DELETE", topic).size() >= 2);
            KafkaCluster.await(kafka + ": DELETE_SEGMENT_FINISHED and tombstones of every deleted segment", WAIT,
                    () -> {
                        Set<String> deleted = journal(c, "DELETE", topic);
                        return segmentsInState(c, id, 3).containsAll(deleted)
                                && tombstones(c, id) >= deleted.size();
                    });
            Set<String> deleted = journal(c, "DELETE", topic);
            long tombstones = tombstones(c, id);
            long logStart = Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).get(tp(topic));
            assertTrue(logStart > 0, kafka + ": the log start did not move");
            // retention off again before the restart: a segment tiered late may still push one more over
            // retention.bytes (the log start then moves once more, before or after the restart)
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    List.of(new AlterConfigOp(new ConfigEntry("retention.bytes", ""), AlterConfigOp.OpType.DELETE))))
                    .all().get(60, TimeUnit.SECONDS);

            step(steps, "retention", t0);
            // restart: the plugin rebuilds its state from the topic; read again, then upload again
            assertTrue(c.stopBroker(1), kafka + ": the node did not stop cleanly");
            c.restartBroker(1, KafkaCluster.Rlmm.PLUGIN_LIBS);
            KafkaCluster.await(kafka + ": the plugin initialized again", WAIT,
                    () -> c.logLines(1, "rlmeta RLMM initialized on broker 1").size() >= 2);
            List<String> again2 = c.logLines(1, "rlmeta RLMM configured on broker 1");
            assertEquals(2, again2.size(), kafka + ": configure() lines " + again2);
            assertTrue(again2.get(1).contains("AppClassLoader"),
                    kafka + ": not loaded from the broker's own class path: " + again2.get(1));
            // the restarted leader sets its log start from the remote log (RemoteLogManager), a moment after
            // start: one past the last segment deleted, each deletion with DELETE_SEGMENT_FINISHED
            KafkaCluster.await(kafka + ": log start one past the last deleted segment after the restart", WAIT, () -> {
                try {
                    Set<String> del = journal(c, "DELETE", topic);
                    long lastEnd = c.journal().stream().filter(l -> l.startsWith("DELETE ") && l.contains(":" + topic + "-"))
                            .mapToLong(l -> Long.parseLong(l.split(" ")[4])).max().orElse(-1);
                    return Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).get(tp(topic)) == lastEnd + 1
                            && segmentsInState(c, id, 3).containsAll(del) && tombstones(c, id) >= del.size();
                } catch (Exception e) {
                    return false;
                }
            });
            assertTrue(journal(c, "DELETE", topic).size() >= deleted.size(), kafka + ": deletions lost");
            long startAfter = Tiered.offsets(admin, topic, 1, OffsetSpec.earliest()).get(tp(topic));
            long localAfter = Tiered.offsets(admin, topic, 1, OffsetSpec.earliestLocal()).get(tp(topic));
            assertTrue(localAfter > startAfter, kafka + ": nothing left in remote storage to read ("
                    + startAfter + ".." + localAfter + ")");
            int again = readFrom(c.bootstrap(), topic, startAfter, RECORDS);
            step(steps, "restarted+read", t0);
            Tiered.produce(c.bootstrap(), topic, 1, RECORDS, MORE);
            int copiesBefore = copied.size();
            KafkaCluster.await(kafka + ": uploads by the restarted node", WAIT,
                    () -> journal(c, "COPY", topic).size() > copiesBefore
                            && segmentsInState(c, id, 1).containsAll(journal(c, "COPY", topic)));
            int newCopies = journal(c, "COPY", topic).size() - copiesBefore;
            step(steps, "uploaded", t0);

            for (String e : LINKAGE_ERRORS) {
                List<String> lines = c.logLines(1, e);
                assertTrue(lines.isEmpty(), kafka + ": " + e + " in the node's log: " + lines);
            }
            return String.format("on " + kafka.javaName() + " (%d s) class.path plugin initialized; %d uploads, %d records read from offset 0 "
                            + "(0..%d remote); retention: %d remote deletions, DELETE_SEGMENT_FINISHED for each, %d "
                            + "tombstones; restart with the plugin in libs/: %d records read from log start %d (%d..%d remote), %d new uploads; "
                            + "no linkage error [at s: %s]", (System.nanoTime() - t0) / 1_000_000_000L, copied.size(),
                    read, localStart - 1, deleted.size(), tombstones, again, startAfter, startAfter, localAfter - 1,
                    newCopies, steps.toString().trim());
        }
    }

    private static void step(StringBuilder steps, String what, long t0) {
        steps.append(' ').append(what).append(' ').append((System.nanoTime() - t0) / 1_000_000_000L);
    }

    private static TopicPartition tp(String topic) {
        return new TopicPartition(topic, 0);
    }

    private static Set<String> journal(KafkaCluster c, String kind, String topic) {
        return c.journal().stream().filter(l -> l.startsWith(kind + " ") && l.contains(":" + topic + "-"))
                .map(l -> l.split(" ")[2]).collect(Collectors.toCollection(TreeSet::new));
    }

    private static List<Rec> records(KafkaCluster c, Uuid topicId) {
        return MetaTopic.read(c.bootstrap()).stream().filter(r -> r.isFor(topicId.toString()))
                .collect(Collectors.toList());
    }

    /** Segment ids with an update record (api key 1) of `state` (1 COPY_SEGMENT_FINISHED, 3 DELETE_SEGMENT_FINISHED). */
    private static Set<String> segmentsInState(KafkaCluster c, Uuid topicId, int state) {
        return records(c, topicId).stream().filter(r -> r.apiKey() == 1 && r.state() == state)
                .map(r -> r.record().get("remoteLogSegmentId").get("id").asText()).collect(Collectors.toSet());
    }

    private static long tombstones(KafkaCluster c, Uuid topicId) {
        return records(c, topicId).stream().filter(Rec::tombstone).count();
    }

    /** Reads the single partition from `from` to its end: record i at offset i, each exactly once. */
    private static int readFrom(String bootstrap, String topic, long from, int produced) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        TopicPartition tp = tp(topic);
        int n = 0;
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, from);
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            assertEquals(produced, end, topic + ": end offset");
            long next = from;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (next < end) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out reading " + topic + " from " + from + " at " + next);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() != next || !r.value().equals(Tiered.value(topic, (int) r.offset()))) {
                        throw new AssertionError(topic + ": offset " + r.offset() + " where " + next
                                + " was next, or not record " + r.offset());
                    }
                    next++;
                    n++;
                }
            }
        }
        return n;
    }
}
