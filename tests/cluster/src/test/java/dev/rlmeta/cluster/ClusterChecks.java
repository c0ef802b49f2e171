package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The invariants the plugin's cluster scenarios and the fault campaign (SoakTest) check on a
 * running {@link KafkaCluster}, in one place: what the brokers' stores hold (their diagnostic
 * dumps), that finished segments never overlap and nothing is left DELETE_SEGMENT_STARTED, that
 * every acknowledged record is readable from the log start, that the file RSM's directories agree
 * with the metadata, and when remote storage has gone quiet. It also owns the background producer
 * both use. It never starts, stops or faults a node: callers decide when a check applies.
 */
public final class ClusterChecks {
    private ClusterChecks() {}

    /** A broker's diagnostic dump (the plugin rewrites it at most once a second). */
    public static JsonNode dump(KafkaCluster c, int broker) {
        try {
            return MetaTopic.json(Files.readString(c.dumpFile(broker)));
        } catch (IOException e) {
            throw new AssertionError("broker " + broker + " wrote no dump at " + c.dumpFile(broker));
        }
    }

    /** The segments a store section of a dump holds for one partition: "id state start-end", by start offset. */
    public static List<String> segments(JsonNode store, Uuid topicId, int partition) {
        List<String> out = new ArrayList<>();
        for (JsonNode p : store.get("partitions")) {
            JsonNode tip = p.get("topicIdPartition");
            if (tip.get("id").asText().equals(topicId.toString()) && tip.get("partition").asInt() == partition) {
                for (JsonNode s : p.get("segments")) {
                    out.add(s.get("id").asText() + " " + s.get("state").asInt() + " " + s.get("startOffset").asLong()
                            + "-" + s.get("endOffset").asLong());
                }
            }
        }
        return out;
    }

    /** The user partitions of a topic a store section holds (loaded, whatever their segments). */
    public static Set<Integer> partitionsHeld(JsonNode store, Uuid topicId) {
        Set<Integer> out = new TreeSet<>();
        for (JsonNode p : store.get("partitions")) {
            JsonNode tip = p.get("topicIdPartition");
            if (tip.get("id").asText().equals(topicId.toString())) {
                out.add(tip.get("partition").asInt());
            }
        }
        return out;
    }

    /** A topic's segments in a broker's dump, partition after partition. */
    public static List<String> dumpedSegments(KafkaCluster c, int broker, Uuid topicId) {
        JsonNode store = dump(c, broker).get("store");
        List<String> out = new ArrayList<>();
        for (int p : partitionsHeld(store, topicId)) {
            out.addAll(segments(store, topicId, p));
        }
        return out;
    }

    /**
     * The invariants of one partition's segments once remote storage is quiet: finished segments
     * (state 1) never overlap, none is left DELETE_SEGMENT_STARTED (state 2), and a
     * COPY_SEGMENT_STARTED one (state 0) only where finished segments cover its range (an abandoned
     * upload, never served). Returns {segments, started-only}.
     */
    public static int[] checkSegments(String where, List<String> segments) {
        List<long[]> finished = new ArrayList<>();
        List<String> startedOnly = new ArrayList<>();
        long lastEnd = -1;
        for (String s : segments) {
            String[] f = s.split(" ");
            int state = Integer.parseInt(f[1]);
            long start = Long.parseLong(f[2].split("-")[0]);
            long end = Long.parseLong(f[2].split("-")[1]);
            assertTrue(state != 2, where + ": segment " + s + " is left DELETE_SEGMENT_STARTED");
            if (state == 0) {
                startedOnly.add(s);
            } else if (state == 1) {
                assertTrue(start > lastEnd, where + ": overlapping finished segments at " + s + " (previous end " + lastEnd + ")");
                lastEnd = end;
                finished.add(new long[] {start, end});
            }
        }
        for (String s : startedOnly) {
            String[] f = s.split(" ");
            long start = Long.parseLong(f[2].split("-")[0]);
            long end = Long.parseLong(f[2].split("-")[1]);
            for (long o = start; o <= end; o++) {
                long off = o;
                assertTrue(finished.stream().anyMatch(r -> r[0] <= off && off <= r[1]),
                        where + ": dangling COPY_SEGMENT_STARTED segment " + s + ": offset " + o + " is in no finished segment");
            }
        }
        return new int[] {segments.size(), startedOnly.size()};
    }

    /**
     * What every broker's dump holds for a topic after a kill and restart: what Kafka's own replay of
     * the topic holds ({@link #judgeByKafka}), the same segments on every broker, and
     * {@link #checkSegments} for each partition. Returns {segments, started-only}.
     */
    public static int[] checkDumps(KafkaCluster c, Uuid id) {
        try {
            judgeByKafka(c, c.brokerIds(), Set.of(id), false); // the scenarios write undecodable records on purpose
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError("judging the brokers by Kafka's replay failed: " + e, e);
        }
        int first = c.brokerIds().get(0);
        JsonNode store = dump(c, first).get("store");
        List<String> reference = dumpedSegments(c, first, id);
        for (int b : c.brokerIds()) {
            assertEquals(reference, dumpedSegments(c, b, id), "broker " + b + " holds other segments than broker " + first);
        }
        int[] total = new int[2];
        for (int p : partitionsHeld(store, id)) {
            int[] n = checkSegments(id + "-" + p, segments(store, id, p));
            total[0] += n[0];
            total[1] += n[1];
        }
        return total;
    }

    /**
     * Reads the topic from its earliest offsets: every acknowledged record (index i went to partition
     * i % partitions) with an index at or above `fromIndex` is there, none twice. With `fromIndex` -1
     * a partition's bound is the index of the first record read from it (a log whose start retention
     * moved). Returns the number of records read.
     */
    public static int checkAcknowledgedReadable(String bootstrap, String topic, int partitions, Set<Integer> acked,
                                                int fromIndex) {
        Set<Integer> read = new HashSet<>();
        Map<Integer, Integer> from = new HashMap<>();
        for (var r : Tiered.readAll(bootstrap, topic, Duration.ofSeconds(120))) {
            int idx = Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8).split("#", 3)[1]);
            assertTrue(read.add(idx), topic + ": record " + idx + " read twice");
            assertEquals(idx % partitions, r.partition(), topic + ": record " + idx + " in the wrong partition");
            from.putIfAbsent(r.partition(), fromIndex < 0 ? idx : fromIndex);
        }
        assertFalse(read.isEmpty(), topic + ": nothing read");
        Set<Integer> lost = new TreeSet<>();
        for (int i : acked) {
            // a partition with an acknowledged record always has something to read: retention keeps the active segment
            Integer bound = from.get(i % partitions);
            if (bound == null ? i >= fromIndex : i >= bound && !read.contains(i)) {
                lost.add(i);
            }
        }
        assertTrue(lost.isEmpty(), topic + ": acknowledged records lost: " + lost);
        return read.size();
    }

    /** Waits until the file RSM's journal has not changed for `quiet` (fails after `limit`). */
    public static void awaitQuiet(KafkaCluster c, Duration quiet, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        int lines = c.journal().size();
        long since = System.nanoTime();
        while (System.nanoTime() - since < quiet.toNanos()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("remote storage never went quiet for " + quiet.toSeconds() + " s");
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            int now = c.journal().size();
            if (now != lines) {
                lines = now;
                since = System.nanoTime();
            }
        }
    }

    /** The journal's segment ids of a kind (COPY/DELETE) for a topic. */
    public static Set<String> journalSegments(KafkaCluster c, String kind, String topic) {
        return c.journal().stream().filter(l -> l.startsWith(kind + " ") && l.contains(":" + topic + "-"))
                .map(l -> l.split(" ")[2]).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Remote segment directories of a topic's partitions that exist now (complete ones: no .tmp). */
    public static Set<String> remoteSegmentDirs(KafkaCluster c, String topic) throws IOException {
        return remoteSegmentDirs(c, topic, -1);
    }

    /** As above for one partition (-1: every partition). */
    public static Set<String> remoteSegmentDirs(KafkaCluster c, String topic, int partition) throws IOException {
        String prefix = topic + "-" + (partition < 0 ? "" : partition + "-");
        Set<String> out = new TreeSet<>();
        try (Stream<Path> parts = Files.list(c.remoteDir())) {
            for (Path p : parts.filter(Files::isDirectory).filter(p -> p.getFileName().toString().startsWith(prefix)).toList()) {
                try (Stream<Path> segs = Files.list(p)) {
                    segs.filter(Files::isDirectory).map(s -> s.getFileName().toString())
                            .filter(n -> !n.endsWith(".tmp")).forEach(out::add);
                }
            }
        }
        return out;
    }

    /**
     * The file RSM and the metadata agree for one partition once quiet: every finished segment of the
     * store has its remote directory, and every remote directory is a segment the store holds (a
     * finished one, or an abandoned upload). Returns the number of remote directories.
     */
    public static int checkRemoteAgrees(KafkaCluster c, String topic, int partition, List<String> segments)
            throws IOException {
        Set<String> dirs = remoteSegmentDirs(c, topic, partition);
        Map<String, Integer> state = new TreeMap<>();
        for (String s : segments) {
            String[] f = s.split(" ");
            state.put(f[0], Integer.parseInt(f[1]));
        }
        for (Map.Entry<String, Integer> e : state.entrySet()) {
            if (e.getValue() == 1) {
                assertTrue(dirs.contains(e.getKey()), topic + "-" + partition + ": finished segment " + e.getKey()
                        + " has no remote files");
            }
        }
        for (String d : dirs) {
            assertTrue(state.containsKey(d), topic + "-" + partition + ": remote files of segment " + d
                    + " that the metadata does not hold");
        }
        return dirs.size();
    }

    /**
     * Waits until a broker's dump shows its metadata consumer assigned and at the metadata topic's end
     * offsets of now on every partition it reads (a dump written before the first assignment has none).
     */
    public static void awaitCaughtUp(KafkaCluster c, Admin admin, int broker, Duration limit) throws Exception {
        Map<TopicPartition, Long> ends = Tiered.offsets(admin, MetaTopic.NAME, 3, OffsetSpec.latest());
        KafkaCluster.await("broker " + broker + " read " + MetaTopic.NAME + " to its end", limit, () -> {
            if (!Files.exists(c.dumpFile(broker))) {
                return false;
            }
            JsonNode d;
            try {
                d = MetaTopic.json(Files.readString(c.dumpFile(broker)));
            } catch (IOException | AssertionError e) {
                return false; // being rewritten
            }
            boolean assigned = false;
            for (int p = 0; p < 3; p++) {
                long pos = d.get("positions").get(p).asLong();
                if (pos >= 0 && pos < ends.get(new TopicPartition(MetaTopic.NAME, p))) {
                    return false;
                }
                assigned |= pos >= 0;
            }
            return assigned;
        });
    }

    /**
     * Reassigns partitions and waits until the controller lists no reassignment of them under way and a
     * broker's metadata shows each target replica set, in order, with every replica in sync. The two
     * answers come from different places (the controller, a broker's metadata cache), so an empty
     * reassignment list alone may still be followed by a description of the old replicas.
     */
    public static void reassign(Admin admin, Map<TopicPartition, List<Integer>> targets, Duration limit) throws Exception {
        Map<TopicPartition, Optional<NewPartitionReassignment>> r = new HashMap<>();
        targets.forEach((tp, t) -> r.put(tp, Optional.of(new NewPartitionReassignment(t))));
        admin.alterPartitionReassignments(r).all().get(30, TimeUnit.SECONDS);
        Set<String> topics = targets.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
        KafkaCluster.await("reassignment of " + targets, limit, () -> {
            try {
                if (!admin.listPartitionReassignments(targets.keySet()).reassignments().get(30, TimeUnit.SECONDS).isEmpty()) {
                    return false;
                }
                Map<String, TopicDescription> d = admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS);
                for (Map.Entry<TopicPartition, List<Integer>> e : targets.entrySet()) {
                    TopicPartitionInfo i = d.get(e.getKey().topic()).partitions().get(e.getKey().partition());
                    if (!i.replicas().stream().map(n -> n.id()).toList().equals(e.getValue())
                            || i.isr().size() != e.getValue().size()) {
                        return false;
                    }
                }
                return true;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /**
     * Elects the preferred leaders of {@code partitions} (every partition if null) again and again, for
     * up to 120 s, until every partition of {@code topics} satisfies {@code led}.
     */
    public static void electPreferredUntil(Admin admin, String what, Set<TopicPartition> partitions, List<String> topics,
                                           Predicate<TopicPartitionInfo> led) {
        KafkaCluster.await(what, Duration.ofSeconds(120), () -> {
            try {
                admin.electLeaders(ElectionType.PREFERRED, partitions).partitions().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                // already the preferred leader, or not yet electable (the replica still catching up): retried
            }
            try {
                for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
                    if (!d.partitions().stream().allMatch(led)) {
                        return false;
                    }
                }
                return true;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** The overrides that make Kafka's log cleaner compact the metadata topic within seconds. */
    public static final Map<String, String> FAST_CLEANER = Map.of("segment.ms", "3000", "min.cleanable.dirty.ratio", "0.01",
            "delete.retention.ms", "2000", "min.compaction.lag.ms", "0");

    /** True when some metadata partition holds fewer records than its offset range: the cleaner removed some. */
    public static boolean compacted(String bootstrap) {
        return removedByCleaner(bootstrap) > 0;
    }

    /** The offsets below each metadata partition's last record that hold no record (removed by the cleaner), summed. */
    public static long removedByCleaner(String bootstrap) {
        List<MetaTopic.Rec> all = MetaTopic.read(bootstrap);
        Map<Integer, Long> count = new HashMap<>();
        Map<Integer, Long> last = new HashMap<>();
        for (MetaTopic.Rec r : all) {
            count.merge(r.partition(), 1L, Long::sum);
            last.merge(r.partition(), r.offset(), Math::max);
        }
        return count.entrySet().stream().mapToLong(e -> last.get(e.getKey()) + 1 - e.getValue()).sum();
    }

    /** Sets topic config overrides. */
    public static void alter(Admin admin, String topic, Map<String, String> set) throws Exception {
        List<AlterConfigOp> ops = set.entrySet().stream()
                .map(e -> new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET)).toList();
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), ops)).all()
                .get(30, TimeUnit.SECONDS);
    }

    /** Removes topic config overrides and waits until the cluster describes none of them (the defaults apply). */
    public static void unset(Admin admin, String topic, Set<String> keys) throws Exception {
        List<AlterConfigOp> ops = keys.stream()
                .map(k -> new AlterConfigOp(new ConfigEntry(k, ""), AlterConfigOp.OpType.DELETE)).toList();
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        admin.incrementalAlterConfigs(Map.of(res, ops)).all().get(30, TimeUnit.SECONDS);
        // brokers learn of the change from the metadata log, a moment later
        KafkaCluster.await(topic + ": overrides " + keys + " gone", Duration.ofSeconds(30), () -> {
            try {
                Config cfg = admin.describeConfigs(List.of(res)).all().get(30, TimeUnit.SECONDS).get(res);
                return cfg.entries().stream().noneMatch(e -> keys.contains(e.name())
                        && e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            } catch (Exception e) {
                return false;
            }
        });
    }

    /**
     * Produces the topic's records 0, 1, ... (record i to partition i % partitions; acks=all,
     * idempotent) until closed, a record every `everyMs`; records what was acknowledged. It can be
     * paused (sends nothing, and flushes) and resumed.
     */
    public static final class BackgroundProducer implements AutoCloseable {
        public final Set<Integer> acked = ConcurrentHashMap.newKeySet();
        public final AtomicBoolean stop = new AtomicBoolean();
        public final AtomicInteger sent = new AtomicInteger();
        private final AtomicBoolean paused = new AtomicBoolean();
        private final AtomicBoolean idle = new AtomicBoolean();
        private final Thread thread;

        public BackgroundProducer(String bootstrap, String topic) {
            this(bootstrap, topic, 1, 8);
        }

        public BackgroundProducer(String bootstrap, String topic, int partitions, long everyMs) {
            thread = new Thread(() -> {
                Properties p = new Properties();
                p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
                p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 90000);
                p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
                p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(),
                        new StringSerializer())) {
                    while (!stop.get()) {
                        if (paused.get()) {
                            producer.flush();
                            idle.set(true);
                            Thread.sleep(50);
                            continue;
                        }
                        idle.set(false);
                        int i = sent.getAndIncrement();
                        producer.send(new ProducerRecord<>(topic, i % partitions, null, Tiered.value(topic, i)), (md, err) -> {
                            if (err == null) {
                                acked.add(i);
                            }
                        });
                        Thread.sleep(everyMs);
                    }
                    producer.flush();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, topic + "-producer");
            thread.start();
        }

        /** Stops sending and waits until everything sent is acknowledged or failed. */
        public void pause() {
            paused.set(true);
            KafkaCluster.await(thread.getName() + " paused and flushed", Duration.ofSeconds(120),
                    () -> idle.get() || !thread.isAlive());
        }

        public void resume() {
            idle.set(false);
            paused.set(false);
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(120_000);
            assertFalse(thread.isAlive(), "the producer did not finish");
        }
    }

    /** A dumped segment as {@link KafkaReplay#line}. */
    public static String line(JsonNode s) {
        Map<Integer, Long> epochs = new TreeMap<>();
        for (JsonNode e : s.get("segmentLeaderEpochs")) {
            epochs.put(e.get("leaderEpoch").asInt(), e.get("offset").asLong());
        }
        return KafkaReplay.line(s.get("id").asText(), s.get("state").asInt(), s.get("startOffset").asLong(),
                s.get("endOffset").asLong(), s.get("brokerId").asInt(), epochs, s.get("segmentSizeInBytes").asLong(),
                s.get("maxTimestampMs").asLong(), s.get("eventTimestampMs").asLong());
    }

    /**
     * The differences between a broker's cache and Kafka's own replay of the metadata topic
     * ({@link KafkaReplay}, the stock classes of the brokers' version), for the user partitions
     * `held` (topic id -> partitions): every segment on every field, then the store's own answers to
     * a spread of {@code remoteLogSegmentMetadata} and {@code highestOffsetForEpoch} lookups (the
     * dump's "answers") against Kafka's. Empty when they agree; `probes[0]` counts the lookups.
     */
    public static List<String> differencesFromKafka(KafkaCluster c, int broker, KafkaReplay truth,
                                                    Map<String, Set<Integer>> held, int[] probes) throws Exception {
        List<String> diff = new ArrayList<>();
        JsonNode dump;
        try {
            dump = MetaTopic.json(Files.readString(c.dumpFile(broker)));
        } catch (IOException | AssertionError e) {
            return List.of("broker " + broker + ": no readable dump");
        }
        JsonNode store = dump.get("store");
        JsonNode answers = dump.get("answers");
        if (store == null || store.isNull() || answers == null) {
            return List.of("broker " + broker + ": its dump has no store or no answers");
        }
        for (Map.Entry<String, Set<Integer>> e : held.entrySet()) {
            String id = e.getKey();
            for (int p : e.getValue()) {
                String where = "broker " + broker + " " + id + "-" + p;
                List<String> mine = new ArrayList<>();
                for (JsonNode part : store.get("partitions")) {
                    JsonNode tip = part.get("topicIdPartition");
                    if (tip.get("id").asText().equals(id) && tip.get("partition").asInt() == p) {
                        for (JsonNode s : part.get("segments")) {
                            mine.add(line(s));
                        }
                    }
                }
                mine.sort(java.util.Comparator.comparingLong((String s) -> Long.parseLong(s.split(" ")[2].split("-")[0]))
                        .thenComparing(s -> s.split(" ")[0]));
                List<String> kafkas = truth.segments(id, p);
                if (!mine.equals(kafkas)) {
                    Set<String> only = new LinkedHashSet<>(mine);
                    kafkas.forEach(only::remove);
                    Set<String> missing = new LinkedHashSet<>(kafkas);
                    mine.forEach(missing::remove);
                    diff.add(where + ": segments differ from Kafka's replay (" + mine.size() + " vs " + kafkas.size()
                            + "); only in the broker: " + only + "; only in Kafka's: " + missing);
                    continue;
                }
                JsonNode a = null;
                for (JsonNode x : answers) {
                    if (x.get("id").asText().equals(id) && x.get("partition").asInt() == p) {
                        a = x;
                    }
                }
                if (a == null) {
                    diff.add(where + ": no answers in the dump (not loaded)");
                    continue;
                }
                if (a.has("error")) {
                    diff.add(where + ": the store refused the lookups: " + a.get("error").asText());
                    continue;
                }
                for (JsonNode h : a.get("highestOffsetForEpoch")) {
                    int epoch = h.get(0).asInt();
                    Long got = h.get(1).isNull() ? null : h.get(1).asLong();
                    Long want = truth.highestOffsetForEpoch(id, p, epoch);
                    probes[0]++;
                    if (!java.util.Objects.equals(got, want)) {
                        diff.add(where + ": highestOffsetForEpoch(" + epoch + ") = " + got + ", Kafka's " + want);
                    }
                }
                for (JsonNode q : a.get("segmentFor")) {
                    int epoch = q.get(0).asInt();
                    long offset = q.get(1).asLong();
                    String got = q.get(2).isNull() ? null : q.get(2).asText();
                    String want = truth.segmentFor(id, p, epoch, offset);
                    probes[0]++;
                    if (!java.util.Objects.equals(got, want)) {
                        diff.add(where + ": remoteLogSegmentMetadata(epoch " + epoch + ", offset " + offset + ") = " + got
                                + ", Kafka's " + want);
                    }
                }
            }
        }
        return diff;
    }

    /**
     * Judges every broker in `brokers` by Kafka's own replay of the metadata topic, for the
     * partitions of `topicIds` its store holds: {@link #differencesFromKafka}, retried while a dump
     * is behind (they are rewritten at most once a second), up to 45 s. With `cleanTopic`, no record
     * may make Kafka's replay throw (a test that writes undecodable records on purpose passes false:
     * those are skipped, as the plugin skips them). Returns the lookups compared.
     */
    public static int judgeByKafka(KafkaCluster c, List<Integer> brokers, Set<Uuid> topicIds, boolean cleanTopic)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
        while (true) {
            KafkaReplay truth = new KafkaReplay(c.kafka(), MetaTopic.read(c.bootstrap()));
            int[] probes = new int[1];
            List<String> diff = new ArrayList<>();
            for (int b : brokers) {
                JsonNode store = dump(c, b).get("store");
                Map<String, Set<Integer>> held = new TreeMap<>();
                for (Uuid id : topicIds) {
                    Set<Integer> ps = partitionsHeld(store, id);
                    if (!ps.isEmpty()) {
                        held.put(id.toString(), ps);
                    }
                }
                diff.addAll(differencesFromKafka(c, b, truth, held, probes));
            }
            if (diff.isEmpty()) {
                assertTrue(!cleanTopic || truth.thrown.isEmpty(), "Kafka's replay threw on events: " + truth.thrown);
                return probes[0];
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("brokers " + brokers + " disagree with Kafka " + c.kafka() + "'s replay of "
                        + MetaTopic.NAME + ":\n  " + String.join("\n  ", diff.subList(0, Math.min(8, diff.size()))));
            }
            Thread.sleep(2000);
        }
    }
}
