package dev.rlmeta.bench;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.PackedValues;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.KafkaStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.RemotePartitionMetadataStore;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

/**
 * The cost of one {@code listRemoteLogSegments} call, the plugin's against Kafka 4.4.0's own store,
 * on the same partition (not a test; {@code make bench-listing}). Kafka's broker lists every remote
 * segment of each partition it leads every 30 s (the RLM expiration task: {@code
 * listRemoteLogSegments(tp)} iterated to the end to count segments and bytes, then {@code
 * listRemoteLogSegments(tp, epoch)} per leader epoch, read until the first segment that retention
 * keeps), so the cost per listed segment is the idle broker's cost per live segment.
 *
 * <p>One partition with {@code segments} live segments (copied, finished; four leader epochs) is
 * replayed into a {@link MetadataStore} and into Kafka's {@code RemotePartitionMetadataStore}
 * (what {@code TopicBasedRemoteLogMetadataManager} answers from: a map of objects, listed as a
 * view of its values). Then each way of listing runs {@code calls} times per round, timed in this
 * thread's CPU time (the machine's other load is not counted), median and fastest of the rounds:
 * <ul>
 *   <li>{@code stock}: Kafka's store, the iterator walked to the end (each segment's size read).</li>
 *   <li>{@code plugin before}: the plugin as it was: {@link MetadataStore#segments} (one Java array
 *       per segment) and every value deserialized with Kafka's serde before the iterator is handed
 *       back (the plugin's code path reproduced here, as in {@code LookupLatencyBenchmark}).</li>
 *   <li>{@code plugin after}: {@link MetadataStore#packedSegments} (a few 64 KiB arrays for the listing) and
 *       each value deserialized as the iterator reaches it (the plugin's {@code SegmentIterator}).</li>
 *   <li>the parts: the native call alone (array of arrays, packed) and the serde alone.</li>
 *   <li>{@link MetadataStore#segmentCount}: what the plugin's {@code Segments} metric now calls per held
 *       partition (it called the array-of-arrays listing and took its length).</li>
 * </ul>
 * Each way runs to the end, and (the epoch listing) only to its first segment, as the expiration
 * task's retention loop reads it on a partition that retention keeps whole.
 *
 * <p>Then how long an apply waits for the store while listings run: one thread calls the native
 * listing of the partition once a millisecond (what holds the store's read lock), another applies a
 * one-record batch every 200 us; each apply call timed (wall time: the wait for the write lock, the
 * apply, and whatever the machine's other load takes), against the same applies with no listing.
 *
 * <p>Arguments: segments (comma-separated sizes), calls per round, rounds.
 */
public final class ListingBenchmark {
    static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    static final Uuid TOPIC_ID = new Uuid(0x0123456789abcdefL, 0x7edcba9876543210L);
    static final TopicIdPartition TP = new TopicIdPartition(TOPIC_ID, new TopicPartition("orders.events-eu-west", 7));
    static final long MSB = TOPIC_ID.getMostSignificantBits();
    static final long LSB = TOPIC_ID.getLeastSignificantBits();
    static final int EPOCHS = 4;
    static volatile long sink;
    /** The listing thread lists once a millisecond (back to back, it would take a core of two from the applies). */
    static final long LIST_INTERVAL_NS = 1_000_000;

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        System.out.printf("[bench] listRemoteLogSegments per call: thread CPU time, %d calls a round, median (fastest) of %d "
                + "rounds after %d warm-up rounds; %s, %d CPUs%n", calls, rounds, 2 * rounds, System.getProperty("java.vm.name")
                + " " + Runtime.version(), Runtime.getRuntime().availableProcessors());
        for (String n : args[0].split(",")) {
            run(Integer.parseInt(n.trim()), calls, rounds);
        }
    }

    static void run(int n, int calls, int rounds) throws Exception {
        List<RemoteLogMetadata> history = history(n);
        RemotePartitionMetadataStore kafka = new RemotePartitionMetadataStore();
        kafka.maybeLoadPartition(TP);
        for (RemoteLogMetadata m : history) {
            kafka.handleRemoteLogMetadata(m);
        }
        kafka.markInitialized(TP);
        try (MetadataStore store = new MetadataStore()) {
            store.loadPartition(MSB, LSB, TP.topic(), TP.partition());
            long offset = 0;
            for (RemoteLogMetadata m : history) {
                byte[] value = SERDE.serialize(m); // a null key: the stock format
                store.apply(new long[] {offset++}, value, new int[] {-1}, new int[] {value.length});
            }
            store.markInitialized(MSB, LSB, TP.topic(), TP.partition());
            int last = EPOCHS - 1;
            check(n, kafka, store, last);
            int inEpoch = KafkaStoreAccess.segments(kafka, TP, last).size();
            System.out.printf("[bench] %d live segments, %d of them in epoch %d (%d records replayed)%n", n, inEpoch, last,
                    history.size());

            time("stock listRemoteLogSegments(tp)", n, calls, rounds, () -> walk(KafkaStoreAccess.iterator(kafka, TP)));
            time("plugin before (tp)", n, calls, rounds, () -> walk(before(store.segments(MSB, LSB, 7))));
            time("plugin after (tp)", n, calls, rounds, () -> walk(after(store.packedSegments(MSB, LSB, 7))));
            time("  native byte[][] (tp)", n, calls, rounds, () -> store.segments(MSB, LSB, 7).length);
            time("  segmentCount (tp): the Segments metric's count", n, calls, rounds,
                    () -> store.segmentCount(MSB, LSB, 7));
            time("  native packed (tp)", n, calls, rounds, () -> {
                PackedValues v = store.packedSegments(MSB, LSB, 7);
                return v.hasNext() ? 1 : 0;
            });
            byte[][] values = store.segments(MSB, LSB, 7);
            time("  serde alone (tp)", n, calls, rounds, () -> {
                long s = 0;
                for (byte[] b : values) s += ((RemoteLogSegmentMetadata) SERDE.deserialize(b)).segmentSizeInBytes();
                return s;
            });
            time("stock listRemoteLogSegments(tp, epoch)", inEpoch, calls, rounds,
                    () -> walk(KafkaStoreAccess.iterator(kafka, TP, last)));
            time("plugin before (tp, epoch)", inEpoch, calls, rounds,
                    () -> walk(before(store.segmentsForEpoch(MSB, LSB, 7, last))));
            time("plugin after (tp, epoch)", inEpoch, calls, rounds,
                    () -> walk(after(store.packedSegmentsForEpoch(MSB, LSB, 7, last))));
            time("stock (tp, epoch), first only", inEpoch, calls, rounds,
                    () -> KafkaStoreAccess.iterator(kafka, TP, last).next().segmentSizeInBytes());
            time("plugin before (tp, epoch), first only", inEpoch, calls, rounds,
                    () -> before(store.segmentsForEpoch(MSB, LSB, 7, last)).next().segmentSizeInBytes());
            time("plugin after (tp, epoch), first only", inEpoch, calls, rounds,
                    () -> after(store.packedSegmentsForEpoch(MSB, LSB, 7, last)).next().segmentSizeInBytes());

            applyWait(store, "no listing", null);
            applyWait(store, "listing byte[][] (before)", () -> store.segments(MSB, LSB, 7).length);
            applyWait(store, "listing packed (after)", () -> store.packedSegments(MSB, LSB, 7).hasNext() ? 1 : 0);
        }
    }

    /** The plugin's listing before: every value deserialized, then the list's iterator. */
    static Iterator<RemoteLogSegmentMetadata> before(byte[][] all) {
        List<RemoteLogSegmentMetadata> out = new ArrayList<>(all.length);
        for (byte[] b : all) {
            out.add((RemoteLogSegmentMetadata) SERDE.deserialize(b));
        }
        return out.iterator();
    }

    /** The plugin's listing after (its SegmentIterator): each value deserialized when reached. */
    static Iterator<RemoteLogSegmentMetadata> after(PackedValues values) {
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return values.hasNext();
            }

            @Override
            public RemoteLogSegmentMetadata next() {
                return (RemoteLogSegmentMetadata) SERDE.deserialize(values.next());
            }
        };
    }

    static long walk(Iterator<RemoteLogSegmentMetadata> it) {
        long size = 0;
        while (it.hasNext()) {
            size += it.next().segmentSizeInBytes();
        }
        return size;
    }

    interface Call {
        long run() throws Exception;
    }

    static void time(String name, int segments, int calls, int rounds, Call call) throws Exception {
        long[] times = new long[rounds];
        for (int round = -2 * rounds; round < rounds; round++) {
            long t0 = CPU.getCurrentThreadCpuTime();
            long s = 0;
            for (int i = 0; i < calls; i++) {
                s += call.run();
            }
            long t = CPU.getCurrentThreadCpuTime() - t0;
            sink += s;
            if (round >= 0) times[round] = t;
        }
        Arrays.sort(times);
        double median = times[rounds / 2] / (double) calls;
        double fastest = times[0] / (double) calls;
        System.out.printf("[bench]   %-40s %9.1f us/call (%8.1f)  %7.1f ns/segment (%d segments)%n", name, median / 1e3,
                fastest / 1e3, median / Math.max(1, segments), segments);
    }

    /** Applies (one record each, one every 200 us, for 2 s), each call timed, while {@code lister} runs. */
    static void applyWait(MetadataStore store, String name, ToLongFunctionCall lister) throws Exception {
        AtomicBoolean done = new AtomicBoolean();
        long[] listings = new long[1];
        Thread t = new Thread(() -> {
            long s = 0;
            long due = System.nanoTime();
            while (!done.get()) {
                due += LIST_INTERVAL_NS;
                long wait = due - System.nanoTime();
                if (wait > 0) LockSupport.parkNanos(wait);
                s += lister.run();
                listings[0]++;
            }
            sink += s;
        });
        if (lister != null) t.start();
        byte[] key = "remote.log.metadata.version".getBytes(StandardCharsets.UTF_8);
        byte[] data = new byte[key.length + 1];
        System.arraycopy(key, 0, data, 0, key.length);
        data[key.length] = '2';
        int n = 10_000;
        long[] waits = new long[n];
        long next = System.nanoTime();
        for (int i = 0; i < n; i++) {
            next += 200_000;
            long wait = next - System.nanoTime();
            if (wait > 0) LockSupport.parkNanos(wait);
            long t0 = System.nanoTime();
            store.apply(new long[] {1_000_000L + i}, data, new int[] {key.length}, new int[] {1});
            waits[i] = System.nanoTime() - t0;
        }
        done.set(true);
        if (lister != null) t.join();
        Arrays.sort(waits);
        System.out.printf("[bench]   apply, %-28s %d applies: p50 %7.1f us, p99 %7.1f us, p99.9 %8.1f us, max %8.1f us"
                + " (%d listings meanwhile)%n", name + ":", n, waits[n / 2] / 1e3, waits[n * 99 / 100] / 1e3,
                waits[n * 999 / 1000] / 1e3, waits[n - 1] / 1e3, listings[0]);
    }

    interface ToLongFunctionCall {
        long run();
    }

    /** Both stores list the same segments, in the same order for the epoch; the packed listing equals the arrays. */
    static void check(int n, RemotePartitionMetadataStore kafka, MetadataStore store, int epoch) throws Exception {
        List<RemoteLogSegmentMetadata> all = KafkaStoreAccess.segments(kafka, TP);
        List<RemoteLogSegmentMetadata> ours = new ArrayList<>();
        after(store.packedSegments(MSB, LSB, 7)).forEachRemaining(ours::add);
        if (all.size() != n || !new java.util.HashSet<>(all).equals(new java.util.HashSet<>(ours)) || ours.size() != n) {
            throw new IllegalStateException("the stores disagree on the listing");
        }
        List<RemoteLogSegmentMetadata> e = new ArrayList<>();
        after(store.packedSegmentsForEpoch(MSB, LSB, 7, epoch)).forEachRemaining(e::add);
        if (!KafkaStoreAccess.segments(kafka, TP, epoch).equals(e)) {
            throw new IllegalStateException("the stores disagree on the epoch listing");
        }
    }

    /** {@code n} segments of {@link #TP}, each copied then finished, four leader epochs in turn. */
    static List<RemoteLogMetadata> history(int n) {
        List<RemoteLogMetadata> out = new ArrayList<>();
        for (int s = 0; s < n; s++) {
            RemoteLogSegmentId id = new RemoteLogSegmentId(TP, new Uuid(7L << 32 | s, s * 0x9e3779b97f4a7c15L));
            long start = s * 1_000L;
            int epoch = s * EPOCHS / n;
            long ts = 1_700_000_000_000L + s * 60_000L;
            out.add(new RemoteLogSegmentMetadata(id, start, start + 999, ts, 1, ts, 1 << 30, Optional.empty(),
                    RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(epoch, start)));
            out.add(new RemoteLogSegmentMetadataUpdate(id, ts + 1, Optional.empty(),
                    RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1));
        }
        return out;
    }
}
