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
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicIdPartition;
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

import dev.rlmeta.Constants;
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
 * the plugin keeps a diagnostic dump in (store contents, the store's answers to a spread of
 * lookups per held partition, levels, positions, counters; rewritten at most once a second when
 * something changed, and on close).
 */
public class RlmetaRemoteLogMetadataManager implements RemoteLogMetadataManager {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);
    public static final String DUMP_PATH = "rlmeta.dump.path";
    /** How often the metadata topic's cleanup.policy is read again (ms; default one minute). */
    public static final String POLICY_REFRESH_MS = "rlmeta.policy.refresh.ms";
    static final long DEFAULT_POLICY_REFRESH_MS = 60_000;
    /** The level record (core/src/feature.rs, docs/FEATURE-LEVEL.md). */
    static final byte[] LEVEL_RECORD_KEY = Constants.LEVEL_RECORD_KEY.getBytes(StandardCharsets.US_ASCII);
    static final String FEATURE = Constants.FEATURE_NAME;
    private static final Duration CLIENT_WAIT = Duration.ofSeconds(30);
    /** The core's "epoch not known" (Kafka's NO_PARTITION_LEADER_EPOCH). */
    static final int UNKNOWN_EPOCH = Constants.UNKNOWN_EPOCH;

    /** Held while the set of held partitions changes, and while the store is replaced (never by lookups). */
    private final Object partitionsLock = new Object();
    private final RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
    private final Set<TopicIdPartition> loaded = ConcurrentHashMap.newKeySet();
    // The leader epoch of partitions this broker leads, as Kafka uses it with this manager: stock
    // Kafka passes no epoch, but a new leader's copy task (RLMCopyTask, a new one per leadership)
    // asks highestOffsetForEpoch for the newest epoch of its leader-epoch cache, which is its own,
    // assigned on becoming leader (Partition.makeLeader), before its first copy
    // (findHighestRemoteOffset, 4.4.0 bytecode). The highest epoch asked since the partition became
    // led here is its epoch; none asked: unknown (the core refuses a copy, retriably).
    private final Map<TopicIdPartition, Integer> knownEpoch = new ConcurrentHashMap<>();
    private final Set<TopicIdPartition> leading = ConcurrentHashMap.newKeySet();
    // One per user partition: held by a lifecycle write and by a backfill round from plan to applied
    private final Map<TopicIdPartition, java.util.concurrent.Semaphore> writeLocks = new ConcurrentHashMap<>();
    // refused writes: one WARN a minute per partition and kind, with the count held back
    private final RateLimitedLog refusals = new RateLimitedLog(60_000);
    private volatile Backfill backfill;
    // the threads below the consumer: each runs under the guard (logged, counted, restarted after a backoff)
    public static final String INIT_THREAD = "RlmetaRLMMInitializationThread";
    public static final String POLICY_THREAD = "RlmetaRLMMCleanupPolicy";
    public static final String BACKFILL_THREAD = "RlmetaRLMMBackfill";
    public static final String DUMP_THREAD = "RlmetaRLMMDump";
    private final ThreadGuard guard = new ThreadGuard(() -> this.closed);
    private volatile Thread backfillThread;
    private volatile AccessProblems problems = new AccessProblems(Map.of());

    private volatile TopicBasedRemoteLogMetadataManagerConfig config;
    private volatile MetadataStore store;
    private volatile MetadataConsumer consumer;
    private volatile PluginMetrics metrics;
    private volatile Admin admin;
    private volatile KafkaProducer<byte[], byte[]> producer;
    private volatile boolean ready;
    private volatile boolean closed;
    private volatile boolean gaveUp; // initialization found a topic it cannot use and stopped retrying
    private boolean configured; // under partitionsLock
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

    /** The plugin's metrics once configured (null before): for MonitorableRlmetaRemoteLogMetadataManager. */
    PluginMetrics pluginMetrics() {
        return metrics;
    }

    /** The metadata partition holding a user partition: the core's partitioner (equal to Kafka's). */
    static int metadataPartition(TopicIdPartition tp, int numPartitions) {
        return RlMeta.metadataPartition(tp.topicId().toString(), tp.partition(), numPartitions);
    }

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void configure(Map<String, ?> configs) {
        synchronized (partitionsLock) {
            if (closed) {
                throw new IllegalStateException("configure() after close(): this RlmetaRemoteLogMetadataManager is closed");
            }
            if (configured) {
                throw new IllegalStateException("configure() was already called on this RlmetaRemoteLogMetadataManager "
                        + "(broker " + brokerId + "); a second call would leak the first store, clients and threads");
            }
            configured = true;
        }
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
        problems = new AccessProblems(KafkaCompat.adminProperties(c));
        store = new MetadataStore(true); // only the partitions this broker holds, as Kafka's ConsumerTask keeps
        consumer = new MetadataConsumer(topic, numPartitions, store, this::replaceStore, this::markInitialized, timeline);
        consumer.setProblems(problems);
        backfill = new Backfill(backfillHost(), topic, numPartitions, configs, c.consumeWaitMs());
        metrics = new PluginMetrics(consumer, numPartitions, backfill, topic, brokerId, timeline, () -> store, loaded,
                guard);
        metrics.register();
        Thread t = guard.newThread(INIT_THREAD, this::initialize);
        initThread = t;
        t.start();
        if (dumpPath != null) {
            Thread d = guard.newThread(DUMP_THREAD, this::dumpLoop);
            dumpThread = d;
            d.start();
        }
        log.info("rlmeta RLMM configured on broker {}: topic {} with {} partitions, consume.wait.ms {}, clients as {}, "
                + "loaded by {}, native {}", brokerId, topic, numPartitions, c.consumeWaitMs(), problems.principal(),
                getClass().getClassLoader().getClass().getName(), RlMeta.nativeLibrary());
    }

    /** A step of the start that failed: what it did, with which permission, on what. */
    private static final class StepFailure extends Exception {
        private static final long serialVersionUID = 1L;
        final String step;
        final String operation;
        final String resource;

        StepFailure(String step, String operation, String resource, Throwable cause) {
            super(step + ": " + cause, cause);
            this.step = step;
            this.operation = operation;
            this.resource = resource;
        }
    }

    private static <T> T step(String step, String operation, String resource, java.util.concurrent.Callable<T> call)
            throws StepFailure {
        try {
            return call.call();
        } catch (StepFailure e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new StepFailure(step, operation, resource, e);
        }
    }

    /**
     * Connects, makes sure the topic exists, starts the producer and the consumer. Retries every
     * initialization.retry.interval.ms and, past initialization.retry.max.timeout.ms (logged once
     * at ERROR), every 2 s for as long as the manager is open: a missing ACL or wrong credentials
     * fixed on the cluster start the plugin without a broker restart. Each failing step is logged
     * once (AccessProblems), naming the operation, the resource and the principal.
     */
    private void initialize() {
        TopicBasedRemoteLogMetadataManagerConfig c = config;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(c.initializationRetryMaxTimeoutMs());
        boolean pastDeadline = false;
        int attempt = 0;
        int failures = 0;
        byte[] levelRecordDue = null; // this broker created the topic and owes it this level record (core's plan)
        String resource = "Topic:" + topic;
        while (!closed && !gaveUp) {
            attempt++;
            try {
                if (admin == null) {
                    admin = Admin.create(KafkaCompat.adminProperties(c));
                    timeline.mark("admin created");
                }
                // the finalized features come with ApiVersions (no ACL); sent with the topic's description
                KafkaFuture<FeatureMetadata> features = admin.describeFeatures().featureMetadata();
                KafkaFuture<Map<String, TopicDescription>> described = admin.describeTopics(List.of(topic)).allTopicNames();
                byte[] planned = ensureTopic(admin, c, described, features);
                problems.resolved("describe " + topic);
                timeline.mark("topic described");
                if (planned != null && planned.length > 0) {
                    levelRecordDue = planned;
                }
                if (levelRecordDue == null) {
                    startConsumer(c); // the topic exists: reading needs nothing else, so it starts first
                }
                consumer.setFinalizedLevel(step("describe the cluster's finalized features", "DescribeFeatures",
                        "Cluster", () -> finalizedFeatureLevel(features)));
                timeline.mark("features described");
                if (producer == null) {
                    producer = newProducer(c);
                    timeline.mark("producer created");
                }
                if (levelRecordDue != null) {
                    byte[] value = levelRecordDue;
                    step("write the level records to " + topic, "Write", resource, () -> {
                        writeLevelRecords(value);
                        return null;
                    });
                    problems.resolved("write the level records to " + topic);
                    levelRecordDue = null;
                    timeline.mark("level records written");
                }
                // the policy matters only to partitions without a level record (a topic the plugin
                // did not create): a refusal leaves their level unknown and is retried by the refresh loop
                refreshPolicy();
                timeline.mark("policy described");
                startConsumer(c);
                guard.checkpoint(INIT_THREAD);
                synchronized (partitionsLock) {
                    if (closed) {
                        return;
                    }
                    if (policyThread == null) { // once: a restarted initialization finds them started
                        Thread pt = guard.newThread(POLICY_THREAD, this::refreshLoop);
                        policyThread = pt;
                        pt.start();
                    }
                    if (backfillThread == null) {
                        Thread bt = guard.newThread(BACKFILL_THREAD, backfill);
                        backfillThread = bt;
                        bt.start();
                    }
                }
                ready = true;
                log.info("rlmeta RLMM initialized on broker {} after {} attempt(s), clients as {}", brokerId, attempt,
                        problems.principal());
                return;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                if (gaveUp) {
                    metrics.initializationFailed("initialization gave up: " + e.getMessage());
                    log.error("rlmeta RLMM gave up initializing: {}; remote storage stays unavailable on this broker",
                            e.getMessage());
                    return;
                }
                StepFailure f = e instanceof StepFailure ? (StepFailure) e
                        : new StepFailure("initialize", "connect", "the cluster", e);
                problems.report(f.step, f.getCause(), f.operation, f.resource);
                if (!pastDeadline && System.nanoTime() > deadline) {
                    pastDeadline = true;
                    metrics.initializationFailed("initialization timed out (still retrying): " + problems.open());
                    log.error("rlmeta RLMM could not initialize within {} ms ({}); remote storage waits on this broker, "
                            + "and the plugin keeps retrying every 2 s (TBRLMM would end the broker here)",
                            c.initializationRetryMaxTimeoutMs(), problems.open());
                }
                // the retry interval, doubled after each failure up to 2 s (a refused permission
                // is not fixed in 100 ms, and each attempt may make a client)
                failures = Math.min(failures + 1, 20);
                long backoff = Math.min(2000, c.initializationRetryIntervalMs() << Math.min(failures - 1, 10));
                sleepQuietly(Math.max(c.initializationRetryIntervalMs(), pastDeadline ? 2000 : backoff));
            }
        }
    }

    /**
     * The producer: Kafka's settings for TBRLMM's producer, and max.block.ms 10 s unless set, since
     * send() runs on Kafka's remote-log threads (it blocks only while the topic's metadata is missing).
     */
    private KafkaProducer<byte[], byte[]> newProducer(TopicBasedRemoteLogMetadataManagerConfig c) {
        Map<String, Object> props = new HashMap<>(c.producerProperties());
        props.putIfAbsent("max.block.ms", 10_000);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Records per poll of the metadata consumer, unless configured. */
    static final int MAX_POLL_RECORDS = 5000;

    /** Creates and starts the metadata consumer, once (not after close()). */
    private void startConsumer(TopicBasedRemoteLogMetadataManagerConfig c) {
        if (consumer.started()) {
            return;
        }
        consumer.start(() -> {
            Map<String, Object> props = new HashMap<>(c.consumerProperties());
            // a bootstrap of millions of records in polls of 5,000, not the client's 500: a tenth of the
            // polls and of the per-poll work (unless the operator set remote.log.metadata.consumer.max.poll.records)
            props.putIfAbsent("max.poll.records", MAX_POLL_RECORDS);
            KafkaConsumer<byte[], byte[]> kc = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            timeline.mark("consumer created");
            return kc;
        });
    }

    /**
     * Drops the store and puts a fresh one in its place, holding every partition this broker holds
     * (none initialized yet); the consumer then reads their metadata partitions again from the start.
     * Lookups that still hold the old store finish first (its close waits for them).
     */
    private MetadataStore replaceStore() {
        MetadataStore fresh = new MetadataStore(true);
        MetadataStore old;
        synchronized (partitionsLock) {
            if (closed) {
                fresh.close();
                throw new IllegalStateException("the rlmeta metadata manager is closed");
            }
            for (TopicIdPartition tp : loaded) {
                fresh.loadPartition(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                        tp.topic(), tp.partition());
            }
            old = store;
            store = fresh;
        }
        if (old != null) {
            old.close();
        }
        return fresh;
    }

    /** The cluster's finalized remote.log.metadata.version (max level), or -1: stock 4.4.0 has no such feature. */
    private static int finalizedFeatureLevel(KafkaFuture<FeatureMetadata> features) throws Exception {
        var finalized = features.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).finalizedFeatures().get(FEATURE);
        return finalized == null ? -1 : finalized.maxVersionLevel();
    }

    /**
     * Reads the topic's cleanup.policy (DescribeConfigs on the topic) into the consumer's level
     * rule; a refusal or failure is reported once and keeps the policy last read (none: the level
     * of partitions without a level record stays unknown, writes there fail retriably).
     */
    private void refreshPolicy() {
        String s = "read the cleanup.policy of " + topic;
        try {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config cfg = admin.describeConfigs(List.of(r)).all().get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).get(r);
            ConfigEntry e = cfg == null ? null : cfg.get("cleanup.policy");
            if (e == null || e.value() == null) {
                throw new IllegalStateException(topic + " has no cleanup.policy in its described configs");
            }
            consumer.setCleanupPolicy(e.value());
            problems.resolved(s);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed) {
                problems.report(s, e, "DescribeConfigs", "Topic:" + topic, "optional: only metadata partitions "
                        + "without a level record (a topic stock Kafka created) need the policy for their level; "
                        + "writes there fail retriably until it is granted");
            }
        }
    }

    /** The finalized feature level again (ApiVersions; no ACL); a failure keeps the last one. */
    private void refreshFeatures() {
        try {
            consumer.setFinalizedLevel(finalizedFeatureLevel(admin.describeFeatures().featureMetadata()));
            problems.resolved("describe the cluster's finalized features");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed) {
                problems.report("describe the cluster's finalized features", e, "DescribeFeatures", "Cluster");
            }
        }
    }

    /**
     * Every policy.refresh.ms: the topic's cleanup.policy (level 1's retention expires the level
     * records, and the policy then carries the level; core feature rule) and the cluster's
     * finalized remote.log.metadata.version (a cluster may finalize it while brokers run).
     */
    private void refreshLoop() {
        while (!closed) {
            try {
                Thread.sleep(policyRefreshMs);
            } catch (InterruptedException e) {
                return;
            }
            guard.checkpoint(POLICY_THREAD);
            refreshPolicy();
            refreshFeatures();
            backfill.wake(); // a level may have moved to 1
        }
    }

    /**
     * Creates the topic if it is missing, with the configs of the core's fresh-topic plan
     * ({@link RlMeta#freshTopicConfigs}: the finalized level's, else the newest level's); returns the
     * level record the plan owes every partition (an empty array when the finalized feature carries
     * the level and nothing is owed), or null when this call created nothing.
     */
    private byte[] ensureTopic(Admin a, TopicBasedRemoteLogMetadataManagerConfig c,
                               KafkaFuture<Map<String, TopicDescription>> described,
                               KafkaFuture<FeatureMetadata> features) throws Exception {
        TopicDescription d;
        try {
            d = described.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
        } catch (ExecutionException | TimeoutException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw new StepFailure("describe " + topic, "Describe", "Topic:" + topic, e);
            }
            int finalized = step("describe the cluster's finalized features", "DescribeFeatures", "Cluster",
                    () -> finalizedFeatureLevel(features));
            String[] planned = RlMeta.freshTopicConfigs(finalized, c.metadataTopicRetentionMs());
            Map<String, String> topicConfigs = new HashMap<>();
            for (int i = 0; i + 1 < planned.length; i += 2) {
                topicConfigs.put(planned[i], planned[i + 1]);
            }
            if (topicMinIsr > 0) {
                topicConfigs.put("min.insync.replicas", Integer.toString(topicMinIsr));
            }
            byte[] record = RlMeta.freshTopicLevelRecord(finalized);
            try {
                a.createTopics(List.of(new NewTopic(topic, numPartitions, c.metadataTopicReplicationFactor())
                        .configs(topicConfigs))).all().get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                log.info("rlmeta RLMM created {} ({} partitions, {}); level records {}", topic, numPartitions,
                        topicConfigs, record == null ? "none: the finalized feature carries the level"
                                : new String(record, StandardCharsets.US_ASCII) + " follow");
                problems.resolved("create " + topic);
                return record == null ? new byte[0] : record;
            } catch (ExecutionException | TimeoutException ce) {
                if (ce.getCause() instanceof TopicExistsException) {
                    return null;
                }
                throw new StepFailure("create " + topic, "Create", "Topic:" + topic, ce);
            }
        }
        if (d.partitions().size() != numPartitions) {
            // TBRLMM ends the broker here; we keep the broker and leave remote storage unavailable
            gaveUp = true;
            throw new IllegalStateException(topic + " has " + d.partitions().size() + " partitions, "
                    + "remote.log.metadata.topic.num.partitions is " + numPartitions);
        }
        return null;
    }

    private void writeLevelRecords(byte[] value) throws Exception {
        if (value.length == 0) {
            return; // the finalized feature carries the level
        }
        KafkaProducer<byte[], byte[]> pr = currentProducer();
        try {
            List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
            for (int p = 0; p < numPartitions; p++) {
                sent.add(pr.send(new ProducerRecord<>(topic, p, LEVEL_RECORD_KEY, value)));
            }
            for (var f : sent) {
                f.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            if (AccessProblems.isAccess(e)) {
                replaceProducer(pr); // an idempotent producer refused its producer id stays failed
            }
            throw e;
        }
    }

    private void markInitialized(TopicIdPartition tp) {
        boolean live = store.markInitialized(tp.topicId().getMostSignificantBits(),
                tp.topicId().getLeastSignificantBits(), tp.topic(), tp.partition());
        // DEBUG: the consumer logs one line for all the partitions a poll initializes
        log.debug("rlmeta RLMM: {} initialized{}", tp, live ? "" : " (its remote log was deleted)");
    }

    @Override
    public void onPartitionLeadershipChanges(Set<TopicIdPartition> leaders, Set<TopicIdPartition> followers) {
        // An epoch that moves on under the same leader (a replica set shrinks or grows, an election
        // returns here) is not told to the manager: the core raises the known epoch to the newest
        // epoch of a copied segment's own data (MetadataStore.planAsWriter).
        for (TopicIdPartition tp : leaders) {
            if (leading.add(tp)) {
                knownEpoch.remove(tp); // a new term here: its epoch is not known until Kafka uses it
            }
        }
        for (TopicIdPartition tp : followers) {
            leading.remove(tp);
            knownEpoch.remove(tp);
        }
        Set<TopicIdPartition> all = new HashSet<>(leaders);
        all.addAll(followers);
        Set<TopicIdPartition> replay = new HashSet<>();
        synchronized (partitionsLock) { // not while the store is replaced: the fresh one gets every held partition
            MetadataStore s = store;
            for (TopicIdPartition tp : all) {
                if (loaded.add(tp)) {
                    try {
                        // the core says whether the store held it: if not, its metadata partition is replayed
                        if (s.loadPartition(tp.topicId().getMostSignificantBits(),
                                tp.topicId().getLeastSignificantBits(), tp.topic(), tp.partition())) {
                            replay.add(tp);
                        }
                    } catch (RlMetaException.Internal e) {
                        consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                    }
                }
            }
        }
        consumer.setWanted(all, Set.of(), replay);
        backfill.leadershipChanged(leaders, followers);
    }

    @Override
    public void onStopPartitions(Set<TopicIdPartition> partitions) {
        synchronized (partitionsLock) {
            MetadataStore s = store;
            for (TopicIdPartition tp : partitions) {
                if (loaded.remove(tp)) {
                    try {
                        s.unloadPartition(tp.topicId().getMostSignificantBits(),
                                tp.topicId().getLeastSignificantBits(), tp.partition());
                    } catch (RlMetaException.Internal e) {
                        consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                    }
                }
                leading.remove(tp);
                knownEpoch.remove(tp);
            }
        }
        consumer.setWanted(Set.of(), partitions, Set.of());
        backfill.leadershipChanged(Set.of(), partitions);
        for (TopicIdPartition tp : partitions) {
            // a partition no longer held keeps no write lock (a free one: Kafka writes nothing for it now)
            java.util.concurrent.Semaphore lock = writeLocks.get(tp);
            if (lock != null && lock.tryAcquire()) {
                writeLocks.remove(tp, lock);
                lock.release();
            }
        }
    }

    /** How many user partitions have a write lock (diagnostics: it follows the partitions held). */
    public int writeLockCount() {
        return writeLocks.size();
    }

    /** How long {@link #close} waits in all, for threads and clients together. */
    public static final Duration CLOSE_DEADLINE = Duration.ofSeconds(10);

    /**
     * Stops every thread this instance started and waits for each, then closes every client it
     * created, whatever point its initialization had reached (the initialization thread is stopped
     * and joined first, so a client it was still creating is closed too), then frees the store.
     * Pending write futures fail. Idempotent. Returns within {@link #CLOSE_DEADLINE} (plus the wait
     * for lookups already running in the store), even with an unreachable cluster: every join and
     * client close gets what is left of one deadline, and a thread still running then is a daemon
     * left to finish on its own (logged).
     */
    @Override
    public void close() throws IOException {
        synchronized (partitionsLock) {
            if (closed) {
                return;
            }
            closed = true; // no thread or client is started from now on
        }
        long t0 = System.nanoTime();
        long deadline = t0 + CLOSE_DEADLINE.toNanos();
        for (Thread t : new Thread[] {initThread, policyThread, backfillThread, dumpThread}) {
            if (t != null) {
                t.interrupt(); // all at once: they stop in parallel
            }
        }
        join(initThread, deadline);
        MetadataConsumer mc = consumer;
        if (mc != null) {
            mc.close(deadline);
        }
        join(policyThread, deadline);
        join(backfillThread, deadline);
        KafkaProducer<byte[], byte[]> p = producer;
        if (p != null) {
            p.close(left(deadline, Duration.ofSeconds(5)));
        }
        Admin a = admin;
        if (a != null) {
            a.close(left(deadline, Duration.ofSeconds(5)));
        }
        join(dumpThread, deadline);
        writeDump();
        PluginMetrics m = metrics;
        if (m != null) {
            m.unregister();
        }
        MetadataStore s;
        synchronized (partitionsLock) {
            s = store;
            store = null;
        }
        if (s != null) {
            s.close();
        }
        writeLocks.clear();
        log.info("rlmeta RLMM closed on broker {} in {} ms", brokerId, (System.nanoTime() - t0) / 1_000_000);
    }

    /** What is left of a deadline ({@link System#nanoTime}), at most {@code cap}, at least 0. */
    private static Duration left(long deadline, Duration cap) {
        long nanos = Math.max(0, Math.min(cap.toNanos(), deadline - System.nanoTime()));
        return Duration.ofNanos(nanos);
    }

    private static void join(Thread t, long deadline) {
        if (t == null) {
            return;
        }
        t.interrupt();
        try {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                log.warn("rlmeta RLMM: thread {} did not stop by close()'s deadline; left to finish as a daemon",
                        t.getName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
        // one write of this user partition at a time, backfill rounds included, from plan to applied
        java.util.concurrent.Semaphore lock = writeLock(tp);
        try {
            if (!lock.tryAcquire(config.consumeWaitMs(), TimeUnit.MILLISECONDS)) {
                return CompletableFuture.failedFuture(KafkaCompat.retriable("another write of " + tp
                        + " (or its backfill) did not finish within " + config.consumeWaitMs() + " ms; retry"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CompletableFuture.failedFuture(KafkaCompat.retriable("interrupted waiting to write " + tp, e));
        }
        CompletableFuture<Void> f;
        try {
            f = writeHoldingLock(event, tp);
        } catch (RemoteStorageException | RuntimeException e) {
            lock.release();
            throw e;
        }
        f.whenComplete((v, err) -> lock.release());
        return f;
    }

    java.util.concurrent.Semaphore writeLock(TopicIdPartition tp) {
        return writeLocks.computeIfAbsent(tp, t -> new java.util.concurrent.Semaphore(1));
    }

    private CompletableFuture<Void> writeHoldingLock(RemoteLogMetadata event, TopicIdPartition tp)
            throws RemoteStorageException {
        int mp = metadataPartition(tp, numPartitions);
        if (consumer.stopped(mp)) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(topic + "-" + mp + " (holding " + tp + ") stopped "
                    + "on this broker after its records failed to apply again and again (see the broker's log)"));
        }
        if (!consumer.isAssigned(mp)) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    topic + "-" + mp + " (holding " + tp + ") is not assigned to this broker's metadata consumer yet"));
        }
        int level = consumer.level(mp);
        if (level == MetadataConsumer.UNKNOWN_LEVEL) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the level of " + topic + "-" + mp + " is not known yet (the partition is not read to its end)"));
        }
        // never asked of the cluster: the epoch Kafka used with this manager (or unknown: the core
        // refuses a copy retriably, and keys updates and deletions by the segment's upload)
        int epoch = knownEpoch.getOrDefault(tp, UNKNOWN_EPOCH);
        byte[] value = serde.serialize(event);
        PlannedRecords plan;
        MetadataStore s = store;
        if (s == null || !consumer.serving()) {
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is being rebuilt from " + topic + "; retry the write"));
        }
        try {
            plan = s.planAsWriter(value, leading.contains(tp), epoch, level);
        } catch (IllegalStateException e) { // the store was replaced (a rebuild) or closed under us
            if (closed) {
                throw e;
            }
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is being rebuilt from " + topic + "; retry the write", e));
        } catch (RlMetaException.Internal e) {
            consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
            return CompletableFuture.failedFuture(KafkaCompat.retriable(
                    "the rlmeta store is unusable and is being rebuilt from " + topic + ": " + e.getMessage(), e));
        } catch (RlMetaException.InvalidState | RlMetaException.NotInitialized e) {
            String sfx = refusals.admit(tp + " " + kind(event)); // Kafka retries every few seconds
            if (sfx != null) {
                log.warn("rlmeta RLMM refused {} of {} at level {}: {}{}", kind(event), tp, level, e.getMessage(), sfx);
            }
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
        KafkaProducer<byte[], byte[]> p = currentProducer();
        String step = "write to " + topic;
        for (int i = 0; i < n; i++) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, mp, plan.keys[i], plan.values[i]);
            try {
                p.send(r, (md, err) -> {
                    if (err != null) {
                        done.completeExceptionally(producingFailed(p, step, mp, err));
                        return;
                    }
                    problems.resolved(step);
                    lastOffset.accumulateAndGet(md.offset(), Math::max);
                    if (left.decrementAndGet() == 0) {
                        consumer.completeWhenApplied(mp, lastOffset.get(), done);
                    }
                });
            } catch (RuntimeException err) { // send() itself: metadata refused or not had within max.block.ms
                done.completeExceptionally(producingFailed(p, step, mp, err));
                break;
            }
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

    /**
     * A produce that failed: reported once; a refusal (authorization, authentication) is retriable
     * (the copy task retries, and a granted ACL or fixed credential makes it pass), and the
     * producer is replaced, since an idempotent producer refused its producer id stays failed.
     */
    private RemoteStorageException producingFailed(KafkaProducer<byte[], byte[]> p, String step, int mp, Throwable err) {
        Throwable cause = AccessProblems.cause(err);
        String msg = problems.report(step, cause, "Write", "Topic:" + topic);
        if (AccessProblems.isAccess(cause)) {
            replaceProducer(p);
            return KafkaCompat.retriable("producing to " + topic + "-" + mp + " was refused: " + msg, cause);
        }
        if (cause instanceof org.apache.kafka.common.errors.RetriableException) {
            return KafkaCompat.retriable("producing to " + topic + "-" + mp + " failed: " + cause, cause);
        }
        return new RemoteStorageException("producing to " + topic + "-" + mp + " failed: " + cause, cause);
    }

    private synchronized KafkaProducer<byte[], byte[]> currentProducer() {
        if (producer == null) {
            producer = newProducer(config);
        }
        return producer;
    }

    private synchronized void replaceProducer(KafkaProducer<byte[], byte[]> failed) {
        if (producer == failed && !closed) {
            producer = null; // the next write creates a fresh one
            Thread t = new Thread(() -> failed.close(Duration.ZERO), "RlmetaRLMMProducerClose");
            t.setDaemon(true);
            t.start();
        }
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

    /** An epoch Kafka used with this manager for a partition it leads here (the highest seen this term). */
    private void observeEpoch(TopicIdPartition tp, int epoch) {
        if (epoch >= 0 && leading.contains(tp)) {
            knownEpoch.merge(tp, epoch, Math::max);
        }
    }

    private Backfill.Host backfillHost() {
        return new Backfill.Host() {
            @Override
            public MetadataStore store() {
                return store;
            }

            @Override
            public MetadataConsumer consumer() {
                return consumer;
            }

            @Override
            public Admin admin() {
                return admin;
            }

            @Override
            public KafkaProducer<byte[], byte[]> producer() {
                return currentProducer();
            }

            @Override
            public boolean leads(TopicIdPartition tp) {
                return leading.contains(tp) && loaded.contains(tp);
            }

            @Override
            public int knownLeaderEpoch(TopicIdPartition tp) {
                return RlmetaRemoteLogMetadataManager.this.knownLeaderEpoch(tp);
            }

            @Override
            public java.util.concurrent.Semaphore writeLock(TopicIdPartition tp) {
                return RlmetaRemoteLogMetadataManager.this.writeLock(tp);
            }

            @Override
            public boolean closed() {
                return closed;
            }

            @Override
            public void checkpoint() {
                guard.checkpoint(BACKFILL_THREAD);
            }

            @Override
            public void caught(Error e) {
                guard.caught(BACKFILL_THREAD, e);
            }
        };
    }

    /** The leader epoch the plugin knows for a partition (see {@link #knownEpoch}), or -1. */
    public int knownLeaderEpoch(TopicIdPartition tp) {
        return knownEpoch.getOrDefault(tp, UNKNOWN_EPOCH);
    }

    /** The problems the plugin's clients have now (step -> sentence naming operation, resource, principal). */
    public Map<String, String> accessProblems() {
        return problems.open();
    }

    /** How many times in a row each step failing now has failed. */
    public Map<String, Long> accessProblemAttempts() {
        return problems.attempts();
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
        if (!consumer.serving()) {
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is being rebuilt from "
                    + topic + (consumer.down() != null ? " (the metadata consumer died: " + consumer.down() + ")" : ""));
        }
        long msb = tp.topicId().getMostSignificantBits();
        long lsb = tp.topicId().getLeastSignificantBits();
        try {
            // no lock of ours: the store lets lookups run in parallel, and with its apply
            return q.run(s, msb, lsb, tp.partition());
        } catch (IllegalStateException e) { // the store was replaced (a rebuild) or closed under us
            if (closed) {
                throw e;
            }
            throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is being rebuilt from " + topic);
        } catch (RlMetaException.Internal e) {
            if (unusable(s, msb, lsb, tp.partition())) {
                consumer.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
                throw new ReplicaNotAvailableException("the remote log metadata store is unusable (" + e.getMessage()
                        + ") and is being rebuilt from " + topic);
            }
            throw new RemoteStorageException("rlmeta lookup for " + tp + " failed: " + e.getMessage(), e);
        } catch (RlMetaException.NotFound e) {
            throw new RemoteResourceNotFoundException("no remote log metadata for " + tp + ": " + e.getMessage());
        } catch (RlMetaException.NotInitialized e) {
            int mp = metadataPartition(tp, numPartitions);
            if (consumer.stopped(mp)) {
                throw new ReplicaNotAvailableException("the remote log metadata of " + tp + " is unavailable: " + topic
                        + "-" + mp + " stopped after its records failed to apply again and again (see the broker's log)");
            }
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

    private Iterator<RemoteLogSegmentMetadata> segments(dev.rlmeta.PackedValues all) {
        return new SegmentIterator(all, serde);
    }

    @Override
    public Optional<RemoteLogSegmentMetadata> remoteLogSegmentMetadata(TopicIdPartition tp, int epochForOffset,
                                                                       long offset) throws RemoteStorageException {
        return optionalSegment(query(tp, (s, msb, lsb, p) -> s.segmentFor(msb, lsb, p, epochForOffset, offset)));
    }

    @Override
    public Optional<Long> highestOffsetForEpoch(TopicIdPartition tp, int leaderEpoch) throws RemoteStorageException {
        observeEpoch(tp, leaderEpoch);
        long o = query(tp, (s, msb, lsb, p) -> s.highestOffsetForEpoch(msb, lsb, p, leaderEpoch));
        return o == Long.MIN_VALUE ? Optional.empty() : Optional.of(o);
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp) throws RemoteStorageException {
        return segments(query(tp, (s, msb, lsb, p) -> s.packedSegments(msb, lsb, p)));
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp, int leaderEpoch)
            throws RemoteStorageException {
        return segments(query(tp, (s, msb, lsb, p) -> s.packedSegmentsForEpoch(msb, lsb, p, leaderEpoch)));
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

    /** Whether the store fails every call (its lock poisoned by a panic), not just one lookup. */
    private static boolean unusable(MetadataStore s, long msb, long lsb, int partition) {
        try {
            s.isInitialized(msb, lsb, partition);
            return false;
        } catch (RlMetaException.Internal e) {
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** RemoteLogMetadataManager#isReady of Kafka 4.0+ (KIP-1105); 3.x brokers never call it. */
    public boolean isReady(TopicIdPartition tp) {
        MetadataStore s = store;
        MetadataConsumer c = consumer;
        if (s == null || c == null || !c.serving()) {
            return false;
        }
        try {
            return s.isInitialized(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                    tp.partition());
        } catch (RlMetaException.Internal e) {
            c.requestRebuild(s, "the store is unusable (" + e.getMessage() + ")");
            return false;
        } catch (IllegalStateException e) { // replaced (a rebuild) or closed under us
            return false;
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

    /** How many times the store was dropped and rebuilt from the topic (a failed apply, a poisoned store, a restart). */
    public long rebuilds() {
        MetadataConsumer c = consumer;
        return c == null ? 0 : c.rebuilds();
    }

    /** The name this instance's MBean is registered under (see {@link RemoteLogMetadataManagerMXBean}), or null. */
    public javax.management.ObjectName mbeanName() {
        PluginMetrics m = metrics;
        return m == null ? null : m.name();
    }

    /** How many times the metadata consumer thread was restarted after it died. */
    public long consumerRestarts() {
        MetadataConsumer c = consumer;
        return c == null ? 0 : c.restarts();
    }

    /**
     * Fault injection for tests, refused ({@link UnsupportedOperationException}) unless the JVM
     * runs with {@code -Drlmeta.test.hooks=true} ({@link MetadataStore#TEST_HOOKS_PROPERTY}): a
     * broker never sets it, so production code cannot reach these.
     */
    public TestHooks testHooks() {
        if (!Boolean.getBoolean(MetadataStore.TEST_HOOKS_PROPERTY)) {
            throw new UnsupportedOperationException("test hooks need -D" + MetadataStore.TEST_HOOKS_PROPERTY + "=true");
        }
        if (consumer == null) {
            throw new IllegalStateException("not configured");
        }
        return new TestHooks(consumer, guard, () -> ready);
    }

    /** How many consumed records had an outcome (the codes of {@link dev.rlmeta.Outcome}). */
    public long outcomeCount(byte outcome) {
        return consumer.count(outcome);
    }

    /** The diagnostic dump: {"brokerId":..,"levels":[..],"positions":[..],"counters":{..},"store":<core dump>}. */
    public String dumpJson() {
        String storeDump;
        MetadataStore s = store;
        try {
            storeDump = s == null ? "null" : s.dumpJson();
        } catch (IllegalStateException | RlMetaException e) { // replaced, closed or poisoned meanwhile
            storeDump = "null";
        }
        String answers;
        try {
            answers = s == null ? "[]" : answersJson(s);
        } catch (IllegalStateException | RlMetaException e) {
            answers = "[]";
        }
        return "{\"brokerId\":" + brokerId + "," + consumer.statusJson() + ",\"store\":" + storeDump
                + ",\"answers\":" + answers + "}";
    }

    /** Offsets and epochs a dump probes per held partition (the cluster tests compare them with Kafka's replay). */
    private static final int PROBE_OFFSETS = 48;

    /**
     * The dump's "answers": for each partition Kafka has this broker hold, what the store answers to
     * {@code highestOffsetForEpoch} and {@code remoteLogSegmentMetadata} (the segment id, or null) at
     * a spread of probes: every leader epoch its segments name, one above the highest, and up to
     * {@value #PROBE_OFFSETS} offsets among the segments' bounds and epoch starts. Asked of the
     * store directly (never through the RLMM methods, which learn epochs from their arguments), so
     * a dump changes nothing. A partition the store refuses carries {"error": ...}.
     */
    private String answersJson(MetadataStore s) {
        List<TopicIdPartition> held = new ArrayList<>(loaded);
        held.sort(java.util.Comparator.comparing(TopicIdPartition::toString));
        StringBuilder sb = new StringBuilder("[");
        for (TopicIdPartition tp : held) {
            long msb = tp.topicId().getMostSignificantBits();
            long lsb = tp.topicId().getLeastSignificantBits();
            int p = tp.partition();
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append("{\"id\":\"").append(tp.topicId()).append("\",\"partition\":").append(p);
            try {
                java.util.TreeSet<Integer> epochs = new java.util.TreeSet<>();
                java.util.TreeSet<Long> bounds = new java.util.TreeSet<>();
                for (dev.rlmeta.PackedValues listed = s.packedSegments(msb, lsb, p); listed.hasNext(); ) {
                    RemoteLogSegmentMetadata m = segment(listed.next());
                    epochs.addAll(m.segmentLeaderEpochs().keySet());
                    bounds.addAll(m.segmentLeaderEpochs().values());
                    bounds.add(m.startOffset());
                    bounds.add(m.endOffset());
                    bounds.add(m.endOffset() + 1);
                }
                epochs.add(epochs.isEmpty() ? 0 : epochs.last() + 1);
                List<Long> all = new ArrayList<>(bounds);
                List<Long> offsets = new ArrayList<>();
                for (int i = 0; i < Math.min(all.size(), PROBE_OFFSETS); i++) {
                    offsets.add(all.get(all.size() <= PROBE_OFFSETS ? i
                            : (int) ((long) i * (all.size() - 1) / (PROBE_OFFSETS - 1))));
                }
                StringBuilder highest = new StringBuilder();
                StringBuilder segmentFor = new StringBuilder();
                for (int e : epochs) {
                    long h = s.highestOffsetForEpoch(msb, lsb, p, e);
                    highest.append(highest.length() == 0 ? "" : ",").append('[').append(e).append(',')
                            .append(h == MetadataStore.NO_OFFSET ? "null" : Long.toString(h)).append(']');
                    for (long o : offsets) {
                        byte[] m = s.segmentFor(msb, lsb, p, e, o);
                        segmentFor.append(segmentFor.length() == 0 ? "" : ",").append('[').append(e).append(',')
                                .append(o).append(',').append(m == null ? "null"
                                        : "\"" + segment(m).remoteLogSegmentId().id() + "\"").append(']');
                    }
                }
                sb.append(",\"highestOffsetForEpoch\":[").append(highest).append("],\"segmentFor\":[")
                        .append(segmentFor).append(']');
            } catch (RlMetaException e) {
                sb.append(",\"error\":\"").append(e.getClass().getSimpleName()).append('"');
            }
            sb.append('}');
        }
        return sb.append(']').toString();
    }

    private void dumpLoop() {
        while (!closed) {
            guard.checkpoint(DUMP_THREAD);
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
