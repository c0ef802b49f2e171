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
 * consumer settings (max.poll.records 5000) reading the compacted topic to its end (no RLMM, no core), timed the same way,
 * and the same on the append-only topic.
 *
 * <p>At scale (make bench-scale, issue 30): `rlmeta.bench.partitions` user partitions in the
 * history, of which the RLMM hosts the first `rlmeta.bench.hosted` (the rest are the records of
 * partitions a broker does not host, which it reads all the same). Each round also measures the
 * heap the instance retains (used heap after full GCs, before and after) and the anonymous memory
 * the process gains outside the heap (RssAnon; the benchmark JVM's heap is fixed and pre-touched,
 * so that is native memory, metaspace and threads), both per hosted live segment; the latency of
 * remoteLogSegmentMetadata on hosted partitions from a second thread while the bootstrap runs and
 * for 2 s after (p50, p99, max; calls answered "not available" are counted and timed too); and,
 * for correctness, every hosted partition's answers (segment lists, highestOffsetForEpoch,
 * remoteLogSegmentMetadata at offset 0 and at each live segment's start, middle, end and one past
 * it) against the first stock round's: a difference fails the run. The stock round itself must list
 * exactly the live segments the history leaves.
 */
class BootstrapBenchmark {
    static final String META = "__remote_log_metadata";
    static final int META_PARTITIONS = 50;
    /** User partitions in the history (a multiple of 50), and how many of them the RLMM hosts. */
    static final int USER_PARTITIONS = Integer.getInteger("rlmeta.bench.partitions", 500);
    static final int HOSTED = Integer.getInteger("rlmeta.bench.hosted", USER_PARTITIONS);
    /** How many partitions the round under way hosts (HOSTED, or a quarter of it for the memory slope). */
    static int hostedNow = HOSTED;
    /** By RLMM class: {live segments, bytes (retained heap + anonymous memory outside it)} of its last round. */
    static final Map<Class<?>, long[]> lastMemory = new HashMap<>();
    static final int LIVE_PER_PARTITION = 20;
    /** Every hosted partition's answers from the first stock round: what each plugin round must give. */
    static Map<TopicIdPartition, String> stockAnswers;

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

    /** A send callback that keeps the first failure: a history with a lost record is no benchmark. */
    static final class Sent implements org.apache.kafka.clients.producer.Callback {
        final java.util.concurrent.atomic.AtomicReference<Exception> failed = new java.util.concurrent.atomic.AtomicReference<>();

        @Override
        public void onCompletion(RecordMetadata m, Exception e) {
            if (e != null) {
                failed.compareAndSet(null, e);
            }
        }

        void check() {
            if (failed.get() != null) {
                throw new AssertionError("a record of the history was not written", failed.get());
            }
        }
    }

    /** Waits until every metadata partition has a leader (a send to one without would wait, then expire). */
    static void awaitLeaders(Admin admin) {
        KafkaCluster.await(META + "'s leaders", Duration.ofSeconds(120), () -> {
            try {
                var d = admin.describeTopics(List.of(META)).allTopicNames().get().get(META);
                return d.partitions().size() == META_PARTITIONS && d.partitions().stream().allMatch(i -> i.leader() != null);
            } catch (Exception e) {
                return false;
            }
        });
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
        // a batch of the keyed history waited over the default 120 s unacknowledged and the run failed
        // before the compacted rounds (2026-12-04: once at 1 M records on a loaded machine, once at 3 M
        // on a quiet one; not diagnosed): a stall of up to 10 minutes is waited out
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 600_000);
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

    /** The plugin's StoreBytes (its MBean in this JVM: the native store's own account), or -1 if none is registered. */
    static long storeBytes() throws Exception {
        javax.management.MBeanServer mbs = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        for (javax.management.ObjectName n : mbs.queryNames(
                new javax.management.ObjectName("dev.rlmeta:type=RemoteLogMetadataManager,*"), null)) {
            if (n.getKeyProperty("topic") == null && n.getKeyProperty("outcome") == null) {
                return (Long) mbs.getAttribute(n, "StoreBytes");
            }
        }
        return -1;
    }

    /** Seconds from start() to isReady() for every hosted partition. */
    static double bootstrap(String name, RemoteLogMetadataManager rlmm, List<TopicIdPartition> tps) throws Exception {
        List<TopicIdPartition> hosted = tps.subList(0, hostedNow);
        Map<String, Object> configs = rlmmConfigs(name);
        long[] before = memory();
        long t0 = System.nanoTime();
        rlmm.configure(configs);
        try {
            rlmm.getClass().getMethod("onBrokerReady").invoke(rlmm); // TBRLMM starts only here (KIP-1197)
        } catch (NoSuchMethodException e) {
            // the plugin starts in configure()
        }
        rlmm.onPartitionLeadershipChanges(new HashSet<>(hosted), Set.of());
        Lookups lookups = new Lookups(rlmm, hosted);
        lookups.start();
        double secs = awaitReady(name + " ready for all hosted partitions", t0, () -> hosted.stream().allMatch(rlmm::isReady));
        lookups.ready();
        Thread.sleep(2000);
        lookups.finish();
        long[] after = memory();
        long store = rlmm instanceof RlmetaRemoteLogMetadataManager ? storeBytes() : -1;
        Map<TopicIdPartition, String> answers = answers(rlmm, hosted);
        rlmm.close();
        long live = answers.values().stream().mapToLong(a -> a.chars().filter(ch -> ch == '\n').count()).sum();
        double heapMb = (after[0] - before[0]) / 1048576.0;
        lastMemory.put(rlmm.getClass(), new long[] {live, after[0] - before[0] + (after[1] - before[1]) * 1024});
        double outsideMb = (after[1] - before[1]) / 1024.0;
        say("%s: ready for %d hosted partitions (of %d in the history) in %.3f s; %d live segments; retained heap %.1f MB, "
                + "anonymous memory outside the heap +%.1f MB: %.0f bytes per hosted live segment beyond the fixed cost; "
                + "lookups during the bootstrap %s; after %s (load %s)%s", name, hosted.size(), tps.size(), secs, live, heapMb,
                outsideMb, (after[0] - before[0] + (after[1] - before[1]) * 1024.0 - fixedCost.getOrDefault(rlmm.getClass(), 0L))
                        / Math.max(1, live), lookups.during.line(), lookups.after.line(), load(),
                store < 0 ? "" : String.format("; the native store by its own account (StoreBytes) %.1f MB: %.0f bytes per "
                        + "hosted live segment", store / 1048576.0, (double) store / Math.max(1, live)));
        if (stockAnswers == null && rlmm instanceof TopicBasedRemoteLogMetadataManager) {
            // the stock manager lists exactly the generator's live segments: the reference holds
            if (live != (long) LIVE_PER_PARTITION * hosted.size()) {
                Map<String, Long> off = new java.util.TreeMap<>();
                answers.forEach((tp, a) -> {
                    long n = a.chars().filter(ch -> ch == '\n').count();
                    if (n != LIVE_PER_PARTITION) {
                        off.put(tp.toString(), n);
                    }
                });
                throw new AssertionError(name + " lists " + live + " live segments, the history leaves "
                        + (long) LIVE_PER_PARTITION * hosted.size() + "; partitions listing another number: " + off);
            }
            stockAnswers = answers;
        } else if (stockAnswers != null) {
            List<String> differ = new ArrayList<>();
            if (!stockAnswers.keySet().containsAll(hosted)) {
                return secs; // a smaller round than the reference's (the memory slope): compared in the full rounds
            }
            for (TopicIdPartition tp : hosted) {
                if (!stockAnswers.get(tp).equals(answers.get(tp))) {
                    differ.add(tp + ": stock\n" + stockAnswers.get(tp) + "this\n" + answers.get(tp));
                }
            }
            if (!differ.isEmpty()) {
                throw new AssertionError(name + " answers otherwise than the stock manager on " + differ.size()
                        + " hosted partition(s); the first: " + differ.get(0));
            }
            say("%s: answers equal the stock manager's on all %d hosted partitions (segment lists, "
                    + "highestOffsetForEpoch, remoteLogSegmentMetadata at %d offsets)", name, hosted.size(), lookupsCompared(answers));
        }
        return secs;
    }

    /** Bytes an instance of each RLMM class holds with no partition (its clients and threads), by class. */
    static final Map<Class<?>, Long> fixedCost = new HashMap<>();

    /** The fixed cost of an RLMM: started, told of no partition, given 3 s, measured, closed. */
    static void idle(String name, RemoteLogMetadataManager rlmm) throws Exception {
        long[] before = memory();
        rlmm.configure(rlmmConfigs(name + " idle"));
        try {
            rlmm.getClass().getMethod("onBrokerReady").invoke(rlmm);
        } catch (NoSuchMethodException e) {
            // the plugin starts in configure()
        }
        rlmm.onPartitionLeadershipChanges(Set.of(), Set.of());
        Thread.sleep(3000);
        long[] after = memory();
        rlmm.close();
        long bytes = after[0] - before[0] + (after[1] - before[1]) * 1024;
        fixedCost.put(rlmm.getClass(), bytes);
        say("%s, hosting nothing: retained heap %.1f MB, anonymous memory outside the heap +%.1f MB (its fixed cost)", name,
                (after[0] - before[0]) / 1048576.0, (after[1] - before[1]) / 1024.0);
    }

    /** Heap used after a full GC, and the process's anonymous resident memory (kB; with a
     * pre-touched fixed heap, what grows there lies outside the heap: native memory, metaspace). */
    static long[] memory() throws Exception {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        long heap = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long anon = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("RssAnon:")) {
                anon = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return new long[] {heap, anon};
    }

    /**
     * What an RLMM answers for each hosted partition, as text: every listed segment (id, offsets,
     * state, leader epochs), highestOffsetForEpoch(0), and remoteLogSegmentMetadata(0, offset) at
     * offset 0 and at each live segment's start, middle, end and one past it.
     */
    static Map<TopicIdPartition, String> answers(RemoteLogMetadataManager rlmm, List<TopicIdPartition> hosted) throws Exception {
        Map<TopicIdPartition, String> out = new HashMap<>();
        for (TopicIdPartition tp : hosted) {
            StringBuilder sb = new StringBuilder();
            List<RemoteLogSegmentMetadata> listed = new ArrayList<>();
            rlmm.listRemoteLogSegments(tp).forEachRemaining(listed::add);
            // compared as a set: the stock manager lists in its map's order, the plugin by start offset
            listed.sort(java.util.Comparator.comparingLong(RemoteLogSegmentMetadata::startOffset)
                    .thenComparing(m -> m.remoteLogSegmentId().id().toString()));
            List<Long> offsets = new ArrayList<>(List.of(0L));
            for (RemoteLogSegmentMetadata m : listed) {
                sb.append(m.remoteLogSegmentId().id()).append(' ').append(m.startOffset()).append(' ').append(m.endOffset())
                        .append(' ').append(m.state()).append(' ').append(new java.util.TreeMap<>(m.segmentLeaderEpochs())).append('\n');
                offsets.addAll(List.of(m.startOffset(), (m.startOffset() + m.endOffset()) / 2, m.endOffset(), m.endOffset() + 1));
            }
            sb.append("highest@0 ").append(rlmm.highestOffsetForEpoch(tp, 0)).append(" lookups");
            for (long o : offsets) {
                sb.append(' ').append(rlmm.remoteLogSegmentMetadata(tp, 0, o).map(m -> m.remoteLogSegmentId().id().toString())
                        .orElse("-"));
            }
            out.put(tp, sb.toString());
        }
        return out;
    }

    static long lookupsCompared(Map<TopicIdPartition, String> answers) {
        return answers.values().stream().mapToLong(a -> a.substring(a.indexOf(" lookups")).split(" ").length - 2).sum();
    }

    /** Latencies in microseconds: p50, p99, max, and how many calls answered "not available". */
    static final class Latencies {
        final long[] micros = new long[1 << 20];
        int n;
        long notReady;

        void add(long nanos, boolean ready) {
            if (n < micros.length) {
                micros[n++] = nanos / 1000;
            }
            if (!ready) {
                notReady++;
            }
        }

        String line() {
            if (n == 0) {
                return "none";
            }
            long[] s = java.util.Arrays.copyOf(micros, n);
            java.util.Arrays.sort(s);
            return String.format("%d calls (%d not available): p50 %d us, p99 %d us, max %d us", n, notReady, s[n / 2],
                    s[Math.min(n - 1, (int) (n * 0.99))], s[n - 1]);
        }
    }

    /** A thread that looks segments up on hosted partitions while the RLMM bootstraps, and after. */
    static final class Lookups extends Thread {
        final RemoteLogMetadataManager rlmm;
        final List<TopicIdPartition> hosted;
        final Latencies during = new Latencies();
        final Latencies after = new Latencies();
        volatile boolean ready;
        volatile boolean done;

        Lookups(RemoteLogMetadataManager rlmm, List<TopicIdPartition> hosted) {
            super("bench-lookups");
            this.rlmm = rlmm;
            this.hosted = hosted;
            setDaemon(true);
        }

        void ready() {
            ready = true;
        }

        void finish() throws InterruptedException {
            done = true;
            join(10_000);
        }

        @Override
        public void run() {
            java.util.Random r = new java.util.Random(7);
            while (!done) {
                TopicIdPartition tp = hosted.get(r.nextInt(hosted.size()));
                long offset = (segmentsPerPartition - 1 - r.nextInt(LIVE_PER_PARTITION)) * 10_000L + r.nextInt(10_000);
                Latencies l = ready ? after : during;
                long t = System.nanoTime();
                boolean answered;
                try {
                    rlmm.remoteLogSegmentMetadata(tp, 0, offset);
                    answered = true;
                } catch (Exception e) {
                    answered = false; // not available yet (either manager), or any refusal
                }
                l.add(System.nanoTime() - t, answered);
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
        }
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
            awaitLeaders(admin);
            try (KafkaProducer<byte[], byte[]> p = producer()) {
                Sent sent = new Sent();
                n = history(tps, target, (tp, e) -> p.send(new ProducerRecord<>(META,
                        RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), META_PARTITIONS), null,
                        serde.serialize(e)), sent));
                p.flush();
                sent.check();
            }
            long[] disk = onDisk();
            say("append-only history: %d records (null keys, version 0) for %d user partitions written in %.1f s; "
                    + "%d bytes in %d segment files", n, tps.size(), (System.nanoTime() - t0) / 1e9, disk[0], disk[1]);
            idle("stock TBRLMM", new TopicBasedRemoteLogMetadataManager());
            idle("plugin", new RlmetaRemoteLogMetadataManager());
            Rounds stock = new Rounds("stock TBRLMM, append-only");
            Rounds pluginAppend = new Rounds("plugin, append-only");
            Rounds floorAppend = new Rounds("floor: a bare KafkaConsumer reading the append-only topic to its end");
            for (int i = 0; i < ROUNDS; i++) {
                if (i % 2 == 0) {
                    round(stock, new TopicBasedRemoteLogMetadataManager(), tps);
                    round(pluginAppend, new RlmetaRemoteLogMetadataManager(), tps);
                } else {
                    round(pluginAppend, new RlmetaRemoteLogMetadataManager(), tps);
                    round(stock, new TopicBasedRemoteLogMetadataManager(), tps);
                }
                floorAppend.loads.add(load());
                floorAppend.secs.add(bareRead(n));
            }
            say("%s", stock.line());
            say("%s", pluginAppend.line());
            say("%s", floorAppend.line());
            // the memory slope: the same bootstrap hosting a quarter of the partitions; what a hosted live
            // segment costs is the difference over the difference in live segments (the clients' buffers,
            // threads and caches cancel out)
            for (RemoteLogMetadataManager rlmm : List.<RemoteLogMetadataManager>of(new TopicBasedRemoteLogMetadataManager(),
                    new RlmetaRemoteLogMetadataManager())) {
                long[] full = lastMemory.get(rlmm.getClass());
                hostedNow = HOSTED / 4;
                bootstrap(rlmm.getClass().getSimpleName() + " hosting " + hostedNow, rlmm, tps);
                hostedNow = HOSTED;
                long[] quarter = lastMemory.get(rlmm.getClass());
                say("memory slope of %s: %.0f bytes per hosted live segment ((%.1f MB - %.1f MB) / (%d - %d) segments)",
                        rlmm.getClass().getSimpleName(), (double) (full[1] - quarter[1]) / (full[0] - quarter[0]),
                        full[1] / 1048576.0, quarter[1] / 1048576.0, full[0], quarter[0]);
            }

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
            awaitLeaders(admin);
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
                Sent keyedSent = new Sent();
                history(tps, target, (tp, e) -> {
                    int mp = RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), META_PARTITIONS);
                    PlannedRecords plan = store.plan(serde.serialize(e), 0, 2);
                    for (int i = 0; i < plan.size(); i++) {
                        byte[] k = plan.keys[i];
                        byte[] v = plan.values[i];
                        p.send(new ProducerRecord<>(META, mp, k, v), keyedSent);
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
                keyedSent.check();
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
            say("%s", floorAppend.line());
            say("%s", pluginCompacted.line());
            say("%s", floor.line());
            say("summary: records %d append-only -> %d keyed -> %d compacted (%.1fx fewer than append-only); bootstrap "
                    + "median (best) stock %.3f s (%.3f), plugin on the same topic %.3f s (%.3f): %.1fx (%.1fx), plugin on "
                    + "the compacted topic %.3f s (%.3f): %.1fx (%.1fx); the bare consumer's floor %.3f s (%.3f) on the "
                    + "compacted topic, %.3f s (%.3f) on the append-only one; plugin/floor %.2fx append-only, %.2fx compacted",
                    n, planned, kept, (double) n / kept, stock.median(), stock.best(), pluginAppend.median(),
                    pluginAppend.best(), stock.median() / pluginAppend.median(), stock.best() / pluginAppend.best(),
                    pluginCompacted.median(), pluginCompacted.best(), stock.median() / pluginCompacted.median(),
                    stock.best() / pluginCompacted.best(), floor.median(), floor.best(), floorAppend.median(),
                    floorAppend.best(), pluginAppend.median() / floorAppend.median(), pluginCompacted.median() / floor.median());
        } finally {
            c.close();
        }
    }
}
