package dev.rlmeta.kafka;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PlannedRecords;
import dev.rlmeta.RlMetaException;

/**
 * The backfill host: on the partition's leader, writes again under their KIP-1266 keys the
 * segments of each led user partition that only null-key records hold (written by stock Kafka's
 * TopicBasedRemoteLogMetadataManager), so that Kafka's cleaner, which drops null-key records, loses
 * none of them. What to write, and what to refuse, is the core's planner's
 * ({@code Store::plan_backfill}); this class only decides when, runs it, and counts.
 *
 * <p>A user partition is backfilled on its own thread ("RlmetaRLMMBackfill", never a Kafka
 * thread) when all hold: this broker leads it (onPartitionLeadershipChanges) and has for at least
 * {@code rlmeta.backfill.leader.delay.ms}, so that the previous leader's last writes have landed;
 * its metadata partition's write level is known and at least 1; the metadata partition has been
 * applied up to its end offset sampled after this broker became the leader (the store holds every
 * record the old leader wrote); and the plan is not empty. Each round holds the user partition's
 * write lock (the one the plugin's lifecycle writes hold) from plan to applied, so a deletion and
 * a backfill of one segment never interleave on this broker. A refusal is logged once and retried
 * at the next check ({@code rlmeta.backfill.check.ms}, and at each leadership change and policy
 * refresh); an empty plan marks the partition done for this leadership term. Idempotent: the plan
 * comes from the store, so a new leader, or this one after a restart, writes only what is missing.
 *
 * <p>Never: decides a key, a value or a refusal (the core does), runs on a Kafka thread, or writes
 * for a partition this broker does not lead.
 */
final class Backfill implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Backfill.class);
    /** How often every led partition is checked again (ms). */
    static final String CHECK_MS = "rlmeta.backfill.check.ms";
    static final long DEFAULT_CHECK_MS = 10_000;
    /** How long a new leader waits before it backfills (ms): its predecessor's in-flight writes land meanwhile. */
    static final String LEADER_DELAY_MS = "rlmeta.backfill.leader.delay.ms";
    static final long DEFAULT_LEADER_DELAY_MS = 30_000;
    /**
     * Test hook (with -Drlmeta.test.hooks=true only): once, after this many records produced, the
     * backfill thread stops in the middle of a plan (the rest unwritten, the partition's write lock
     * held) until this broker no longer leads that partition or closes: a kill -9 or a leadership
     * change in the middle of a backfill.
     */
    static final String PAUSE_AFTER_PROPERTY = "rlmeta.test.backfill.pause.after.records";

    /** What the backfill needs of the plugin. */
    interface Host {
        MetadataStore store();

        MetadataConsumer consumer();

        Admin admin();

        KafkaProducer<byte[], byte[]> producer();

        boolean leads(TopicIdPartition tp);

        int knownLeaderEpoch(TopicIdPartition tp);

        Semaphore writeLock(TopicIdPartition tp);

        boolean closed();

        /** At the top of each round: where a test's fault hook throws (ThreadGuard#checkpoint). */
        default void checkpoint() {}

        /** An Error of one partition's round, logged and caught (the thread goes on): counted as a thread death. */
        default void caught(Error e) {}
    }

    /** One led partition in this leadership term. */
    private static final class Term {
        final long since = System.nanoTime();
        volatile long catchUpTo = -1; // the metadata partition's end offset sampled after the term began
        volatile boolean done;
        boolean counted; // partitionsDone counted (backfill thread only)
        int segments;
        int records;
        long firstWrite; // nanoTime of this term's first backfill record, 0 before it
        String lastRefusal;
    }

    private final Host host;
    private final String topic;
    private final int numPartitions;
    private final long checkMs;
    private final long leaderDelayMs;
    private final long waitMs;
    private final long pauseAfter;
    private final Map<TopicIdPartition, Term> terms = new ConcurrentHashMap<>();
    private final AtomicLong recordsWritten = new AtomicLong();
    private final AtomicLong partitionsDone = new AtomicLong();
    private final AtomicLong resurrectionsSeen = new AtomicLong();
    private final Semaphore wake = new Semaphore(0);
    private volatile String lastError;
    private boolean paused; // the test hook fired (backfill thread only)

    Backfill(Host host, String topic, int numPartitions, Map<String, ?> configs, long waitMs) {
        this.host = host;
        this.topic = topic;
        this.numPartitions = numPartitions;
        this.checkMs = Math.max(100, longConfig(configs, CHECK_MS, DEFAULT_CHECK_MS));
        this.leaderDelayMs = Math.max(0, longConfig(configs, LEADER_DELAY_MS, DEFAULT_LEADER_DELAY_MS));
        this.waitMs = waitMs;
        long pause = -1;
        if (Boolean.getBoolean(MetadataStore.TEST_HOOKS_PROPERTY)) {
            pause = Long.getLong(PAUSE_AFTER_PROPERTY, -1L);
        }
        this.pauseAfter = pause;
    }

    private static long longConfig(Map<String, ?> configs, String name, long dflt) {
        Object v = configs.get(name);
        return v == null || v.toString().isBlank() ? dflt : Long.parseLong(v.toString().trim());
    }

    /** Leadership changed: a new term for each partition led now, none for those given up. */
    void leadershipChanged(Set<TopicIdPartition> leaders, Set<TopicIdPartition> notLed) {
        for (TopicIdPartition tp : notLed) {
            terms.remove(tp);
        }
        for (TopicIdPartition tp : leaders) {
            terms.computeIfAbsent(tp, t -> new Term());
        }
        wake();
    }

    /** Check again now (a leadership change, a policy or level refresh). */
    void wake() {
        wake.release();
    }

    long recordsWritten() {
        return recordsWritten.get();
    }

    long partitionsDone() {
        return partitionsDone.get();
    }

    /** Deleted segments seen back (a deposed leader's late backfill) on partitions done, deleted again. */
    long resurrectionsSeen() {
        return resurrectionsSeen.get();
    }

    /** Led partitions at level 1 or 2 whose backfill is not done yet in this term. */
    int partitionsPending() {
        MetadataConsumer c = host.consumer();
        int n = 0;
        for (Map.Entry<TopicIdPartition, Term> e : terms.entrySet()) {
            if (!e.getValue().done && c.level(RlmetaRemoteLogMetadataManager.metadataPartition(e.getKey(), numPartitions)) >= 1) {
                n++;
            }
        }
        return n;
    }

    String lastError() {
        return lastError;
    }

    @Override
    public void run() {
        while (!host.closed()) {
            try {
                wake.tryAcquire(checkMs, TimeUnit.MILLISECONDS);
                wake.drainPermits();
            } catch (InterruptedException e) {
                return;
            }
            host.checkpoint();
            for (Map.Entry<TopicIdPartition, Term> e : new ArrayList<>(terms.entrySet())) {
                if (host.closed() || Thread.currentThread().isInterrupted()) {
                    return;
                }
                try {
                    step(e.getKey(), e.getValue());
                } catch (InterruptedException ie) {
                    return;
                } catch (RuntimeException ex) {
                    error(e.getKey(), "failed: " + ex);
                } catch (Error ex) { // never a silent death: logged, and the partition is tried again next round
                    log.error("rlmeta RLMM backfill of {} failed with {}; retried in {} ms", e.getKey(), ex, checkMs, ex);
                    lastError = "backfill of " + e.getKey() + " failed: " + ex;
                    host.caught(ex);
                }
            }
        }
    }

    private void error(TopicIdPartition tp, String what) {
        String msg = "backfill of " + tp + " " + what;
        if (!msg.equals(lastError)) {
            log.warn("rlmeta RLMM {} (retried every {} ms)", msg, checkMs);
        }
        lastError = msg;
    }

    private void step(TopicIdPartition tp, Term term) throws InterruptedException {
        if (!host.leads(tp)) {
            return;
        }
        long msb = tp.topicId().getMostSignificantBits();
        long lsb = tp.topicId().getLeastSignificantBits();
        if (term.done) {
            // a deposed leader's backfill record that landed after this leader deleted its segment
            // brings the segment back: the core saw it (Store::resurrections), its plan deletes it again
            MetadataStore s = host.store();
            int risen = s == null ? 0 : s.resurrections(msb, lsb, tp.partition());
            if (risen == 0) {
                return;
            }
            log.warn("rlmeta RLMM {}: {} deleted segment(s) came back (a deposed leader's late backfill); "
                    + "deleting them again", tp, risen);
            resurrectionsSeen.addAndGet(risen);
            term.done = false;
        }
        int mp = RlmetaRemoteLogMetadataManager.metadataPartition(tp, numPartitions);
        MetadataConsumer c = host.consumer();
        int level = c.level(mp);
        if (level < 1 || !c.isAssigned(mp) || !c.serving()) {
            return; // never at level 0 (or unknown): stock brokers may still read the topic
        }
        MetadataStore s = host.store();
        if (s == null || !s.isInitialized(msb, lsb, tp.partition())) {
            return;
        }
        if (term.catchUpTo < 0) {
            TopicPartition mtp = new TopicPartition(topic, mp);
            try {
                term.catchUpTo = host.admin().listOffsets(Map.of(mtp, OffsetSpec.latest())).partitionResult(mtp)
                        .get(waitMs, TimeUnit.MILLISECONDS).offset();
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                error(tp, "could not read the end offset of " + mtp + ": " + e);
                return;
            }
        }
        if (c.appliedOffset(mp) < term.catchUpTo) {
            return; // not yet read up to what the previous leader wrote
        }
        if (System.nanoTime() - term.since < TimeUnit.MILLISECONDS.toNanos(leaderDelayMs)) {
            return;
        }
        Semaphore lock = host.writeLock(tp);
        if (!lock.tryAcquire(waitMs, TimeUnit.MILLISECONDS)) {
            return; // a lifecycle write holds it: next check
        }
        try {
            while (!host.closed() && host.leads(tp)) {
                if (host.store() != s || !c.serving() || c.appliedOffset(mp) < term.catchUpTo) {
                    return; // the store is being rebuilt from the topic: not before it is read again
                }
                PlannedRecords plan;
                try {
                    // the store checked above: read to its end after this term began, not replaced since
                    plan = s.planBackfill(msb, lsb, tp.partition(), host.knownLeaderEpoch(tp), level);
                } catch (RlMetaException.InvalidState | RlMetaException.NotInitialized e) {
                    if (!e.getMessage().equals(term.lastRefusal)) {
                        log.warn("rlmeta RLMM backfill of {} refused (retried every {} ms): {}", tp, checkMs,
                                e.getMessage());
                        term.lastRefusal = e.getMessage();
                    }
                    lastError = "backfill of " + tp + " refused: " + e.getMessage();
                    return;
                }
                if (plan.size() == 0) {
                    term.done = true;
                    if (term.counted) {
                        return; // done again after deleting a resurrection: counted and logged once a term
                    }
                    term.counted = true;
                    partitionsDone.incrementAndGet();
                    long ms = term.firstWrite == 0 ? 0 : (System.nanoTime() - term.firstWrite) / 1_000_000;
                    log.info("rlmeta RLMM backfilled {}: {} segments, {} records in {} ms", tp, term.segments,
                            term.records, ms);
                    return;
                }
                if (!produce(tp, mp, plan, term)) {
                    return;
                }
            }
        } finally {
            lock.release();
        }
    }

    /** Produces the plan in order and waits until this broker has applied it; false if it did not complete. */
    private boolean produce(TopicIdPartition tp, int mp, PlannedRecords plan, Term term) throws InterruptedException {
        KafkaProducer<byte[], byte[]> p = host.producer();
        if (term.firstWrite == 0) {
            term.firstWrite = System.nanoTime();
        }
        List<Future<RecordMetadata>> sent = new ArrayList<>(plan.size());
        for (int i = 0; i < plan.size(); i++) {
            if (!host.leads(tp)) {
                recordsWritten.addAndGet(sent.size()); // produced (or in flight): counted as written
                return false; // leadership moved: the new leader plans what is left from its store
            }
            sent.add(p.send(new ProducerRecord<>(topic, mp, plan.keys[i], plan.values[i])));
            if (pauseAfter >= 0 && !paused && recordsWritten.get() + sent.size() >= pauseAfter) {
                paused = true;
                try {
                    sent.get(sent.size() - 1).get(waitMs, TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    // the hook pauses whatever happened to the record
                }
                recordsWritten.addAndGet(sent.size());
                log.warn("rlmeta test hook: backfill paused after {} records, in {} (until this broker no longer "
                        + "leads it)", recordsWritten.get(), tp);
                while (!host.closed() && host.leads(tp)) {
                    Thread.sleep(100);
                }
                log.warn("rlmeta test hook: backfill resumed ({} is no longer led here)", tp);
                return false;
            }
        }
        long last = -1;
        try {
            for (Future<RecordMetadata> f : sent) {
                last = Math.max(last, f.get(waitMs, TimeUnit.MILLISECONDS).offset());
            }
            CompletableFuture<Void> applied = new CompletableFuture<>();
            host.consumer().completeWhenApplied(mp, last, applied);
            applied.get(waitMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            error(tp, "could not write or apply its records: " + e);
            return false;
        }
        recordsWritten.addAndGet(plan.size());
        term.records += plan.size();
        Set<String> pairs = new HashSet<>(); // one key pair per segment moved
        for (byte[] k : plan.keys) {
            pairs.add(new String(k, StandardCharsets.UTF_8).replaceFirst(":UPDATE$", ""));
        }
        term.segments += pairs.size();
        term.lastRefusal = null;
        return true;
    }
}
