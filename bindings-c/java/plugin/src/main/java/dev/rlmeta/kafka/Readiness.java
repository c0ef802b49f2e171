package dev.rlmeta.kafka;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;

/**
 * Readiness per partition: which user partitions the broker wants held (leaders and followers),
 * which metadata partitions the consumer is assigned for them, how far each is applied (positions,
 * lags), which user partitions are initialized (read to the end offset seen when they were
 * assigned), and the write futures waiting for their record to be applied (read-your-writes).
 *
 * <p>The assignment and the bookkeeping of initialization are the consumer thread's; positions,
 * lags, initialized flags and waiters are read and added to by other threads. It never applies
 * records and never decides what a failure means ({@link Recovery} does, and tells it what to forget).
 */
final class Readiness {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);

    private final String topic;
    private final int numPartitions;
    private final StartupTimeline timeline;
    private final Consumer<TopicIdPartition> onInitialized;

    // user partitions wanted by the broker (leaders + followers), set by the manager's callers
    private final Set<TopicIdPartition> wanted = ConcurrentHashMap.newKeySet();
    // loaded into the store when it did not hold them (the core's answer): each is reset and its
    // metadata partition replayed from the beginning on the consumer thread's next reassignment,
    // even if it never left `wanted` in between (unloaded and loaded again between two loops)
    private final Set<TopicIdPartition> toReplay = ConcurrentHashMap.newKeySet();
    // owned by the consumer thread
    final Set<TopicIdPartition> assignedUser = new HashSet<>();
    final Set<Integer> assignedMeta = new HashSet<>();
    // metadata partition -> its user partitions not yet initialized -> the end offset to reach: a poll
    // looks only at the metadata partitions that have some, never calls the partitioner
    final Map<Integer, Map<TopicIdPartition, Long>> pendingInit = new HashMap<>();
    private final Map<TopicIdPartition, Integer> metadataPartitionOf = new HashMap<>(); // the partitioner's answers, held partitions only
    long assignedAt = System.nanoTime(); // the last reassignment that added partitions to initialize

    // read by other threads
    final AtomicLongArray positions;  // per metadata partition: next offset to read (-1: not assigned)
    final AtomicLongArray lags;       // per metadata partition: records up to its end (-1: unknown)
    final AtomicIntegerArray initialized; // per metadata partition: 1 if all its held partitions are
    private final List<Waiter> waiters = new ArrayList<>();
    private volatile String down;     // why the consumer thread died, until a new one has rebuilt; else null

    private static final class Waiter {
        final int partition;
        final long offset;
        final CompletableFuture<Void> future;

        Waiter(int partition, long offset, CompletableFuture<Void> future) {
            this.partition = partition;
            this.offset = offset;
            this.future = future;
        }
    }

    Readiness(String topic, int numPartitions, StartupTimeline timeline, Consumer<TopicIdPartition> onInitialized) {
        this.topic = topic;
        this.numPartitions = numPartitions;
        this.timeline = timeline;
        this.onInitialized = onInitialized;
        this.positions = new AtomicLongArray(numPartitions);
        this.lags = new AtomicLongArray(numPartitions);
        this.initialized = new AtomicIntegerArray(numPartitions);
        for (int p = 0; p < numPartitions; p++) {
            positions.set(p, -1);
            lags.set(p, -1);
        }
    }

    /** The user partitions this broker holds now ({@code replay}: rebuilt from their metadata partition's start). */
    void setWanted(Set<TopicIdPartition> add, Set<TopicIdPartition> remove, Set<TopicIdPartition> replay) {
        toReplay.addAll(replay);
        wanted.addAll(add);
        wanted.removeAll(remove);
    }

    /** Why the consumer thread is down (died, not yet restarted and rebuilt), or null. */
    String down() { return down; }

    /** The metadata partition of a held user partition (the core's partitioner, asked once per partition). */
    int metadataPartition(TopicIdPartition tp) {
        Integer mp = metadataPartitionOf.get(tp);
        if (mp == null) {
            mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions);
            metadataPartitionOf.put(tp, mp);
        }
        return mp;
    }

    /**
     * Assigns the metadata partitions of the wanted user partitions (none that {@code recovery}
     * stopped); a user partition newly held, or loaded into a store that did not hold it, is reset
     * in {@code s} and its metadata partition read again from the beginning, to the end offset seen now.
     */
    void reassign(KafkaConsumer<byte[], byte[]> consumer, MetadataStore s, Recovery recovery, Levels levels) {
        Set<TopicIdPartition> now = new HashSet<>(wanted);
        Set<TopicIdPartition> added = new HashSet<>(now);
        added.removeAll(assignedUser);
        Set<TopicIdPartition> removed = new HashSet<>(assignedUser);
        removed.removeAll(now);
        Set<Integer> meta = new HashSet<>();
        for (TopicIdPartition tp : now) {
            int mp = metadataPartition(tp);
            if (!recovery.stopped(mp)) { // a stopped metadata partition is not read again: its partitions stay unavailable
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
        fresh.removeIf(tp -> recovery.stopped(metadataPartition(tp)));
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
            } else {
                levels.assigned(p, ends.get(new TopicPartition(topic, p)));
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
    }

    /** Every held user partition of a metadata partition waits again, for `end` (its replay). */
    Map<TopicIdPartition, Long> pendingAgain(int mp, Long end) {
        Map<TopicIdPartition, Long> pending = pendingInit.computeIfAbsent(mp, k -> new HashMap<>());
        for (TopicIdPartition tp : assignedUser) {
            if (metadataPartition(tp) == mp) {
                pending.put(tp, end);
            }
        }
        return pending;
    }

    /** The positions and lags of the assigned metadata partitions, from the client after a poll. */
    void readPositions(KafkaConsumer<byte[], byte[]> consumer) {
        for (int p : assignedMeta) {
            TopicPartition mtp = new TopicPartition(topic, p);
            positions.set(p, consumer.position(mtp));
            java.util.OptionalLong lag = consumer.currentLag(mtp);
            lags.set(p, lag.isPresent() ? lag.getAsLong() : -1);
        }
    }

    /**
     * Marks initialized every pending user partition whose metadata partition is read to its end
     * offset (one log line for all), and sets the initialized flags. Returns how many it marked.
     */
    int markReached(Recovery recovery) {
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
                        throw new Recovery.ApplyFailed("marking " + e.getKey() + " initialized failed", ex);
                    }
                    it.remove();
                    initializedNow++;
                }
            }
            if (m.getValue().isEmpty() && !recovery.replayWaiting(m.getKey())) {
                recovery.readAgain(m.getKey()); // read to its end again: the next failure backs off from the start
                mps.remove();
            }
        }
        if (pendingInit.isEmpty()) {
            recovery.allInitialized(); // the store serves every partition it reads again
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
        return initializedNow;
    }

    /** Forgets every position and assignment: the whole store is read again (a rebuild). */
    void forgetAll() {
        for (int p = 0; p < numPartitions; p++) {
            positions.set(p, -1);
            lags.set(p, -1);
            initialized.set(p, 0);
        }
        assignedUser.clear();
        assignedMeta.clear();
        pendingInit.clear();
    }

    /** Completes `future` once the record at `offset` of the metadata partition has been applied. */
    void completeWhenApplied(int metadataPartition, long offset, CompletableFuture<Void> future) {
        boolean applied;
        String why;
        synchronized (waiters) {
            applied = positions.get(metadataPartition) > offset;
            why = down;
            if (!applied && why == null) {
                waiters.add(new Waiter(metadataPartition, offset, future));
                return;
            }
        }
        // completed outside the lock: a dependent stage runs on this thread and may call back in
        if (applied) {
            future.complete(null);
        } else {
            future.completeExceptionally(consumerDown(why));
        }
    }

    /** Completes every waiter whose record is applied now (after a poll). */
    void completeApplied() {
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

    private RemoteStorageException consumerDown(String why) {
        return KafkaCompat.retriable("the rlmeta metadata consumer of " + topic + " died (" + why
                + ") and is being restarted: the write was produced but this broker has not applied it; retry");
    }

    /** The consumer thread died of `why`: every pending write fails now, and new ones until {@link #clearDown}. */
    void consumerDied(String why) {
        List<Waiter> failed;
        synchronized (waiters) {
            down = why;
            failed = new ArrayList<>(waiters);
            waiters.clear();
        }
        for (Waiter w : failed) {
            w.future.completeExceptionally(consumerDown(why));
        }
    }

    /** A new consumer thread has rebuilt the store: writes wait for their records again. */
    void clearDown() {
        synchronized (waiters) {
            down = null;
        }
    }

    /** Fails the pending writes of a metadata partition at once, retriably. */
    void failWaiters(int mp, String why) {
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

    /** close(): every pending write fails. */
    void failAll() {
        List<Waiter> left;
        synchronized (waiters) {
            left = new ArrayList<>(waiters);
            waiters.clear();
        }
        for (Waiter w : left) {
            w.future.completeExceptionally(new IllegalStateException("the rlmeta metadata manager is closed"));
        }
    }
}
