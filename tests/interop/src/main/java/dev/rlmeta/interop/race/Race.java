package dev.rlmeta.interop.race;

import java.io.BufferedWriter;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.DiffStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.RemotePartitionMetadataStore;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

/**
 * Kafka 4.4.0's side of the replay race (tests/interop/race/run.sh, {@code make bench-kafka}).
 *
 * <ul>
 *   <li>{@code gen SHAPE SEED FILE}: writes a history of one metadata partition (50 user partitions)
 *       with Kafka's own model classes and {@link RemoteLogMetadataSerde}, plus the random live
 *       offsets both sides look up. SHAPE {@code one}: one leader epoch per segment, a leadership
 *       change every 300-700 segments; {@code three}: three leader epochs per segment.
 *   <li>{@code warm FILE ROUNDS STATE_OUT}: in one JVM, several rounds of decode only and of decode +
 *       apply into {@link RemotePartitionMetadataStore} (the first rounds warm the JIT and are not
 *       reported), random lookups, the heap held by the store (two live-object histograms), and the
 *       final state and every lookup's answer written to STATE_OUT.
 *   <li>{@code cold FILE}: one pass of decode + apply in this fresh JVM (what a restart does).
 * </ul>
 * Results are lines {@code RESULT kafka SHAPE METRIC VALUE}. The file is little-endian:
 * "RLRACE01", partitions (topic id, name, number), values, then queries (partition, epoch, offset).
 */
public final class Race {
    static final int PARTITIONS = 50;
    static final int SEGMENTS = 5_878;
    static final int LIVE = 1_746;
    static final int QUERIES = 200_000;
    static final int WARMUP = 2;

    static Object sink;

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "gen": gen(args[1], Long.parseLong(args[2]), Path.of(args[3])); break;
            case "warm": warm(Path.of(args[1]), Integer.parseInt(args[2]), Path.of(args[3])); break;
            case "cold": cold(Path.of(args[1])); break;
            default: throw new IllegalArgumentException("usage: gen|warm|cold ...");
        }
    }

    // ------------------------------------------------------------------------- the history

    private static final class Seg {
        Uuid id;
        long start, end;
        TreeMap<Integer, Long> epochs = new TreeMap<>();
    }

    static void gen(String shape, long seed, Path file) throws IOException {
        if (!shape.equals("one") && !shape.equals("three")) throw new IllegalArgumentException("shape one|three");
        Random rnd = new Random(seed);
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        Uuid topicId = new Uuid(rnd.nextLong(), rnd.nextLong());
        TopicIdPartition[] tps = new TopicIdPartition[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) tps[p] = new TopicIdPartition(topicId, p, "orders.events-eu-west");
        List<List<Seg>> segs = new ArrayList<>();
        long[] next = new long[PARTITIONS];
        int[] epoch = new int[PARTITIONS];
        int[] untilChange = new int[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) {
            segs.add(new ArrayList<>());
            epoch[p] = rnd.nextInt(5);
            untilChange[p] = 300 + rnd.nextInt(401);
        }
        List<byte[]> values = new ArrayList<>(1_010_000);
        long clock = 1_700_000_000_000L;
        Integer[] order = new Integer[PARTITIONS];
        for (int p = 0; p < PARTITIONS; p++) order[p] = p;
        long bytes = 0;
        for (int s = 0; s < SEGMENTS; s++) {
            Collections.shuffle(Arrays.asList(order), rnd);
            for (int p : order) {
                Seg g = new Seg();
                g.id = new Uuid(rnd.nextLong(), rnd.nextLong());
                g.start = next[p];
                long len = 50_000 + rnd.nextInt(100_000);
                g.end = g.start + len - 1;
                next[p] = g.end + 1;
                if (shape.equals("one")) {
                    if (--untilChange[p] == 0) {
                        epoch[p]++;
                        untilChange[p] = 300 + rnd.nextInt(401);
                    }
                    g.epochs.put(epoch[p], g.start);
                } else {
                    // the segment's first epoch continues the previous segment's last one
                    g.epochs.put(epoch[p], g.start);
                    g.epochs.put(epoch[p] + 1, g.start + len / 3);
                    g.epochs.put(epoch[p] + 2, g.start + 2 * len / 3);
                    epoch[p] += 2;
                }
                segs.get(p).add(g);
                clock += rnd.nextInt(50);
                RemoteLogSegmentId id = new RemoteLogSegmentId(tps[p], g.id);
                values.add(serde.serialize(new RemoteLogSegmentMetadata(id, g.start, g.end, clock - rnd.nextInt(60_000),
                        rnd.nextInt(6), clock, 1 << 30, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                        g.epochs, rnd.nextInt(10) != 0)));
                values.add(serde.serialize(new RemoteLogSegmentMetadataUpdate(id, clock + 1, Optional.empty(),
                        RemoteLogSegmentState.COPY_SEGMENT_FINISHED, rnd.nextInt(6))));
                if (s >= LIVE) {
                    RemoteLogSegmentId old = new RemoteLogSegmentId(tps[p], segs.get(p).get(s - LIVE).id);
                    values.add(serde.serialize(new RemoteLogSegmentMetadataUpdate(old, clock + 2, Optional.empty(),
                            RemoteLogSegmentState.DELETE_SEGMENT_STARTED, rnd.nextInt(6))));
                    values.add(serde.serialize(new RemoteLogSegmentMetadataUpdate(old, clock + 3, Optional.empty(),
                            RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, rnd.nextInt(6))));
                }
            }
        }
        for (byte[] v : values) bytes += v.length;
        try (DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 20))) {
            out.write("RLRACE01".getBytes(StandardCharsets.US_ASCII));
            le32(out, PARTITIONS);
            for (TopicIdPartition tp : tps) {
                le64(out, tp.topicId().getMostSignificantBits());
                le64(out, tp.topicId().getLeastSignificantBits());
                byte[] name = tp.topic().getBytes(StandardCharsets.UTF_8);
                le32(out, name.length);
                out.write(name);
                le32(out, tp.partition());
            }
            le32(out, values.size());
            for (byte[] v : values) {
                le32(out, v.length);
                out.write(v);
            }
            le32(out, QUERIES);
            for (int q = 0; q < QUERIES; q++) {
                int p = rnd.nextInt(PARTITIONS);
                Seg g = segs.get(p).get(SEGMENTS - LIVE + rnd.nextInt(LIVE));
                List<Map.Entry<Integer, Long>> es = new ArrayList<>(g.epochs.entrySet());
                int i = rnd.nextInt(es.size());
                long from = es.get(i).getValue();
                long to = i + 1 < es.size() ? es.get(i + 1).getValue() - 1 : g.end;
                le32(out, p);
                le32(out, es.get(i).getKey());
                le64(out, from + (long) (rnd.nextDouble() * (to - from + 1)));
            }
        }
        System.out.printf("RESULT gen %s values %d%nRESULT gen %s bytes %d%nRESULT gen %s segments %d%nRESULT gen %s live %d%n",
                shape, values.size(), shape, bytes, shape, (long) PARTITIONS * SEGMENTS, shape, (long) PARTITIONS * LIVE);
    }

    private static void le32(OutputStream out, int v) throws IOException {
        out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array());
    }

    private static void le64(OutputStream out, long v) throws IOException {
        out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
    }

    // ------------------------------------------------------------------------- reading it back

    static final class History {
        String shape;
        TopicIdPartition[] tps;
        byte[][] values;
        int[] qPartition;
        int[] qEpoch;
        long[] qOffset;
    }

    static History load(Path file) throws IOException {
        ByteBuffer b;
        try (InputStream in = Files.newInputStream(file)) {
            b = ByteBuffer.wrap(in.readAllBytes()).order(ByteOrder.LITTLE_ENDIAN);
        }
        byte[] magic = new byte[8];
        b.get(magic);
        if (!new String(magic, StandardCharsets.US_ASCII).equals("RLRACE01")) throw new IOException("not a race file");
        History h = new History();
        String name = file.getFileName().toString();
        h.shape = name.contains("three") ? "three" : "one";
        h.tps = new TopicIdPartition[b.getInt()];
        for (int p = 0; p < h.tps.length; p++) {
            Uuid id = new Uuid(b.getLong(), b.getLong());
            byte[] n = new byte[b.getInt()];
            b.get(n);
            h.tps[p] = new TopicIdPartition(id, b.getInt(), new String(n, StandardCharsets.UTF_8));
        }
        h.values = new byte[b.getInt()][];
        for (int i = 0; i < h.values.length; i++) {
            h.values[i] = new byte[b.getInt()];
            b.get(h.values[i]);
        }
        int q = b.getInt();
        h.qPartition = new int[q];
        h.qEpoch = new int[q];
        h.qOffset = new long[q];
        for (int i = 0; i < q; i++) {
            h.qPartition[i] = b.getInt();
            h.qEpoch[i] = b.getInt();
            h.qOffset[i] = b.getLong();
        }
        return h;
    }

    // ------------------------------------------------------------------------- Kafka's replay

    /** Decode only: Kafka's serde builds each value's object. */
    static void decode(History h, RemoteLogMetadataSerde serde) {
        Object last = null;
        for (byte[] v : h.values) last = serde.deserialize(v);
        sink = last;
    }

    /** Decode + apply as ConsumerTask does: load every assigned partition, skip re-deliveries. */
    static RemotePartitionMetadataStore replay(History h, RemoteLogMetadataSerde serde) {
        RemotePartitionMetadataStore store = new RemotePartitionMetadataStore();
        for (TopicIdPartition tp : h.tps) store.maybeLoadPartition(tp);
        Map<TopicIdPartition, Long> lastApplied = new HashMap<>();
        long offset = 0;
        for (byte[] v : h.values) {
            RemoteLogMetadata m = serde.deserialize(v);
            TopicIdPartition tp = m.topicIdPartition();
            Long last = lastApplied.get(tp);
            if (last == null || offset > last) {
                store.handleRemoteLogMetadata(m);
                lastApplied.put(tp, offset);
            }
            offset++;
        }
        for (TopicIdPartition tp : h.tps) store.markInitialized(tp);
        return store;
    }

    static long lookups(History h, RemotePartitionMetadataStore store) throws Exception {
        long found = 0;
        for (int i = 0; i < h.qOffset.length; i++) {
            if (DiffStoreAccess.remoteLogSegmentMetadata(store, h.tps[h.qPartition[i]], h.qOffset[i], h.qEpoch[i]).isPresent()) found++;
        }
        return found;
    }

    static void result(History h, String metric, double value) {
        System.out.printf("RESULT kafka %s %s %.3f%n", h.shape, metric, value);
    }

    static void warm(Path file, int rounds, Path stateOut) throws Exception {
        History h = load(file);
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        long bytes = 0;
        for (byte[] v : h.values) bytes += v.length;
        for (int r = 0; r < WARMUP + rounds; r++) {
            long t0 = System.nanoTime();
            decode(h, serde);
            long t1 = System.nanoTime();
            if (r >= WARMUP) {
                result(h, "decode_mb_s", bytes / ((t1 - t0) / 1e9) / 1e6);
                result(h, "decode_mrec_s", h.values.length / ((t1 - t0) / 1e9) / 1e6);
            }
        }
        RemotePartitionMetadataStore store = null;
        for (int r = 0; r < WARMUP + rounds; r++) {
            store = null;
            long t0 = System.nanoTime();
            store = replay(h, serde);
            long t1 = System.nanoTime();
            if (r >= WARMUP) result(h, "replay_mrec_s", h.values.length / ((t1 - t0) / 1e9) / 1e6);
        }
        for (int r = 0; r < WARMUP + rounds; r++) {
            long t0 = System.nanoTime();
            long found = lookups(h, store);
            long t1 = System.nanoTime();
            if (found != h.qOffset.length) throw new IllegalStateException("a live offset was not found");
            if (r >= WARMUP) result(h, "lookup_ns", (double) (t1 - t0) / h.qOffset.length);
        }
        long live = writeState(h, store, stateOut);
        // The heap the store holds: live objects with the store minus without it (same JVM, same values).
        long with = liveHeap();
        sink = store;
        store = null;
        sink = null;
        long without = liveHeap();
        result(h, "bytes_per_live_segment", (double) (with - without) / live);
        result(h, "live_segments", live);
    }

    static void cold(Path file) throws Exception {
        History h = load(file);
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        long t0 = System.nanoTime();
        RemotePartitionMetadataStore store = replay(h, serde);
        long t1 = System.nanoTime();
        sink = store;
        result(h, "first_pass_ms", (t1 - t0) / 1e6);
    }

    /** Bytes of live objects on the heap, from `jcmd PID GC.class_histogram` (which runs a full GC first). */
    static long liveHeap() throws Exception {
        Process p = new ProcessBuilder("jcmd", Long.toString(ProcessHandle.current().pid()), "GC.class_histogram")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) throw new IllegalStateException("jcmd failed: " + out);
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && f[0].equals("Total")) return Long.parseLong(f[2]);
        }
        throw new IllegalStateException("no Total line in the class histogram: " + out);
    }

    /** Every live segment (partition, offsets, state, epochs, id), every epoch's highest offset, every lookup's answer. */
    static long writeState(History h, RemotePartitionMetadataStore store, Path out) throws Exception {
        long live = 0;
        try (BufferedWriter w = Files.newBufferedWriter(out)) {
            for (int p = 0; p < h.tps.length; p++) {
                TopicIdPartition tp = h.tps[p];
                int maxEpoch = -1;
                Iterator<RemoteLogSegmentMetadata> it = DiffStoreAccess.listRemoteLogSegments(store, tp);
                while (it.hasNext()) {
                    RemoteLogSegmentMetadata m = it.next();
                    live++;
                    StringBuilder epochs = new StringBuilder();
                    for (Map.Entry<Integer, Long> e : m.segmentLeaderEpochs().entrySet()) {
                        epochs.append(e.getKey()).append('=').append(e.getValue()).append(',');
                        maxEpoch = Math.max(maxEpoch, e.getKey());
                    }
                    w.write("segment " + p + " " + m.startOffset() + " " + m.endOffset() + " " + m.state().id() + " "
                            + m.remoteLogSegmentId().id() + " " + epochs + "\n");
                }
                for (int e = -1; e <= maxEpoch + 1; e++) {
                    Optional<Long> hi = DiffStoreAccess.highestLogOffset(store, tp, e);
                    w.write("highest " + p + " " + e + " " + (hi.isPresent() ? hi.get().toString() : "none") + "\n");
                }
            }
            for (int i = 0; i < h.qOffset.length; i++) {
                Optional<RemoteLogSegmentMetadata> m =
                        DiffStoreAccess.remoteLogSegmentMetadata(store, h.tps[h.qPartition[i]], h.qOffset[i], h.qEpoch[i]);
                w.write("lookup " + i + " " + (m.isPresent() ? m.get().remoteLogSegmentId().id().toString() : "none") + "\n");
            }
        }
        return live;
    }
}
