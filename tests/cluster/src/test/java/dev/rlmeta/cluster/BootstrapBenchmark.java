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
 */
class BootstrapBenchmark {
    static final String META = "__remote_log_metadata";
    static final int META_PARTITIONS = 50;
    static final int USER_PARTITIONS = 500;
    static final int LIVE_PER_PARTITION = 20;

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

    static long[] onDisk() throws Exception {
        long bytes = 0;
        long files = 0;
        try (Stream<Path> s = Files.walk(c.dataDir(1))) {
            for (Path f : s.filter(f -> f.getParent().getFileName().toString().startsWith(META + "-")
                    && f.getFileName().toString().endsWith(".log")).toList()) {
                bytes += Files.size(f);
                files++;
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

    /** Seconds from start() to isReady() for every partition. */
    static double bootstrap(String name, RemoteLogMetadataManager rlmm, List<TopicIdPartition> tps) throws Exception {
        long t0 = System.nanoTime();
        rlmm.configure(rlmmConfigs(name));
        try {
            rlmm.getClass().getMethod("onBrokerReady").invoke(rlmm); // TBRLMM starts only here (KIP-1197)
        } catch (NoSuchMethodException e) {
            // the plugin starts in configure()
        }
        rlmm.onPartitionLeadershipChanges(new HashSet<>(tps), Set.of());
        KafkaCluster.await(name + " ready for all partitions", Duration.ofMinutes(15),
                () -> tps.stream().allMatch(rlmm::isReady));
        double secs = (System.nanoTime() - t0) / 1e9;
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
        say("%s: ready for %d partitions in %.2f s (%d live segments in the first 10 partitions)", name, tps.size(),
                secs, live);
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
            double stock = bootstrap("stock TBRLMM, append-only", new TopicBasedRemoteLogMetadataManager(), tps);
            double pluginAppend = bootstrap("plugin, append-only", new RlmetaRemoteLogMetadataManager(), tps);

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
            double pluginCompacted = bootstrap("plugin, compacted", new RlmetaRemoteLogMetadataManager(), tps);
            say("summary: records %d append-only -> %d keyed -> %d compacted (%.1fx fewer than append-only); bootstrap "
                    + "stock %.2f s, plugin on the same topic %.2f s (%.1fx), plugin on the compacted topic %.2f s (%.1fx)",
                    n, planned, kept, (double) n / kept, stock, pluginAppend, stock / pluginAppend, pluginCompacted,
                    stock / pluginCompacted);
        } finally {
            c.close();
        }
    }
}
