package dev.rlmeta.kafka;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadataManager;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PlannedRecords;
import dev.rlmeta.RlMeta;
import dev.rlmeta.RlMetaException;

/**
 * A {@link RemoteLogMetadataManager} for stock Apache Kafka 3.7 to 4.4 that writes a keyed,
 * compactable {@code __remote_log_metadata} (KIP-1266) and reads it back through the rlmeta core.
 *
 * <p>A drop-in for TopicBasedRemoteLogMetadataManager: the same topic and configs (parsed by
 * Kafka's own TopicBasedRemoteLogMetadataManagerConfig, so every {@code remote.log.metadata.*}
 * setting and client prefix means what it means there), the same partitioner (the core's, equal to
 * Kafka's), the same exceptions, and the same read-your-writes promise: a write's future completes
 * once this broker's consumer has applied the last record it produced, and always within
 * {@code remote.log.metadata.consume.wait.ms}.
 *
 * <p>This class is the host: clients, threads, futures and time. The core decides everything
 * else: every record written comes from its planner (keys, value versions, tombstones, refusals),
 * every lookup is answered by its store, and every consumed record is classified by it.
 *
 * <p>It needs no {@code onBrokerReady} (a plugin under {@code remote.log.metadata.manager.class.path}
 * never gets it): configure() starts a background loop that connects, creates the topic if it is
 * missing (compacted, with level records "2" in every partition) and starts the consumer.
 *
 * <p>Own setting (after the broker strips {@code rlmm.config.}): {@code rlmeta.dump.path}, a file
 * the plugin keeps a diagnostic dump in (store contents, levels, positions, counters; rewritten at
 * most once a second when something changed, and on close).
 */
public class RlmetaRemoteLogMetadataManager implements RemoteLogMetadataManager {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);
    public static final String DUMP_PATH = "rlmeta.dump.path";
    /** How often the metadata topic's cleanup.policy is read again (ms; default one minute). */
    public static final String POLICY_REFRESH_MS = "rlmeta.policy.refresh.ms";
    static final long DEFAULT_POLICY_REFRESH_MS = 60_000;
    /** The level record (core/src/feature.rs, docs/FEATURE-LEVEL.md). */
    static final byte[] LEVEL_RECORD_KEY = "remote.log.metadata.version".getBytes(StandardCharsets.US_ASCII);
    static final int FRESH_TOPIC_LEVEL = 2;
    static final String FEATURE = "remote.log.metadata.version";
    private static final Duration CLIENT_WAIT = Duration.ofSeconds(30);

    private final Object storeLock = new Object();
    private final RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
    private final Set<TopicIdPartition> loaded = ConcurrentHashMap.newKeySet();
    private final Map<TopicIdPartition, Integer> lastLeaderEpoch = new ConcurrentHashMap<>();

    private volatile TopicBasedRemoteLogMetadataManagerConfig config;
    private volatile MetadataStore store;
    private volatile MetadataConsumer consumer;
    private volatile Admin admin;
    private volatile KafkaProducer<byte[], byte[]> producer;
    private volatile boolean ready;
    private volatile boolean closed;
    private volatile Thread initThread;
    private volatile Thread dumpThread;
    private volatile Thread policyThread;
    private long policyRefreshMs = DEFAULT_POLICY_REFRESH_MS;
    private volatile Path dumpPath;
    private volatile StartupTimeline timeline = new StartupTimeline();
    private String topic;
    private int numPartitions;
    private int topicMinIsr = -1; // -1: the broker default (KafkaCompat.metadataTopicMinIsr)
    private int brokerId = -1;

    public RlmetaRemoteLogMetadataManager() {}

    /** The metadata partition holding a user partition: the core's partitioner (equal to Kafka's). */
    static int metadataPartition(TopicIdPartition tp, int numPartitions) {
        return RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), numPartitions);
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void configure(Map<String, ?> configs) {
        timeline = new StartupTimeline();
        TopicBasedRemoteLogMetadataManagerConfig c = new TopicBasedRemoteLogMetadataManagerConfig(configs);
        Object id = configs.get("broker.id") != null ? configs.get("broker.id") : configs.get("node.id");
        brokerId = id == null ? -1 : Integer.parseInt(id.toString());
        topic = c.remoteLogMetadataTopicName();
        numPartitions = c.metadataTopicPartitionsCount();
        topicMinIsr = KafkaCompat.metadataTopicMinIsr(c, configs);
        Object dump = configs.get(DUMP_PATH);
        dumpPath = dump == null || dump.toString().isBlank() ? null : Path.of(dump.toString());
        Object refresh = configs.get(POLICY_REFRESH_MS);
        policyRefreshMs = refresh == null ? DEFAULT_POLICY_REFRESH_MS : Math.max(100, Long.parseLong(refresh.toString()));
        config = c;
        store = new MetadataStore();
        consumer = new MetadataConsumer(topic, numPartitions, store, storeLock, this::markInitialized, timeline);
        Thread t = new Thread(this::initialize, "RlmetaRLMMInitializationThread");
        t.setDaemon(true);
        initThread = t;
        t.start();
        if (dumpPath != null) {
            Thread d = new Thread(this::dumpLoop, "RlmetaRLMMDump");
            d.setDaemon(true);
            dumpThread = d;
            d.start();
        }
        log.info("rlmeta RLMM configured on broker {}: topic {} with {} partitions, consume.wait.ms {}, loaded by {}",
                brokerId, topic, numPartitions, c.consumeWaitMs(), getClass().getClassLoader().getClass().getName());
    }

    /** Connects, makes sure the topic exists, starts the producer and the consumer; retries as TBRLMM does. */
    private void initialize() {
        TopicBasedRemoteLogMetadataManagerConfig c = config;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(c.initializationRetryMaxTimeoutMs());
        int attempt = 0;
        boolean levelRecordsDue = false; // this broker created the topic and owes it its level records
        while (!closed) {
            attempt++;
            try {
                if (admin == null) {
                    admin = Admin.create(KafkaCompat.adminProperties(c));
                    timeline.mark("admin created");
                }
                // the three reads at once: one round trip's wait instead of three in a row
                ConfigResource policyResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                KafkaFuture<FeatureMetadata> features = admin.describeFeatures().featureMetadata();
                KafkaFuture<Map<String, TopicDescription>> described = admin.describeTopics(List.of(topic)).allTopicNames();
                KafkaFuture<Map<ConfigResource, Config>> policy = admin.describeConfigs(List.of(policyResource)).all();
                boolean created = ensureTopic(admin, c, described);
                timeline.mark("topic described");
                levelRecordsDue |= created;
                if (!levelRecordsDue) {
                    startConsumer(c); // the topic exists: reading needs nothing else, so it starts first
                }
                consumer.setFinalizedLevel(finalizedFeatureLevel(features));
                timeline.mark("features described");
                if (producer == null) {
                    producer = new KafkaProducer<>(c.producerProperties(), new ByteArraySerializer(),
                            new ByteArraySerializer());
                    timeline.mark("producer created");
                }
                if (levelRecordsDue) {
                    writeLevelRecords(FRESH_TOPIC_LEVEL);
                    levelRecordsDue = false;
                    timeline.mark("level records written");
                }
                // a topic this attempt created was described before it existed: read its policy again
                consumer.setCleanupPolicy(cleanupPolicy(created ? admin.describeConfigs(List.of(policyResource)).all()
                        : policy));
                timeline.mark("policy described");
                startConsumer(c);
                Thread pt = new Thread(this::policyLoop, "RlmetaRLMMCleanupPolicy");
                pt.setDaemon(true);
                policyThread = pt;
                pt.start();
                ready = true;
                log.info("rlmeta RLMM initialized on broker {} after {} attempt(s)", brokerId, attempt);
                return;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    log.error("rlmeta RLMM could not initialize within {} ms (last error: {}); remote storage "
                            + "stays unavailable on this broker", c.initializationRetryMaxTimeoutMs(), e.toString());
                    return;
                }
                log.info("rlmeta RLMM initialization attempt {} failed ({}); retrying", attempt, e.toString());
                sleepQuietly(c.initializationRetryIntervalMs());
            }
        }
    }

    /** Creates and starts the metadata consumer, once. */
    private void startConsumer(TopicBasedRemoteLogMetadataManagerConfig c) {
        if (consumer.started()) {
            return;
        }
        KafkaConsumer<byte[], byte[]> kc = new KafkaConsumer<>(c.consumerProperties(), new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        timeline.mark("consumer created");
        consumer.start(kc);
    }

    /** The cluster's finalized remote.log.metadata.version (max level), or -1: stock 4.4.0 has no such feature. */
    private static int finalizedFeatureLevel(KafkaFuture<FeatureMetadata> features) throws Exception {
        var finalized = features.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).finalizedFeatures().get(FEATURE);
        return finalized == null ? -1 : finalized.maxVersionLevel();
    }

    /** The metadata topic's cleanup.policy as the cluster has it now. */
    private String cleanupPolicy(Admin a) throws Exception {
        return cleanupPolicy(a.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic))).all());
    }

    private String cleanupPolicy(KafkaFuture<Map<ConfigResource, Config>> described) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config cfg = described.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).get(r);
        ConfigEntry e = cfg == null ? null : cfg.get("cleanup.policy");
        if (e == null || e.value() == null) {
            throw new IllegalStateException(topic + " has no cleanup.policy in its described configs");
        }
        return e.value();
    }

    /**
     * Reads the topic's cleanup.policy again every policy.refresh.ms: the level-1 records expire under
     * level 1's own retention, and the policy then carries the level (core feature rule). A failed
     * read keeps the policy last read.
     */
    private void policyLoop() {
        while (!closed) {
            try {
                Thread.sleep(policyRefreshMs);
                consumer.setCleanupPolicy(cleanupPolicy(admin));
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (!closed) {
                    log.warn("rlmeta RLMM could not read the cleanup.policy of {} ({}); keeping the last one read",
                            topic, e.toString());
                }
            }
        }
    }

    /** true if this call created the topic. */
    private boolean ensureTopic(Admin a, TopicBasedRemoteLogMetadataManagerConfig c,
                                KafkaFuture<Map<String, TopicDescription>> described) throws Exception {
        TopicDescription d;
        try {
            d = described.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
            Map<String, String> topicConfigs = new HashMap<>();
            topicConfigs.put("cleanup.policy", "compact");
            topicConfigs.put("retention.ms", Long.toString(c.metadataTopicRetentionMs()));
            topicConfigs.put("remote.storage.enable", "false");
            if (topicMinIsr > 0) {
                topicConfigs.put("min.insync.replicas", Integer.toString(topicMinIsr));
            }
            try {
                a.createTopics(List.of(new NewTopic(topic, numPartitions, c.metadataTopicReplicationFactor())
                        .configs(topicConfigs))).all().get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                log.info("rlmeta RLMM created {} ({} partitions, cleanup.policy=compact); level records {} follow",
                        topic, numPartitions, FRESH_TOPIC_LEVEL);
                return true;
            } catch (ExecutionException ce) {
                if (ce.getCause() instanceof TopicExistsException) {
                    return false;
                }
                throw ce;
            }
        }
        if (d.partitions().size() != numPartitions) {
            // TBRLMM ends the broker here; we keep the broker and leave remote storage unavailable
            closed = true;
            throw new IllegalStateException(topic + " has " + d.partitions().size() + " partitions, "
                    + "remote.log.metadata.topic.num.partitions is " + numPartitions);
        }
        return false;
    }

    private void writeLevelRecords(int level) throws Exception {
        byte[] value = Integer.toString(level).getBytes(StandardCharsets.US_ASCII);
        List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
        for (int p = 0; p < numPartitions; p++) {
            sent.add(producer.send(new ProducerRecord<>(topic, p, LEVEL_RECORD_KEY, value)));
        }
        for (var f : sent) {
            f.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void markInitialized(TopicIdPartition tp) {
        boolean live;
        synchronized (storeLock) {
            live = store.markInitialized(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                    tp.topic(), tp.partition());
        }
        log.info("rlmeta RLMM: {} initialized{}", tp, live ? "" : " (its remote log was deleted)");
    }

    @Override
    public void onPartitionLeadershipChanges(Set<TopicIdPartition> leaders, Set<TopicIdPartition> followers) {
        Set<TopicIdPartition> all = new HashSet<>(leaders);
        all.addAll(followers);
        for (TopicIdPartition tp : all) {
            if (loaded.add(tp)) {
                synchronized (storeLock) {
                    store.loadPartition(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                            tp.topic(), tp.partition());
                }
            }
        }
        consumer.setWanted(all, Set.of());
    }

    @Override
    public void onStopPartitions(Set<TopicIdPartition> partitions) {
        for (TopicIdPartition tp : partitions) {
            if (loaded.remove(tp)) {
                synchronized (storeLock) {
                    store.unloadPartition(tp.topicId().getMostSignificantBits(),
                            tp.topicId().getLeastSignificantBits(), tp.partition());
                }
            }
            lastLeaderEpoch.remove(tp);
        }
        consumer.setWanted(Set.of(), partitions);
    }

    @Override
    public void close() throws IOException {
        if (closed && store == null) {
            return;
        }
        closed = true;
        Thread t = initThread;
        if (t != null) {
            t.interrupt();
        }
        if (consumer != null) {
            consumer.close();
        }
        KafkaProducer<byte[], byte[]> p = producer;
        if (p != null) {
            p.close(Duration.ofSeconds(5));
        }
        Admin a = admin;
        if (a != null) {
            a.close(Duration.ofSeconds(5));
        }
        Thread pt = policyThread;
        if (pt != null) {
            pt.interrupt();
        }
        Thread d = dumpThread;
        if (d != null) {
            d.interrupt();
            try {
                d.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        writeDump();
        MetadataStore s = store;
        if (s != null) {
            synchronized (storeLock) {
                s.close();
                store = null;
            }
        }
        log.info("rlmeta RLMM closed on broker {}", brokerId);
    }

    // ------------------------------------------------------------------ writes

    @Override
    public CompletableFuture<Void> addRemoteLogSegmentMetadata(RemoteLogSegmentMetadata metadata)
            throws RemoteStorageException {
        if (metadata.state() != RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
            throw new IllegalArgumentException("the initial state of a segment must be COPY_SEGMENT_STARTED, not "
                    + metadata.state());
        }
        return write(metadata, metadata.topicIdPartition(), true);
    }

    @Override
    public CompletableFuture<Void> updateRemoteLogSegmentMetadata(RemoteLogSegmentMetadataUpdate update)
            throws RemoteStorageException {
        if (update.state() == RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
            throw new IllegalArgumentException("an update cannot have the state COPY_SEGMENT_STARTED");
        }
        return write(update, update.topicIdPartition(), false);
    }

    @Override
    public CompletableFuture<Void> putRemotePartitionDeleteMetadata(RemotePartitionDeleteMetadata metadata)
            throws RemoteStorageException {
        return write(metadata, metadata.topicIdPartition(), false);
    }

    /**
     * Plans the event with the core at the metadata partition's level, produces the planned records
     * in order, and returns a future that completes once the consumer has applied the last one.
     */
    private CompletableFuture<Void> write(RemoteLogMetadata event, TopicIdPartition tp, boolean copyStarts)
            throws RemoteStorageException {
        ensureReady();
        int mp = metadataPartition(tp, numPartitions);
        if (!consumer.isAssigned(mp)) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    topic + "-" + mp + " (holding " + tp + ") is not assigned to this broker's metadata consumer yet"));
        }
        int level = consumer.level(mp);
        if (level == MetadataConsumer.UNKNOWN_LEVEL) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the level of " + topic + "-" + mp + " is not known yet (the partition is not read to its end)"));
        }
        int epoch;
        try {
            epoch = leaderEpoch(tp, copyStarts);
        } catch (RemoteStorageException e) {
            return CompletableFuture.failedFuture(e);
        }
        byte[] value = serde.serialize(event);
        PlannedRecords plan;
        try {
            synchronized (storeLock) {
                plan = store.plan(value, epoch, level);
            }
        } catch (RlMetaException.InvalidState e) {
            log.warn("rlmeta RLMM refused {} of {} at level {}: {}", kind(event), tp, level, e.getMessage());
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "rlmeta refused the write (retry later): " + e.getMessage(), e));
        } catch (RlMetaException.NotFound e) {
            throw new RemoteResourceNotFoundException(e.getMessage());
        } catch (RlMetaException e) {
            throw new RemoteStorageException("rlmeta could not plan " + kind(event) + " of " + tp + ": " + e.getMessage(), e);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        int n = plan.size();
        if (n == 0) {
            done.complete(null);
            return done;
        }
        AtomicInteger left = new AtomicInteger(n);
        AtomicReference<Long> lastOffset = new AtomicReference<>(-1L);
        for (int i = 0; i < n; i++) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, mp, plan.keys[i], plan.values[i]);
            producer.send(r, (md, err) -> {
                if (err != null) {
                    done.completeExceptionally(new RemoteStorageException("producing to " + topic + "-" + mp
                            + " failed: " + err, err));
                    return;
                }
                lastOffset.accumulateAndGet(md.offset(), Math::max);
                if (left.decrementAndGet() == 0) {
                    consumer.completeWhenApplied(mp, lastOffset.get(), done);
                }
            });
        }
        long waitMs = config.consumeWaitMs();
        return done.orTimeout(waitMs, TimeUnit.MILLISECONDS).handle((v, err) -> {
            if (err == null) {
                return null;
            }
            Throwable cause = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                    ? err.getCause() : err;
            if (cause instanceof TimeoutException) {
                throw new java.util.concurrent.CompletionException(KafkaCompat.retriable(
                        "the metadata consumer did not apply " + topic + "-" + mp + " up to the written record within "
                                + waitMs + " ms"));
            }
            throw new java.util.concurrent.CompletionException(cause);
        });
    }

    private static String kind(RemoteLogMetadata e) {
        if (e instanceof RemoteLogSegmentMetadata) {
            RemoteLogSegmentMetadata m = (RemoteLogSegmentMetadata) e;
            return "segment " + m.remoteLogSegmentId().id() + " " + m.state();
        }
        if (e instanceof RemoteLogSegmentMetadataUpdate) {
            RemoteLogSegmentMetadataUpdate u = (RemoteLogSegmentMetadataUpdate) e;
            return "segment " + u.remoteLogSegmentId().id() + " " + u.state();
        }
        return "partition delete " + ((RemotePartitionDeleteMetadata) e).state();
    }

    /**
     * The partition's current leader epoch, asked of the cluster (ListOffsets latest answers with
     * it). A copy cannot start without it (retriable); updates and deletions are keyed by the core
     * with the epoch their segment was uploaded in, so for them the last known epoch will do.
     */
    private int leaderEpoch(TopicIdPartition tp, boolean required) throws RemoteStorageException {
        TopicPartition p = new TopicPartition(tp.topic(), tp.partition());
        try {
            Optional<Integer> e = admin.listOffsets(Map.of(p, OffsetSpec.latest())).partitionResult(p)
                    .get(required ? 10_000 : 3_000, TimeUnit.MILLISECONDS).leaderEpoch();
            if (e.isPresent()) {
                lastLeaderEpoch.put(tp, e.get());
                return e.get();
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException ex) {
            if (required) {
                throw KafkaCompat.retriable("the current leader epoch of " + tp
                        + " could not be had from the cluster: " + ex, ex);
            }
        }
        if (required) {
            throw KafkaCompat.retriable("the cluster answered no leader epoch for " + tp);
        }
        return lastLeaderEpoch.getOrDefault(tp, 0);
    }

    private void ensureReady() throws RemoteStorageException {
        if (closed) {
            throw new IllegalStateException("the rlmeta metadata manager is closed");
        }
        if (!ready) {
            throw KafkaCompat.retriable("the rlmeta metadata manager is not initialized yet");
        }
    }

    // ------------------------------------------------------------------ reads

    @FunctionalInterface
    private interface Query<T> {
        T run(MetadataStore s, long msb, long lsb, int partition);
    }

    private <T> T query(TopicIdPartition tp, Query<T> q) throws RemoteStorageException {
        MetadataStore s = store;
        if (s == null) {
            throw new IllegalStateException("the rlmeta metadata manager is not configured or is closed");
        }
        try {
            synchronized (storeLock) {
                return q.run(s, tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                        tp.partition());
            }
        } catch (RlMetaException.NotFound e) {
            throw new RemoteResourceNotFoundException("no remote log metadata for " + tp + ": " + e.getMessage());
        } catch (RlMetaException.NotInitialized e) {
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is not loaded yet");
        } catch (RlMetaException e) {
            throw new RemoteStorageException("rlmeta lookup for " + tp + " failed: " + e.getMessage(), e);
        }
    }

    private RemoteLogSegmentMetadata segment(byte[] bytes) {
        return (RemoteLogSegmentMetadata) serde.deserialize(bytes);
    }

    private Optional<RemoteLogSegmentMetadata> optionalSegment(byte[] bytes) {
        return bytes == null ? Optional.empty() : Optional.of(segment(bytes));
    }

    private Iterator<RemoteLogSegmentMetadata> segments(byte[][] all) {
        List<RemoteLogSegmentMetadata> out = new ArrayList<>(all.length);
        for (byte[] b : all) {
            out.add(segment(b));
        }
        return out.iterator();
    }

    @Override
    public Optional<RemoteLogSegmentMetadata> remoteLogSegmentMetadata(TopicIdPartition tp, int epochForOffset,
                                                                       long offset) throws RemoteStorageException {
        return optionalSegment(query(tp, (s, msb, lsb, p) -> s.segmentFor(msb, lsb, p, epochForOffset, offset)));
    }

    @Override
    public Optional<Long> highestOffsetForEpoch(TopicIdPartition tp, int leaderEpoch) throws RemoteStorageException {
        long o = query(tp, (s, msb, lsb, p) -> s.highestOffsetForEpoch(msb, lsb, p, leaderEpoch));
        return o == Long.MIN_VALUE ? Optional.empty() : Optional.of(o);
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp) throws RemoteStorageException {
        return segments(query(tp, (s, msb, lsb, p) -> s.segments(msb, lsb, p)));
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp, int leaderEpoch)
            throws RemoteStorageException {
        return segments(query(tp, (s, msb, lsb, p) -> s.segmentsForEpoch(msb, lsb, p, leaderEpoch)));
    }

    /** RemoteLogMetadataManager#nextSegmentWithTxnIndex of Kafka 4.0+ (KIP-1058); 3.x brokers never call it. */
    public Optional<RemoteLogSegmentMetadata> nextSegmentWithTxnIndex(TopicIdPartition tp, int epoch, long offset)
            throws RemoteStorageException {
        return optionalSegment(query(tp, (s, msb, lsb, p) -> s.nextSegmentWithTxnIndex(msb, lsb, p, epoch, offset)));
    }

    @Override
    public long remoteLogSize(TopicIdPartition tp, int leaderEpoch) throws RemoteStorageException {
        return query(tp, (s, msb, lsb, p) -> s.remoteLogSize(msb, lsb, p, leaderEpoch));
    }

    /** RemoteLogMetadataManager#isReady of Kafka 4.0+ (KIP-1105); 3.x brokers never call it. */
    public boolean isReady(TopicIdPartition tp) {
        MetadataStore s = store;
        if (s == null) {
            return false;
        }
        synchronized (storeLock) {
            return s.isInitialized(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                    tp.partition());
        }
    }

    // ------------------------------------------------------------------ diagnostics

    /**
     * When each step of this instance's start happened ("step @ms" since configure(), in order):
     * the clients, the Admin round trips, the consumer's assignment, its first polls, and "all
     * initialized" once every partition held at the first assignment is; then the bootstrap's
     * polls, records and time in poll() vs the core's apply.
     */
    public String startupTimeline() {
        String stats = consumer == null ? null : consumer.bootstrapStats();
        return timeline.summary() + (stats == null ? "" : "; " + stats);
    }

    /** Milliseconds from configure() to the first time `step` of {@link #startupTimeline()} happened, or -1. */
    public double startupMillis(String step) {
        return timeline.at(step);
    }

    /** The level the plugin holds for a metadata partition: 0..2, or -1 while unknown. */
    public int level(int metadataPartition) {
        return consumer.level(metadataPartition);
    }

    /** How many consumed records had an outcome (the codes of {@link dev.rlmeta.Outcome}). */
    public long outcomeCount(byte outcome) {
        return consumer.count(outcome);
    }

    /** The diagnostic dump: {"brokerId":..,"levels":[..],"positions":[..],"counters":{..},"store":<core dump>}. */
    public String dumpJson() {
        String storeDump;
        synchronized (storeLock) {
            MetadataStore s = store;
            storeDump = s == null ? "null" : s.dumpJson();
        }
        return "{\"brokerId\":" + brokerId + "," + consumer.statusJson() + ",\"store\":" + storeDump + "}";
    }

    private void dumpLoop() {
        while (!closed) {
            if (consumer.takeDirty()) {
                writeDump();
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void writeDump() {
        Path path = dumpPath;
        if (path == null || store == null || consumer == null) {
            return;
        }
        try {
            Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
            Files.writeString(tmp, dumpJson());
            Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException | RuntimeException e) {
            log.warn("rlmeta RLMM could not write its dump to {}: {}", path, e.toString());
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
