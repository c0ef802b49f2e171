package dev.rlmeta.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.Outcome;
import dev.rlmeta.RlMeta;
import dev.rlmeta.RlMetaException;

/**
 * The one consumer thread of the plugin: reads the metadata partitions that hold the user
 * partitions this broker leads or follows (assign(), never a group), hands each poll's records to
 * the core store in one call per metadata partition, and keeps what the host needs: the position
 * of every metadata partition (read-your-writes), its feature level (from level records; unknown
 * until read to its end), the initialization of user partitions, and counts of every outcome.
 * It never stops on a record: tombstones, undecodable values and bad keys are counted and logged.
 *
 * <p>It never serves a cache that silently lacks records. If applying the records of metadata
 * partition mp fails (the store refuses them, anything but a poisoned store), only mp is rebuilt:
 * the core forgets what was replayed for the user partitions held in mp
 * ({@link MetadataStore#rewindMetadataPartition}; they answer ReplicaNotAvailableException, isReady
 * false, as while bootstrapping), mp is paused for a backoff (200 ms, doubling per failure in a row
 * up to 60 s, per metadata partition), then read again from its beginning while every other
 * metadata partition goes on serving. The same records failing {@link #POISON_FAILURES} times in a
 * row stop mp: its partitions stay unavailable until the broker restarts (logged with the offsets
 * and the error, the Stopped metric). If the native store is poisoned (a panic in the core), the
 * whole store is dropped and rebuilt from the beginning of every held metadata partition, with the
 * same backoff. Write futures keep waiting for their records to be applied again. If the thread
 * dies (an Error, anything unexpected), the plugin stops serving everywhere, pending write futures
 * fail at once with a retriable error, and a new thread with a new client starts after a backoff
 * and rebuilds the whole store.
 */
final class MetadataConsumer implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    static final int UNKNOWN_LEVEL = -1;
    private static final int MAX_LOGGED_OFFSETS = 10;
    private static final long QUIET_SUMMARY_NANOS = 60_000_000_000L;
    // expected outcomes (tombstones, orphans, ...) by name since the last summary; the consumer thread's
    private final Map<String, Long> quiet = new java.util.TreeMap<>();
    private long quietSince = System.nanoTime() - QUIET_SUMMARY_NANOS; // the first summary is written at once
    // unexpected outcomes and retried errors: one line a minute per kind and metadata partition
    private final RateLimitedLog noisy = new RateLimitedLog(60_000);

    private final String topic;
    private final int numPartitions;
    private volatile MetadataStore store;            // the store applies go to; replaced on a rebuild
    private final Supplier<MetadataStore> freshStore; // drops the store and makes a fresh one with every held partition loaded
    private final Consumer<TopicIdPartition> onInitialized;
    private final StartupTimeline timeline;
    private volatile Supplier<KafkaConsumer<byte[], byte[]>> clients; // a new consumer for a restarted thread
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile Thread thread;
    private volatile boolean closed;
    private volatile AccessProblems problems;
    private final Object lifecycle = new Object(); // start, restart and close

    // not serving: a rebuild or a restart is under way (reads: ReplicaNotAvailableException; isReady: false)
    private volatile boolean serving = true;
    private volatile String down;            // why the thread died, until a new one has rebuilt; else null
    private volatile String rebuildRequested; // why another thread asked for a rebuild (a poisoned store); else null
    private final AtomicLong rebuilds = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    private volatile String lastError;
    private int deathsInARow;
    static final long RESTART_BACKOFF_MS = 200;
    static final long REBUILD_BACKOFF_MS = 200;
    static final long MAX_REBUILD_BACKOFF_MS = 60_000;
    /** Failures in a row on the same records after which their metadata partition stops. */
    static final int POISON_FAILURES = 3;
    private int rebuildsInARow;              // whole-store rebuilds since every partition was last initialized (consumer thread)
    private final int[] replaysInARow;       // per metadata partition: its replays since it was last initialized
    private final long[] replayAt;           // per metadata partition: nanoTime its replay starts (paused till then); 0: none due
    private final AtomicLong deaths = new AtomicLong();
    private final int[] failuresInARow;      // per metadata partition (consumer thread)
    private final long[] failedFrom;
    private final long[] failedTo;
    private final String[] stopCause; // per metadata partition: what its records failed with when it stopped
    private final java.util.concurrent.atomic.AtomicIntegerArray stopped; // per metadata partition: 1 once stopped
    static final long MAX_RESTART_BACKOFF_MS = 30_000;

    // test hooks (reachable only through RlmetaRemoteLogMetadataManager.testHooks(), which needs -Drlmeta.test.hooks=true)
    enum Fault { APPLY_THROWS, APPLY_ERROR }
    final AtomicReference<Fault> nextFault = new AtomicReference<>();
    volatile CountDownLatch recoveryGate;   // a rebuild waits for it before reading again
    volatile ApplyHook beforeApply;          // runs on the consumer thread right before each store.apply

    /** Records per store.apply call: the longest a lookup waits for the store's write lock. */
    static final int APPLY_CHUNK = 1024;

    /** A test's view of an apply about to run: records from..from+chunk of a batch of `batch` records. */
    interface ApplyHook {
        void before(int metadataPartition, int from, int batch);
    }

    // user partitions wanted by the broker (leaders + followers), set by the manager's callers
    private final Set<TopicIdPartition> wanted = ConcurrentHashMap.newKeySet();
    // loaded into the store when it did not hold them (the core's answer): each is reset and its
    // metadata partition replayed from the beginning on the consumer thread's next reassignment,
    // even if it never left `wanted` in between (unloaded and loaded again between two loops)
    private final Set<TopicIdPartition> toReplay = ConcurrentHashMap.newKeySet();
    private volatile boolean reassign;
    private final Object wakeups = new Object(); // an idle thread waits here for its first partitions
    // owned by the consumer thread
    private final Set<TopicIdPartition> assignedUser = new HashSet<>();
    private final Set<Integer> assignedMeta = new HashSet<>();
    // metadata partition -> its user partitions not yet initialized -> the end offset to reach: a poll
    // looks only at the metadata partitions that have some, never calls the partitioner
    private final Map<Integer, Map<TopicIdPartition, Long>> pendingInit = new HashMap<>();
    private final Map<TopicIdPartition, Integer> metadataPartitionOf = new HashMap<>(); // the partitioner's answers, held partitions only
    private long assignedAt = System.nanoTime(); // the last reassignment that added partitions to initialize
    private final long[] endAtFirstRead;     // per metadata partition: end offset when first assigned (-1: never)
    private final boolean[] levelRecordSeen;

    // read by other threads
    private final AtomicLongArray positions;  // per metadata partition: next offset to read (-1: not assigned)
    private final AtomicLongArray lags;       // per metadata partition: records up to its end (-1: unknown)
    private final java.util.concurrent.atomic.AtomicIntegerArray initialized; // per metadata partition: 1 if all its held partitions are
    private final int[] levels;                // per metadata partition: 0..2, or UNKNOWN_LEVEL
    private final long[] levelOffsets;
    private int finalizedLevel = -1;
    private String cleanupPolicy;             // of the metadata topic; null until read
    private final int[] writeLevels;          // per metadata partition: the level last used for writes, or -1
    private final AtomicLong[] counters = new AtomicLong[Outcome.COUNT]; // by outcome code (the core's table)
    private final List<Waiter> waiters = new ArrayList<>();
    private volatile boolean dirty = true;

    private static final class Waiter {
        final int partition;
        final long offset;
        final CompletableFuture<Void> future;

        Waiter(int partition, long offset, CompletableFuture<Void> future) {
            this.partition = partition;
            this.offset = offset;
            this.future = future;
        }

        int partition() { return partition; }
        long offset() { return offset; }
        CompletableFuture<Void> future() { return future; }
    }

    // the bootstrap (until every partition held at the first assignment is initialized): polls, records,
    // time in poll() and in the core's apply; owned by the consumer thread, read after it is done
    private static final int DETAILED_POLLS = 12;
    private volatile boolean bootstrapDone;
    private int bootstrapPolls;
    private long bootstrapRecords;
    private long bootstrapPollNanos;
    private long bootstrapApplyNanos;
    private long bootstrapCoreNanos; // of which in the core's store.apply (the JNI call)

    MetadataConsumer(String topic, int numPartitions, MetadataStore store, Supplier<MetadataStore> freshStore,
                     Consumer<TopicIdPartition> onInitialized, StartupTimeline timeline) {
        this.topic = topic;
        this.timeline = timeline;
        this.numPartitions = numPartitions;
        this.store = store;
        this.freshStore = freshStore;
        this.onInitialized = onInitialized;
        this.positions = new AtomicLongArray(numPartitions);
        this.lags = new AtomicLongArray(numPartitions);
        this.initialized = new java.util.concurrent.atomic.AtomicIntegerArray(numPartitions);
        this.levels = new int[numPartitions];
        this.writeLevels = new int[numPartitions];
        java.util.Arrays.fill(writeLevels, UNKNOWN_LEVEL);
        this.levelOffsets = new long[numPartitions];
        this.endAtFirstRead = new long[numPartitions];
        this.levelRecordSeen = new boolean[numPartitions];
        this.failuresInARow = new int[numPartitions];
        this.failedFrom = new long[numPartitions];
        this.failedTo = new long[numPartitions];
        this.stopCause = new String[numPartitions];
        this.stopped = new java.util.concurrent.atomic.AtomicIntegerArray(numPartitions);
        this.replaysInARow = new int[numPartitions];
        this.replayAt = new long[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            positions.set(p, -1);
            lags.set(p, -1);
            levels[p] = UNKNOWN_LEVEL;
            levelOffsets[p] = -1;
            endAtFirstRead[p] = -1;
        }
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new AtomicLong();
        }
    }

    /** Starts the thread with a client from `clients` (and later ones after a death); false if closed. */
    boolean start(Supplier<KafkaConsumer<byte[], byte[]>> newClient) {
        synchronized (lifecycle) {
            if (closed || thread != null) {
                return false;
            }
            this.clients = newClient;
            this.consumer = newClient.get();
            Thread t = new Thread(this, "RlmetaRLMMConsumerTask");
            t.setDaemon(true);
            thread = t;
            reassign = true;
            t.start();
            return true;
        }
    }

    /** Whether lookups may be answered: no rebuild or restart under way. */
    boolean serving() { return serving; }

    /** Why the consumer thread is down (died, not yet restarted and rebuilt), or null. */
    String down() { return down; }

    long rebuilds() { return rebuilds.get(); }

    long restarts() { return restarts.get(); }

    /** How many times the consumer thread died (each logged at ERROR with the thread's name). */
    long deaths() { return deaths.get(); }

    /** Whether a metadata partition stopped for good after a record failed to apply again and again. */
    boolean stopped(int metadataPartition) { return stopped.get(metadataPartition) == 1; }

    String lastError() { return lastError; }

    String threadName() {
        Thread t = thread;
        return t == null ? null : t.getName() + "#" + t.getId();
    }

    /** The store applies go to now. */
    MetadataStore store() { return store; }

    /** Another thread found `unusable` poisoned: stop serving and rebuild (unless it was replaced already). */
    void requestRebuild(MetadataStore unusable, String why) {
        if (unusable != store) {
            return; // a store already dropped
        }
        if (rebuildRequested == null) {
            rebuildRequested = why;
        }
        serving = false;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeups) {
            wakeups.notifyAll();
        }
    }

    boolean started() { return thread != null; }

    /** Where failures of the cluster (a missing ACL, an authentication error) are reported, once each. */
    void setProblems(AccessProblems problems) { this.problems = problems; }

    /**
     * The user partitions this broker holds now; the thread reassigns on its next loop. {@code replay}:
     * those the store did not hold when they were loaded, rebuilt from their metadata partition's start.
     */
    void setWanted(Set<TopicIdPartition> add, Set<TopicIdPartition> remove, Set<TopicIdPartition> replay) {
        toReplay.addAll(replay);
        wanted.addAll(add);
        wanted.removeAll(remove);
        reassign = true;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeups) {
            wakeups.notifyAll();
        }
    }

    boolean isAssigned(int metadataPartition) { return positions.get(metadataPartition) >= 0; }

    /** The next offset to apply in a metadata partition (all before it applied), or -1 if not assigned. */
    long appliedOffset(int metadataPartition) { return positions.get(metadataPartition); }

    /** Records between the applied offset and the metadata partition's end, as of the last poll; -1 if unknown. */
    long lag(int metadataPartition) { return lags.get(metadataPartition); }

    /** Whether the metadata partition is assigned and every held user partition in it is initialized. */
    boolean initialized(int metadataPartition) { return initialized.get(metadataPartition) == 1; }

    /**
     * The level writes to a metadata partition use, or UNKNOWN_LEVEL: the core's rule
     * ({@link RlMeta#writeLevel}, the one the migration tool reads the level with) over what this
     * consumer read: the finalized feature, the partition's level record, the topic's cleanup.policy.
     */
    synchronized int level(int metadataPartition) {
        int mp = metadataPartition;
        int record = levels[mp] == UNKNOWN_LEVEL ? -2 : levelRecordSeen[mp] ? levels[mp] : -1;
        int level;
        try {
            level = RlMeta.writeLevel(finalizedLevel, record, cleanupPolicy);
        } catch (RlMetaException e) {
            log.warn("rlmeta: {}-{}: level unknown: {}", topic, mp, e.getMessage());
            return UNKNOWN_LEVEL;
        }
        if (level < 0) {
            return UNKNOWN_LEVEL;
        }
        if (level != writeLevels[mp]) {
            log.info("rlmeta: {}-{}: writes at remote.log.metadata.version level {} (was {}; level record {}, "
                    + "cleanup.policy {})", topic, mp, level, writeLevels[mp] < 0 ? "unknown" : writeLevels[mp],
                    levelRecordSeen[mp] ? levels[mp] : "none", cleanupPolicy);
            writeLevels[mp] = level;
        }
        return level;
    }

    /** The topic's cleanup.policy as last read from the cluster (null: not read yet, the level stays unknown). */
    synchronized void setCleanupPolicy(String policy) {
        if (policy != null && !policy.equals(cleanupPolicy)) {
            log.info("rlmeta: {} cleanup.policy is {} (was {})", topic, policy, cleanupPolicy == null ? "not read" : cleanupPolicy);
            cleanupPolicy = policy;
        }
    }

    /** The finalized feature level, or -1 where the cluster finalizes none (stock 4.4.0). */
    synchronized void setFinalizedLevel(int level) {
        if (level != finalizedLevel) {
            log.info("rlmeta: remote.log.metadata.version finalized by the cluster: {}", level < 0 ? "none" : level);
        }
        finalizedLevel = level;
    }

    long count(byte outcome) {
        return outcome >= 0 && outcome < counters.length ? counters[outcome].get() : 0;
    }

    /** Completes `future` once the record at `offset` of the metadata partition has been applied. */
    void completeWhenApplied(int metadataPartition, long offset, CompletableFuture<Void> future) {
        boolean applied;
        synchronized (waiters) {
            applied = positions.get(metadataPartition) > offset;
            if (!applied && down == null) {
                waiters.add(new Waiter(metadataPartition, offset, future));
                return;
            }
        }
        // completed outside the lock: a dependent stage runs on this thread and may call back in
        if (applied) {
            future.complete(null);
        } else {
            future.completeExceptionally(consumerDown(down));
        }
    }

    private org.apache.kafka.server.log.remote.storage.RemoteStorageException consumerDown(String why) {
        return KafkaCompat.retriable("the rlmeta metadata consumer of " + topic + " died (" + why
                + ") and is being restarted: the write was produced but this broker has not applied it; retry");
    }

    /** A failure to apply consumed records: the store may lack them or hold part of them. */
    private static final class ApplyFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int mp;      // the metadata partition whose records failed, or -1
        final long from;   // their offsets
        final long to;

        ApplyFailed(String what, Throwable cause) {
            this(what, cause, -1, -1, -1);
        }

        ApplyFailed(String what, Throwable cause, int mp, long from, long to) {
            super(what + ": " + cause, cause);
            this.mp = mp;
            this.from = from;
            this.to = to;
        }
    }

    @Override
    public void run() {
        try {
            if (down != null) {
                restart();
            } else {
                log.info("rlmeta consumer of {} started", topic);
                timeline.mark("consumer thread");
            }
            loop();
        } catch (Throwable t) {
            if (!closed) {
                died(t);
                return; // died() closed the client and started the next thread
            }
        }
        closeClient();
        log.info("rlmeta consumer of {} stopped", topic);
    }

    /** A new thread after a death: back off, take a new client, rebuild the store from the topic. */
    private void restart() throws InterruptedException {
        long backoff;
        synchronized (lifecycle) {
            backoff = Math.min(MAX_RESTART_BACKOFF_MS, RESTART_BACKOFF_MS << Math.min(deathsInARow - 1, 10));
        }
        synchronized (wakeups) {
            if (!closed) {
                wakeups.wait(backoff);
            }
        }
        if (closed) {
            return;
        }
        consumer = clients.get();
        restarts.incrementAndGet();
        log.warn("rlmeta consumer of {} restarted after {} ms (it died: {}); rebuilding the store", topic, backoff, down);
        rebuild("the consumer thread restarted after: " + down, null);
    }

    /** The thread dies: stop serving everywhere, fail pending writes now, start a new thread after a backoff. */
    private void died(Throwable t) {
        String why = t.toString();
        serving = false;
        deaths.incrementAndGet();
        lastError = "consumer thread " + Thread.currentThread().getName() + " died: " + why;
        log.error("rlmeta consumer of {}: thread {} died of {}; remote storage is unavailable on this broker until a "
                + "new consumer has rebuilt the store", topic, Thread.currentThread().getName(), why, t);
        List<Waiter> failed;
        synchronized (waiters) {
            down = why;
            failed = new ArrayList<>(waiters);
            waiters.clear();
        }
        for (Waiter w : failed) {
            w.future.completeExceptionally(consumerDown(why));
        }
        closeClient();
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            deathsInARow++;
            Thread next = new Thread(this, "RlmetaRLMMConsumerTask");
            next.setDaemon(true);
            thread = next;
            next.start();
        }
    }

    private void closeClient() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c == null) {
            return;
        }
        try {
            c.close(Duration.ofSeconds(closed ? 2 : 5)); // close(CloseOptions) is 4.1+: the plugin links against 3.7
        } catch (Exception e) {
            log.debug("closing the consumer", e);
        }
    }

    /**
     * Drops the store and rebuilds it from the topic: forget every position, take a fresh store
     * (every held partition loaded, none initialized), and reassign as if every partition were new,
     * so each metadata partition is read again from its beginning. Lookups answer
     * ReplicaNotAvailableException until each partition is read to its end again.
     */
    private void rebuild(String why, Throwable cause) throws InterruptedException {
        serving = false;
        rebuilds.incrementAndGet();
        lastError = why;
        if (cause != null) {
            log.error("rlmeta consumer of {}: {}; dropping the store and rebuilding it from the topic "
                    + "(lookups unavailable until it is read to its end again)", topic, why, cause);
        } else {
            log.warn("rlmeta consumer of {}: {}; rebuilding the store from the topic", topic, why);
        }
        for (int p = 0; p < numPartitions; p++) {
            positions.set(p, -1);
            lags.set(p, -1);
            initialized.set(p, 0);
        }
        assignedUser.clear();
        assignedMeta.clear();
        pendingInit.clear();
        java.util.Arrays.fill(replayAt, 0);
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null && !c.paused().isEmpty()) {
            c.resume(c.paused()); // the whole store is read again: no metadata partition waits for its own replay
        }
        CountDownLatch gate = recoveryGate;
        if (gate != null) {
            gate.await();
        }
        store = freshStore.get();
        rebuildRequested = null;
        reassign = true;
        synchronized (waiters) {
            down = null;
        }
        synchronized (lifecycle) {
            deathsInARow = 0;
        }
        serving = true; // the fresh store's partitions are not initialized: they answer as while bootstrapping
        dirty = true;
    }

    /**
     * Counts a failed apply against its metadata partition (failures in a row: no apply of that
     * metadata partition has got past where the first of them failed) and stops that metadata
     * partition for good at the {@value #POISON_FAILURES}th: its user partitions stay unavailable
     * (logged once with the offsets and the error, the Stopped metric). True if it stopped now.
     */
    private boolean countFailure(ApplyFailed e) {
        int mp = e.mp;
        if (mp < 0) {
            return false;
        }
        if (failuresInARow[mp]++ == 0) {
            failedFrom[mp] = e.from; // where the streak began: an apply past it ends the streak
        }
        failedTo[mp] = Math.max(failedTo[mp], e.to);
        if (failuresInARow[mp] < POISON_FAILURES || stopped.get(mp) == 1) {
            return false;
        }
        stopCause[mp] = String.valueOf(e.getCause());
        stopped.set(mp, 1);
        dirty = true;
        log.error("rlmeta: {}-{} stopped: its records from offset {} (up to {}) failed to apply {} times in a row ({}); "
                + "its user partitions stay unavailable on this broker until it restarts; the other metadata "
                + "partitions serve", topic, mp, failedFrom[mp], failedTo[mp], failuresInARow[mp], e.getCause());
        return true;
    }

    /**
     * A failed apply that needs the whole store rebuilt (a poisoned store, a failure of no one
     * metadata partition): counted as {@link #countFailure}, then a wait before the rebuild: 200 ms,
     * doubling with each rebuild in a row, up to 60 s. A rebuild in a row is one that comes before
     * the store's previous rebuild initialized every partition again.
     */
    private void failed(ApplyFailed e) throws InterruptedException {
        countFailure(e);
        rebuildsInARow++;
        long backoff = Math.min(MAX_REBUILD_BACKOFF_MS, REBUILD_BACKOFF_MS << Math.min(rebuildsInARow - 1, 20));
        serving = false;
        synchronized (wakeups) {
            if (!closed) {
                wakeups.wait(backoff);
            }
        }
    }

    /** Whether a failed apply needs the whole store dropped (else only its metadata partition is replayed). */
    private static boolean wholeStore(ApplyFailed e) {
        return e.mp < 0 || e.getCause() instanceof RlMetaException.Internal;
    }

    /**
     * The records of one metadata partition failed to apply (the store itself is sound): the core
     * forgets what was replayed for the user partitions held in it (they answer as not initialized:
     * ReplicaNotAvailableException, isReady false), it is paused and rewound, and its replay from the
     * beginning starts after a backoff of its own (200 ms, doubling with each replay in a row, up to
     * 60 s; {@link #replayDue}). The other metadata partitions go on serving. At the
     * {@value #POISON_FAILURES}th failure in a row on the same records it stops instead: no longer
     * read, its pending writes failed retriably.
     */
    private void partitionFailed(ApplyFailed e) {
        int mp = e.mp;
        boolean stop = countFailure(e);
        int reset;
        try {
            reset = store.rewindMetadataPartition(mp, numPartitions);
        } catch (RuntimeException ex) {
            throw new ApplyFailed("forgetting the replayed records of " + topic + "-" + mp + " failed", ex);
        }
        TopicPartition mtp = new TopicPartition(topic, mp);
        consumer.pause(List.of(mtp));
        consumer.seekToBeginning(List.of(mtp)); // positions: the store holds nothing of mp now
        initialized.set(mp, 0);
        lastError = e.getMessage();
        dirty = true;
        if (stop) {
            replayAt[mp] = 0;
            pendingInit.remove(mp);
            reassign = true; // a stopped metadata partition is no longer assigned
            failWaiters(mp, "stopped: its records from offset " + failedFrom[mp] + " fail to apply");
            return;
        }
        Map<TopicIdPartition, Long> pending = pendingInit.computeIfAbsent(mp, k -> new HashMap<>());
        for (TopicIdPartition tp : assignedUser) {
            if (metadataPartition(tp) == mp) {
                pending.put(tp, Long.MAX_VALUE); // the end offset to reach is sampled when the replay starts
            }
        }
        replaysInARow[mp]++;
        long backoff = Math.min(MAX_REBUILD_BACKOFF_MS, REBUILD_BACKOFF_MS << Math.min(replaysInARow[mp] - 1, 20));
        long at = System.nanoTime() + backoff * 1_000_000L;
        replayAt[mp] = at == 0 ? 1 : at;
        log.error("rlmeta consumer of {}: {}; {}-{} is replayed from its beginning in {} ms, its {} user partition(s) "
                + "unavailable until then (failure {} of at most {} in a row on these records; the other metadata "
                + "partitions serve)", topic, e.getMessage(), topic, mp, backoff, reset, failuresInARow[mp], POISON_FAILURES,
                e.getCause());
    }

    /**
     * Starts the replay of each metadata partition whose backoff is over (and that a test does not
     * hold): forgets again what the store holds of it (a partition loaded meanwhile included), reads
     * it from its beginning to its end offset sampled now, then marks its user partitions initialized.
     */
    private void replayDue() {
        CountDownLatch gate = recoveryGate;
        if (gate != null && gate.getCount() > 0) {
            return;
        }
        long now = System.nanoTime();
        List<TopicPartition> due = new ArrayList<>();
        for (int p = 0; p < numPartitions; p++) {
            if (replayAt[p] == 0 || now - replayAt[p] < 0) {
                continue;
            }
            if (!assignedMeta.contains(p) || stopped.get(p) == 1) { // none of its partitions is held any more
                replayAt[p] = 0;
                pendingInit.remove(p);
                continue;
            }
            due.add(new TopicPartition(topic, p));
        }
        if (due.isEmpty()) {
            return;
        }
        for (TopicPartition mtp : due) {
            try {
                store.rewindMetadataPartition(mtp.partition(), numPartitions);
            } catch (RuntimeException ex) {
                throw new ApplyFailed("forgetting the replayed records of " + mtp + " failed", ex);
            }
        }
        consumer.seekToBeginning(due);
        Map<TopicPartition, Long> ends = consumer.endOffsets(due); // a failure: retried (replayAt still set)
        for (TopicPartition mtp : due) {
            int mp = mtp.partition();
            Map<TopicIdPartition, Long> pending = pendingInit.computeIfAbsent(mp, k -> new HashMap<>());
            for (TopicIdPartition tp : assignedUser) {
                if (metadataPartition(tp) == mp) {
                    pending.put(tp, ends.get(mtp));
                }
            }
            replayAt[mp] = 0;
            rebuilds.incrementAndGet();
            log.warn("rlmeta consumer of {}: replaying {} from its beginning to offset {} ({} user partition(s), replay {} "
                    + "in a row)", topic, mtp, ends.get(mtp), pending.size(), replaysInARow[mp]);
        }
        assignedAt = now;
        consumer.resume(due);
        dirty = true;
    }

    /** Pauses again every metadata partition waiting for its replay (after a reassignment). */
    private void pauseWaiting() {
        List<TopicPartition> waiting = new ArrayList<>();
        for (int p : assignedMeta) {
            if (replayAt[p] != 0) {
                waiting.add(new TopicPartition(topic, p));
            }
        }
        if (!waiting.isEmpty()) {
            consumer.pause(waiting);
        }
    }

    /** Fails the pending writes of a metadata partition at once, retriably. */
    private void failWaiters(int mp, String why) {
        List<Waiter> failed = new ArrayList<>();
        synchronized (waiters) {
            waiters.removeIf(w -> {
                if (w.partition == mp) {
                    failed.add(w);
                    return true;
                }
                return false;
            });
        }
        for (Waiter w : failed) {
            w.future.completeExceptionally(KafkaCompat.retriable("the rlmeta metadata consumer of " + topic + "-" + mp
                    + " " + why + ": the write was produced but this broker cannot apply it"));
        }
    }

    /** Metadata partitions stopped for good after a record failed to apply again and again. */
    List<Integer> stoppedPartitions() {
        List<Integer> out = new ArrayList<>();
        for (int p = 0; p < numPartitions; p++) {
            if (stopped.get(p) == 1) {
                out.add(p);
            }
        }
        return out;
    }

    private void loop() throws InterruptedException {
        while (!closed) {
            try {
                String requested = rebuildRequested;
                if (requested != null) {
                    rebuild(requested, null);
                }
                if (reassign) {
                    reassign = false;
                    try {
                        reassign();
                        pauseWaiting();
                    } catch (RuntimeException e) {
                        reassign = true; // a wakeup or a cluster error mid-way: do it all again
                        throw e;
                    }
                    afterPoll(); // what is already at its end (an empty metadata partition) needs no poll
                }
                replayDue();
                if (assignedMeta.isEmpty()) {
                    synchronized (wakeups) { // nothing to read yet (poll() refuses an empty assignment)
                        if (!reassign && !closed) {
                            wakeups.wait(100);
                        }
                    }
                    continue;
                }
                long t0 = System.nanoTime();
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                long t1 = System.nanoTime();
                // from here the client's position is past these records: any failure until they are
                // all applied means the store lacks them, so it is rebuilt (never skipped)
                try {
                    for (TopicPartition tp : records.partitions()) {
                        int mp = tp.partition();
                        if (replayAt[mp] != 0 || stopped.get(mp) == 1) {
                            continue; // fetched before it was paused: it is read again from its beginning
                        }
                        try {
                            apply(mp, records.records(tp));
                        } catch (ApplyFailed e) {
                            if (wholeStore(e)) {
                                throw e;
                            }
                            partitionFailed(e); // only mp is rebuilt; the others' records of this poll apply
                        }
                    }
                } catch (ApplyFailed e) {
                    throw e;
                } catch (RuntimeException e) {
                    throw new ApplyFailed("applying " + records.count() + " record(s) failed", e);
                }
                if (!bootstrapDone) {
                    bootstrapPolls++;
                    bootstrapRecords += records.count();
                    bootstrapPollNanos += t1 - t0;
                    bootstrapApplyNanos += System.nanoTime() - t1;
                    if (bootstrapPolls <= DETAILED_POLLS) {
                        timeline.mark(String.format("poll %d: %d records in %.1f ms", bootstrapPolls, records.count(),
                                (t1 - t0) / 1e6));
                    }
                }
                afterPoll();
                AccessProblems p = problems;
                if (p != null) {
                    p.resolved("read " + topic);
                }
            } catch (WakeupException e) {
                // a reassignment, a rebuild request or close() woke us
            } catch (InterruptedException e) {
                if (closed) {
                    break;
                }
            } catch (ApplyFailed e) {
                if (closed) {
                    break;
                }
                failed(e);
                rebuild(e.getMessage(), e.getCause());
            } catch (Exception e) {
                if (closed) {
                    break;
                }
                // never stop: a broken record never reaches here (the store reports it), so this
                // is the cluster (retriable errors, a partition moving, a missing ACL); back off and go on
                AccessProblems p = problems;
                if (p != null) {
                    p.report("read " + topic, e, "Read (and Describe)", "Topic:" + topic);
                } else {
                    String sfx = noisy.admit("retry " + e.getClass().getName());
                    if (sfx != null) {
                        log.warn("rlmeta consumer of {}: {} (retrying every 1 s){}", topic, e.toString(), sfx);
                    }
                }
                synchronized (wakeups) {
                    if (!closed && rebuildRequested == null) {
                        wakeups.wait(1000);
                    }
                }
            }
        }
    }

    private void reassign() {
        Set<TopicIdPartition> now = new HashSet<>(wanted);
        Set<TopicIdPartition> added = new HashSet<>(now);
        added.removeAll(assignedUser);
        Set<TopicIdPartition> removed = new HashSet<>(assignedUser);
        removed.removeAll(now);
        Set<Integer> meta = new HashSet<>();
        for (TopicIdPartition tp : now) {
            int mp = metadataPartition(tp);
            if (stopped.get(mp) == 0) { // a stopped metadata partition is not read again: its partitions stay unavailable
                meta.add(mp);
            }
        }
        // newly held here, or loaded into the store when it did not hold them: rebuilt from the start
        Set<TopicIdPartition> fresh = new HashSet<>(added);
        for (Iterator<TopicIdPartition> it = toReplay.iterator(); it.hasNext(); ) {
            TopicIdPartition tp = it.next();
            it.remove();
            if (now.contains(tp)) {
                fresh.add(tp);
            }
        }
        Set<Integer> rewind = new HashSet<>();
        MetadataStore s = store;
        fresh.removeIf(tp -> stopped.get(metadataPartition(tp)) == 1);
        for (TopicIdPartition tp : fresh) {
            rewind.add(metadataPartition(tp));
            // on this thread, the only one applying: what a poll applied since the load is forgotten,
            // so the replay below cannot see it as already applied
            s.resetPartition(tp.topicId().getMostSignificantBits(), tp.topicId().getLeastSignificantBits(),
                    tp.topic(), tp.partition());
        }
        List<TopicPartition> assignment = meta.stream().map(p -> new TopicPartition(topic, p)).collect(Collectors.toList());
        consumer.assign(assignment);
        timeline.mark("assigned");
        // a newly held user partition is rebuilt from the start of its metadata partition (as
        // TBRLMM does, KAFKA-16105); the store skips what it has already applied for the others
        List<TopicPartition> rewound = rewind.stream().map(p -> new TopicPartition(topic, p)).collect(Collectors.toList());
        consumer.seekToBeginning(rewound);
        Map<TopicPartition, Long> ends = consumer.endOffsets(assignment);
        timeline.mark("end offsets");
        if (!fresh.isEmpty()) {
            assignedAt = System.nanoTime();
        }
        for (TopicIdPartition tp : fresh) {
            int mp = metadataPartition(tp);
            pendingInit.computeIfAbsent(mp, k -> new HashMap<>()).put(tp, ends.get(new TopicPartition(topic, mp)));
        }
        for (TopicIdPartition tp : removed) {
            Map<TopicIdPartition, Long> left = pendingInit.get(metadataPartition(tp));
            if (left != null && left.remove(tp) != null && left.isEmpty()) {
                pendingInit.remove(metadataPartition(tp));
            }
            metadataPartitionOf.remove(tp);
        }
        assignedUser.clear();
        assignedUser.addAll(now);
        for (int p = 0; p < numPartitions; p++) {
            if (!meta.contains(p)) {
                positions.set(p, -1);
                lags.set(p, -1);
                initialized.set(p, 0);
            } else if (endAtFirstRead[p] < 0) {
                endAtFirstRead[p] = ends.get(new TopicPartition(topic, p));
            }
        }
        assignedMeta.clear();
        assignedMeta.addAll(meta);
        for (TopicPartition tp : assignment) {
            positions.set(tp.partition(), consumer.position(tp));
        }
        timeline.mark("positions");
        log.info("rlmeta consumer assigned metadata partitions {} for {} user partition(s) ({} new, {} gone; "
                + "rewound {})", meta, now.size(), added.size(), removed.size(), rewind);
        dirty = true;
    }

    /** The metadata partition of a held user partition (the core's partitioner, asked once per partition). */
    private int metadataPartition(TopicIdPartition tp) {
        Integer mp = metadataPartitionOf.get(tp);
        if (mp == null) {
            mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions);
            metadataPartitionOf.put(tp, mp);
        }
        return mp;
    }

    /**
     * Applies one metadata partition's records of a poll, in chunks of at most {@link #APPLY_CHUNK}
     * records per call: the store's write lock is held for one chunk at a time, so lookups wait at
     * most for one chunk, never for a whole large poll (a prefix of a partition's records, in
     * offset order, is a state the store passes through anyway).
     */
    private void apply(int mp, List<ConsumerRecord<byte[], byte[]>> records) {
        int n = records.size();
        long[] offsets = new long[n];
        byte[] outcomes = new byte[n];
        for (int from = 0; from < n; from += APPLY_CHUNK) {
            int to = Math.min(n, from + APPLY_CHUNK);
            try {
                applyChunk(mp, records, from, to, n, offsets, outcomes);
                if (failuresInARow[mp] > 0 && records.get(to - 1).offset() >= failedFrom[mp]) {
                    failuresInARow[mp] = 0; // applied past where the failures began: not a poison record
                    failedTo[mp] = 0;
                }
            } catch (RuntimeException e) {
                long a = records.get(from).offset();
                long b = records.get(to - 1).offset();
                throw new ApplyFailed("applying " + topic + "-" + mp + " offsets " + a + ".." + b + " failed", e, mp, a, b);
            }
        }
        notice(mp, offsets, outcomes);
    }

    private void applyChunk(int mp, List<ConsumerRecord<byte[], byte[]>> records, int from, int to, int batch,
                            long[] allOffsets, byte[] allOutcomes) {
        int n = to - from;
        long[] offsets = new long[n];
        int[] keyLengths = new int[n];
        int[] valueLengths = new int[n];
        int size = 0;
        for (int i = from; i < to; i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(i);
            size += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
        }
        byte[] data = new byte[size];
        int at = 0;
        for (int i = 0; i < n; i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(from + i);
            offsets[i] = r.offset();
            keyLengths[i] = r.key() == null ? -1 : r.key().length;
            if (r.key() != null) {
                System.arraycopy(r.key(), 0, data, at, r.key().length);
                at += r.key().length;
            }
            valueLengths[i] = r.value() == null ? -1 : r.value().length;
            if (r.value() != null) {
                System.arraycopy(r.value(), 0, data, at, r.value().length);
                at += r.value().length;
            }
        }
        ApplyHook hook = beforeApply;
        if (hook != null) {
            hook.before(mp, from, batch);
        }
        Fault fault = nextFault.getAndSet(null);
        if (fault == Fault.APPLY_THROWS) {
            throw new IllegalStateException("a failure injected by a test (apply of " + n + " record(s) of " + topic
                    + "-" + mp + ")");
        } else if (fault == Fault.APPLY_ERROR) {
            throw new Error("an Error injected by a test (apply of " + n + " record(s) of " + topic + "-" + mp + ")");
        }
        long t0 = System.nanoTime();
        // no lock of ours: the store serializes applies and lets lookups run in parallel
        byte[] outcomes = store.apply(offsets, data, keyLengths, valueLengths);
        if (!bootstrapDone) {
            bootstrapCoreNanos += System.nanoTime() - t0;
        }
        System.arraycopy(offsets, 0, allOffsets, from, n);
        System.arraycopy(outcomes, 0, allOutcomes, from, n);
    }

    /** Counts, levels and logs the outcomes of a partition's applied records. */
    private void notice(int mp, long[] offsets, byte[] outcomes) {
        int n = offsets.length;
        Map<Byte, List<Long>> notable = new HashMap<>();
        int[] counts = new int[counters.length]; // added to the shared counters once a partition's poll, not once a record
        for (int i = 0; i < n; i++) {
            byte code = outcomes[i];
            if (code >= 0 && code < counters.length) {
                counts[code]++;
            }
            switch (code) {
                case Outcome.LEVEL_0: case Outcome.LEVEL_1: case Outcome.LEVEL_2:
                    setLevel(mp, code - Outcome.LEVEL_0, offsets[i]);
                    break;
                case Outcome.APPLIED: case Outcome.ALREADY_APPLIED:
                case Outcome.APPLIED_V1: case Outcome.ALREADY_APPLIED_V1: // version-1 values: a level above 0
                case Outcome.NOT_HELD: case Outcome.NOT_HELD_V1: // a partition another broker holds
                    break;
                default:
                    notable.computeIfAbsent(code, k -> new ArrayList<>()).add(offsets[i]);
            }
        }
        for (int c = 0; c < counts.length; c++) {
            if (counts[c] > 0) {
                counters[c].addAndGet(counts[c]);
            }
        }
        notable.forEach((code, at2) -> {
            String what = outcomeName(code);
            String offs = at2.size() <= MAX_LOGGED_OFFSETS ? at2.toString()
                    : at2.subList(0, MAX_LOGGED_OFFSETS) + " and " + (at2.size() - MAX_LOGGED_OFFSETS) + " more";
            boolean bad = code != Outcome.TOMBSTONE && code != Outcome.ORPHANED && code != Outcome.PARTITION_DELETED
                    && code != Outcome.DROPPED && code != Outcome.ORPHANED_V1 && code != Outcome.DROPPED_V1;
            if (!bad) {
                // expected at level 2 (tombstones in every poll): one summary a minute, not a line a poll
                quiet.merge(what, (long) at2.size(), Long::sum);
                return;
            }
            String sfx = noisy.admit(mp + " " + what);
            if (sfx == null) {
                return;
            }
            long total = code >= 0 && code < counters.length ? counters[code].get() : -1;
            log.warn(String.format("rlmeta: %s-%d: %d %s record(s) at offsets %s (total %d)%s", topic, mp,
                    at2.size(), what, offs, total, sfx));
        });
        long now = System.nanoTime();
        if (!quiet.isEmpty() && now - quietSince >= QUIET_SUMMARY_NANOS) {
            log.info("rlmeta: {} records of {} applied in the last {} s, by outcome: {}", quiet.values().stream()
                    .mapToLong(Long::longValue).sum(), topic, (now - quietSince) / 1_000_000_000L, quiet);
            quiet.clear();
            quietSince = now;
        }
        dirty = true;
    }

    /** The core's name of an outcome code (its one table), or "outcome-N" for a code it does not name. */
    static String outcomeName(byte code) {
        String name = Outcome.name(code);
        return name != null ? name : "outcome-" + code;
    }

    private synchronized void setLevel(int mp, int level, long offset) {
        levelRecordSeen[mp] = true;
        if (levels[mp] != level) {
            log.info("rlmeta: {}-{}: remote.log.metadata.version level {} (level record at offset {})", topic, mp,
                    level, offset);
        }
        levels[mp] = level;
        levelOffsets[mp] = offset;
    }

    private void afterPoll() {
        for (int p : assignedMeta) {
            TopicPartition mtp = new TopicPartition(topic, p);
            positions.set(p, consumer.position(mtp));
            java.util.OptionalLong lag = consumer.currentLag(mtp);
            lags.set(p, lag.isPresent() ? lag.getAsLong() : -1);
        }
        // a partition read to its first-seen end with no level record: level 0 (nobody migrated it)
        synchronized (this) {
            for (int p : assignedMeta) {
                if (levels[p] == UNKNOWN_LEVEL && !levelRecordSeen[p] && endAtFirstRead[p] >= 0
                        && positions.get(p) >= endAtFirstRead[p]) {
                    levels[p] = 0;
                    log.info("rlmeta: {}-{}: remote.log.metadata.version level 0 (read to offset {}, no level record)",
                            topic, p, endAtFirstRead[p]);
                    dirty = true;
                }
            }
        }
        int initializedNow = 0;
        for (Iterator<Map.Entry<Integer, Map<TopicIdPartition, Long>>> mps = pendingInit.entrySet().iterator(); mps.hasNext(); ) {
            Map.Entry<Integer, Map<TopicIdPartition, Long>> m = mps.next();
            long position = positions.get(m.getKey());
            for (Iterator<Map.Entry<TopicIdPartition, Long>> it = m.getValue().entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<TopicIdPartition, Long> e = it.next();
                if (position >= e.getValue()) {
                    try {
                        onInitialized.accept(e.getKey());
                    } catch (RuntimeException ex) {
                        throw new ApplyFailed("marking " + e.getKey() + " initialized failed", ex);
                    }
                    it.remove();
                    initializedNow++;
                    dirty = true;
                }
            }
            if (m.getValue().isEmpty() && replayAt[m.getKey()] == 0) {
                replaysInARow[m.getKey()] = 0; // read to its end again: the next failure backs off from the start
                mps.remove();
            }
        }
        if (pendingInit.isEmpty()) {
            rebuildsInARow = 0; // the store serves every partition it reads again
        }
        if (initializedNow > 0) { // one line for the partitions a poll completes, never one per partition
            int left = pendingInit.values().stream().mapToInt(Map::size).sum();
            log.info("rlmeta: {} user partition(s) initialized from {} in {} ms since their assignment{}", initializedNow,
                    topic, (System.nanoTime() - assignedAt) / 1_000_000, left == 0 ? "; none pending" : "; " + left + " pending");
        }
        Set<Integer> pending = pendingInit.keySet();
        for (int p = 0; p < numPartitions; p++) {
            initialized.set(p, assignedMeta.contains(p) && !pending.contains(p) ? 1 : 0);
        }
        if (!bootstrapDone && !assignedUser.isEmpty() && pendingInit.isEmpty()) {
            bootstrapDone = true;
            timeline.mark("all initialized");
            log.info("rlmeta consumer of {}: {} user partition(s) initialized; {}; start: {}", topic,
                    assignedUser.size(), bootstrapStats(), timeline.summary());
        }
        List<Waiter> applied = new ArrayList<>();
        synchronized (waiters) {
            waiters.removeIf(w -> {
                if (w.future.isDone()) {
                    return true;
                }
                if (positions.get(w.partition) > w.offset) {
                    applied.add(w);
                    return true;
                }
                return false;
            });
        }
        for (Waiter w : applied) { // outside the lock: dependent stages run on this thread
            w.future.complete(null);
        }
    }

    /** The bootstrap's polls, records and time (poll vs the core's apply), once it is done; else null. */
    String bootstrapStats() {
        if (!bootstrapDone) {
            return null;
        }
        return String.format("bootstrap: %d poll(s), %d record(s), %.1f ms in poll(), %.1f ms applying (%.1f ms in the "
                + "core's store.apply)", bootstrapPolls, bootstrapRecords, bootstrapPollNanos / 1e6, bootstrapApplyNanos / 1e6,
                bootstrapCoreNanos / 1e6);
    }

    boolean takeDirty() {
        boolean d = dirty;
        dirty = false;
        return d;
    }

    /**
     * The host's part of the diagnostic dump (JSON object fields, no braces): the fields under this
     * object's lock are copied under it, the text is written after it is released (the consumer's
     * level and poll bookkeeping waits on that lock).
     */
    String statusJson() {
        int finalizedLevel;
        String cleanupPolicy;
        int[] levels;
        long[] failedFrom;
        long[] failedTo;
        int[] failuresInARow;
        String[] stopCause;
        synchronized (this) {
            finalizedLevel = this.finalizedLevel;
            cleanupPolicy = this.cleanupPolicy;
            levels = this.levels.clone();
            failedFrom = this.failedFrom.clone();
            failedTo = this.failedTo.clone();
            failuresInARow = this.failuresInARow.clone();
            stopCause = this.stopCause.clone();
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\"finalizedLevel\":").append(finalizedLevel).append(",\"cleanupPolicy\":")
                .append(cleanupPolicy == null ? "null" : "\"" + cleanupPolicy + "\"").append(",\"levels\":[");
        for (int p = 0; p < numPartitions; p++) {
            sb.append(p == 0 ? "" : ",").append(levels[p]);
        }
        sb.append("],\"positions\":[");
        for (int p = 0; p < numPartitions; p++) {
            sb.append(p == 0 ? "" : ",").append(positions.get(p));
        }
        sb.append("],\"counters\":{");
        for (byte c = 0; c < counters.length; c++) {
            sb.append(c == 0 ? "" : ",").append('"').append(outcomeName(c)).append("\":").append(counters[c].get());
        }
        sb.append("},\"serving\":").append(serving).append(",\"rebuilds\":").append(rebuilds.get())
                .append(",\"restarts\":").append(restarts.get()).append(",\"stopped\":[");
        String sep = "";
        for (int p = 0; p < numPartitions; p++) {
            if (stopped.get(p) == 1) {
                sb.append(sep).append("{\"partition\":").append(p).append(",\"fromOffset\":").append(failedFrom[p])
                        .append(",\"toOffset\":").append(failedTo[p]).append(",\"failures\":")
                        .append(failuresInARow[p]).append(",\"error\":").append(jsonString(stopCause[p])).append('}');
                sep = ",";
            }
        }
        return sb.append(']').toString();
    }

    /** {@code s} as a JSON string literal ("null" for null). */
    static String jsonString(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }

    /**
     * Stops the thread (and any restarted one) and waits for it; the thread closes its client. A
     * consumer never started closes nothing. Pending futures fail. Waits until {@code deadlineNanos}
     * ({@link System#nanoTime}) at most. True if no thread is left running.
     */
    boolean close(long deadlineNanos) {
        synchronized (lifecycle) {
            closed = true;
        }
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeups) {
            wakeups.notifyAll();
        }
        CountDownLatch gate = recoveryGate;
        if (gate != null) {
            gate.countDown();
        }
        boolean stopped = true;
        for (Thread t = thread; t != null; ) {
            try {
                t.join(Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stopped = false;
                break;
            }
            if (t.isAlive()) {
                log.warn("rlmeta consumer thread {} did not stop by close()'s deadline; left to finish as a daemon",
                        t.getName());
                stopped = false;
                break;
            }
            Thread next = thread; // a dying thread may have started its successor before close() began
            t = next == t ? null : next;
        }
        List<Waiter> left;
        synchronized (waiters) {
            left = new ArrayList<>(waiters);
            waiters.clear();
        }
        for (Waiter w : left) {
            w.future.completeExceptionally(new IllegalStateException("the rlmeta metadata manager is closed"));
        }
        return stopped;
    }
}
