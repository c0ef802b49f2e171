package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

import dev.rlmeta.cluster.KafkaCluster.Rlmm;

/**
 * `make scale-data` (issue 30): a real Kafka 4.4.0 node with the stock manager and the stock 50
 * metadata partitions, tiered topics it hosts, and {@link ScaleHistory} writing a stock history
 * of `rlmeta.scale.records` records into its `__remote_log_metadata` (the rest of the records for
 * `rlmeta.scale.unhosted` partitions no broker hosts). Then Kafka's own replay of the topic
 * ({@link KafkaReplay}, the stock classes) must list, for every hosted partition, exactly the
 * COPY_SEGMENT_FINISHED segments the generator says it left live. Prints the records/s and the
 * topic's size on disk. `make test` runs it small (20,000 records); the broker's data stays under
 * tests/cluster/target/cluster-work for a benchmark that restarts it.
 */
class ScaleDataTest {
    @Test
    void aStockHistoryAtScaleIsWhatKafkasReplayReads() throws Exception {
        ScaleHistory.Shape shape = ScaleHistory.Shape.fromProperties();
        int topics = Integer.getInteger("rlmeta.scale.hosted.topics", 2);
        int partitionsEach = Integer.getInteger("rlmeta.scale.hosted.partitions", 5);
        int unhosted = Integer.getInteger("rlmeta.scale.unhosted", 100);
        System.out.printf("[scale] writing %s: %d hosted partitions (%d tiered topics), %d partitions no broker hosts%n",
                shape, topics * partitionsEach, topics, unhosted);
        KafkaCluster made = KafkaCluster.single("scale", Rlmm.STOCK, Map.of(
                "rlmm.config.remote.log.metadata.topic.num.partitions", Integer.toString(shape.metadataPartitions),
                "log.segment.bytes", Integer.toString(256 << 20)), KafkaVersion.current());
        // the stock manager of the broker holds every live segment of the hosted partitions (about 700,000 at
        // 10 M records): the lab heap (448m) ends in back-to-back full GCs that stall its fetches for minutes
        String brokerJvm = System.getProperty("rlmeta.scale.broker.jvm", "").trim();
        if (!brokerJvm.isEmpty()) {
            made.jvmOptions(1, List.of(brokerJvm.split("\\s+")));
        }
        try (KafkaCluster c = made.start();
             Admin admin = c.admin()) {
            KafkaCluster.await("the stock manager's metadata topic", java.time.Duration.ofSeconds(120), () -> {
                try {
                    return admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                            .names().get().contains(MetaTopic.NAME);
                } catch (Exception e) {
                    return false;
                }
            });
            List<TopicIdPartition> hosted = new ArrayList<>();
            for (int t = 0; t < topics; t++) {
                String name = "scale-" + t;
                // nothing local to tier and nothing expires: the history stays as written
                Uuid id = Tiered.create(admin, name, partitionsEach, 1, Map.of("remote.storage.enable", "true",
                        "retention.ms", "-1", "retention.bytes", "-1"));
                for (int p = 0; p < partitionsEach; p++) {
                    hosted.add(new TopicIdPartition(id, p, name));
                }
            }
            ScaleHistory.Written w = ScaleHistory.write(c.bootstrap(), shape, hosted, unhosted);
            long[] disk = onDisk(c);
            System.out.printf("[scale] wrote %,d records (%,d value bytes) in %.1f s: %,.0f records/s; %s on disk in %d "
                    + ".log files%n", w.records, w.bytes, w.seconds, w.records / w.seconds, mib(disk[0]), disk[1]);
            assertEquals(shape.records, w.records);

            long t0 = System.nanoTime();
            java.util.Set<String> hostedIds = new java.util.HashSet<>();
            hosted.forEach(tp -> hostedIds.add(tp.topicId().toString()));
            KafkaReplay truth = replay(c, shape.metadataPartitions, hostedIds);
            double replaySeconds = (System.nanoTime() - t0) / 1e9;
            assertTrue(truth.thrown.isEmpty(), "Kafka's replay threw on " + truth.thrown);
            Map<String, String> wrong = new TreeMap<>();
            long live = 0;
            for (Map.Entry<TopicIdPartition, Long> e : w.live.entrySet()) {
                TopicIdPartition tp = e.getKey();
                long finished = truth.segments(tp.topicId().toString(), tp.partition()).stream()
                        .filter(line -> line.split(" ")[1].equals("1")).count(); // COPY_SEGMENT_FINISHED
                live += finished;
                if (finished != e.getValue()) {
                    wrong.put(tp.toString(), finished + " listed by Kafka, " + e.getValue() + " written");
                }
            }
            assertEquals(Map.of(), wrong, "live segments of hosted partitions: Kafka's replay vs the generator");
            System.out.printf("[scale] Kafka's replay (read and replayed in %.1f s) lists the %,d live segments the generator "
                    + "left on the %d hosted partitions (the only ones it replays, as a broker hosting them)%n", replaySeconds,
                    live, w.live.size());
            long idle = Long.getLong("rlmeta.scale.expiration.seconds", 0);
            if (idle > 0) { // the idle broker's RLM expiration threads: stock, stock restarted, the plugin (a measurement)
                System.out.printf("[scale] expiration threads, stock manager: %s%n", expirationCpu(c, idle));
                for (Rlmm rlmm : List.of(Rlmm.STOCK, Rlmm.PLUGIN_CLASS_PATH)) {
                    c.stopBroker(1);
                    long r0 = System.nanoTime();
                    c.restartBroker(1, rlmm);
                    System.out.printf("[scale] the broker restarted with %s in %.1f s; %d s for its bootstrap%n", rlmm,
                            (System.nanoTime() - r0) / 1e9, idle);
                    Thread.sleep(idle * 1000);
                    System.out.printf("[scale] expiration threads, %s after a restart: %s%n", rlmm, expirationCpu(c, idle));
                }
            }
            long hold = Long.getLong("rlmeta.scale.hold.seconds", 0);
            if (hold > 0) { // a benchmark reads the topic meanwhile (make bench-tools-scale)
                // its reference: Kafka's own Java consumer reading the whole topic to its end
                String boot = System.getProperty("rlmeta.scale.bootstrap.file", "scale-bootstrap.txt");
                StringBuilder ref = new StringBuilder();
                for (int run = 1; run <= 3; run++) {
                    long r0 = System.nanoTime();
                    long read = readToEnd(c, shape.metadataPartitions);
                    ref.append(String.format("[tools-scale] Kafka's Java consumer read %,d records of the %d metadata "
                            + "partitions to their end in %.2f s (run %d: KafkaConsumer in the generator's JVM, byte[] "
                            + "deserializers, default fetch settings, all partitions assigned at once)%n", read,
                            shape.metadataPartitions, (System.nanoTime() - r0) / 1e9, run));
                }
                System.out.print(ref);
                java.nio.file.Files.writeString(java.nio.file.Path.of(boot + ".reference"), ref);
                java.nio.file.Files.writeString(java.nio.file.Path.of(boot), c.bootstrap());
                System.out.printf("[scale] holding the broker at %s for %d s%n", c.bootstrap(), hold);
                Thread.sleep(hold * 1000);
            }
        }
    }

    /**
     * The CPU the broker's {@code kafka-rlm-expiration-thread-pool} threads use in {@code seconds}
     * (their cpu= in two {@code jstack} prints), nothing produced meanwhile.
     */
    static String expirationCpu(KafkaCluster c, long seconds) throws Exception {
        Map<String, Double> before = threadCpuMs(c.pid(1));
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000);
        Map<String, Double> after = threadCpuMs(c.pid(1));
        double wall = (System.nanoTime() - t0) / 1e6;
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Double> e : after.entrySet()) {
            double used = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
            sb.append(String.format("%s %.0f ms CPU in %.0f s (%.1f%% of a core); ", e.getKey(), used, wall / 1e3,
                    100 * used / wall));
        }
        return sb.length() == 0 ? "no expiration thread" : sb.toString();
    }

    static Map<String, Double> threadCpuMs(long pid) throws Exception {
        Process p = new ProcessBuilder("jstack", Long.toString(pid)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        p.waitFor();
        Map<String, Double> cpu = new TreeMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("^\"(kafka-rlm-expiration-thread-pool[^\"]*)\".* cpu=([0-9.]+)ms", java.util.regex.Pattern.MULTILINE)
                .matcher(out);
        while (m.find()) {
            cpu.put(m.group(1), Double.parseDouble(m.group(2)));
        }
        return cpu;
    }

    /** Reads every record of the topic to the end offsets it had at the start; returns how many. */
    static long readToEnd(KafkaCluster c, int metadataPartitions) {
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", c.bootstrap());
        p.put("enable.auto.commit", "false");
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(p,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            List<org.apache.kafka.common.TopicPartition> tps = new java.util.ArrayList<>();
            for (int mp = 0; mp < metadataPartitions; mp++) {
                tps.add(new org.apache.kafka.common.TopicPartition(MetaTopic.NAME, mp));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<org.apache.kafka.common.TopicPartition, Long> end = consumer.endOffsets(tps);
            long read = 0;
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                read += consumer.poll(java.time.Duration.ofMillis(500)).count();
            }
            return read;
        }
    }

    /** Kafka's replay of the whole topic, read one metadata partition after the other (never held whole). */
    static KafkaReplay replay(KafkaCluster c, int metadataPartitions, java.util.Set<String> topicIds) throws Exception {
        KafkaReplay truth = new KafkaReplay(c.kafka()).only(topicIds);
        java.util.Properties p = new java.util.Properties();
        p.put("bootstrap.servers", c.bootstrap());
        p.put("enable.auto.commit", "false");
        p.put("max.poll.records", "5000");
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]>(p,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            for (int mp = 0; mp < metadataPartitions; mp++) {
                var tp = new org.apache.kafka.common.TopicPartition(MetaTopic.NAME, mp);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                long end = consumer.endOffsets(List.of(tp)).get(tp);
                long deadline = System.nanoTime() + 120_000_000_000L;
                while (consumer.position(tp) < end) {
                    assertTrue(System.nanoTime() < deadline, MetaTopic.NAME + "-" + mp + " not read to its end");
                    for (var r : consumer.poll(java.time.Duration.ofMillis(100))) {
                        if (r.value() != null && r.offset() < end) {
                            truth.replay(r.value());
                        }
                    }
                }
            }
        }
        truth.finish();
        return truth;
    }

    static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / 1048576.0);
    }

    /** Bytes and count of the metadata topic's .log files. */
    static long[] onDisk(KafkaCluster c) throws Exception {
        long bytes = 0;
        long files = 0;
        try (var dirs = java.nio.file.Files.list(c.dataDir(1))) {
            for (var d : dirs.filter(x -> x.getFileName().toString().startsWith(MetaTopic.NAME + "-")).toList()) {
                try (var logs = java.nio.file.Files.list(d)) {
                    for (var f : logs.filter(x -> x.getFileName().toString().endsWith(".log")).toList()) {
                        bytes += java.nio.file.Files.size(f);
                        files++;
                    }
                }
            }
        }
        return new long[] {bytes, files};
    }
}
