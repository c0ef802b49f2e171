package dev.rlmeta.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.RlMetaException;

/**
 * What the metadata consumer does when something fails, so it never serves a cache that silently
 * lacks records: the replay of one metadata partition whose records failed to apply (rewound in the
 * core, paused for a backoff, read again from its beginning while the others serve), a poison record
 * (the same records failing {@link #POISON_FAILURES} times in a row stop their metadata partition
 * for good), the rebuild of the whole store (a poisoned store, a failure of no one metadata
 * partition), and the restart of a thread that died (its pending writes failed at once, a new
 * thread with a new client after a backoff). It keeps the counts the metrics show.
 *
 * <p>It runs on the consumer thread (the counts and the stopped partitions are read by others). It
 * never polls, never applies records, and never decides whether a failure is a poison record on
 * its own: it counts failures in a row on the same offsets, as the applier reports them.
 */
final class Recovery {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    static final long RESTART_BACKOFF_MS = 200;
    static final long MAX_RESTART_BACKOFF_MS = 30_000;
    static final long REBUILD_BACKOFF_MS = 200;
    static final long MAX_REBUILD_BACKOFF_MS = 60_000;
    /** Failures in a row on the same records after which their metadata partition stops. */
    static final int POISON_FAILURES = 3;

    /** A failure to apply consumed records: the store may lack them or hold part of them. */
    static final class ApplyFailed extends RuntimeException {
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

    private final MetadataConsumer c;
    private final Readiness readiness;
    private final String topic;
    private final int numPartitions;
    final AtomicLong rebuilds = new AtomicLong();
    final AtomicLong restarts = new AtomicLong();
    final AtomicLong deaths = new AtomicLong();
    volatile String lastError;
    private int deathsInARow;                // under the consumer's lifecycle lock
    private int rebuildsInARow;              // whole-store rebuilds since every partition was last initialized
    private final int[] replaysInARow;       // per metadata partition: its replays since it was last initialized
    private final long[] replayAt;           // per metadata partition: nanoTime its replay starts (paused till then); 0: none due
    private final int[] failuresInARow;      // per metadata partition
    private final long[] failedFrom;
    private final long[] failedTo;
    private final String[] stopCause;        // per metadata partition: what its records failed with when it stopped
    private final AtomicIntegerArray stopped; // per metadata partition: 1 once stopped

    Recovery(MetadataConsumer c, Readiness readiness, String topic, int numPartitions) {
        this.c = c;
        this.readiness = readiness;
        this.topic = topic;
        this.numPartitions = numPartitions;
        this.replaysInARow = new int[numPartitions];
        this.replayAt = new long[numPartitions];
        this.failuresInARow = new int[numPartitions];
        this.failedFrom = new long[numPartitions];
        this.failedTo = new long[numPartitions];
        this.stopCause = new String[numPartitions];
        this.stopped = new AtomicIntegerArray(numPartitions);
    }

    /** Whether a metadata partition stopped for good after a record failed to apply again and again. */
    boolean stopped(int mp) { return stopped.get(mp) == 1; }

    /** Whether a metadata partition waits for its replay (its records of a poll are not applied). */
    boolean replayWaiting(int mp) { return replayAt[mp] != 0; }

    /** Chunk applied up to `offset`: past where the failures began ends the streak (not a poison record). */
    void appliedThrough(int mp, long offset) {
        if (failuresInARow[mp] > 0 && offset >= failedFrom[mp]) {
            failuresInARow[mp] = 0;
            failedTo[mp] = 0;
        }
    }

    /** A metadata partition read to its end again: its next failure backs off from the start. */
    void readAgain(int mp) { replaysInARow[mp] = 0; }

    /** Every held partition is initialized: the store serves every partition it reads again. */
    void allInitialized() { rebuildsInARow = 0; }

    /** A new thread after a death: back off, take a new client, rebuild the store from the topic. */
    void restart() throws InterruptedException {
        long backoff;
        synchronized (c.lifecycle) {
            backoff = Math.min(MAX_RESTART_BACKOFF_MS, RESTART_BACKOFF_MS << Math.min(deathsInARow - 1, 10));
        }
        synchronized (c.wakeups) {
            if (!c.closed) {
                c.wakeups.wait(backoff);
            }
        }
        if (c.closed) {
            return;
        }
        c.consumer = c.clients.get();
        restarts.incrementAndGet();
        String down = readiness.down();
        log.warn("rlmeta consumer of {} restarted after {} ms (it died: {}); rebuilding the store", topic, backoff, down);
        rebuild("the consumer thread restarted after: " + down, null);
    }

    /** The thread dies: stop serving everywhere, fail pending writes now, start a new thread after a backoff. */
    void died(Throwable t) {
        String why = t.toString();
        c.serving = false;
        deaths.incrementAndGet();
        lastError = "consumer thread " + Thread.currentThread().getName() + " died: " + why;
        log.error("rlmeta consumer of {}: thread {} died of {}; remote storage is unavailable on this broker until a "
                + "new consumer has rebuilt the store", topic, Thread.currentThread().getName(), why, t);
        readiness.consumerDied(why);
        c.closeClient();
        synchronized (c.lifecycle) {
            if (c.closed) {
                return;
            }
            deathsInARow++;
            c.startThread();
        }
    }

    /**
     * Drops the store and rebuilds it from the topic: forget every position, take a fresh store
     * (every held partition loaded, none initialized), and reassign as if every partition were new,
     * so each metadata partition is read again from its beginning. Lookups answer
     * ReplicaNotAvailableException until each partition is read to its end again.
     */
    void rebuild(String why, Throwable cause) throws InterruptedException {
        c.serving = false;
        rebuilds.incrementAndGet();
        lastError = why;
        if (cause != null) {
            log.error("rlmeta consumer of {}: {}; dropping the store and rebuilding it from the topic "
                    + "(lookups unavailable until it is read to its end again)", topic, why, cause);
        } else {
            log.warn("rlmeta consumer of {}: {}; rebuilding the store from the topic", topic, why);
        }
        readiness.forgetAll();
        java.util.Arrays.fill(replayAt, 0);
        KafkaConsumer<byte[], byte[]> k = c.consumer;
        if (k != null && !k.paused().isEmpty()) {
            k.resume(k.paused()); // the whole store is read again: no metadata partition waits for its own replay
        }
        TestFaults f = c.faults;
        if (f != null) {
            f.awaitRecovery();
        }
        c.store = c.freshStore.get();
        c.rebuildRequested = null;
        c.reassign = true;
        readiness.clearDown();
        synchronized (c.lifecycle) {
            deathsInARow = 0;
        }
        c.serving = true; // the fresh store's partitions are not initialized: they answer as while bootstrapping
        c.dirty = true;
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
        c.dirty = true;
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
    void failed(ApplyFailed e) throws InterruptedException {
        countFailure(e);
        rebuildsInARow++;
        long backoff = Math.min(MAX_REBUILD_BACKOFF_MS, REBUILD_BACKOFF_MS << Math.min(rebuildsInARow - 1, 20));
        c.serving = false;
        synchronized (c.wakeups) {
            if (!c.closed) {
                c.wakeups.wait(backoff);
            }
        }
    }

    /** Whether a failed apply needs the whole store dropped (else only its metadata partition is replayed). */
    static boolean wholeStore(ApplyFailed e) {
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
    void partitionFailed(ApplyFailed e) {
        int mp = e.mp;
        boolean stop = countFailure(e);
        int reset;
        try {
            reset = c.store.rewindMetadataPartition(mp, numPartitions);
        } catch (RuntimeException ex) {
            throw new ApplyFailed("forgetting the replayed records of " + topic + "-" + mp + " failed", ex);
        }
        TopicPartition mtp = new TopicPartition(topic, mp);
        c.consumer.pause(List.of(mtp));
        c.consumer.seekToBeginning(List.of(mtp)); // positions: the store holds nothing of mp now
        readiness.initialized.set(mp, 0);
        lastError = e.getMessage();
        c.dirty = true;
        if (stop) {
            replayAt[mp] = 0;
            readiness.pendingInit.remove(mp);
            c.reassign = true; // a stopped metadata partition is no longer assigned
            readiness.failWaiters(mp, "stopped: its records from offset " + failedFrom[mp] + " fail to apply");
            return;
        }
        readiness.pendingAgain(mp, Long.MAX_VALUE); // the end offset to reach is sampled when the replay starts
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
    void replayDue() {
        TestFaults f = c.faults;
        if (f != null && f.recoveryHeld()) {
            return;
        }
        long now = System.nanoTime();
        List<TopicPartition> due = new ArrayList<>();
        for (int p = 0; p < numPartitions; p++) {
            if (replayAt[p] == 0 || now - replayAt[p] < 0) {
                continue;
            }
            if (!readiness.assignedMeta.contains(p) || stopped.get(p) == 1) { // none of its partitions is held any more
                replayAt[p] = 0;
                readiness.pendingInit.remove(p);
                continue;
            }
            due.add(new TopicPartition(topic, p));
        }
        if (due.isEmpty()) {
            return;
        }
        for (TopicPartition mtp : due) {
            try {
                c.store.rewindMetadataPartition(mtp.partition(), numPartitions);
            } catch (RuntimeException ex) {
                throw new ApplyFailed("forgetting the replayed records of " + mtp + " failed", ex);
            }
        }
        c.consumer.seekToBeginning(due);
        Map<TopicPartition, Long> ends = c.consumer.endOffsets(due); // a failure: retried (replayAt still set)
        for (TopicPartition mtp : due) {
            int mp = mtp.partition();
            Map<TopicIdPartition, Long> pending = readiness.pendingAgain(mp, ends.get(mtp));
            replayAt[mp] = 0;
            rebuilds.incrementAndGet();
            log.warn("rlmeta consumer of {}: replaying {} from its beginning to offset {} ({} user partition(s), replay {} "
                    + "in a row)", topic, mtp, ends.get(mtp), pending.size(), replaysInARow[mp]);
        }
        readiness.assignedAt = now;
        c.consumer.resume(due);
        c.dirty = true;
    }

    /** Pauses again every metadata partition waiting for its replay (after a reassignment). */
    void pauseWaiting() {
        List<TopicPartition> waiting = new ArrayList<>();
        for (int p : readiness.assignedMeta) {
            if (replayAt[p] != 0) {
                waiting.add(new TopicPartition(topic, p));
            }
        }
        if (!waiting.isEmpty()) {
            c.consumer.pause(waiting);
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

    /** The dump's "stopped" array: each stopped metadata partition, its offsets, failures and error. */
    String stoppedJson() {
        StringBuilder sb = new StringBuilder("[");
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
}
