package dev.rlmeta.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;

/**
 * The one consumer thread of the plugin: reads the metadata partitions that hold the user
 * partitions this broker leads or follows (assign(), never a group), hands each poll's records to
 * the core store in one call per metadata partition ({@link RecordApplier}), and keeps what the
 * host needs: the position of every metadata partition (read-your-writes) and the initialization
 * of user partitions ({@link Readiness}), its feature level ({@link Levels}: from level records;
 * unknown until read to its end), and counts of every outcome. It never stops on a record:
 * tombstones, undecodable values and bad keys are counted and logged.
 *
 * <p>It never serves a cache that silently lacks records. If applying the records of metadata
 * partition mp fails (the store refuses them, anything but a poisoned store), only mp is rebuilt:
 * the core forgets what was replayed for the user partitions held in mp
 * ({@link MetadataStore#rewindMetadataPartition}; they answer ReplicaNotAvailableException, isReady
 * false, as while bootstrapping), mp is paused for a backoff (200 ms, doubling per failure in a row
 * up to 60 s, per metadata partition), then read again from its beginning while every other
 * metadata partition goes on serving. The same records failing {@link Recovery#POISON_FAILURES}
 * times in a row stop mp: its partitions stay unavailable until the broker restarts (logged with
 * the offsets and the error, the Stopped metric). If the native store is poisoned (a panic in the
 * core), the whole store is dropped and rebuilt from the beginning of every held metadata
 * partition, with the same backoff. Write futures keep waiting for their records to be applied
 * again. If the thread dies (an Error, anything unexpected), the plugin stops serving everywhere,
 * pending write futures fail at once with a retriable error, and a new thread with a new client
 * starts after a backoff and rebuilds the whole store. All of that is {@link Recovery}'s; this
 * class is the loop and the thread's life.
 */
final class MetadataConsumer implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    static final int UNKNOWN_LEVEL = Levels.UNKNOWN_LEVEL;
    /** Records per store.apply call (see {@link RecordApplier#APPLY_CHUNK}). */
    static final int APPLY_CHUNK = RecordApplier.APPLY_CHUNK;
    private static final String THREAD = "RlmetaRLMMConsumerTask";
    // retried errors of the cluster: one line a minute per kind
    private final RateLimitedLog noisy = new RateLimitedLog(60_000);

    final String topic;
    final int numPartitions;
    volatile MetadataStore store;                   // the store applies go to; replaced on a rebuild
    final Supplier<MetadataStore> freshStore;       // drops the store and makes a fresh one with every held partition loaded
    private final StartupTimeline timeline;
    volatile Supplier<KafkaConsumer<byte[], byte[]>> clients; // a new consumer for a restarted thread
    volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile Thread thread;
    volatile boolean closed;
    private volatile AccessProblems problems;
    final Object lifecycle = new Object();          // start, restart and close
    final Object wakeups = new Object();            // an idle or backing-off thread waits here
    // not serving: a rebuild or a restart is under way (reads: ReplicaNotAvailableException; isReady: false)
    volatile boolean serving = true;
    volatile String rebuildRequested;               // why another thread asked for a rebuild (a poisoned store); else null
    volatile boolean reassign;
    volatile boolean dirty = true;
    // null unless a test asked for faults (TestHooks, which needs -Drlmeta.test.hooks=true)
    volatile TestFaults faults;

    private final Levels levels;
    private final Readiness readiness;
    private final Recovery recovery;
    private final BootstrapStats bootstrap = new BootstrapStats();
    private final RecordApplier applier;

    MetadataConsumer(String topic, int numPartitions, MetadataStore store, Supplier<MetadataStore> freshStore,
                     Consumer<TopicIdPartition> onInitialized, StartupTimeline timeline) {
        this.topic = topic;
        this.timeline = timeline;
        this.numPartitions = numPartitions;
        this.store = store;
        this.freshStore = freshStore;
        this.levels = new Levels(topic, numPartitions);
        this.readiness = new Readiness(topic, numPartitions, timeline, onInitialized);
        this.recovery = new Recovery(this, readiness, topic, numPartitions);
        this.applier = new RecordApplier(topic, this, levels, recovery, bootstrap);
    }

    /** Starts the thread with a client from `clients` (and later ones after a death); false if closed. */
    boolean start(Supplier<KafkaConsumer<byte[], byte[]>> newClient) {
        synchronized (lifecycle) {
            if (closed || thread != null) {
                return false;
            }
            this.clients = newClient;
            this.consumer = newClient.get();
            reassign = true;
            startThread();
            return true;
        }
    }

    /** A new consumer thread (the first, or the next after a death); under {@link #lifecycle}. */
    void startThread() {
        Thread t = new Thread(this, THREAD);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    // ------------------------------------------------------------------ views for the manager and the metrics

    /** Whether lookups may be answered: no rebuild or restart under way. */
    boolean serving() { return serving; }

    /** Why the consumer thread is down (died, not yet restarted and rebuilt), or null. */
    String down() { return readiness.down(); }

    long rebuilds() { return recovery.rebuilds.get(); }

    long restarts() { return recovery.restarts.get(); }

    /** How many times the consumer thread died (each logged at ERROR with the thread's name). */
    long deaths() { return recovery.deaths.get(); }

    /** Whether a metadata partition stopped for good after a record failed to apply again and again. */
    boolean stopped(int metadataPartition) { return recovery.stopped(metadataPartition); }

    /** Metadata partitions stopped for good after a record failed to apply again and again. */
    List<Integer> stoppedPartitions() { return recovery.stoppedPartitions(); }

    String lastError() { return recovery.lastError; }

    String threadName() {
        Thread t = thread;
        return t == null ? null : t.getName() + "#" + t.getId();
    }

    /** The test faults this consumer consults, made on first use (only {@link TestHooks} asks). */
    TestFaults testFaults() {
        synchronized (lifecycle) {
            if (faults == null) {
                faults = new TestFaults();
            }
            return faults;
        }
    }

    /** The store applies go to now. */
    MetadataStore store() { return store; }

    boolean started() { return thread != null; }

    boolean isAssigned(int metadataPartition) { return readiness.positions.get(metadataPartition) >= 0; }

    /** The next offset to apply in a metadata partition (all before it applied), or -1 if not assigned. */
    long appliedOffset(int metadataPartition) { return readiness.positions.get(metadataPartition); }

    /** Records between the applied offset and the metadata partition's end, as of the last poll; -1 if unknown. */
    long lag(int metadataPartition) { return readiness.lags.get(metadataPartition); }

    /** Whether the metadata partition is assigned and every held user partition in it is initialized. */
    boolean initialized(int metadataPartition) { return readiness.initialized.get(metadataPartition) == 1; }

    /** The level writes to a metadata partition use, or UNKNOWN_LEVEL (see {@link Levels#level}). */
    int level(int metadataPartition) { return levels.level(metadataPartition); }

    /** The topic's cleanup.policy as last read from the cluster (null: not read yet, the level stays unknown). */
    void setCleanupPolicy(String policy) { levels.setCleanupPolicy(policy); }

    /** The finalized feature level, or -1 where the cluster finalizes none (stock 4.4.0). */
    void setFinalizedLevel(int level) { levels.setFinalizedLevel(level); }

    long count(byte outcome) { return applier.count(outcome); }

    /** The core's name of an outcome code (its one table), or "outcome-N" for a code it does not name. */
    static String outcomeName(byte code) { return RecordApplier.outcomeName(code); }

    /** Completes `future` once the record at `offset` of the metadata partition has been applied. */
    void completeWhenApplied(int metadataPartition, long offset, CompletableFuture<Void> future) {
        readiness.completeWhenApplied(metadataPartition, offset, future);
    }

    /** The bootstrap's polls, records and time (poll vs the core's apply), once it is done; else null. */
    String bootstrapStats() { return bootstrap.stats(); }

    boolean takeDirty() {
        boolean d = dirty;
        dirty = false;
        return d;
    }

    // ------------------------------------------------------------------ requests from other threads

    /** Another thread found `unusable` poisoned: stop serving and rebuild (unless it was replaced already). */
    void requestRebuild(MetadataStore unusable, String why) {
        if (unusable != store) {
            return; // a store already dropped
        }
        if (rebuildRequested == null) {
            rebuildRequested = why;
        }
        serving = false;
        wake();
    }

    /** Where failures of the cluster (a missing ACL, an authentication error) are reported, once each. */
    void setProblems(AccessProblems problems) { this.problems = problems; }

    /**
     * The user partitions this broker holds now; the thread reassigns on its next loop. {@code replay}:
     * those the store did not hold when they were loaded, rebuilt from their metadata partition's start.
     */
    void setWanted(Set<TopicIdPartition> add, Set<TopicIdPartition> remove, Set<TopicIdPartition> replay) {
        readiness.setWanted(add, remove, replay);
        reassign = true;
        wake();
    }

    private void wake() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeups) {
            wakeups.notifyAll();
        }
    }

    // ------------------------------------------------------------------ the thread

    @Override
    public void run() {
        try {
            if (readiness.down() != null) {
                recovery.restart();
            } else {
                log.info("rlmeta consumer of {} started", topic);
                timeline.mark("consumer thread");
            }
            loop();
        } catch (Throwable t) {
            if (!closed) {
                recovery.died(t);
                return; // died() closed the client and started the next thread
            }
        }
        closeClient();
        log.info("rlmeta consumer of {} stopped", topic);
    }

    void closeClient() {
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

    private void loop() throws InterruptedException {
        while (!closed) {
            try {
                String requested = rebuildRequested;
                if (requested != null) {
                    recovery.rebuild(requested, null);
                }
                if (reassign) {
                    reassign = false;
                    try {
                        readiness.reassign(consumer, store, recovery, levels);
                        dirty = true;
                        recovery.pauseWaiting();
                    } catch (RuntimeException e) {
                        reassign = true; // a wakeup or a cluster error mid-way: do it all again
                        throw e;
                    }
                    afterPoll(); // what is already at its end (an empty metadata partition) needs no poll
                }
                recovery.replayDue();
                if (readiness.assignedMeta.isEmpty()) {
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
                        if (recovery.replayWaiting(mp) || recovery.stopped(mp)) {
                            continue; // fetched before it was paused: it is read again from its beginning
                        }
                        try {
                            applier.apply(mp, records.records(tp));
                        } catch (Recovery.ApplyFailed e) {
                            if (Recovery.wholeStore(e)) {
                                throw e;
                            }
                            recovery.partitionFailed(e); // only mp is rebuilt; the others' records of this poll apply
                        }
                    }
                } catch (Recovery.ApplyFailed e) {
                    throw e;
                } catch (RuntimeException e) {
                    throw new Recovery.ApplyFailed("applying " + records.count() + " record(s) failed", e);
                }
                if (!bootstrap.done()) {
                    bootstrap.poll(records.count(), t0, t1, System.nanoTime(), timeline);
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
            } catch (Recovery.ApplyFailed e) {
                if (closed) {
                    break;
                }
                recovery.failed(e);
                recovery.rebuild(e.getMessage(), e.getCause());
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

    /** After a poll (or a reassignment): positions, levels read to their end, initialized partitions, applied writes. */
    private void afterPoll() {
        readiness.readPositions(consumer);
        if (levels.readToEnd(readiness.assignedMeta, readiness.positions)) {
            dirty = true;
        }
        if (readiness.markReached(recovery) > 0) {
            dirty = true;
        }
        if (!bootstrap.done() && !readiness.assignedUser.isEmpty() && readiness.pendingInit.isEmpty()) {
            bootstrap.finish();
            timeline.mark("all initialized");
            log.info("rlmeta consumer of {}: {} user partition(s) initialized; {}; start: {}", topic,
                    readiness.assignedUser.size(), bootstrapStats(), timeline.summary());
        }
        readiness.completeApplied();
    }

    /**
     * The host's part of the diagnostic dump (JSON object fields, no braces): levels, positions,
     * counters, serving, rebuilds, restarts and the stopped metadata partitions.
     */
    String statusJson() {
        StringBuilder sb = new StringBuilder(levels.json()).append(",\"positions\":[");
        for (int p = 0; p < numPartitions; p++) {
            sb.append(p == 0 ? "" : ",").append(readiness.positions.get(p));
        }
        sb.append("],\"counters\":").append(applier.countersJson());
        sb.append(",\"serving\":").append(serving).append(",\"rebuilds\":").append(recovery.rebuilds.get())
                .append(",\"restarts\":").append(recovery.restarts.get()).append(",\"stopped\":");
        return sb.append(recovery.stoppedJson()).toString();
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
        wake();
        TestFaults f = faults;
        if (f != null) {
            f.openGate();
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
        readiness.failAll();
        return stopped;
    }
}
