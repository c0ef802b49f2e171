package dev.rlmeta.kafka;

import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadataManager;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.RlMeta;

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
 * every lookup is answered by its store, and every consumed record is classified by it. This class
 * itself is Kafka's interface: each method hands over to the part that owns it ({@link PluginConfig},
 * {@link Initializer}, {@link Writer}, {@link Lookups}, {@link HeldPartitions}, {@link MetadataConsumer},
 * {@link Backfill}, {@link PluginMetrics}, {@link Diagnostics}); it starts and stops them.
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
    // the threads below the consumer: each runs under the guard (logged, counted, restarted after a backoff)
    public static final String INIT_THREAD = "RlmetaRLMMInitializationThread";
    public static final String POLICY_THREAD = "RlmetaRLMMCleanupPolicy";
    public static final String BACKFILL_THREAD = "RlmetaRLMMBackfill";
    public static final String DUMP_THREAD = "RlmetaRLMMDump";
    /** How long {@link #close} waits in all, for threads and clients together. */
    public static final Duration CLOSE_DEADLINE = Duration.ofSeconds(10);

    private final RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
    private final ThreadGuard guard = new ThreadGuard(() -> this.closed);
    private final HeldPartitions held = new HeldPartitions(() -> this.closed);
    private final Object partitionsLock = held.lock; // also: configure() once, no thread started after close()
    private volatile boolean closed;
    private boolean configured; // under partitionsLock
    private volatile StartupTimeline timeline = new StartupTimeline();
    private int brokerId = -1;
    // made by configure()
    private volatile MetadataConsumer consumer;
    private volatile AccessProblems problems = new AccessProblems(Map.of());
    private volatile Clients clients;
    private volatile Writer writer;
    private volatile Lookups lookups;
    private volatile Backfill backfill;
    private volatile PluginMetrics metrics;
    private volatile Initializer init;
    private volatile Diagnostics diagnostics;
    private volatile Thread initThread;
    private volatile Thread dumpThread;

    public RlmetaRemoteLogMetadataManager() {}

    /** Whether the initialization is done (clients up, threads started): writes are taken. */
    private boolean ready() {
        Initializer i = init;
        return i != null && i.ready();
    }

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
        PluginConfig cfg = new PluginConfig(configs);
        brokerId = cfg.brokerId;
        problems = new AccessProblems(KafkaCompat.adminProperties(cfg.kafka));
        held.setStore(new MetadataStore(true)); // only the partitions this broker holds, as Kafka's ConsumerTask keeps
        consumer = new MetadataConsumer(cfg.topic, cfg.numPartitions, held.store(), held::replaceStore,
                held::markInitialized, timeline);
        consumer.setProblems(problems);
        clients = new Clients(cfg, () -> closed);
        writer = new Writer(cfg, consumer, held, clients, problems, () -> closed, this::ready, serde);
        lookups = new Lookups(cfg, held, consumer, () -> closed, serde);
        backfill = new Backfill(writer.backfillHost(guard), cfg.topic, cfg.numPartitions, configs, cfg.consumeWaitMs());
        metrics = new PluginMetrics(consumer, cfg.numPartitions, backfill, cfg.topic, brokerId, timeline, held::store,
                held.loaded, guard);
        metrics.register();
        init = new Initializer(cfg, clients, consumer, problems, backfill, metrics, guard, partitionsLock, timeline,
                () -> closed);
        diagnostics = new Diagnostics(cfg, held, consumer, lookups, guard, () -> closed);
        Thread t = guard.newThread(INIT_THREAD, init::initialize);
        initThread = t;
        t.start();
        if (cfg.dumpPath != null) {
            Thread d = guard.newThread(DUMP_THREAD, diagnostics::dumpLoop);
            dumpThread = d;
            d.start();
        }
        log.info("rlmeta RLMM configured on broker {}: topic {} with {} partitions, consume.wait.ms {}, clients as {}, "
                + "loaded by {}, native {}", brokerId, cfg.topic, cfg.numPartitions, cfg.consumeWaitMs(),
                problems.principal(), getClass().getClassLoader().getClass().getName(), RlMeta.nativeLibrary());
    }

    @Override
    public void onPartitionLeadershipChanges(Set<TopicIdPartition> leaders, Set<TopicIdPartition> followers) {
        Set<TopicIdPartition> all = new java.util.HashSet<>(leaders);
        all.addAll(followers);
        Set<TopicIdPartition> replay = held.leadershipChanged(leaders, followers, consumer);
        consumer.setWanted(all, Set.of(), replay);
        backfill.leadershipChanged(leaders, followers);
    }

    @Override
    public void onStopPartitions(Set<TopicIdPartition> partitions) {
        held.stop(partitions, consumer);
        consumer.setWanted(Set.of(), partitions, Set.of());
        backfill.leadershipChanged(Set.of(), partitions);
        writer.dropWriteLocks(partitions);
    }

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
        Initializer i = init;
        Thread policyThread = i == null ? null : i.policyThread;
        Thread backfillThread = i == null ? null : i.backfillThread;
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
        // read again: the initialization may have started them before it saw close()
        join(i == null ? null : i.policyThread, deadline);
        join(i == null ? null : i.backfillThread, deadline);
        Clients c = clients;
        if (c != null) {
            c.close(deadline);
        }
        join(dumpThread, deadline);
        Diagnostics d = diagnostics;
        if (d != null) {
            d.writeDump();
        }
        PluginMetrics m = metrics;
        if (m != null) {
            m.unregister();
        }
        held.closeStore();
        Writer w = writer;
        if (w != null) {
            w.clear();
        }
        log.info("rlmeta RLMM closed on broker {} in {} ms", brokerId, (System.nanoTime() - t0) / 1_000_000);
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
        return writer().write(metadata, metadata.topicIdPartition());
    }

    @Override
    public CompletableFuture<Void> updateRemoteLogSegmentMetadata(RemoteLogSegmentMetadataUpdate update)
            throws RemoteStorageException {
        if (update.state() == RemoteLogSegmentState.COPY_SEGMENT_STARTED) {
            throw new IllegalArgumentException("an update cannot have the state COPY_SEGMENT_STARTED");
        }
        return writer().write(update, update.topicIdPartition());
    }

    @Override
    public CompletableFuture<Void> putRemotePartitionDeleteMetadata(RemotePartitionDeleteMetadata metadata)
            throws RemoteStorageException {
        return writer().write(metadata, metadata.topicIdPartition());
    }

    /** The writer; before configure() a write is refused as before initialization. */
    private Writer writer() throws RemoteStorageException {
        Writer w = writer;
        if (w == null) {
            if (closed) {
                throw new IllegalStateException("the rlmeta metadata manager is closed");
            }
            throw KafkaCompat.retriable("the rlmeta metadata manager is not initialized yet");
        }
        return w;
    }

    // ------------------------------------------------------------------ reads

    /** The lookups; before configure() every lookup is refused. */
    private Lookups lookups() {
        Lookups l = lookups;
        if (l == null) {
            throw new IllegalStateException("the rlmeta metadata manager is not configured or is closed");
        }
        return l;
    }

    @Override
    public Optional<RemoteLogSegmentMetadata> remoteLogSegmentMetadata(TopicIdPartition tp, int epochForOffset,
                                                                       long offset) throws RemoteStorageException {
        Lookups l = lookups();
        return l.optionalSegment(l.query(tp, (s, msb, lsb, p) -> s.segmentFor(msb, lsb, p, epochForOffset, offset)));
    }

    @Override
    public Optional<Long> highestOffsetForEpoch(TopicIdPartition tp, int leaderEpoch) throws RemoteStorageException {
        held.observeEpoch(tp, leaderEpoch);
        long o = lookups().query(tp, (s, msb, lsb, p) -> s.highestOffsetForEpoch(msb, lsb, p, leaderEpoch));
        return o == Long.MIN_VALUE ? Optional.empty() : Optional.of(o);
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp) throws RemoteStorageException {
        Lookups l = lookups();
        return l.segments(l.query(tp, (s, msb, lsb, p) -> s.packedSegments(msb, lsb, p)));
    }

    @Override
    public Iterator<RemoteLogSegmentMetadata> listRemoteLogSegments(TopicIdPartition tp, int leaderEpoch)
            throws RemoteStorageException {
        Lookups l = lookups();
        return l.segments(l.query(tp, (s, msb, lsb, p) -> s.packedSegmentsForEpoch(msb, lsb, p, leaderEpoch)));
    }

    /** RemoteLogMetadataManager#nextSegmentWithTxnIndex of Kafka 4.0+ (KIP-1058); 3.x brokers never call it. */
    public Optional<RemoteLogSegmentMetadata> nextSegmentWithTxnIndex(TopicIdPartition tp, int epoch, long offset)
            throws RemoteStorageException {
        Lookups l = lookups();
        return l.optionalSegment(l.query(tp, (s, msb, lsb, p) -> s.nextSegmentWithTxnIndex(msb, lsb, p, epoch, offset)));
    }

    @Override
    public long remoteLogSize(TopicIdPartition tp, int leaderEpoch) throws RemoteStorageException {
        return lookups().query(tp, (s, msb, lsb, p) -> s.remoteLogSize(msb, lsb, p, leaderEpoch));
    }

    /** RemoteLogMetadataManager#isReady of Kafka 4.0+ (KIP-1105); 3.x brokers never call it. */
    public boolean isReady(TopicIdPartition tp) {
        Lookups l = lookups;
        return l != null && l.isReady(tp);
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
        return new TestHooks(consumer, guard, this::ready);
    }

    /** How many consumed records had an outcome (the codes of {@link dev.rlmeta.Outcome}). */
    public long outcomeCount(byte outcome) {
        return consumer.count(outcome);
    }

    /** The diagnostic dump: {"brokerId":..,"levels":[..],"positions":[..],"counters":{..},"store":<core dump>}. */
    public String dumpJson() {
        return diagnostics.dumpJson();
    }

    /** How many user partitions have a write lock (diagnostics: it follows the partitions held). */
    public int writeLockCount() {
        Writer w = writer;
        return w == null ? 0 : w.writeLockCount();
    }

    /** The leader epoch the plugin knows for a partition (see {@link HeldPartitions}), or -1. */
    public int knownLeaderEpoch(TopicIdPartition tp) {
        return held.knownLeaderEpoch(tp);
    }

    /** The problems the plugin's clients have now (step -> sentence naming operation, resource, principal). */
    public Map<String, String> accessProblems() {
        return problems.open();
    }

    /** How many times in a row each step failing now has failed. */
    public Map<String, Long> accessProblemAttempts() {
        return problems.attempts();
    }
}
