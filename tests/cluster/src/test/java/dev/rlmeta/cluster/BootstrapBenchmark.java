package dev.rlmeta.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadataManager;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.junit.jupiter.api.Test;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PlannedRecords;
import dev.rlmeta.RlMeta;
import dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager;

/**
 * The bootstrap benchmark (make bench-plugin; a measurement, it asserts nothing about time): a
 * history of `rlmeta.bench.records` metadata records (default 1.2 M, the KIP's "1 TB/day for a
 * year") in __remote_log_metadata of a real Kafka 4.4.0 broker, and the wall time from a fresh
 * RLMM instance's start to isReady() for every user partition (cold JVM state of the RLMM, warm
 * broker page cache), for: stock TBRLMM on the append-only history (null keys, version 0, as stock
 * brokers write it); the plugin on that same topic; the plugin on the keyed history its planner
 * writes at level 2, after Kafka's log cleaner has compacted it. Records and bytes on disk are
 * reported before and after compaction.
 *
 * <p>Each case runs `rlmeta.bench.rounds` times (default 5) with a fresh instance each time; stock
 * and the plugin alternate on the append-only topic (who goes first alternates too, so neither gets
 * the JVM's cold start every time). Each round prints the load average; the median and the best
 * are summarized. isReady() is polled every millisecond. For the plugin, its start timeline splits
 * the time into the clients' start (configure() to the consumer's positions known) and the replay
 * (positions to every partition initialized). The floor: a bare KafkaConsumer with the plugin's
 * consumer settings (max.poll.records 5000) reading the compacted topic to its end (no RLMM, no core), timed the same way.
 */
class BootstrapBenchmark {
    static final String META = "__remote_log_metadata";
    static final int META_PARTITIONS = 50;
    static final int USER_PARTITIONS = 500;
    static final int LIVE_PER_PARTITION = 20;

    static final int ROUNDS = Integer.getInteger("rlmeta.bench.rounds", 5);
    static KafkaCluster c;
    static int segmentsPerPartition;
    static Path work;

    static void say(String fmt, Object... args) {
        System.out.printf("[bench] " + fmt + "%n", args);
        System.out.flush();
    }

    static List<TopicIdPartition> userPartitions() {
        List<TopicIdPartition> out = new ArrayList<>();
        java.util.Random r = new java.util.Random(1266);
        for (int t = 0; t < USER_PARTITIONS / 50; t++) {
            Uuid id = new Uuid(r.nextLong(), r.nextLong());
            for (int p = 0; p < 50; p++) {
                out.add(new TopicIdPartition(id, p, "bench-" + t));
            }
        }
        return out;
    }

    /** The lifecycle events of the history, in order, partition by partition. */
    interface EventSink {
        void accept(TopicIdPartition tp, RemoteLogMetadata event) throws Exception;
    }

    static long history(List<TopicIdPartition> tps, long records, EventSink sink) throws Exception {
        int segments = (int) Math.max(LIVE_PER_PARTITION, (records / tps.size() + 2L * LIVE_PER_PARTITION) / 4);
        segmentsPerPartition = segments;
        long n = 0;
        long ts = 1_700_000_000_000L;
        for (TopicIdPartition tp : tps) {
            for (int s = 0; s < segments; s++) {
                Uuid id = new Uuid(tp.topicId().getMostSignificantBits() ^ s, tp.topicId().getLeastSignificantBits() + tp.partition() * 1_000_003L + s);
                RemoteLogSegmentId sid = new RemoteLogSegmentId(tp, id);
                long start = s * 10_000L;
                sink.accept(tp, new RemoteLogSegmentMetadata(sid, start, start + 9_999, ts, 1, ts, 1 << 20,
                        Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(0, start)));
                sink.accept(tp, new RemoteLogSegmentMetadataUpdate(sid, ts, Optional.empty(),
                        RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1));
                n += 2;
                if (s < segments - LIVE_PER_PARTITION) {
                    sink.accept(tp, new RemoteLogSegmentMetadataUpdate(sid, ts, Optional.empty(),
                            RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 1));
                    sink.accept(tp, new RemoteLogSegmentMetadataUpdate(sid, ts, Optional.empty(),
                            RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 1));
                    n += 2;
                }
                ts++;
            }
        }
        return n;
    }

    static KafkaProducer<byte[], byte[]> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap());
        // acks=all + idempotence: retries never reorder a segment's events (as the brokers' own producers)
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 512 * 1024);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L << 20);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Bytes and count of the metadata topic's .log files (files the cleaner swaps meanwhile are skipped). */
    static long[] onDisk() throws Exception {
        long bytes = 0;
        long files = 0;
        List<Path> dirs;
        try (Stream<Path> s = Files.list(c.dataDir(1))) {
            dirs = s.filter(d -> d.getFileName().toString().startsWith(META + "-")).toList();
        }
        for (Path d : dirs) {
            List<Path> logs;
            try (Stream<Path> s = Files.list(d)) {
                logs = s.filter(f -> f.getFileName().toString().endsWith(".log")).toList();
            } catch (java.nio.file.NoSuchFileException e) {
                continue;
            }
            for (Path f : logs) {
                try {
                    bytes += Files.size(f);
                    files++;
                } catch (java.nio.file.NoSuchFileException e) {
                    // replaced by the cleaner between the listing and now
                }
            }
        }
        return new long[] {bytes, files};
    }

    /** Waits until the metadata log files stop shrinking for 20 s (at most 10 minutes). */
    static void awaitCleaner() throws Exception {
        long t0 = System.nanoTime();
        long last = Long.MAX_VALUE;
        long stableSince = System.nanoTime();
        while (System.nanoTime() - stableSince < 20_000_000_000L && System.nanoTime() - t0 < 600_000_000_000L) {
            Thread.sleep(2000);
            long now = onDisk()[0];
            if (now < last) {
                last = now;
                stableSince = System.nanoTime();
            }
        }
    }

    static long recordCount() {
        Properties p = new Properties();
        p.put("bootstrap.servers", c.bootstrap());
        p.put("enable.auto.commit", "false");
        p.put("exclude.internal.topics", "false");
        p.put("max.poll.records", "5000");
        long n = 0;
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(p,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            var tps = consumer.partitionsFor(META).stream()
                    .map(i -> new org.apache.kafka.common.TopicPartition(META, i.partition())).toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            var ends = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + 600_000_000_000L;
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp)) && System.nanoTime() < deadline) {
                n += consumer.poll(Duration.ofMillis(500)).count();
            }
        }
        return n;
    }

    /**
     * The floor of any consumer-based bootstrap: a bare KafkaConsumer (created in the timed span,
     * the settings the benchmark gives the plugin's) assigned all metadata partitions, from the beginning, polled
     * until its positions reach the end offsets. Seconds; checks it read `expected` records.
     */
    static double bareRead(long expected) {
        long t0 = System.nanoTime();
        Properties p = new Properties();
        p.put("bootstrap.servers", c.bootstrap());
        p.put("enable.auto.commit", "false");
        p.put("exclude.internal.topics", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("max.poll.records", "5000");
        long n = 0;
        double created;
        double positioned;
        int polls = 0;
        double secs;
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(p,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            created = (System.nanoTime() - t0) / 1e6;
            List<org.apache.kafka.common.TopicPartition> all = new ArrayList<>();
            for (int mp = 0; mp < META_PARTITIONS; mp++) {
                all.add(new org.apache.kafka.common.TopicPartition(META, mp));
            }
            consumer.assign(all);
            consumer.seekToBeginning(all);
            var ends = consumer.endOffsets(all);
            for (var tp : all) {
                consumer.position(tp);
            }
            positioned = (System.nanoTime() - t0) / 1e6;
            while (all.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                n += consumer.poll(Duration.ofMillis(100)).count();
                polls++;
            }
            secs = (System.nanoTime() - t0) / 1e9;
        }
        say("floor: bare consumer read %d records (expected %d) in %.3f s: created @%.1f ms, positions @%.1f ms, "
                + "%d poll(s) to the end (load %s)", n, expected, secs, created, positioned, polls, load());
        return secs;
    }

    static Map<String, Object> rlmmConfigs(String name) {
        Map<String, Object> m = new HashMap<>();
        m.put("remote.log.metadata.common.client.bootstrap.servers", c.bootstrap());
        m.put("broker.id", "1");
        m.put("node.id", "1");
        m.put("log.dir", work.toString());
        m.put("remote.log.metadata.topic.num.partitions", Integer.toString(META_PARTITIONS));
        m.put("remote.log.metadata.topic.replication.factor", "1");
        m.put("remote.log.metadata.topic.min.isr", "1");
        m.put("remote.log.metadata.consumer.max.poll.records", "5000");
        m.put("remote.log.metadata.producer.client.id", "bench-" + name);
        return m;
    }

    /** The 1-minute load average now (/proc/loadavg), for the record of each figure. */
    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "?";
        }
    }

    /** The figures of one case over its rounds. */
    static final class Rounds {
        final String name;
        final List<Double> secs = new ArrayList<>();
        final List<String> loads = new ArrayList<>();
        final List<Double> clientStart = new ArrayList<>(); // plugin only: ms to the consumer's positions
        final List<Double> replay = new ArrayList<>();      // plugin only: ms from positions to all initialized

        Rounds(String name) {
            this.name = name;
        }

        static double median(List<Double> v) {
            List<Double> s = new ArrayList<>(v);
            s.sort(null);
            int n = s.size();
            return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
        }

        double median() {
            return median(secs);
        }

        double best() {
            return secs.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        }

        String line() {
            StringBuilder sb = new StringBuilder(String.format("%s: median %.3f s, best %.3f s over %d rounds %s (load %s)",
                    name, median(), best(), secs.size(), secs.stream().map(x -> String.format("%.3f", x)).toList(),
                    loads));
            if (!clientStart.isEmpty()) {
                sb.append(String.format("; clients' start median %.0f ms, replay median %.0f ms", median(clientStart),
                        median(replay)));
            }
            return sb.toString();
        }
    }

    /** Polls `ready` every millisecond; seconds from t0 until it holds. */
    static double awaitReady(String what, long t0, java.util.function.BooleanSupplier ready) {
        long deadline = t0 + Duration.ofMinutes(15).toNanos();
        while (!ready.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after 15 minutes waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    /** One round of a case: a fresh instance, the load, and (plugin) its start split. */
    static void round(Rounds r, RemoteLogMetadataManager rlmm, List<TopicIdPartition> tps) throws Exception {
        String loadBefore = load();
        double secs = bootstrap(r.name + " #" + (r.secs.size() + 1), rlmm, tps);
        r.secs.add(secs);
        r.loads.add(loadBefore);
        if (rlmm instanceof RlmetaRemoteLogMetadataManager p) {
            double start = p.startupMillis("positions");
            double all = p.startupMillis("all initialized");
            r.clientStart.add(start);
            r.replay.add(all - start);
            say("%s #%d timeline: %s", r.name, r.secs.size(), p.startupTimeline());
        }
    }

    /** Seconds from start() to isReady() for every partition. */
    static double bootstrap(String name, RemoteLogMetadataManager rlmm, List<TopicIdPartition> tps) throws Exception {
        Map<String, Object> configs = rlmmConfigs(name);
        long t0 = System.nanoTime();
        rlmm.configure(configs);
        try {
            rlmm.getClass().getMethod("onBrokerReady").invoke(rlmm); // TBRLMM starts only here (KIP-1197)
        } catch (NoSuchMethodException e) {
            // the plugin starts in configure()
        }
        rlmm.onPartitionLeadershipChanges(new HashSet<>(tps), Set.of());
        double secs = awaitReady(name + " ready for all partitions", t0, () -> tps.stream().allMatch(rlmm::isReady));
        long live = 0;
        List<String> unexpected = new ArrayList<>();
        for (TopicIdPartition tp : tps.subList(0, 10)) {
            var it = rlmm.listRemoteLogSegments(tp);
            while (it.hasNext()) {
                RemoteLogSegmentMetadata m = it.next();
                live++;
                if (m.startOffset() / 10_000 < segmentsPerPartition - LIVE_PER_PARTITION
                        || m.state() != RemoteLogSegmentState.COPY_SEGMENT_FINISHED) {
                    unexpected.add(tp.topic() + "-" + tp.partition() + " segment #" + m.startOffset() / 10_000 + " "
                            + m.state());
                }
            }
        }
        if (!unexpected.isEmpty()) {
            say("%s: UNEXPECTED segments listed (deleted in the history, or not finished): %s", name, unexpected);
        }
        rlmm.close();
        say("%s: ready for %d partitions in %.3f s (%d live segments in the first 10 partitions; load %s)", name,
                tps.size(), secs, live, load());
        return secs;
    }

    @Test
    void bootstrap() throws Exception {
        long target = Long.getLong("rlmeta.bench.records", 1_200_000L);
        c = new KafkaCluster("bench", 1, Map.of(), Map.of("remote.log.storage.system.enable", "false",
                "log.cleaner.dedupe.buffer.size", "134217728", "log.cleaner.io.buffer.size", "1048576")).start();
        work = Files.createDirectories(c.work().resolve("rlmm-bench"));
        List<TopicIdPartition> tps = userPartitions();
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        try (Admin admin = c.admin()) {
            // 1. the append-only history, as stock brokers write it
            admin.createTopics(List.of(new NewTopic(META, META_PARTITIONS, (short) 1)
                    .configs(Map.of("cleanup.policy", "delete", "retention.ms", "-1")))).all().get(60, TimeUnit.SECONDS);
            long t0 = System.nanoTime();
            long n;
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                n = history(tps, target, (tp, e) -> p.send(new ProducerRecord<>(META,
                        RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), META_PARTITIONS), null,
                        serde.serialize(e))));
                p.flush();
            }
            long[] disk = onDisk();
            say("append-only history: %d records (null keys, version 0) for %d user partitions written in %.1f s; "
                    + "%d bytes in %d segment files", n, tps.size(), (System.nanoTime() - t0) / 1e9, disk[0], disk[1]);
            Rounds stock = new Rounds("stock TBRLMM, append-only");
            Rounds pluginAppend = new Rounds("plugin, append-only");
            for (int i = 0; i < ROUNDS; i++) {
                if (i % 2 == 0) {
                    round(stock, new TopicBasedRemoteLogMetadataManager(), tps);
                    round(pluginAppend, new RlmetaRemoteLogMetadataManager(), tps);
                } else {
                    round(pluginAppend, new RlmetaRemoteLogMetadataManager(), tps);
                    round(stock, new TopicBasedRemoteLogMetadataManager(), tps);
                }
            }
            say("%s", stock.line());
            say("%s", pluginAppend.line());

            // 2. the keyed history the plugin's planner writes at level 2, compacted by Kafka's cleaner
            admin.deleteTopics(List.of(META)).all().get(60, TimeUnit.SECONDS);
            KafkaCluster.await(META + " deleted", Duration.ofSeconds(120), () -> {
                try {
                    return !admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                            .names().get().contains(META);
                } catch (Exception e) {
                    return false;
                }
            });
            Thread.sleep(3000);
            admin.createTopics(List.of(new NewTopic(META, META_PARTITIONS, (short) 1).configs(Map.of(
                    // written append-only first so that "before compaction" is measured before any cleaning
                    "cleanup.policy", "delete", "retention.ms", "-1", "segment.bytes", "1048576", "min.cleanable.dirty.ratio", "0",
                    "delete.retention.ms", "0", "min.compaction.lag.ms", "0", "segment.ms", "15000"))))
                    .all().get(60, TimeUnit.SECONDS);
            t0 = System.nanoTime();
            long planned = 0;
            try (KafkaProducer<byte[], byte[]> p = producer(); MetadataStore store = new MetadataStore()) {
                for (TopicIdPartition tp : tps) {
                    store.loadPartition(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                            tp.topic(), tp.partition());
                }
                long[] nextOffset = new long[META_PARTITIONS];
                byte[] level = {'2'};
                List<Future<RecordMetadata>> levels = new ArrayList<>();
                for (int mp = 0; mp < META_PARTITIONS; mp++) {
                    levels.add(p.send(new ProducerRecord<>(META, mp, "remote.log.metadata.version".getBytes(), level)));
                    nextOffset[mp]++;
                }
                long[] count = {0};
                history(tps, target, (tp, e) -> {
                    int mp = RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), META_PARTITIONS);
                    PlannedRecords plan = store.plan(serde.serialize(e), 0, 2);
                    for (int i = 0; i < plan.size(); i++) {
                        byte[] k = plan.keys[i];
                        byte[] v = plan.values[i];
                        p.send(new ProducerRecord<>(META, mp, k, v));
                        byte[] data = new byte[k.length + (v == null ? 0 : v.length)];
                        System.arraycopy(k, 0, data, 0, k.length);
                        if (v != null) {
                            System.arraycopy(v, 0, data, k.length, v.length);
                        }
                        store.apply(new long[] {nextOffset[mp]++}, data, new int[] {k.length},
                                new int[] {v == null ? -1 : v.length});
                        count[0]++;
                    }
                });
                p.flush();
                planned = count[0];
                // roll every active segment (segment.ms) so that the cleaner may clean all the history
                Thread.sleep(16_000);
                for (int mp = 0; mp < META_PARTITIONS; mp++) {
                    levels.add(p.send(new ProducerRecord<>(META, mp, "remote.log.metadata.version".getBytes(), level)));
                }
                p.flush();
            }
            long[] before = onDisk();
            say("keyed history (the planner at level 2: KIP-1266 keys, version-1 values, tombstones): %d records in "
                    + "%.1f s; %d bytes in %d segment files before compaction", planned, (System.nanoTime() - t0) / 1e9,
                    before[0], before[1]);
            admin.incrementalAlterConfigs(Map.of(new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, META), List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("cleanup.policy", "compact"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
            t0 = System.nanoTime();
            awaitCleaner();
            // tombstones go in a later pass, once their delete horizon has passed: give the cleaner
            // new dirty segments (one more level record per partition after a roll)
            Thread.sleep(16_000);
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                for (int mp = 0; mp < META_PARTITIONS; mp++) {
                    p.send(new ProducerRecord<>(META, mp, "remote.log.metadata.version".getBytes(), new byte[] {'2'}));
                }
                p.flush();
            }
            awaitCleaner();
            long[] after = onDisk();
            long kept = recordCount();
            say("after Kafka's log cleaner (%.0f s): %d records, %d bytes in %d segment files (the active segments "
                    + "are never cleaned)", (System.nanoTime() - t0) / 1e9, kept, after[0], after[1]);
            Rounds pluginCompacted = new Rounds("plugin, compacted");
            Rounds floor = new Rounds("floor: a bare KafkaConsumer reading the compacted topic to its end");
            for (int i = 0; i < ROUNDS; i++) {
                round(pluginCompacted, new RlmetaRemoteLogMetadataManager(), tps);
                floor.loads.add(load());
                floor.secs.add(bareRead(kept));
            }
            say("%s", stock.line());
            say("%s", pluginAppend.line());
            say("%s", pluginCompacted.line());
            say("%s", floor.line());
            say("summary: records %d append-only -> %d keyed -> %d compacted (%.1fx fewer than append-only); bootstrap "
                    + "median (best) stock %.3f s (%.3f), plugin on the same topic %.3f s (%.3f): %.1fx (%.1fx), plugin on "
                    + "the compacted topic %.3f s (%.3f): %.1fx (%.1fx); the bare consumer's floor %.3f s (%.3f)",
                    n, planned, kept, (double) n / kept, stock.median(), stock.best(), pluginAppend.median(),
                    pluginAppend.best(), stock.median() / pluginAppend.median(), stock.best() / pluginAppend.best(),
                    pluginCompacted.median(), pluginCompacted.best(), stock.median() / pluginCompacted.median(),
                    stock.best() / pluginCompacted.best(), floor.median(), floor.best());
        } finally {
            c.close();
        }
    }
}
