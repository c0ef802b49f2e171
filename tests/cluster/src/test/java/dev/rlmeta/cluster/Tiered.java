package dev.rlmeta.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the scenarios do to tiered topics: create, produce, wait for tiering, read back from offset 0. */
public final class Tiered {
    private Tiered() {}

    /** 16 KiB segments (4.0+: internal.segment.bytes, Kafka's test-only config), 16 KiB kept locally. */
    public static Map<String, String> topicConfigs() {
        return topicConfigs(KafkaVersion.current());
    }

    /** {@link #topicConfigs()} for a broker of the given version. */
    public static Map<String, String> topicConfigs(KafkaVersion kafka) {
        Map<String, String> c = new HashMap<>();
        c.put("remote.storage.enable", "true");
        c.put(kafka.smallSegmentConfig(), "16384");
        c.put("local.retention.bytes", "16384");
        c.put("segment.index.bytes", "4096");
        c.put("min.insync.replicas", "1");
        return c;
    }

    public static Uuid create(Admin admin, String topic, int partitions, int rf, Map<String, String> configs)
            throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) rf).configs(configs))).all()
                .get(60, TimeUnit.SECONDS);
        // the id is taken from the description that showed the leaders: the admin client may ask
        // another broker next, one still behind the metadata log (UnknownTopicOrPartition)
        java.util.concurrent.atomic.AtomicReference<Uuid> id = new java.util.concurrent.atomic.AtomicReference<>();
        KafkaCluster.await("topic " + topic + " has leaders", Duration.ofSeconds(60), () -> {
            try {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                id.set(d.topicId());
                return d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty());
            } catch (Exception e) {
                return false;
            }
        });
        return id.get();
    }

    /**
     * The topic's description, asked again for up to 30 s while the broker the admin client picked
     * is still behind the metadata log (UnknownTopicOrPartition after a restart or a creation).
     */
    public static TopicDescription describe(Admin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                        || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    /** The value of record i: its index, then padding to 512 bytes. */
    public static String value(String topic, int i) {
        StringBuilder sb = new StringBuilder(512).append(topic).append('#').append(i).append('#');
        while (sb.length() < 512) {
            sb.append('x');
        }
        return sb.toString();
    }

    /** Produces records first..first+n-1 of the topic, record i to partition i % partitions, acks=all. */
    public static void produce(String bootstrap, String topic, int partitions, int first, int n) throws Exception {
        produce(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), topic, partitions, first, n);
    }

    /** As above with the client settings given (bootstrap and security). */
    public static void produce(Map<String, Object> client, String topic, int partitions, int first, int n)
            throws Exception {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 4096);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
        try (KafkaProducer<String, String> producer =
                     new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = first; i < first + n; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, i % partitions, null, value(topic, i))));
            }
            for (var f : sent) {
                f.get(90, TimeUnit.SECONDS);
            }
        }
    }

    public static Map<TopicPartition, Long> offsets(Admin admin, String topic, int partitions, OffsetSpec spec)
            throws ExecutionException, InterruptedException {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
            q.put(new TopicPartition(topic, i), spec);
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        for (Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e :
                admin.listOffsets(q).all().get().entrySet()) {
            out.put(e.getKey(), e.getValue().offset());
        }
        return out;
    }

    public static long journalCount(KafkaCluster c, String kind, String topic) {
        return c.journal().stream().filter(l -> l.startsWith(kind + " ") && l.contains(":" + topic + "-")).count();
    }

    public static long journalCount(KafkaCluster c, String kind, String topic, int partition) {
        return c.journal().stream().filter(l -> l.startsWith(kind + " ") && l.contains(":" + topic + "-" + partition + " ")).count();
    }

    /** Waits until every partition has at least `copies` uploads and its local log starts above 0. */
    public static void awaitTiered(KafkaCluster c, Admin admin, String topic, int partitions, int copies,
                                   Duration limit) {
        KafkaCluster.await(topic + ": " + copies + " uploads per partition and local copies deleted", limit, () -> {
            try {
                for (int i = 0; i < partitions; i++) {
                    if (journalCount(c, "COPY", topic, i) < copies) {
                        return false;
                    }
                }
                return offsets(admin, topic, partitions, OffsetSpec.earliestLocal()).values().stream()
                        .allMatch(o -> o > 0);
            } catch (Exception e) {
                return false;
            }
        });
    }

    /**
     * Reads every partition from its earliest offset to its end and checks that record values are
     * exactly `expected` (the indexes first..first+n-1) and that offsets are contiguous. Returns the
     * number of records read.
     */
    public static int consumeAllAndCheck(String bootstrap, String topic, int partitions, int first, int n,
                                         Duration limit) {
        return consumeAllAndCheck(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), topic, partitions, first,
                n, limit);
    }

    /** As above with the client settings given (bootstrap and security). */
    public static int consumeAllAndCheck(Map<String, Object> client, String topic, int partitions, int first, int n,
                                         Duration limit) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        boolean[] seen = new boolean[n];
        int count = 0;
        Map<Integer, Long> nextOffset = new HashMap<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            for (TopicPartition tp : tps) {
                long start = consumer.position(tp);
                if (start != 0) {
                    throw new AssertionError(tp + " starts at " + start + ", not 0");
                }
                nextOffset.put(tp.partition(), 0L);
            }
            long deadline = System.nanoTime() + limit.toNanos();
            while (tps.stream().anyMatch(tp -> nextOffset.get(tp.partition()) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out reading " + topic + " from offset 0: positions "
                            + nextOffset + ", ends " + ends);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    long want = nextOffset.get(r.partition());
                    if (r.offset() != want) {
                        throw new AssertionError(topic + "-" + r.partition() + ": offset " + r.offset()
                                + " read where " + want + " was next (a gap)");
                    }
                    nextOffset.put(r.partition(), want + 1);
                    String[] parts = r.value().split("#", 3);
                    int idx = Integer.parseInt(parts[1]);
                    if (!parts[0].equals(topic) || idx < first || idx >= first + n || seen[idx - first]
                            || !r.value().equals(value(topic, idx)) || idx % partitions != r.partition()) {
                        throw new AssertionError(topic + "-" + r.partition() + " offset " + r.offset()
                                + ": unexpected or duplicate record " + parts[0] + "#" + parts[1]);
                    }
                    seen[idx - first] = true;
                    count++;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (!seen[i]) {
                throw new AssertionError(topic + ": record " + (first + i) + " was never read back");
            }
        }
        return count;
    }

    /** Raw bytes consumer over every partition of a topic from the beginning to the end offsets now. */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic, Duration limit) {
        return readAll(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), topic, limit);
    }

    /** As above with the client settings given (bootstrap and security). */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(Map<String, Object> client, String topic, Duration limit) {
        Properties p = new Properties();
        p.putAll(client);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.EXCLUDE_INTERNAL_TOPICS_CONFIG, "false");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + limit.toNanos();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out reading " + topic);
                }
                consumer.poll(Duration.ofMillis(300)).forEach(out::add);
            }
        }
        return out;
    }
}
