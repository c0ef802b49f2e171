package dev.rlmeta.bench;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.bench.ApplyBenchmark.Rec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Lookup latency while a large bootstrap is applied (not a test; {@code make bench-lookups}): the
 * plugin's locking before and after issue 19, on the real store and ApplyBenchmark's history (20
 * partitions, {@code segments} segments each: 13,900 give 1,092,000 records) replayed
 * {@code replays} times, each into a fresh store (a bootstrap), in one JVM without Kafka. The
 * "before" is the old code path reproduced here, not the old jar: the plugin at 7946944 held one
 * monitor (storeLock) around each poll's whole apply (MetadataConsumer.apply) and around every
 * lookup; that is what {@code global-lock} does.
 *
 * <ul>
 *   <li>{@code global-lock} (before): one monitor held around each poll's whole apply and around
 *       every lookup, as the plugin's storeLock was.</li>
 *   <li>{@code store-lock} (after): no lock of the host's; the store's read-write lock only, and the
 *       poll applied in chunks of {@code chunk} records per call.</li>
 * </ul>
 *
 * <p>One thread replays the history into a fresh store in polls of {@code poll} records (arrays
 * prepared beforehand, as the consumer prepares them), while {@code readers} threads call
 * {@code segmentFor} on random initialized partitions, one every 200 us each; each lookup's time
 * from when it was due to its answer is recorded (so a lookup held up by a lock counts for every
 * lookup queued behind it: no coordinated omission). Printed: lookups, p50, p99, p99.9, max, and the replay's wall time. A warm-up round of
 * each mode runs first. Arguments: poll, chunk, readers, and optionally segments (default 2,500:
 * about 180,000 records) and replays (default 8).
 */
public final class LookupLatencyBenchmark {
    static final long MSB = 0x0123456789abcdefL;
    static final long LSB = 0x7edcba9876543210L;
    static final String TOPIC = "orders.events-eu-west";
    /** One lookup per reader every 200 us (5,000 a second each), each timed from when it was due. */
    static final long INTERVAL_NS = 200_000;

    record Call(long[] offsets, byte[] data, int[] keys, int[] values) {}

    public static void main(String[] args) throws Exception {
        int poll = Integer.parseInt(args[0]);
        int chunk = Integer.parseInt(args[1]);
        int readers = Integer.parseInt(args[2]);
        segments = args.length > 3 ? Integer.parseInt(args[3]) : ApplyBenchmark.SEGMENTS;
        replays = args.length > 4 ? Integer.parseInt(args[4]) : 8;
        List<Rec> history = ApplyBenchmark.history(segments);
        List<List<Call>> whole = polls(history, poll, poll);
        List<List<Call>> chunked = polls(history, poll, chunk);
        System.out.printf("[bench] %d records (%d partitions of %d segments) replayed %d times, each into a fresh store, "
                + "in polls of %d; %d reader thread(s); chunks of %d after%n", history.size(), ApplyBenchmark.PARTITIONS,
                segments, replays, poll, readers, chunk);
        for (int round = 0; round < 2; round++) {
            String warm = round == 0 ? " (warm-up)" : "";
            run("global-lock" + warm, whole, readers, true);
            run("store-lock" + warm, chunked, readers, false);
        }
    }

    static List<List<Call>> polls(List<Rec> history, int poll, int chunk) {
        List<List<Call>> out = new ArrayList<>();
        for (int from = 0; from < history.size(); from += poll) {
            int to = Math.min(history.size(), from + poll);
            List<Call> calls = new ArrayList<>();
            for (int c = from; c < to; c += chunk) {
                calls.add(call(history, c, Math.min(to, c + chunk)));
            }
            out.add(calls);
        }
        return out;
    }

    static Call call(List<Rec> history, int from, int to) {
        int n = to - from;
        long[] offsets = new long[n];
        int[] keys = new int[n];
        int[] values = new int[n];
        int size = 0;
        for (int i = from; i < to; i++) {
            size += history.get(i).key().length + history.get(i).value().length;
        }
        byte[] data = new byte[size];
        int at = 0;
        for (int i = 0; i < n; i++) {
            Rec r = history.get(from + i);
            offsets[i] = from + i;
            keys[i] = r.key().length;
            System.arraycopy(r.key(), 0, data, at, r.key().length);
            at += r.key().length;
            values[i] = r.value().length;
            System.arraycopy(r.value(), 0, data, at, r.value().length);
            at += r.value().length;
        }
        return new Call(offsets, data, keys, values);
    }

    static void run(String mode, List<List<Call>> polls, int readers, boolean globalLock) throws Exception {
        Object lock = new Object();
        java.util.concurrent.atomic.AtomicReference<MetadataStore> current = new java.util.concurrent.atomic.AtomicReference<>(
                fresh());
        {
            long[][] samples = new long[readers][2_000_000];
            int[] counts = new int[readers];
            java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                int me = r;
                Thread t = new Thread(() -> {
                    SplittableRandom random = new SplittableRandom(me);
                    long next = System.nanoTime();
                    while (!done.get() && counts[me] < samples[me].length) {
                        int p = random.nextInt(ApplyBenchmark.PARTITIONS);
                        long offset = random.nextLong(segments * 1_000L);
                        // a lookup every INTERVAL_NS, timed from when it was due (no coordinated
                        // omission: a lookup held up delays the ones due after it, and they count it)
                        next += INTERVAL_NS;
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        }
                        long t0 = next;
                        MetadataStore store = current.get();
                        try {
                            if (globalLock) {
                                synchronized (lock) {
                                    store.segmentFor(MSB, LSB, p, (int) (offset / 100_000), offset);
                                }
                            } else {
                                store.segmentFor(MSB, LSB, p, (int) (offset / 100_000), offset);
                            }
                        } catch (IllegalStateException replaced) {
                            // the store of a finished replay, closed meanwhile: timed all the same
                        }
                        samples[me][counts[me]++] = System.nanoTime() - t0;
                    }
                });
                threads.add(t);
                t.start();
            }
            long t0 = System.nanoTime();
            for (int replay = 0; replay < replays; replay++) {
                MetadataStore store = replay == 0 ? current.get() : fresh();
                MetadataStore old = current.getAndSet(store);
                if (old != store) {
                    old.close();
                }
                for (List<Call> poll : polls) {
                    if (globalLock) {
                        synchronized (lock) {
                            for (Call c : poll) {
                                store.apply(c.offsets(), c.data(), c.keys(), c.values());
                            }
                        }
                    } else {
                        for (Call c : poll) {
                            store.apply(c.offsets(), c.data(), c.keys(), c.values());
                        }
                    }
                }
            }
            long replay = System.nanoTime() - t0;
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
            current.get().close();
            int total = Arrays.stream(counts).sum();
            long[] all = new long[total];
            int at = 0;
            for (int r = 0; r < readers; r++) {
                System.arraycopy(samples[r], 0, all, at, counts[r]);
                at += counts[r];
            }
            Arrays.sort(all);
            System.out.printf("[bench] %-22s replay %7.1f ms; %8d lookups: p50 %7.1f us, p99 %8.1f us, p99.9 %8.1f us, "
                    + "max %8.1f us%n", mode, replay / 1e6, total, pct(all, 0.50), pct(all, 0.99), pct(all, 0.999),
                    all.length == 0 ? 0 : all[all.length - 1] / 1e3);
        }
    }

    static int segments;
    static int replays;

    static MetadataStore fresh() {
        MetadataStore store = new MetadataStore();
        for (int p = 0; p < ApplyBenchmark.PARTITIONS; p++) {
            store.loadPartition(MSB, LSB, TOPIC, p);
            store.markInitialized(MSB, LSB, TOPIC, p);
        }
        return store;
    }

    static double pct(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))] / 1e3;
    }
}
