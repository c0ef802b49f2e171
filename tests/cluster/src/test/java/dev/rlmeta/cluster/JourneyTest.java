package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import dev.rlmeta.cluster.KafkaCluster.Rlmm;
import dev.rlmeta.cluster.MetaTopic.Rec;

/**
 * The operator's journey (issue 24, docs/MIGRATION.md) on a real 3-broker Kafka 4.4.0 cluster: two
 * tiered topics (one whose retention deletes segments, one kept for ever with retention.ms=-1) get a
 * null-key history of hundreds of segments from stock TBRLMM brokers while a producer and a reader
 * from offset 0 (remote reads) run throughout; the brokers switch to the plugin one at a time by
 * rolling restarts (level 0 while a stock broker remains); the migration tool of .venv, as an
 * operator runs it, moves to level 1 with --backfill (the plugin on each leader writes the backfill;
 * a broker is killed -9 during it), then, after another kill -9 between the steps, verifies and
 * moves to level 2; Kafka's log cleaner compacts the topic for real; then a full restart. At every
 * step: every acknowledged record readable from its log start, and Kafka's own replay of the topic (KafkaReplay) equals
 * every plugin broker's store; at the end the topic holds only keyed records, tombstones and level
 * records. Prints the records and bootstrap time before and after, the backfill's records and time,
 * and the migration's wall time.
 */
class JourneyTest {
    static final String FOREVER = "journey-forever";
    static final String FINITE = "journey-finite";
    static final int PARTITIONS = 3;
    static final Duration STEP = Duration.ofSeconds(180);
    /** The cleaner settings the operator gives the metadata topic at level 2, so that it compacts within seconds. */
    static final Map<String, String> FAST_CLEANER = Map.of("segment.ms", "3000", "min.cleanable.dirty.ratio", "0.01",
            "delete.retention.ms", "2000", "min.compaction.lag.ms", "0");

    KafkaCluster c;
    Admin admin;
    final Map<String, Traffic> traffic = new TreeMap<>();
    Reader reader;
    /**
     * Upload attempts the migration tool reported as superseded (a second attempt of one range that
     * Kafka serves instead; docs/MIGRATION.md): the only segments a store built before compaction may
     * hold and a fresh replay of the compacted topic may not.
     */
    final Set<String> superseded = new HashSet<>();

    static void say(String fmt, Object... args) {
        System.out.printf("[journey] " + fmt + "%n", args);
        System.out.flush();
    }

    @Test
    void stockClusterToLevelTwoByBackfillUnderTraffic() throws Exception {
        String tool = System.getProperty("rlmeta.migration.tool", "");
        assertTrue(!tool.isBlank() && Files.isExecutable(Path.of(tool)), "no migration tool at rlmeta.migration.tool=" + tool);
        // the plugin's backfill (docs/PLUGIN.md) after a short tenure, re-checked every 2 s; log.cleaner.backoff.ms is 1 s
        Map<String, String> extra = Map.of("rlmm.config.rlmeta.backfill.leader.delay.ms", "3000",
                "rlmm.config.rlmeta.backfill.check.ms", "2000");
        try (KafkaCluster cluster = new KafkaCluster("journey", 3, Map.of(), extra).start();
             Admin a = cluster.admin()) {
            c = cluster;
            admin = a;
            journey(tool);
        } finally {
            for (Traffic t : traffic.values()) {
                t.stop.set(true);
            }
            if (reader != null) {
                reader.stop.set(true);
            }
        }
    }

    void journey(String tool) throws Exception {
        // ---- a null-key history, written by stock brokers under traffic -------------------------------
        Map<String, String> finite = new HashMap<>(Tiered.topicConfigs());
        finite.put("retention.bytes", "65536");
        Tiered.create(admin, FINITE, PARTITIONS, 2, finite);
        Map<String, String> forever = new HashMap<>(Tiered.topicConfigs());
        forever.put("retention.ms", "-1");
        Tiered.create(admin, FOREVER, PARTITIONS, 2, forever);
        traffic.put(FOREVER, new Traffic(c.bootstrap(), FOREVER));
        traffic.put(FINITE, new Traffic(c.bootstrap(), FINITE));
        reader = new Reader(c.bootstrap(), FOREVER);
        KafkaCluster.await("hundreds of remote segments and some deleted", Duration.ofSeconds(400),
                () -> c.journal().stream().filter(l -> l.startsWith("COPY ")).count() >= 240
                        && Tiered.journalCount(c, "DELETE", FINITE) >= 30);
        // then a slower stream for the rest of the journey, so that the topic grows by tens of segments, not hundreds
        for (Traffic t : traffic.values()) {
            t.pauseMs.set(25);
        }
        check("stock history (level 0, 3 stock brokers)");
        List<Rec> history = MetaTopic.read(c.bootstrap());
        Set<String> historySegments = new HashSet<>();
        for (Rec r : history) {
            assertTrue(r.key() == null, "a stock broker wrote a key: " + r.key());
            if (segmentId(r) != null) {
                historySegments.add(segmentId(r));
            }
        }
        say("history: %d null-key records for %d segments (%d uploaded, %d deleted by retention)", history.size(),
                historySegments.size(), c.journal().stream().filter(l -> l.startsWith("COPY ")).count(),
                c.journal().stream().filter(l -> l.startsWith("DELETE ")).count());

        // ---- rolling restarts: each broker switches to the plugin; level 0 while a stock broker remains
        long bootstrapBefore = -1;
        for (int b : c.brokerIds()) {
            assertTrue(c.stopBroker(b), "broker " + b + " did not stop cleanly");
            long t0 = System.nanoTime();
            c.restartBroker(b, Rlmm.PLUGIN_CLASS_PATH);
            long ms = awaitCaughtUp(b, t0);
            bootstrapBefore = Math.max(bootstrapBefore, ms);
            JsonNode d = dump(b);
            for (int p = 0; p < 3; p++) { // -1: a metadata partition it does not read (no user partition of it here)
                if (d.get("positions").get(p).asLong() >= 0) {
                    assertEquals(0, d.get("levels").get(p).asInt(), "broker " + b + " level of partition " + p);
                }
            }
            check("broker " + b + " switched to the plugin (bootstrap " + ms + " ms, level 0)");
        }
        int recordsBefore = MetaTopic.read(c.bootstrap()).size();
        say("before: %d records in %s; bootstrap (restart to caught up) %d ms at most", recordsBefore, MetaTopic.NAME,
                bootstrapBefore);

        // ---- level 1 with --backfill, killed after its first action and run again; kill -9 during the backfill
        long migration0 = System.nanoTime();
        Run killed = run(tool, 1, "--upgrade-to-v1", "--backfill");
        assertEquals(-9, killed.rc, killed.out);
        Run v1 = run(tool, 0, "--upgrade-to-v1", "--backfill");
        assertEquals(0, v1.rc, v1.out);
        assertTrue(v1.out.contains("✅ Upgrade to version 1 (backfill) completed successfully!"), v1.out);
        long backfill0 = System.nanoTime();
        int victim = leaderOf(FOREVER, 0);
        c.killBroker(victim);
        say("kill -9 of broker %d (leader of %s-0) during the backfill", victim, FOREVER);
        Thread.sleep(3000);
        c.restartBroker(victim);
        awaitCaughtUp(victim, System.nanoTime());
        Run progress = run(tool, 0, "--check", "--backfill");
        say("backfill progress: %s", lastLine(progress.out, "Live segments:"));
        String[] lastCheck = {""};
        try {
            KafkaCluster.await("the backfill to complete (--check --backfill)", STEP, () -> {
                Run r = run(tool, 0, "--check", "--backfill");
                lastCheck[0] = r.out;
                return r.rc == 0;
            });
        } catch (AssertionError e) {
            Files.writeString(c.work().resolve("last-check.txt"), lastCheck[0]);
            String[] lines = lastCheck[0].split("\n");
            say("the last --check --backfill (all of it in %s):%n%s", c.work().resolve("last-check.txt"),
                    String.join("\n", java.util.Arrays.copyOfRange(lines, 0, Math.min(lines.length, 40))));
            throw e;
        }
        long backfillMs = (System.nanoTime() - backfill0) / 1_000_000;
        int backfilled = 0;
        for (Rec r : MetaTopic.read(c.bootstrap())) {
            if (r.key() != null && r.apiKey() == 0 && historySegments.contains(segmentId(r))) {
                backfilled++;
            }
        }
        check("level 1, backfill complete");

        // ---- kill -9 between the steps, then level 2 (verified), killed after its first action and run again
        int between = leaderOf(FINITE, 1);
        c.killBroker(between);
        say("kill -9 of broker %d between --upgrade-to-v1 and --upgrade-to-v2", between);
        Thread.sleep(2000);
        c.restartBroker(between);
        awaitCaughtUp(between, System.nanoTime());
        Run killed2 = run(tool, 1, "--upgrade-to-v2", "--backfill", "--backfill-wait-ms", "120000");
        assertEquals(-9, killed2.rc, killed2.out);
        Run v2 = run(tool, 0, "--upgrade-to-v2", "--backfill", "--backfill-wait-ms", "120000");
        assertEquals(0, v2.rc, v2.out);
        assertTrue(v2.out.contains("✅ BACKFILL VERIFIED") && v2.out.contains("Successfully upgraded to remote.log.metadata.version=2"), v2.out);
        long migrationMs = (System.nanoTime() - migration0) / 1_000_000;
        say("migration: %s", lastLine(v2.out, "Live segments:"));
        java.util.regex.Matcher sup = java.util.regex.Pattern.compile("superseded: segment=(\\S+) .*Kafka serves segment=(\\S+);")
                .matcher(v2.out);
        while (sup.find()) {
            superseded.add(sup.group(1));
            say("superseded upload attempt %s (Kafka serves %s): dropped by compaction, never served", sup.group(1), sup.group(2));
        }
        check("level 2");

        // ---- Kafka's cleaner compacts the topic for real -------------------------------------------
        alter(FAST_CLEANER);
        KafkaCluster.await("Kafka's log cleaner to drop every null-key record", STEP,
                () -> MetaTopic.read(c.bootstrap()).stream().noneMatch(r -> r.key() == null));
        check("compacted by Kafka's log cleaner");

        // ---- a full restart ------------------------------------------------------------------------
        for (int b : c.brokerIds()) {
            assertTrue(c.stopBroker(b), "broker " + b + " did not stop cleanly");
        }
        // every broker is started before any is awaited: with all of them down, a metadata partition
        // comes back only with the last replica of its ISR, so the first broker up may not read it yet
        long full0 = System.nanoTime();
        for (int b : c.brokerIds()) {
            Files.deleteIfExists(c.dumpFile(b));
            c.restartBroker(b);
        }
        long fullMs = -1;
        for (int b : c.brokerIds()) {
            fullMs = Math.max(fullMs, awaitCaughtUp(b, full0));
        }
        check("after a full restart (every broker caught up " + fullMs + " ms after the first start)");
        // the bootstrap measured as before the migration: one broker restarted at a time, the others up
        long bootstrapAfter = -1;
        for (int b : c.brokerIds()) {
            assertTrue(c.stopBroker(b), "broker " + b + " did not stop cleanly");
            Files.deleteIfExists(c.dumpFile(b));
            long t0 = System.nanoTime();
            c.restartBroker(b);
            bootstrapAfter = Math.max(bootstrapAfter, awaitCaughtUp(b, t0));
        }
        List<Rec> end = MetaTopic.read(c.bootstrap());
        for (Rec r : end) {
            assertTrue(r.key() != null, "a null-key record left at offset " + r.partition() + "/" + r.offset());
            assertFalse(superseded.contains(segmentId(r)) && !r.tombstone(),
                    "a superseded attempt is still held at " + r.partition() + "/" + r.offset());
        }
        long tombstones = end.stream().filter(Rec::tombstone).count();
        long levels = end.stream().filter(Rec::levelRecord).count();
        for (Traffic t : traffic.values()) {
            t.stop.set(true);
            t.thread.join(120_000);
        }
        reader.stop.set(true);
        reader.thread.join(120_000);
        say("after: %d records in %s (%d keyed values, %d tombstones, %d level records, no null key); bootstrap %d ms at most "
                + "(before: %d records, %d ms)", end.size(), MetaTopic.NAME, end.size() - tombstones - levels, tombstones, levels,
                bootstrapAfter, recordsBefore, bootstrapBefore);
        say("backfill: %d segment records written again under keys in %d ms; migration wall time (level 0 -> 2, kills "
                + "included) %d ms; traffic: %s acknowledged, %d reads from offset 0 (%d records)", backfilled, backfillMs,
                migrationMs, ackedSummary(), reader.passes.get(), reader.records.get());
    }

    // ------------------------------------------------------------------ the checks at every step

    /**
     * Pauses the producers until remote storage is quiet; then every acknowledged record is readable
     * from its log start, and Kafka's own replay of the topic equals every running plugin broker's store.
     */
    void check(String step) throws Exception {
        for (Traffic t : traffic.values()) {
            t.paused.set(true);
        }
        try {
            awaitQuiet();
            int forever = readable(FOREVER, true);
            int finite = readable(FINITE, false);
            String stores = storesEqualReplay();
            say("%s: every acknowledged record readable from the log start (%s: %d from offset 0, %s: %d); %s", step,
                    FOREVER, forever, FINITE, finite, stores);
        } finally {
            for (Traffic t : traffic.values()) {
                t.paused.set(false);
            }
        }
    }

    void awaitQuiet() throws InterruptedException {
        long deadline = System.nanoTime() + STEP.toNanos();
        int lines = c.journal().size();
        long since = System.nanoTime();
        while (System.nanoTime() - since < TimeUnit.SECONDS.toNanos(4)) {
            assertTrue(System.nanoTime() < deadline, "remote storage never went quiet");
            Thread.sleep(500);
            if (c.journal().size() != lines) {
                lines = c.journal().size();
                since = System.nanoTime();
            }
        }
    }

    /** Reads the topic from its earliest offset; every acknowledged record at or after the first read is there. */
    int readable(String topic, boolean fromZero) {
        Traffic t = traffic.get(topic);
        Map<Integer, Set<Integer>> read = new HashMap<>();
        Map<Integer, Integer> first = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : Tiered.readAll(c.bootstrap(), topic, Duration.ofSeconds(120))) {
            int idx = Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8).split("#", 3)[1]);
            assertTrue(read.computeIfAbsent(r.partition(), k -> new HashSet<>()).add(idx), topic + ": record " + idx + " read twice");
            first.putIfAbsent(r.partition(), idx);
        }
        Set<Integer> lost = new TreeSet<>();
        for (int i : t.acked) {
            int p = i % PARTITIONS;
            int from = fromZero ? 0 : first.getOrDefault(p, Integer.MAX_VALUE);
            if (i >= from && !read.getOrDefault(p, Set.of()).contains(i)) {
                lost.add(i);
            }
        }
        assertTrue(lost.isEmpty(), topic + ": acknowledged records not readable: " + lost);
        return read.values().stream().mapToInt(Set::size).sum();
    }

    /**
     * Kafka's own replay of the topic (the stock classes of the brokers' version, {@link KafkaReplay})
     * against each running plugin broker's store: the journey topics' live segments.
     */
    String storesEqualReplay() throws Exception {
        List<Rec> recs = MetaTopic.read(c.bootstrap());
        Map<TopicPartition, Long> ends = Tiered.offsets(admin, MetaTopic.NAME, 3, OffsetSpec.latest());
        KafkaReplay truth = new KafkaReplay(c.kafka(), recs);
        assertTrue(truth.thrown.isEmpty(), "Kafka's replay threw on events: " + truth.thrown);
        Map<String, Set<String>> fresh = new TreeMap<>();
        for (String k : truth.partitions()) {
            String name = truth.topicName(k);
            if (!name.startsWith("journey-")) {
                continue;
            }
            String[] idAndPartition = k.split(":");
            Set<String> segs = new TreeSet<>();
            for (String line : truth.segments(idAndPartition[0], Integer.parseInt(idAndPartition[1]))) {
                String[] f = line.split(" ");
                segs.add(f[0] + " " + f[1] + " " + f[2]); // id state start-end, as segments(store) gives them
            }
            fresh.put(name + "-" + idAndPartition[1], segs);
        }
        List<Integer> plugins = new ArrayList<>();
        for (int b : c.brokerIds()) {
            if (c.rlmm(b) != Rlmm.STOCK && c.isAlive(b)) {
                plugins.add(b);
                KafkaCluster.await("broker " + b + "'s store to equal Kafka's replay", Duration.ofSeconds(60), () -> {
                    JsonNode d = dump(b);
                    for (int p = 0; p < 3; p++) {
                        long pos = d.get("positions").get(p).asLong();
                        if (pos >= 0 && pos < ends.get(new TopicPartition(MetaTopic.NAME, p))) {
                            return false;
                        }
                    }
                    Map<String, Set<String>> held = segments(d.get("store"));
                    // a store read before compaction may still hold a superseded attempt; nothing else differs
                    held.values().forEach(v -> v.removeIf(seg -> superseded.contains(seg.split(" ", 2)[0])));
                    Map<String, Set<String>> want = new TreeMap<>();
                    fresh.forEach((k, v) -> want.put(k, new TreeSet<>(v)));
                    want.values().forEach(v -> v.removeIf(seg -> superseded.contains(seg.split(" ", 2)[0])));
                    want.keySet().retainAll(held.keySet());
                    held.values().removeIf(Set::isEmpty);
                    want.values().removeIf(Set::isEmpty);
                    return !d.get("store").get("partitions").isEmpty() && held.equals(want);
                });
            }
        }
        int live = fresh.values().stream().mapToInt(Set::size).sum();
        return "Kafka " + c.kafka() + "'s replay (" + recs.size() + " records, " + live + " live segments) equals the stores of "
                + (plugins.isEmpty() ? "no plugin broker yet" : "plugin brokers " + plugins);
    }

    /** The journey topics' live segments in a store dump, by user partition: "id state start-end". */
    static Map<String, Set<String>> segments(JsonNode store) {
        Map<String, Set<String>> out = new TreeMap<>();
        for (JsonNode p : store.get("partitions")) {
            String topic = p.get("topicIdPartition").get("name").asText();
            if (!topic.startsWith("journey-")) {
                continue;
            }
            Set<String> segs = out.computeIfAbsent(topic + "-" + p.get("topicIdPartition").get("partition").asInt(),
                    k -> new TreeSet<>());
            for (JsonNode s : p.get("segments")) {
                segs.add(s.get("id").asText() + " " + s.get("state").asInt() + " " + s.get("startOffset").asLong() + "-"
                        + s.get("endOffset").asLong());
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ helpers

    JsonNode dump(int broker) {
        try {
            return MetaTopic.json(Files.readString(c.dumpFile(broker)));
        } catch (java.io.IOException e) {
            throw new AssertionError("broker " + broker + " wrote no dump at " + c.dumpFile(broker));
        }
    }

    /** Waits until a plugin broker has read every metadata partition to the end it had when called; returns ms since t0. */
    long awaitCaughtUp(int broker, long t0) throws Exception {
        Map<TopicPartition, Long> ends = Tiered.offsets(admin, MetaTopic.NAME, 3, OffsetSpec.latest());
        KafkaCluster.await("broker " + broker + " read " + MetaTopic.NAME + " to its end", STEP, () -> {
            if (!Files.exists(c.dumpFile(broker))) {
                return false;
            }
            try {
                JsonNode d = MetaTopic.json(Files.readString(c.dumpFile(broker)));
                boolean assigned = false; // the metadata partitions of the user partitions it holds
                for (int p = 0; p < 3; p++) {
                    long pos = d.get("positions").get(p).asLong();
                    if (pos >= 0 && pos < ends.get(new TopicPartition(MetaTopic.NAME, p))) {
                        return false;
                    }
                    assigned |= pos >= 0;
                }
                return assigned;
            } catch (Exception | AssertionError e) {
                return false;
            }
        });
        return (System.nanoTime() - t0) / 1_000_000;
    }

    int leaderOf(String topic, int partition) throws Exception {
        return Tiered.describe(admin, topic)
                .partitions().get(partition).leader().id();
    }

    void alter(Map<String, String> set) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, MetaTopic.NAME);
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(Map.of(res, ops)).all().get(30, TimeUnit.SECONDS);
    }

    static String segmentId(Rec r) {
        JsonNode rec = r.record();
        return rec == null || rec.get("remoteLogSegmentId") == null ? null : rec.get("remoteLogSegmentId").get("id").asText();
    }

    record Run(int rc, String out) {}

    /** The tool as an operator runs it; `killAfter` > 0 makes it kill itself (-9) after that many actions. */
    Run run(String tool, int killAfter, String... args) {
        List<String> cmd = new ArrayList<>(List.of(tool, "--bootstrap-server", c.bootstrap(), "--no-progress"));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().remove("RLMETA_MIGRATION_KILL_AFTER_ACTIONS");
            if (killAfter > 0) {
                pb.environment().put("RLMETA_MIGRATION_KILL_AFTER_ACTIONS", Integer.toString(killAfter));
            }
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("the tool did not finish: " + cmd);
            }
            // a process killed by SIGKILL: Java reports 128 + 9
            return new Run(p.exitValue() == 137 ? -9 : p.exitValue(), out);
        } catch (java.io.IOException | InterruptedException e) {
            throw new AssertionError("running " + cmd + ": " + e);
        }
    }

    static String lastLine(String out, String prefix) {
        String found = "";
        for (String l : out.split("\n")) {
            if (l.startsWith(prefix)) {
                found = l;
            }
        }
        return found;
    }

    String ackedSummary() {
        StringBuilder sb = new StringBuilder();
        traffic.forEach((t, tr) -> sb.append(sb.length() == 0 ? "" : ", ").append(tr.acked.size()).append(" ").append(t));
        return sb.toString();
    }

    /** Produces records 0, 1, ... of a topic (record i to partition i % 3), acks=all, idempotent, until stopped. */
    static final class Traffic {
        final Set<Integer> acked = ConcurrentHashMap.newKeySet();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicBoolean paused = new AtomicBoolean();
        /** Between two sends: 1 ms while the history is written, more afterwards. */
        final AtomicInteger pauseMs = new AtomicInteger(1);
        final Thread thread;

        Traffic(String bootstrap, String topic) {
            thread = new Thread(() -> {
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
                p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120000);
                p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
                p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
                p.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
                int i = 0;
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                    while (!stop.get()) {
                        if (paused.get()) {
                            producer.flush();
                            Thread.sleep(100);
                            continue;
                        }
                        int idx = i++;
                        producer.send(new ProducerRecord<>(topic, idx % PARTITIONS, null, Tiered.value(topic, idx)), (md, err) -> {
                            if (err == null) {
                                acked.add(idx);
                            }
                        });
                        Thread.sleep(pauseMs.get());
                    }
                    producer.flush();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, topic + "-producer");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /** Reads a topic from offset 0 to its end, again and again (remote reads), until stopped. */
    static final class Reader {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger passes = new AtomicInteger();
        final AtomicLong records = new AtomicLong();
        final Thread thread;

        Reader(String bootstrap, String topic) {
            thread = new Thread(() -> {
                Properties p = new Properties();
                p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
                List<TopicPartition> tps = new ArrayList<>();
                for (int i = 0; i < PARTITIONS; i++) {
                    tps.add(new TopicPartition(topic, i));
                }
                try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
                    consumer.assign(tps);
                    while (!stop.get()) {
                        consumer.seekToBeginning(tps);
                        Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                        while (!stop.get() && System.nanoTime() < deadline
                                && tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                            records.addAndGet(consumer.poll(Duration.ofMillis(500)).count());
                        }
                        passes.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    if (!stop.get()) {
                        say("reader stopped: %s", e);
                    }
                }
            }, topic + "-reader");
            thread.setDaemon(true);
            thread.start();
        }
    }
}
