package dev.rlmeta.kafka;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.Outcome;

/**
 * Applies one metadata partition's records of a poll to the core store through JNI: packs them
 * (offsets, keys and values in one array, their lengths) in chunks of {@link #APPLY_CHUNK}, makes
 * one call into {@link MetadataStore#apply} per chunk, then counts every outcome, hands level
 * records to {@link Levels}, and logs what is notable (rate-limited; expected outcomes such as
 * tombstones in one summary a minute). Runs on the consumer thread only.
 *
 * <p>It never decides what a record means (the core classifies it) and never recovers from a
 * failure: a failed chunk is thrown as {@link Recovery.ApplyFailed} with its offsets.
 */
final class RecordApplier {
    private static final Logger log = LoggerFactory.getLogger(MetadataConsumer.class);
    /** Records per store.apply call: the longest a lookup waits for the store's write lock. */
    static final int APPLY_CHUNK = 1024;
    private static final int MAX_LOGGED_OFFSETS = 10;
    private static final long QUIET_SUMMARY_NANOS = 60_000_000_000L;

    private final String topic;
    private final MetadataConsumer consumer; // its store and test faults, now
    private final Levels levels;
    private final Recovery recovery;
    private final BootstrapStats bootstrap;
    private final AtomicLong[] counters = new AtomicLong[Outcome.COUNT]; // by outcome code (the core's table)
    // expected outcomes (tombstones, orphans, ...) by name since the last summary
    private final Map<String, Long> quiet = new java.util.TreeMap<>();
    private long quietSince = System.nanoTime() - QUIET_SUMMARY_NANOS; // the first summary is written at once
    // unexpected outcomes: one line a minute per kind and metadata partition
    private final RateLimitedLog noisy = new RateLimitedLog(60_000);

    RecordApplier(String topic, MetadataConsumer consumer, Levels levels, Recovery recovery, BootstrapStats bootstrap) {
        this.topic = topic;
        this.consumer = consumer;
        this.levels = levels;
        this.recovery = recovery;
        this.bootstrap = bootstrap;
        for (int i = 0; i < counters.length; i++) {
            counters[i] = new AtomicLong();
        }
    }

    /** How many consumed records had this outcome. */
    long count(byte outcome) {
        return outcome >= 0 && outcome < counters.length ? counters[outcome].get() : 0;
    }

    /** The core's name of an outcome code (its one table), or "outcome-N" for a code it does not name. */
    static String outcomeName(byte code) {
        String name = Outcome.name(code);
        return name != null ? name : "outcome-" + code;
    }

    /**
     * Applies one metadata partition's records of a poll, in chunks of at most {@link #APPLY_CHUNK}
     * records per call: the store's write lock is held for one chunk at a time, so lookups wait at
     * most for one chunk, never for a whole large poll (a prefix of a partition's records, in
     * offset order, is a state the store passes through anyway).
     */
    void apply(int mp, List<ConsumerRecord<byte[], byte[]>> records) {
        int n = records.size();
        long[] offsets = new long[n];
        byte[] outcomes = new byte[n];
        for (int from = 0; from < n; from += APPLY_CHUNK) {
            int to = Math.min(n, from + APPLY_CHUNK);
            try {
                applyChunk(mp, records, from, to, n, offsets, outcomes);
                recovery.appliedThrough(mp, records.get(to - 1).offset());
            } catch (RuntimeException e) {
                long a = records.get(from).offset();
                long b = records.get(to - 1).offset();
                throw new Recovery.ApplyFailed("applying " + topic + "-" + mp + " offsets " + a + ".." + b + " failed", e,
                        mp, a, b);
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
        TestFaults f = consumer.faults; // one volatile read: null on a broker
        if (f != null) {
            f.beforeApply(topic, mp, from, n, batch);
        }
        long t0 = System.nanoTime();
        // no lock of ours: the store serializes applies and lets lookups run in parallel
        byte[] outcomes = consumer.store().apply(offsets, data, keyLengths, valueLengths);
        if (!bootstrap.done()) {
            bootstrap.core(System.nanoTime() - t0);
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
                    levels.setLevel(mp, code - Outcome.LEVEL_0, offsets[i]);
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
        consumer.dirty = true;
    }

    /** The dump's "counters" object: every outcome by name. */
    String countersJson() {
        StringBuilder sb = new StringBuilder("{");
        for (byte c = 0; c < counters.length; c++) {
            sb.append(c == 0 ? "" : ",").append('"').append(outcomeName(c)).append("\":").append(counters[c].get());
        }
        return sb.append('}').toString();
    }
}
