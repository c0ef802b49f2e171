package dev.rlmeta.bench;

import dev.rlmeta.MetadataStore;
import dev.rlmeta.Outcome;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

/**
 * The cost of {@link MetadataStore#apply} per record, batched as a consumer poll hands records over
 * (not a test; {@code make bench-jni}). A deterministic history is built with Kafka 4.4.0's own
 * serde (KIP-1266 keys, version-0 values: what a broker writes) and written to a file, so that the
 * core alone can be timed on exactly the same bytes ({@code bindings-c/benches/apply.rs}).
 *
 * <p>Each round replays the whole history into a fresh store, one {@code apply} call per batch;
 * only the apply calls are timed, in this thread's CPU time (the arrays are prepared beforehand,
 * as the consumer's records are). Warm-up rounds first, then the median and the fastest of the measured rounds.
 *
 * <p>A second workload, as many level records, leaves little but the boundary's own cost.
 *
 * <p>Arguments: directory for the record files, batch size, measured rounds.
 */
public final class ApplyBenchmark {
    /** This thread's CPU time: time the scheduler gives the machine's other processes is not counted. */
    static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    static final int PARTITIONS = 20;
    static final int SEGMENTS = 2_500;
    static final int LIVE = 500;

    record Rec(byte[] key, byte[] value) {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        int batchSize = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        List<Rec> history = history();
        bench("history", history, dir.resolve("history.bin"), batchSize, rounds, Outcome.APPLIED);
        // The core's cheapest record (a level record: one comparison, one digit), as many as the
        // history has: what is left is the boundary's own cost per record.
        Rec level = new Rec("remote.log.metadata.version".getBytes(StandardCharsets.UTF_8), new byte[] {'2'});
        bench("levels", java.util.Collections.nCopies(history.size(), level), dir.resolve("levels.bin"), batchSize,
                rounds * 10, Outcome.LEVEL_2);
    }

    static void bench(String name, List<Rec> records, Path file, int batchSize, int rounds, byte expected)
            throws IOException {
        write(file, records);
        long bytes = records.stream().mapToLong(r -> r.key.length + r.value.length).sum();
        // One poll batch = the packed arrays MetadataStore.apply takes.
        List<Object[]> batches = new ArrayList<>();
        for (int from = 0; from < records.size(); from += batchSize) {
            int n = Math.min(batchSize, records.size() - from);
            long[] offsets = new long[n];
            int[] keys = new int[n];
            int[] values = new int[n];
            ByteArrayOutputStream data = new ByteArrayOutputStream();
            for (int i = 0; i < n; i++) {
                Rec r = records.get(from + i);
                offsets[i] = from + i;
                keys[i] = r.key.length;
                values[i] = r.value.length;
                data.writeBytes(r.key);
                data.writeBytes(r.value);
            }
            batches.add(new Object[] {offsets, data.toByteArray(), keys, values});
        }

        int warmup = Math.max(5, rounds / 2);
        long[] times = new long[rounds];
        for (int round = -warmup; round < rounds; round++) {
            try (MetadataStore store = new MetadataStore()) {
                long applied = 0;
                long t0 = CPU.getCurrentThreadCpuTime();
                for (Object[] b : batches) {
                    byte[] out = store.apply((long[]) b[0], (byte[]) b[1], (int[]) b[2], (int[]) b[3]);
                    for (byte o : out) if (o == expected) applied++;
                }
                long t = CPU.getCurrentThreadCpuTime() - t0;
                if (applied != records.size()) {
                    throw new IllegalStateException(name + ": only " + applied + " of " + records.size() + " records as expected");
                }
                if (round >= 0) times[round] = t;
            }
        }
        Arrays.sort(times);
        double n = records.size();
        System.out.printf("jni MetadataStore.apply, %s: %d records (%.1f MB), batches of %d, %d rounds after %d warm-up: "
                        + "median %.1f ns/record, fastest %.1f ns/record (thread CPU time)%n",
                name, records.size(), bytes / 1e6, batchSize, rounds, warmup, times[rounds / 2] / n, times[0] / n);
    }

    /** Every segment of every partition uploaded, all but the newest LIVE deleted, interleaved. */
    static List<Rec> history() {
        return history(SEGMENTS);
    }

    /** As {@link #history()} with `segments` segments a partition (20 * (4 * segments - 2 * LIVE) records). */
    static List<Rec> history(int segments) {
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        Uuid topicId = new Uuid(0x0123456789abcdefL, 0x7edcba9876543210L);
        String topic = "orders.events-eu-west";
        List<Rec> out = new ArrayList<>();
        for (int s = 0; s < segments; s++) {
            for (int p = 0; p < PARTITIONS; p++) {
                TopicIdPartition tp = new TopicIdPartition(topicId, new TopicPartition(topic, p));
                out.add(segment(serde, tp, s, RemoteLogSegmentState.COPY_SEGMENT_STARTED));
                out.add(segment(serde, tp, s, RemoteLogSegmentState.COPY_SEGMENT_FINISHED));
                if (s >= LIVE) {
                    out.add(segment(serde, tp, s - LIVE, RemoteLogSegmentState.DELETE_SEGMENT_STARTED));
                    out.add(segment(serde, tp, s - LIVE, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED));
                }
            }
        }
        return out;
    }

    static Rec segment(RemoteLogMetadataSerde serde, TopicIdPartition tp, int s, RemoteLogSegmentState state) {
        int p = tp.partition();
        RemoteLogSegmentId id = new RemoteLogSegmentId(tp, new Uuid((long) p << 32 | s, s * 0x9e3779b97f4a7c15L));
        long start = s * 1_000L;
        long end = start + 999;
        int epoch = s / 100;
        long ts = 1_700_000_000_000L + s * 60_000L;
        RemoteLogMetadata m = state == RemoteLogSegmentState.COPY_SEGMENT_STARTED
                ? new RemoteLogSegmentMetadata(id, start, end, ts, 1, ts, 1 << 30, Optional.empty(), state,
                        Map.of(epoch, start))
                : new RemoteLogSegmentMetadataUpdate(id, ts + 1 + state.id(), Optional.empty(), state, 1);
        String key = tp.topicId() + ":" + tp.topic() + ":" + p + ":" + end + ":" + epoch
                + (state == RemoteLogSegmentState.COPY_SEGMENT_STARTED ? "" : ":UPDATE");
        return new Rec(key.getBytes(StandardCharsets.UTF_8), serde.serialize(m));
    }

    /** The history as the core benchmark reads it: "RLMB1", count, then offset, key and value lengths and bytes. */
    static void write(Path file, List<Rec> history) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
            out.writeBytes("RLMB1");
            out.writeInt(history.size());
            for (int i = 0; i < history.size(); i++) {
                Rec r = history.get(i);
                out.writeLong(i);
                out.writeInt(r.key.length);
                out.writeInt(r.value.length);
                out.write(r.key);
                out.write(r.value);
            }
        }
    }
}
