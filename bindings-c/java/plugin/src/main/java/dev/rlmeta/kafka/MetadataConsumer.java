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
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
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
 */
final class MetadataConsumer implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    static final int UNKNOWN_LEVEL = -1;
    private static final int MAX_LOGGED_OFFSETS = 10;

    private final String topic;
    private final int numPartitions;
    private final MetadataStore store;
    private final Object storeLock;
    private final Consumer<TopicIdPartition> onInitialized;
    private final StartupTimeline timeline;
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile Thread thread;
    private volatile boolean closed;

    // user partitions wanted by the broker (leaders + followers), set by the manager's callers
    private final Set<TopicIdPartition> wanted = ConcurrentHashMap.newKeySet();
    private volatile boolean reassign;
    private final Object wakeups = new Object(); // an idle thread waits here for its first partitions
    // owned by the consumer thread
    private final Set<TopicIdPartition> assignedUser = new HashSet<>();
    private final Set<Integer> assignedMeta = new HashSet<>();
    private final Map<TopicIdPartition, Long> pendingInit = new HashMap<>(); // user tp -> end offset to reach
    private final long[] endAtFirstRead;     // per metadata partition: end offset when first assigned (-1: never)
    private final boolean[] levelRecordSeen;

    // read by other threads
    private final AtomicLongArray positions;  // per metadata partition: next offset to read (-1: not assigned)
    private final int[] levels;                // per metadata partition: 0..2, or UNKNOWN_LEVEL
    private final long[] levelOffsets;
    private int finalizedLevel = -1;
    private String cleanupPolicy;             // of the metadata topic; null until read
    private final int[] writeLevels;          // per metadata partition: the level last used for writes, or -1
    private final AtomicLong[] counters = new AtomicLong[16]; // by outcome code (Outcome); 14 = rejected
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

    MetadataConsumer(String topic, int numPartitions, MetadataStore store, Object storeLock,
                     Consumer<TopicIdPartition> onInitialized, StartupTimeline timeline) {
        this.topic = topic;
        this.timeline = timeline;
        this.numPartitions = numPartitions;
        this.store = store;
        this.storeLock = storeLock;
        this.onInitialized = onInitialized;
        this.positions = new AtomicLongArray(numPartitions);
        this.levels = new int[numPartitions];
        this.writeLevels = new int[numPartitions];
        java.util.Arrays.fill(writeLevels, UNKNOWN_LEVEL);
        this.levelOffsets = new long[numPartitions];
        this.endAtFirstRead = new long[numPartitions];
        this.levelRecordSeen = new boolean[numPartitions];
        for (int p = 0; p < numPartitions; p++) {
            positions.set(p, -1);
            levels[p] = UNKNOWN_LEVEL;
            levelOffsets[p] = -1;
            endAtFirstRead[p] = -1;
        }
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new AtomicLong();
        }
    }

    void start(KafkaConsumer<byte[], byte[]> kafkaConsumer) {
        this.consumer = kafkaConsumer;
        Thread t = new Thread(this, "RlmetaRLMMConsumerTask");
        t.setDaemon(true);
        thread = t;
        reassign = true;
        t.start();
    }

    boolean started() { return thread != null; }

    /** The user partitions this broker holds now; the thread reassigns on its next loop. */
    void setWanted(Set<TopicIdPartition> add, Set<TopicIdPartition> remove) {
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

    /**
     * The level writes use: the cluster's finalized remote.log.metadata.version where it has one
     * (a Kafka with KIP-1266; it wins), else the higher of the partition's level record (none: 0)
     * and the level the topic's cleanup.policy implies; unknown until both are read.
     */
    synchronized int level(int metadataPartition) {
        if (finalizedLevel >= 0) {
            return finalizedLevel;
        }
        int mp = metadataPartition;
        if (levels[mp] == UNKNOWN_LEVEL || cleanupPolicy == null) {
            return UNKNOWN_LEVEL; // not read to its end, or the topic's cleanup.policy not read yet: never 0
        }
        int level;
        try {
            // the core's rule: the higher of the level record's and the one cleanup.policy implies
            // (level 1's retention expires the level records themselves)
            level = RlMeta.partitionLevelWithPolicy(levelRecordSeen[mp] ? levels[mp] : -1, cleanupPolicy);
        } catch (RlMetaException e) {
            log.warn("rlmeta: {}-{}: level unknown: {}", topic, mp, e.getMessage());
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

    long count(byte outcome) { return counters[outcome].get(); }

    /** Completes `future` once the record at `offset` of the metadata partition has been applied. */
    void completeWhenApplied(int metadataPartition, long offset, CompletableFuture<Void> future) {
        synchronized (waiters) {
            if (positions.get(metadataPartition) > offset) {
                future.complete(null);
                return;
            }
            waiters.add(new Waiter(metadataPartition, offset, future));
        }
    }

    @Override
    public void run() {
        log.info("rlmeta consumer of {} started", topic);
        timeline.mark("consumer thread");
        while (!closed) {
            try {
                if (reassign) {
                    reassign = false;
                    try {
                        reassign();
                    } catch (RuntimeException e) {
                        reassign = true; // a wakeup or a cluster error mid-way: do it all again
                        throw e;
                    }
                    afterPoll(); // what is already at its end (an empty metadata partition) needs no poll
                }
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
                for (TopicPartition tp : records.partitions()) {
                    apply(tp.partition(), records.records(tp));
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
            } catch (WakeupException e) {
                // a reassignment or close() woke us
            } catch (InterruptedException e) {
                if (closed) {
                    break;
                }
            } catch (Exception e) {
                if (closed) {
                    break;
                }
                // never stop: a broken record never reaches here (the store reports it), so this
                // is the cluster (retriable errors, a partition moving); back off and go on
                log.warn("rlmeta consumer of {}: {} (retrying in 1 s)", topic, e.toString());
                sleepQuietly(1000);
            }
        }
        try {
            consumer.close(Duration.ofSeconds(5)); // close(CloseOptions) is 4.1+: the plugin links against 3.7
        } catch (Exception e) {
            log.debug("closing the consumer", e);
        }
        log.info("rlmeta consumer of {} stopped", topic);
    }

    private void reassign() {
        Set<TopicIdPartition> now = new HashSet<>(wanted);
        Set<TopicIdPartition> added = new HashSet<>(now);
        added.removeAll(assignedUser);
        Set<TopicIdPartition> removed = new HashSet<>(assignedUser);
        removed.removeAll(now);
        Set<Integer> meta = new HashSet<>();
        for (TopicIdPartition tp : now) {
            meta.add(RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions));
        }
        Set<Integer> rewind = new HashSet<>();
        for (TopicIdPartition tp : added) {
            rewind.add(RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions));
        }
        List<TopicPartition> assignment = meta.stream().map(p -> new TopicPartition(topic, p)).collect(Collectors.toList());
        consumer.assign(assignment);
        timeline.mark("assigned");
        // a newly held user partition is rebuilt from the start of its metadata partition (as
        // TBRLMM does, KAFKA-16105); the store skips what it has already applied
        List<TopicPartition> rewound = rewind.stream().map(p -> new TopicPartition(topic, p)).collect(Collectors.toList());
        consumer.seekToBeginning(rewound);
        Map<TopicPartition, Long> ends = consumer.endOffsets(assignment);
        timeline.mark("end offsets");
        for (TopicIdPartition tp : added) {
            int mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions);
            pendingInit.put(tp, ends.get(new TopicPartition(topic, mp)));
        }
        for (TopicIdPartition tp : removed) {
            pendingInit.remove(tp);
        }
        assignedUser.clear();
        assignedUser.addAll(now);
        for (int p = 0; p < numPartitions; p++) {
            if (!meta.contains(p)) {
                positions.set(p, -1);
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

    private void apply(int mp, List<ConsumerRecord<byte[], byte[]>> records) {
        int n = records.size();
        long[] offsets = new long[n];
        int[] keyLengths = new int[n];
        int[] valueLengths = new int[n];
        int size = 0;
        for (int i = 0; i < n; i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(i);
            size += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
        }
        byte[] data = new byte[size];
        int at = 0;
        for (int i = 0; i < n; i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(i);
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
        byte[] outcomes;
        long t0 = System.nanoTime();
        synchronized (storeLock) {
            outcomes = store.apply(offsets, data, keyLengths, valueLengths);
        }
        if (!bootstrapDone) {
            bootstrapCoreNanos += System.nanoTime() - t0;
        }
        Map<Byte, List<Long>> notable = new HashMap<>();
        for (int i = 0; i < n; i++) {
            byte code = outcomes[i];
            if (code >= 0 && code < counters.length) {
                counters[code].incrementAndGet();
            }
            switch (code) {
                case Outcome.LEVEL_0: case Outcome.LEVEL_1: case Outcome.LEVEL_2:
                    setLevel(mp, code - Outcome.LEVEL_0, offsets[i]);
                    break;
                case Outcome.APPLIED: case Outcome.ALREADY_APPLIED:
                    break;
                default:
                    notable.computeIfAbsent(code, k -> new ArrayList<>()).add(offsets[i]);
            }
        }
        notable.forEach((code, at2) -> {
            String what = outcomeName(code);
            String offs = at2.size() <= MAX_LOGGED_OFFSETS ? at2.toString()
                    : at2.subList(0, MAX_LOGGED_OFFSETS) + " and " + (at2.size() - MAX_LOGGED_OFFSETS) + " more";
            boolean bad = code != Outcome.TOMBSTONE && code != Outcome.ORPHANED && code != Outcome.PARTITION_DELETED
                    && code != Outcome.DROPPED;
            long total = code >= 0 && code < counters.length ? counters[code].get() : -1;
            String line = String.format("rlmeta: %s-%d: %d %s record(s) at offsets %s (total %d)", topic, mp,
                    at2.size(), what, offs, total);
            if (bad) {
                log.warn(line);
            } else {
                log.info(line);
            }
        });
        dirty = true;
    }

    static String outcomeName(byte code) {
        switch (code) {
            case Outcome.APPLIED: return "applied";
            case Outcome.ORPHANED: return "orphaned";
            case Outcome.APPLIED_WITH_BAD_KEY: return "applied-with-bad-key";
            case Outcome.TOMBSTONE: return "tombstone";
            case Outcome.UNDECODABLE: return "undecodable";
            case Outcome.SNAPSHOT_RECORD: return "snapshot";
            case Outcome.BAD_KEY: return "bad-key";
            case Outcome.DROPPED: return "dropped";
            case Outcome.PARTITION_DELETED: return "partition-deleted";
            case Outcome.ALREADY_APPLIED: return "already-applied";
            case Outcome.LEVEL_0: return "level-0";
            case Outcome.LEVEL_1: return "level-1";
            case Outcome.LEVEL_2: return "level-2";
            case Outcome.LEVEL_INVALID: return "invalid-level";
            case 14: return "rejected";
            default: return "outcome-" + code;
        }
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
            positions.set(p, consumer.position(new TopicPartition(topic, p)));
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
        for (Iterator<Map.Entry<TopicIdPartition, Long>> it = pendingInit.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<TopicIdPartition, Long> e = it.next();
            int mp = RlmetaRemoteLogMetadataManager.metadataPartition(e.getKey(), numPartitions);
            if (positions.get(mp) >= e.getValue()) {
                it.remove();
                onInitialized.accept(e.getKey());
                dirty = true;
            }
        }
        if (!bootstrapDone && !assignedUser.isEmpty() && pendingInit.isEmpty()) {
            bootstrapDone = true;
            timeline.mark("all initialized");
            log.info("rlmeta consumer of {}: {} user partition(s) initialized; {}; start: {}", topic,
                    assignedUser.size(), bootstrapStats(), timeline.summary());
        }
        synchronized (waiters) {
            waiters.removeIf(w -> {
                if (w.future.isDone()) {
                    return true;
                }
                if (positions.get(w.partition) > w.offset) {
                    w.future.complete(null);
                    return true;
                }
                return false;
            });
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

    /** The host's part of the diagnostic dump (JSON object fields, no braces). */
    synchronized String statusJson() {
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
        sb.append('}');
        return sb.toString();
    }

    void close() {
        closed = true;
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        synchronized (wakeups) {
            wakeups.notifyAll();
        }
        Thread t = thread;
        if (t != null) {
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (waiters) {
            for (Waiter w : waiters) {
                w.future.completeExceptionally(new IllegalStateException("the rlmeta metadata manager is closed"));
            }
            waiters.clear();
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
