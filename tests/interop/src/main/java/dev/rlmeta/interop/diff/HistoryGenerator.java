package dev.rlmeta.interop.diff;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/**
 * One random history of one metadata partition (1-3 user partitions), deterministic for its seed.
 *
 * <p>The history is made the way brokers would write it, then roughened: uploads
 * (COPY_SEGMENT_STARTED, then COPY_SEGMENT_FINISHED now, later or never) of segments carrying 1-3
 * leader epochs; leader changes, some with unclean truncation so that later uploads overlap earlier
 * ones; duplicate and overlapping uploads under new segment ids; failed copies, cleaned up later or
 * not, retried by the same epoch under a new id; retention deletions (oldest first) and deletions
 * out of order, finished now, later or never; invalid transitions, self transitions, updates to
 * COPY_SEGMENT_STARTED, COPY_SEGMENT_STARTED segment records again for a known id (same or other
 * offsets), segment records in other states; updates for unknown or already removed segments;
 * markInitialized at a random point per partition (or never); partition deletion (MARKED /
 * STARTED / FINISHED in several orders; after FINISHED no record of that partition is written:
 * Kafka's store would throw IllegalStateException); re-delivery of the last few records (what
 * ConsumerTask sees after a re-assignment); keys: null, KIP-1266 ({@code
 * <topicId>:<topic>:<partition>:<endOffset>:<brokerLeaderEpoch>}, {@code :UPDATE} for updates and
 * partition deletes), or null first and KIP-1266 later; tombstones after DELETE_SEGMENT_FINISHED
 * (the segment's own keys, or PR-A's "every base key up to this end offset and epoch") and at
 * random. Some histories add rarer shapes: odd leader-epoch maps (an epoch starting before the
 * segment or after its end, negative epochs, start offsets not ascending with the epoch), offsets
 * near 2^53 or Long.MAX_VALUE, segments spanning more than 2^32 offsets, keys that do not match their value, a segment id reused in another
 * partition, two partitions that differ only by topic name; and, rarely, a segment snapshot value
 * (api key 3) in the topic, which Kafka's ConsumerTask cannot apply.
 *
 * <p>Every value is written by Kafka 4.4.0's {@link RemoteLogMetadataSerde#serialize}.
 */
final class HistoryGenerator {
    enum KeyMode {
        NULL("null-keys"), KIP1266("kip1266-keys"), MIXED("null-then-kip1266-keys");

        final String label;

        KeyMode(String label) {
            this.label = label;
        }
    }

    private static final String[] TOPICS = {
        "orders", "payments", "clicks", "app-logs", "txn_ledger", "Orders.EU", "metrics-v2", "a",
        "sessions", "inventory", "x_y.z-0", "shipments"
    };
    private static final RemoteLogSegmentState[] SEG_STATES = RemoteLogSegmentState.values();

    private static final class Seg {
        final Part part;
        final Uuid id;
        long start;
        long end;
        TreeMap<Integer, Long> epochs;
        int keyEpoch;
        boolean started;
        /** What the writer believes: 0..3 as Kafka's ids. */
        int state;

        Seg(Part part, Uuid id, long start, long end, TreeMap<Integer, Long> epochs) {
            this.part = part;
            this.id = id;
            this.start = start;
            this.end = end;
            this.epochs = epochs;
        }
    }

    private static final class Part {
        TopicIdPartition tp;
        int epoch;
        /** Leader epoch cache: (epoch, start offset), ascending. */
        final List<long[]> cache = new ArrayList<>();
        long uploadPos;
        final List<Seg> segs = new ArrayList<>();
        boolean deleted;
        int initAt;
    }

    private static final class Deferred {
        final int due;
        final Runnable action;

        Deferred(int due, Runnable action) {
            this.due = due;
            this.action = action;
        }
    }

    private final Random rnd;
    private final RemoteLogMetadataSerde serde;
    private final List<Ev> events = new ArrayList<>();
    private final List<Part> parts = new ArrayList<>();
    private final List<Deferred> deferred = new ArrayList<>();
    private final List<String> usedKeys = new ArrayList<>();
    private long nextOffset;
    private long clock;
    private KeyMode mode;
    private int keyedFrom;
    private int step;
    private boolean chaosEpochs;
    private boolean chaosKeys;
    private boolean bigOffsets;
    private boolean wideSegments;
    private boolean crossIds;
    private final List<String> flags = new ArrayList<>();

    HistoryGenerator(long seed, RemoteLogMetadataSerde serde) {
        this.rnd = new Random(seed);
        this.serde = serde;
    }

    KeyMode mode() {
        return mode;
    }

    int partitions() {
        return parts.size();
    }

    List<String> flags() {
        return flags;
    }

    private boolean chance(double p) {
        return rnd.nextDouble() < p;
    }

    private int between(int lo, int hi) {
        return lo + rnd.nextInt(hi - lo + 1);
    }

    private Uuid uuid() {
        return new Uuid(rnd.nextLong(), rnd.nextLong());
    }

    List<Ev> generate() {
        double m = rnd.nextDouble();
        mode = m < 0.4 ? KeyMode.NULL : m < 0.8 ? KeyMode.KIP1266 : KeyMode.MIXED;
        double sz = rnd.nextDouble();
        int steps = sz < 0.55 ? between(2, 20) : sz < 0.85 ? between(20, 60) : sz < 0.97 ? between(60, 150) : between(150, 300);
        keyedFrom = mode == KeyMode.MIXED ? between(steps / 4, Math.max(steps / 4, 3 * steps / 4)) : 0;
        chaosEpochs = chance(0.08);
        chaosKeys = mode != KeyMode.NULL && chance(0.12);
        bigOffsets = chance(0.04);
        if (chaosEpochs) flags.add("odd-epochs");
        if (chaosKeys) flags.add("odd-keys");
        if (bigOffsets) flags.add("big-offsets");
        wideSegments = !bigOffsets && chance(0.04);
        if (wideSegments) flags.add("wide-segments");
        nextOffset = chance(0.5) ? 0 : rnd.nextInt(100_000);
        clock = 1_700_000_000_000L + rnd.nextInt(1_000_000_000);

        double pc = rnd.nextDouble();
        int np = pc < 0.5 ? 1 : pc < 0.8 ? 2 : 3;
        crossIds = np > 1 && chance(0.05);
        if (crossIds) flags.add("shared-segment-id");
        for (int i = 0; i < np; i++) {
            Part p = new Part();
            if (i > 0 && chance(0.08)) {
                TopicIdPartition o = parts.get(0).tp;
                p.tp = new TopicIdPartition(o.topicId(), o.partition(), o.topic() + "-renamed");
                flags.add("same-id-other-name");
            } else if (i > 0 && chance(0.15)) {
                TopicIdPartition o = parts.get(0).tp;
                p.tp = new TopicIdPartition(o.topicId(), o.partition() + 1 + i, o.topic());
            } else {
                p.tp = new TopicIdPartition(uuid(), rnd.nextInt(20), TOPICS[rnd.nextInt(TOPICS.length)]);
            }
            p.epoch = rnd.nextInt(6);
            if (bigOffsets) {
                p.uploadPos = chance(0.5) ? (1L << 53) - rnd.nextInt(500) : Long.MAX_VALUE - 1_000_000 - rnd.nextInt(1000);
            } else {
                p.uploadPos = chance(0.5) ? 0 : rnd.nextInt(1000);
            }
            p.cache.add(new long[] {p.epoch, p.uploadPos});
            p.initAt = chance(0.88) ? between(0, steps) : -1;
            parts.add(p);
        }
        int deletePart = chance(0.15) ? rnd.nextInt(np) : -1;
        int deleteAt = deletePart >= 0 ? between(0, steps - 1) : -1;

        for (step = 0; step < steps; step++) {
            runDue();
            for (Part p : parts) if (p.initAt == step && !p.deleted) mark(p);
            List<Part> live = new ArrayList<>();
            for (Part p : parts) if (!p.deleted) live.add(p);
            if (live.isEmpty()) break;
            if (step == deleteAt && !parts.get(deletePart).deleted) {
                partitionDelete(parts.get(deletePart));
                continue;
            }
            act(live.get(rnd.nextInt(live.size())));
        }
        // what was still pending happens now (or never)
        for (Deferred d : new ArrayList<>(deferred)) if (chance(0.75)) d.action.run();
        deferred.clear();
        for (Part p : parts) if (p.initAt == steps && !p.deleted) mark(p);
        return events;
    }

    private void runDue() {
        Iterator<Deferred> it = deferred.iterator();
        List<Deferred> due = new ArrayList<>();
        while (it.hasNext()) {
            Deferred d = it.next();
            if (d.due <= step) {
                due.add(d);
                it.remove();
            }
        }
        for (Deferred d : due) d.action.run();
    }

    private void later(Runnable r) {
        deferred.add(new Deferred(step + between(1, 8), r));
    }

    private void act(Part p) {
        int w = rnd.nextInt(1000);
        if ((w -= 330) < 0) upload(p);
        else if ((w -= 70) < 0) leaderChange(p);
        else if ((w -= 45) < 0) duplicateUpload(p);
        else if ((w -= 45) < 0) overlappingUpload(p);
        else if ((w -= 120) < 0) deleteOldest(p);
        else if ((w -= 50) < 0) deleteAny(p);
        else if ((w -= 60) < 0) arbitraryUpdate(p);
        else if ((w -= 50) < 0) again(p);
        else if ((w -= 40) < 0) unknownUpdate(p);
        else if ((w -= 15) < 0) segmentRecordInOtherState(p);
        else if ((w -= 15) < 0) markAgain(p);
        else if ((w -= 40) < 0) tombstone(p);
        else if ((w -= 25) < 0) redeliver();
        else if ((w -= 5) < 0) snapshotRecord(p);
        else upload(p);
    }

    // ------------------------------------------------------------------------------- emitting

    private boolean keyed() {
        return mode == KeyMode.KIP1266 || (mode == KeyMode.MIXED && step >= keyedFrom);
    }

    private static String keyPrefix(TopicIdPartition tp) {
        return tp.topicId() + ":" + tp.topic() + ":" + tp.partition() + ":";
    }

    private String maybeOddKey(String key, Part p) {
        if (!chaosKeys || !chance(0.06)) return key;
        switch (rnd.nextInt(6)) {
            case 0:
                return key.endsWith(":UPDATE") ? key.substring(0, key.length() - 7) : key + ":UPDATE";
            case 1: {
                Part o = parts.get(rnd.nextInt(parts.size()));
                return keyPrefix(o.tp) + key.substring(keyPrefix(p.tp).length());
            }
            case 2:
                return "not-a-kip1266-key";
            case 3:
                return "";
            case 4:
                return keyPrefix(p.tp) + "12:x";
            default: {
                String[] parts5 = key.split(":");
                return keyPrefix(p.tp) + (Long.parseLong(parts5[3]) + 1) + ":" + parts5[4] + (key.endsWith(":UPDATE") ? ":UPDATE" : "");
            }
        }
    }

    private void emit(RemoteLogMetadata m, String key, Part p) {
        byte[] value = serde.serialize(m);
        String k = key == null ? null : maybeOddKey(key, p);
        if (k != null) usedKeys.add(k);
        events.add(Ev.record(k, value, nextOffset));
        nextOffset += chance(0.05) ? between(2, 4) : 1; // compaction / transaction markers leave gaps
        clock += between(1, 5000);
    }

    private void emitTombstone(String key) {
        events.add(Ev.record(key, null, nextOffset));
        nextOffset += 1;
    }

    private void mark(Part p) {
        events.add(Ev.markInitialized(p.tp));
    }

    private Optional<CustomMetadata> custom() {
        if (!chance(0.15)) return Optional.empty();
        byte[] b = new byte[rnd.nextInt(12)];
        rnd.nextBytes(b);
        return Optional.of(new CustomMetadata(b));
    }

    private String baseKey(Seg s) {
        return keyPrefix(s.part.tp) + s.end + ":" + s.keyEpoch;
    }

    private void emitStarted(Seg s) {
        Part p = s.part;
        if (!s.started) {
            s.keyEpoch = p.epoch;
            s.started = true;
        }
        RemoteLogSegmentMetadata m = new RemoteLogSegmentMetadata(
                new RemoteLogSegmentId(p.tp, s.id), s.start, s.end, clock - between(0, 100_000), between(0, 5), clock,
                between(1, 1 << 20), custom(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, s.epochs, chance(0.5));
        emit(m, keyed() ? baseKey(s) : null, p);
    }

    private void emitUpdate(Seg s, RemoteLogSegmentState state, int keyEpoch) {
        Part p = s.part;
        RemoteLogSegmentMetadataUpdate u = new RemoteLogSegmentMetadataUpdate(
                new RemoteLogSegmentId(p.tp, s.id), clock, custom(), state, between(0, 5));
        emit(u, keyed() ? keyPrefix(p.tp) + s.end + ":" + keyEpoch + ":UPDATE" : null, p);
        // what the writer now believes (Kafka's transition rules; DELETE_SEGMENT_FINISHED removes it)
        if (s.state < 3 && state != RemoteLogSegmentState.COPY_SEGMENT_STARTED
                && RemoteLogSegmentState.isValidTransition(SEG_STATES[s.state], state)) {
            s.state = state.id();
        }
    }

    private void finish(Seg s) {
        if (s.part.deleted) return;
        emitUpdate(s, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, s.keyEpoch);
    }

    private void deleteStarted(Seg s) {
        if (s.part.deleted) return;
        emitUpdate(s, RemoteLogSegmentState.DELETE_SEGMENT_STARTED, s.part.epoch);
    }

    private void deleteFinished(Seg s) {
        Part p = s.part;
        if (p.deleted) return;
        emitUpdate(s, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, p.epoch);
        if (!keyed() || !chance(0.65)) return;
        // PR-A: tombstone K:UPDATE, then K, for the keys its end-offset index returns
        List<String> bases = new ArrayList<>();
        if (chance(0.15)) {
            for (Seg o : p.segs) if (o.end <= s.end && o.keyEpoch <= p.epoch && bases.size() < 8) bases.add(baseKey(o));
        } else {
            bases.add(baseKey(s));
        }
        for (String k : bases) {
            emitTombstone(k + ":UPDATE");
            emitTombstone(k);
        }
    }

    // ------------------------------------------------------------------------ leader epochs

    private void addCacheEntry(Part p, int epoch, long start) {
        long[] last = p.cache.isEmpty() ? null : p.cache.get(p.cache.size() - 1);
        if (last != null && last[1] == start && !chaosEpochs) p.cache.remove(p.cache.size() - 1);
        p.cache.add(new long[] {epoch, start});
        p.epoch = epoch;
    }

    private int nextEpoch(Part p) {
        return p.epoch + (chance(0.8) ? 1 : between(2, 4));
    }

    /** The epochs of [s, e] from the leader epoch cache (an epoch's offset is where it starts within the segment). */
    private TreeMap<Integer, Long> epochsFor(Part p, long s, long e) {
        int floor = 0;
        for (int i = 0; i < p.cache.size(); i++) if (p.cache.get(i)[1] <= s) floor = i;
        TreeMap<Integer, Long> m = new TreeMap<>();
        m.put((int) p.cache.get(floor)[0], s);
        for (int i = floor + 1; i < p.cache.size() && m.size() < 3; i++) {
            long st = p.cache.get(i)[1];
            if (st > e) break;
            m.put((int) p.cache.get(i)[0], Math.max(st, s));
        }
        return m;
    }

    private TreeMap<Integer, Long> oddEpochs(TreeMap<Integer, Long> m, long s, long e) {
        TreeMap<Integer, Long> o = new TreeMap<>(m);
        switch (rnd.nextInt(6)) {
            case 0:
                o.put(o.firstKey(), s - between(1, 10));
                break;
            case 1:
                o.put(o.lastKey() + 1, e + between(1, 5));
                break;
            case 2:
                o.put(-between(1, 3), s);
                break;
            case 3:
                if (o.size() >= 2) {
                    Integer a = o.firstKey();
                    Integer b = o.higherKey(a);
                    Long va = o.get(a);
                    o.put(a, o.get(b));
                    o.put(b, va);
                } else {
                    o.put(o.firstKey() + 1, s + (e - s) / 2);
                    o.put(o.firstKey(), s + (e - s) / 2 + 1);
                }
                break;
            case 4:
                o.put(Integer.MAX_VALUE, e);
                break;
            default:
                o.put(o.firstKey(), s + between(0, 3));
                break;
        }
        return o;
    }

    private Seg newSeg(Part p, long start, long end, TreeMap<Integer, Long> epochs) {
        if (chaosEpochs && chance(0.35)) epochs = oddEpochs(epochs, start, end);
        Uuid id = uuid();
        if (crossIds && chance(0.1)) {
            for (Part o : parts) {
                if (o != p && !o.segs.isEmpty()) {
                    id = o.segs.get(rnd.nextInt(o.segs.size())).id;
                    break;
                }
            }
        }
        Seg s = new Seg(p, id, start, end, epochs);
        try {
            new RemoteLogSegmentMetadata(new RemoteLogSegmentId(p.tp, id), start, end, 0, 0, 0, 0, epochs);
        } catch (RuntimeException ex) {
            s.epochs = epochsFor(p, start, end); // Kafka's object model refuses the odd map: use the plain one
        }
        p.segs.add(s);
        return s;
    }

    private long length() {
        // Wider than 32 bits of offsets: no broker writes such a segment (a segment's offsets are
        // 32-bit offsets from its base), but a record can say so.
        if (wideSegments && chance(0.3)) return (1L << 32) - 2 + Math.floorMod(rnd.nextLong(), 1L << 34);
        return chance(0.1) ? between(1, 3) : between(1, chance(0.2) ? 200 : 40);
    }

    // ------------------------------------------------------------------------------- actions

    private void upload(Part p) {
        long start = p.uploadPos;
        long end = start + length() - 1;
        // leader changes while the segment was being written: 1-3 epochs per segment
        if (end > start && chance(0.25)) {
            long at = start + 1 + Math.floorMod(rnd.nextLong(), end - start);
            addCacheEntry(p, nextEpoch(p), at);
            if (at < end && chance(0.3)) addCacheEntry(p, nextEpoch(p), at + 1 + Math.floorMod(rnd.nextLong(), end - at));
        }
        Seg s = newSeg(p, start, end, epochsFor(p, start, end));
        emitStarted(s);
        double r = rnd.nextDouble();
        if (r < 0.72) {
            finish(s);
        } else if (r < 0.9) {
            later(() -> finish(s));
        } else {
            // failed copy: never finished; cleaned up later (or not), retried by the same epoch
            if (chance(0.6)) {
                later(() -> {
                    deleteStarted(s);
                    if (chance(0.8)) deleteFinished(s);
                });
            }
            if (!chance(0.7)) return; // nothing else uploaded yet: the next upload starts here again
            Seg retry = newSeg(p, s.start, s.end, s.epochs);
            emitStarted(retry);
            if (chance(0.85)) finish(retry);
            else later(() -> finish(retry));
        }
        p.uploadPos = end + 1;
    }

    private void leaderChange(Part p) {
        int epoch = nextEpoch(p);
        if (chance(0.3) && !p.segs.isEmpty()) {
            // unclean leader election: the new leader's log ends earlier; later uploads overlap
            long lowest = p.segs.get(0).start;
            long back = between(1, 60);
            p.uploadPos = Math.max(lowest, p.uploadPos - back);
            while (p.cache.size() > 1 && p.cache.get(p.cache.size() - 1)[1] > p.uploadPos) p.cache.remove(p.cache.size() - 1);
        }
        addCacheEntry(p, epoch, p.uploadPos);
    }

    private Seg pick(Part p) {
        return p.segs.isEmpty() ? null : p.segs.get(rnd.nextInt(p.segs.size()));
    }

    private void duplicateUpload(Part p) {
        Seg o = pick(p);
        if (o == null) {
            upload(p);
            return;
        }
        Seg s = newSeg(p, o.start, o.end, new TreeMap<>(o.epochs));
        emitStarted(s);
        if (chance(0.6)) finish(s);
        else if (chance(0.6)) later(() -> finish(s));
    }

    private void overlappingUpload(Part p) {
        Seg o = pick(p);
        if (o == null) {
            upload(p);
            return;
        }
        long start = o.start + Math.floorMod(rnd.nextLong(), o.end - o.start + 1);
        if (chance(0.3)) start = Math.max(0, o.start - between(1, 20));
        long end = start + length() - 1;
        TreeMap<Integer, Long> epochs = chance(0.5) ? epochsFor(p, start, end) : restrict(o.epochs, start);
        Seg s = newSeg(p, start, end, epochs);
        emitStarted(s);
        if (chance(0.7)) finish(s);
        else if (chance(0.5)) later(() -> finish(s));
    }

    private static TreeMap<Integer, Long> restrict(TreeMap<Integer, Long> epochs, long start) {
        TreeMap<Integer, Long> m = new TreeMap<>();
        Integer floor = null;
        for (Map.Entry<Integer, Long> e : epochs.entrySet()) {
            if (e.getValue() <= start) floor = e.getKey();
            else m.put(e.getKey(), e.getValue());
        }
        if (floor == null) floor = epochs.firstKey();
        m.put(floor, start);
        return m;
    }

    private void delete(Seg s) {
        deleteStarted(s);
        double r = rnd.nextDouble();
        if (r < 0.7) deleteFinished(s);
        else if (r < 0.9) later(() -> deleteFinished(s));
    }

    private void deleteOldest(Part p) {
        Seg best = null;
        for (Seg s : p.segs) {
            if ((s.state == 1 || s.state == 0 && chance(0.2)) && (best == null || s.start < best.start)) best = s;
        }
        if (best != null) delete(best);
        else upload(p);
    }

    private void deleteAny(Part p) {
        List<Seg> c = new ArrayList<>();
        for (Seg s : p.segs) if (s.state < 3) c.add(s);
        if (c.isEmpty()) {
            upload(p);
            return;
        }
        delete(c.get(rnd.nextInt(c.size())));
    }

    /** An update to any state: invalid transitions, updates to STARTED, updates of removed segments. */
    private void arbitraryUpdate(Part p) {
        Seg s = pick(p);
        if (s == null) {
            unknownUpdate(p);
            return;
        }
        emitUpdate(s, SEG_STATES[rnd.nextInt(4)], p.epoch);
    }

    /** The same thing again: a self transition, or a COPY_SEGMENT_STARTED record for a known id. */
    private void again(Part p) {
        Seg s = pick(p);
        if (s == null) {
            upload(p);
            return;
        }
        double r = rnd.nextDouble();
        if (r < 0.35) {
            emitStarted(s);
        } else if (r < 0.6) {
            // same segment id, other offsets and epochs (near the old range, or where the log is now,
            // under the current epoch only: the old epochs then keep the id in their unreferenced sets)
            boolean elsewhere = chance(0.4);
            long start = elsewhere ? p.uploadPos : Math.max(0, s.start + between(-5, 5));
            long end = start + length() - 1;
            TreeMap<Integer, Long> epochs = elsewhere ? new TreeMap<>(Map.of(p.epoch, start)) : epochsFor(p, start, end);
            if (chance(0.4)) epochs.put(epochs.lastKey() + 1, end);
            if (s.state == 0) {
                s.start = start;
                s.end = end;
                s.epochs = epochs;
                emitStarted(s);
            } else {
                Seg copy = new Seg(p, s.id, start, end, epochs);
                emitStarted(copy);
            }
        } else {
            emitUpdate(s, SEG_STATES[Math.max(0, Math.min(3, s.state))], s.state == 1 ? s.keyEpoch : p.epoch);
        }
    }

    private void unknownUpdate(Part p) {
        Seg ghost = new Seg(p, uuid(), p.uploadPos, p.uploadPos + between(0, 50), null);
        emitUpdate(ghost, SEG_STATES[chance(0.1) ? 0 : between(1, 3)], p.epoch);
    }

    /** A segment record whose state is not COPY_SEGMENT_STARTED (Kafka's cache throws). */
    private void segmentRecordInOtherState(Part p) {
        Seg s = chance(0.5) ? pick(p) : null;
        Uuid id = s != null ? s.id : uuid();
        long start = s != null ? s.start : p.uploadPos;
        long end = s != null ? s.end : p.uploadPos + between(0, 30);
        TreeMap<Integer, Long> epochs = s != null ? s.epochs : epochsFor(p, start, end);
        RemoteLogSegmentMetadata m = new RemoteLogSegmentMetadata(new RemoteLogSegmentId(p.tp, id), start, end,
                clock, between(0, 5), clock, between(1, 1000), Optional.empty(), SEG_STATES[between(1, 3)], epochs, false);
        emit(m, keyed() ? keyPrefix(p.tp) + end + ":" + p.epoch : null, p);
    }

    /**
     * A RemoteLogSegmentMetadataSnapshot value (api key 3) in the topic: no broker writes one there,
     * and Kafka's ConsumerTask cannot apply it (its topicIdPartition() throws).
     */
    private void snapshotRecord(Part p) {
        Seg s = pick(p);
        if (s == null) {
            upload(p);
            return;
        }
        emit(new RemoteLogSegmentMetadataSnapshot(s.id, s.start, s.end, clock, between(0, 5), clock, between(1, 1000),
                Optional.empty(), SEG_STATES[between(0, 3)], s.epochs, chance(0.5)), keyed() ? baseKey(s) : null, p);
    }

    private void markAgain(Part p) {
        if (p.initAt >= 0 && p.initAt < step) mark(p);
        else arbitraryUpdate(p);
    }

    private void tombstone(Part p) {
        if (!keyed() || usedKeys.isEmpty()) {
            upload(p);
            return;
        }
        double r = rnd.nextDouble();
        if (r < 0.8) emitTombstone(usedKeys.get(rnd.nextInt(usedKeys.size())));
        else if (r < 0.9) emitTombstone(keyPrefix(p.tp) + between(0, 500) + ":" + p.epoch);
        else if (chaosKeys) emitTombstone(null);
        else emitTombstone("garbage-key");
    }

    /** The last few records again, same offsets (a consumer re-positioned after a re-assignment). */
    private void redeliver() {
        int k = between(1, 5);
        List<Ev> tail = new ArrayList<>();
        for (int i = events.size() - 1; i >= 0 && tail.size() < k; i--) {
            Ev e = events.get(i);
            if (!e.isMark()) tail.add(0, e);
        }
        events.addAll(tail);
    }

    private void partitionDelete(Part p) {
        if (chance(0.5)) {
            List<Seg> live = new ArrayList<>();
            for (Seg s : p.segs) if (s.state < 3) live.add(s);
            for (Seg s : live) deleteStarted(s);
            for (Seg s : live) if (chance(0.9)) deleteFinished(s);
        }
        RemotePartitionDeleteState mk = RemotePartitionDeleteState.DELETE_PARTITION_MARKED;
        RemotePartitionDeleteState st = RemotePartitionDeleteState.DELETE_PARTITION_STARTED;
        RemotePartitionDeleteState fin = RemotePartitionDeleteState.DELETE_PARTITION_FINISHED;
        double r = rnd.nextDouble();
        RemotePartitionDeleteState[] seq;
        if (r < 0.45) seq = new RemotePartitionDeleteState[] {mk, st, fin};
        else if (r < 0.6) seq = new RemotePartitionDeleteState[] {mk};
        else if (r < 0.75) seq = new RemotePartitionDeleteState[] {mk, st};
        else if (r < 0.85) seq = new RemotePartitionDeleteState[] {fin};
        else if (r < 0.95) seq = new RemotePartitionDeleteState[] {st, mk};
        else seq = new RemotePartitionDeleteState[] {mk, mk, st, fin};
        long maxEnd = 0;
        for (Seg s : p.segs) maxEnd = Math.max(maxEnd, s.end);
        for (RemotePartitionDeleteState state : seq) {
            emit(new RemotePartitionDeleteMetadata(p.tp, state, clock, between(0, 5)),
                    keyed() ? keyPrefix(p.tp) + maxEnd + ":" + p.epoch + ":UPDATE" : null, p);
            if (state == fin) p.deleted = true;
        }
    }
}
