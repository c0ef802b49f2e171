package dev.rlmeta.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

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
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.Constants;
import dev.rlmeta.RlMeta;

/**
 * The manager's start and what it keeps reading from the cluster: the initialization thread
 * connects, makes sure the metadata topic exists (creating it with the core's fresh-topic plan and
 * writing the level records it owes), reads the cluster's finalized feature and the topic's
 * cleanup.policy into {@link Levels}, starts the consumer, then the policy-refresh and backfill
 * threads, and marks the manager ready. It retries every failing step, each reported once
 * ({@link AccessProblems}), for as long as the manager is open; the refresh thread reads the policy
 * and the feature again every policy.refresh.ms.
 *
 * <p>It never writes a lifecycle event ({@link Writer}) and never applies records ({@link MetadataConsumer}).
 */
final class Initializer {
    private static final Logger log = LoggerFactory.getLogger(RlmetaRemoteLogMetadataManager.class);
    /** The level record (core/src/feature.rs, docs/FEATURE-LEVEL.md). */
    static final byte[] LEVEL_RECORD_KEY = Constants.LEVEL_RECORD_KEY.getBytes(StandardCharsets.US_ASCII);
    static final String FEATURE = Constants.FEATURE_NAME;
    private static final Duration CLIENT_WAIT = Duration.ofSeconds(30);
    /** Records per poll of the metadata consumer, unless configured. */
    static final int MAX_POLL_RECORDS = 5000;

    private final PluginConfig cfg;
    private final String topic;
    private final int numPartitions;
    private final Clients clients;
    private final MetadataConsumer consumer;
    private final AccessProblems problems;
    private final Backfill backfill;
    private final PluginMetrics metrics;
    private final ThreadGuard guard;
    private final Object lock; // the manager's: no thread starts after close() took it
    private final StartupTimeline timeline;
    private final BooleanSupplier closed;
    private volatile boolean ready;
    private volatile boolean gaveUp; // initialization found a topic it cannot use and stopped retrying
    volatile Thread policyThread;
    volatile Thread backfillThread;

    Initializer(PluginConfig cfg, Clients clients, MetadataConsumer consumer, AccessProblems problems, Backfill backfill,
                PluginMetrics metrics, ThreadGuard guard, Object lock, StartupTimeline timeline, BooleanSupplier closed) {
        this.cfg = cfg;
        this.topic = cfg.topic;
        this.numPartitions = cfg.numPartitions;
        this.clients = clients;
        this.consumer = consumer;
        this.problems = problems;
        this.backfill = backfill;
        this.metrics = metrics;
        this.guard = guard;
        this.lock = lock;
        this.timeline = timeline;
        this.closed = closed;
    }

    /** Whether the initialization is done (clients up, threads started): writes are taken. */
    boolean ready() {
        return ready;
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

    private static <T> T step(String step, String operation, String resource, Callable<T> call) throws StepFailure {
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
    void initialize() {
        TopicBasedRemoteLogMetadataManagerConfig c = cfg.kafka;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(c.initializationRetryMaxTimeoutMs());
        boolean pastDeadline = false;
        int attempt = 0;
        int failures = 0;
        byte[] levelRecordDue = null; // this broker created the topic and owes it this level record (core's plan)
        String resource = "Topic:" + topic;
        while (!closed.getAsBoolean() && !gaveUp) {
            attempt++;
            try {
                if (clients.ensureAdmin()) {
                    timeline.mark("admin created");
                }
                Admin admin = clients.admin;
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
                if (clients.ensureProducer()) {
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
                guard.checkpoint(RlmetaRemoteLogMetadataManager.INIT_THREAD);
                synchronized (lock) {
                    if (closed.getAsBoolean()) {
                        return;
                    }
                    if (policyThread == null) { // once: a restarted initialization finds them started
                        Thread pt = guard.newThread(RlmetaRemoteLogMetadataManager.POLICY_THREAD, this::refreshLoop);
                        policyThread = pt;
                        pt.start();
                    }
                    if (backfillThread == null) {
                        Thread bt = guard.newThread(RlmetaRemoteLogMetadataManager.BACKFILL_THREAD, backfill);
                        backfillThread = bt;
                        bt.start();
                    }
                }
                ready = true;
                log.info("rlmeta RLMM initialized on broker {} after {} attempt(s), clients as {}", cfg.brokerId, attempt,
                        problems.principal());
                return;
            } catch (Exception e) {
                if (closed.getAsBoolean()) {
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
            Config cfg = clients.admin.describeConfigs(List.of(r)).all().get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                    .get(r);
            ConfigEntry e = cfg == null ? null : cfg.get("cleanup.policy");
            if (e == null || e.value() == null) {
                throw new IllegalStateException(topic + " has no cleanup.policy in its described configs");
            }
            consumer.setCleanupPolicy(e.value());
            problems.resolved(s);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed.getAsBoolean()) {
                problems.report(s, e, "DescribeConfigs", "Topic:" + topic, "optional: only metadata partitions "
                        + "without a level record (a topic stock Kafka created) need the policy for their level; "
                        + "writes there fail retriably until it is granted");
            }
        }
    }

    /** The finalized feature level again (ApiVersions; no ACL); a failure keeps the last one. */
    private void refreshFeatures() {
        try {
            consumer.setFinalizedLevel(finalizedFeatureLevel(clients.admin.describeFeatures().featureMetadata()));
            problems.resolved("describe the cluster's finalized features");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed.getAsBoolean()) {
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
        while (!closed.getAsBoolean()) {
            try {
                Thread.sleep(cfg.policyRefreshMs);
            } catch (InterruptedException e) {
                return;
            }
            guard.checkpoint(RlmetaRemoteLogMetadataManager.POLICY_THREAD);
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
            if (cfg.topicMinIsr > 0) {
                topicConfigs.put("min.insync.replicas", Integer.toString(cfg.topicMinIsr));
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
        KafkaProducer<byte[], byte[]> pr = clients.currentProducer();
        try {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int p = 0; p < numPartitions; p++) {
                sent.add(pr.send(new ProducerRecord<>(topic, p, LEVEL_RECORD_KEY, value)));
            }
            for (var f : sent) {
                f.get(CLIENT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            if (AccessProblems.isAccess(e)) {
                clients.replaceProducer(pr); // an idempotent producer refused its producer id stays failed
            }
            throw e;
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
