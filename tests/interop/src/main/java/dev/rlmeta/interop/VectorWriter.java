package dev.rlmeta.interop;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataSnapshotRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataUpdateRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemotePartitionDeleteMetadataRecord;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/**
 * Writes kafka-4.4.0-values.json, kafka-4.4.0-partitioner.json and kafka-4.4.0-invalid.json
 * into the directory given as the only argument (default tests/vectors), using Kafka 4.4.0's
 * own classes. Deterministic: every random choice comes from java.util.Random(SEED).
 */
public final class VectorWriter {
    static final long SEED = 20260440L;

    private final Random rnd = new Random(SEED);

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "tests/vectors");
        if (!Files.isDirectory(dir)) {
            System.err.println("no such directory: " + dir.toAbsolutePath() + " (run from the repository root or pass the vectors directory)");
            System.exit(2);
        }
        VectorWriter w = new VectorWriter();
        List<ObjectNode> values = w.values();
        Kafka44.writeVectorFile(dir.resolve("kafka-4.4.0-values.json"), w.valuesSource(), values);
        List<ObjectNode> parts = w.partitioner();
        Kafka44.writeVectorFile(dir.resolve("kafka-4.4.0-partitioner.json"), w.partitionerSource(), parts);
        List<ObjectNode> invalid = w.invalid();
        Kafka44.writeVectorFile(dir.resolve("kafka-4.4.0-invalid.json"), w.invalidSource(), invalid);
        System.out.printf("wrote %d value cases, %d partitioner cases, %d invalid cases to %s%n",
                values.size(), parts.size(), invalid.size(), dir);
        System.out.println("left out of kafka-4.4.0-invalid.json, rejected by 4.4.0 only because it has no version 1:");
        w.v1Rejections.forEach(a -> System.out.println("  " + a));
        String probes = System.getProperty("probes");
        if (probes != null) {
            // Diagnostics only (not a conformance file: hex is not what Kafka writes for record).
            Kafka44.writeVectorFile(Path.of(probes), "malformed-looking values that Kafka 4.4.0 accepts; record = what it reads."
                    + " NOT a conformance file: Kafka writes record differently.", w.acceptedCases);
        }
        if (!w.accepted.isEmpty()) {
            System.out.println("candidate invalid inputs that Kafka 4.4.0 ACCEPTS (left out of kafka-4.4.0-invalid.json):");
            w.accepted.forEach(a -> System.out.println("  " + a));
        }
    }

    // ================================================================== random building blocks

    static final String LEGAL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

    String name(int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) sb.append(LEGAL.charAt(rnd.nextInt(LEGAL.length())));
        return sb.toString();
    }

    Uuid uuid() {
        return new Uuid(rnd.nextLong(), rnd.nextLong());
    }

    /** A uuid whose string form starts with the given base64url char ('-' is 62, '_' is 63). */
    Uuid uuidStartingWith(char c) {
        long six = c == '-' ? 62 : c == '_' ? 63 : LEGAL.indexOf(c);
        long msb = (rnd.nextLong() & 0x03FF_FFFF_FFFF_FFFFL) | (six << 58);
        Uuid u = new Uuid(msb, rnd.nextLong());
        if (u.toString().charAt(0) != c) throw new IllegalStateException("uuid " + u + " does not start with " + c);
        return u;
    }

    byte[] bytes(int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    /** Custom metadata: size -1 = absent, else that many random bytes. */
    Optional<CustomMetadata> cm(int size) {
        return size < 0 ? Optional.empty() : Optional.of(new CustomMetadata(bytes(size)));
    }

    Optional<CustomMetadata> randomCm() {
        int[] sizes = {-1, -1, 0, 1, 5, 16, 40, 127, 128, 300};
        return cm(sizes[rnd.nextInt(sizes.length)]);
    }

    static String cmTag(Optional<CustomMetadata> cm) {
        return cm.map(c -> "cm" + c.value().length).orElse("cmAbsent");
    }

    long timestamp() {
        return 1_500_000_000_000L + (long) (rnd.nextDouble() * 400_000_000_000L);
    }

    /** n leader epochs, ascending, first at startOffset, the others spread over [start, end]. */
    TreeMap<Integer, Long> epochs(int n, long start, long end) {
        TreeMap<Integer, Long> m = new TreeMap<>();
        int epoch = rnd.nextInt(40);
        long off = start;
        for (int i = 0; i < n; i++) {
            m.put(epoch, off);
            epoch += 1 + rnd.nextInt(4);
            long room = end - off;
            if (room > 0) off += (long) (rnd.nextDouble() * (room / Math.max(1, n - i)));
        }
        return m;
    }

    // ================================================================== value cases

    /** Mutable description of a segment (also used for snapshots). */
    final class Seg {
        String topic = name(1 + rnd.nextInt(40));
        Uuid topicId = uuid();
        int partition = rnd.nextInt(1000);
        Uuid segId = uuid();
        long start = (long) (rnd.nextDouble() * (1L << 40));
        long end = start + rnd.nextInt(1 << 20);
        int brokerId = rnd.nextInt(5000);
        long maxTs = timestamp();
        long eventTs = timestamp();
        TreeMap<Integer, Long> epochs = epochs(1 + rnd.nextInt(5), start, end);
        int size = rnd.nextInt(Integer.MAX_VALUE);
        Optional<CustomMetadata> cm = randomCm();
        RemoteLogSegmentState state = RemoteLogSegmentState.values()[rnd.nextInt(4)];
        boolean txn = rnd.nextBoolean();

        Seg offsets(long s, long e, int nEpochs) {
            start = s;
            end = e;
            epochs = VectorWriter.this.epochs(nEpochs, s, e);
            return this;
        }

        RemoteLogSegmentMetadata segment() {
            return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(new TopicIdPartition(topicId, partition, topic), segId),
                    start, end, maxTs, brokerId, eventTs, size, cm, state, epochs, txn);
        }

        RemoteLogSegmentMetadataSnapshot snapshot() {
            return new RemoteLogSegmentMetadataSnapshot(segId, start, end, maxTs, brokerId, eventTs, size, cm, state, epochs, txn);
        }

        String tag() {
            return "state" + state.id() + "-" + cmTag(cm) + "-" + epochs.size() + "ep-txn" + (txn ? "T" : "F");
        }
    }

    final class Upd {
        String topic = name(1 + rnd.nextInt(40));
        Uuid topicId = uuid();
        int partition = rnd.nextInt(1000);
        Uuid segId = uuid();
        int brokerId = rnd.nextInt(5000);
        long eventTs = timestamp();
        Optional<CustomMetadata> cm = randomCm();
        RemoteLogSegmentState state = RemoteLogSegmentState.values()[1 + rnd.nextInt(3)];

        RemoteLogSegmentMetadataUpdate update() {
            return new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(new TopicIdPartition(topicId, partition, topic), segId),
                    eventTs, cm, state, brokerId);
        }

        String tag() {
            return "state" + state.id() + "-" + cmTag(cm);
        }
    }

    final class Del {
        String topic = name(1 + rnd.nextInt(40));
        Uuid topicId = uuid();
        int partition = rnd.nextInt(1000);
        int brokerId = rnd.nextInt(5000);
        long eventTs = timestamp();
        RemotePartitionDeleteState state = RemotePartitionDeleteState.values()[rnd.nextInt(3)];

        RemotePartitionDeleteMetadata delete() {
            return new RemotePartitionDeleteMetadata(new TopicIdPartition(topicId, partition, topic), state, eventTs, brokerId);
        }

        String tag() {
            return "state" + state.id();
        }
    }

    private final List<ObjectNode> valueCases = new ArrayList<>();
    private final Map<String, Integer> names = new LinkedHashMap<>();

    private String unique(String name) {
        int n = names.merge(name, 1, Integer::sum);
        return n == 1 ? name : name + "-" + n;
    }

    private ObjectNode valueCase(String name, ApiMessageAndVersion amv, byte[] bytes, String writer) {
        ObjectNode c = Kafka44.NODES.objectNode();
        c.put("name", unique(name));
        c.put("apiKey", amv.message().apiKey());
        c.put("version", amv.version());
        c.set("record", RecordJson.toJson(amv.message()));
        c.put("hex", Kafka44.hex(bytes));
        c.put("writer", writer);
        // Self-checks: the JSON rebuilds the same message, which Kafka writes to the same bytes.
        ApiMessage rebuilt = RecordJson.fromJson(amv.message().apiKey(), c.get("record"));
        byte[] again = Kafka44.writeWire(rebuilt, amv.version());
        if (!Arrays.equals(again, bytes)) throw new IllegalStateException("JSON of " + name + " does not rebuild its bytes");
        valueCases.add(c);
        return c;
    }

    /** Serializes with RemoteLogMetadataSerde, reads the bytes back, records the case. */
    private void viaSerde(String name, RemoteLogMetadata obj) {
        byte[] bytes = Kafka44.SERDE.serialize(obj);
        RemoteLogMetadata back = Kafka44.SERDE.deserialize(bytes);
        if (!back.equals(obj)) {
            throw new IllegalStateException(name + ": RemoteLogMetadataSerde round trip changed the object:\n  " + obj + "\n  " + back);
        }
        ApiMessageAndVersion amv = Kafka44.readWire(bytes);
        valueCase("k44-" + name, amv, bytes, "RemoteLogMetadataSerde.serialize");
    }

    /**
     * Values the object model refuses (negative offsets, empty epochs, unknown states, unknown
     * tagged fields...): Kafka's generated record classes written with the same
     * BytesApiMessageSerde that RemoteLogMetadataSerde uses.
     */
    private <M extends ApiMessage> void viaWire(String name, RemoteLogMetadata base, Class<M> type, Consumer<M> edit) {
        M m = type.cast(Kafka44.readWire(Kafka44.SERDE.serialize(base)).message());
        edit.accept(m);
        byte[] bytes = Kafka44.writeWire(m, (short) 0);
        ApiMessageAndVersion amv = Kafka44.readWire(bytes);
        ObjectNode c = valueCase("k44-wire-" + name, amv, bytes, "BytesApiMessageSerde.serialize (generated record)");
        try {
            Kafka44.SERDE.deserialize(bytes);
            c.put("remoteLogMetadataSerde", "ok");
        } catch (RuntimeException e) {
            c.put("remoteLogMetadataSerde", Kafka44.describe(e));
        }
    }

    static final int[] INTS = {Integer.MIN_VALUE, -1, 0, 1, Integer.MAX_VALUE};

    List<ObjectNode> values() {
        // ---------------- segment metadata (api key 0)
        int[] cmSizes = {-1, 0, 1, 127, 128, 1000};
        for (RemoteLogSegmentState st : RemoteLogSegmentState.values()) {
            for (int size : cmSizes) {
                Seg s = new Seg();
                s.state = st;
                s.cm = cm(size);
                viaSerde("seg-" + s.tag(), s.segment());
            }
        }
        for (int n : new int[] {1, 2, 3, 10, 63, 126, 127, 128, 300}) {
            Seg s = new Seg();
            s.offsets(s.start, s.start + 10_000_000L, n);
            viaSerde("seg-epochs" + n + "-" + s.tag(), s.segment());
        }
        {
            Seg s = new Seg();
            s.offsets(0, 0, 1);
            viaSerde("seg-start0-end0", s.segment());
            s = new Seg();
            s.offsets(Long.MAX_VALUE, Long.MAX_VALUE, 1);
            viaSerde("seg-start-end-longmax", s.segment());
            s = new Seg();
            s.offsets(0, Long.MAX_VALUE, 4);
            viaSerde("seg-start0-end-longmax", s.segment());
            s = new Seg();
            s.offsets(Long.MAX_VALUE - 1, Long.MAX_VALUE, 2);
            viaSerde("seg-start-longmax-1", s.segment());
            s = new Seg();
            s.offsets(12345, 12345, 1);
            viaSerde("seg-start-eq-end", s.segment());
            s = new Seg();
            s.epochs = new TreeMap<>(Map.of(Integer.MIN_VALUE, s.start, -1, s.start, 0, s.end, Integer.MAX_VALUE, s.end));
            viaSerde("seg-epochs-int-extremes", s.segment());
            s = new Seg();
            s.epochs = new TreeMap<>(Map.of(7, Long.MAX_VALUE, 8, 0L));
            viaSerde("seg-epoch-offsets-longmax-and-0", s.segment());
        }
        for (int b : INTS) {
            Seg s = new Seg();
            s.brokerId = b;
            viaSerde("seg-broker" + b, s.segment());
        }
        for (int sz : INTS) {
            Seg s = new Seg();
            s.size = sz;
            viaSerde("seg-size" + sz, s.segment());
        }
        for (long ts : new long[] {-1, 0, Long.MIN_VALUE, Long.MAX_VALUE}) {
            Seg s = new Seg();
            s.maxTs = ts;
            viaSerde("seg-maxts" + ts, s.segment());
        }
        for (long ts : new long[] {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE}) {
            Seg s = new Seg();
            s.eventTs = ts;
            viaSerde("seg-eventts" + ts, s.segment());
        }
        for (int len : new int[] {1, 2, 126, 127, 128, 249}) {
            for (boolean txn : new boolean[] {false, true}) {
                Seg s = new Seg();
                s.topic = name(len);
                s.txn = txn;
                viaSerde("seg-name" + len + "-txn" + (txn ? "T" : "F"), s.segment());
            }
        }
        {
            Seg s = new Seg();
            s.topic = LEGAL;
            viaSerde("seg-name-all-legal-chars", s.segment());
            s = new Seg();
            s.topic = LEGAL.repeat(4).substring(0, 249);
            viaSerde("seg-name249-all-legal-chars", s.segment());
            s = new Seg();
            s.topic = "";
            viaSerde("seg-name-empty", s.segment());
            s = new Seg();
            s.topic = "t\u00e9st-\u65e5\u672c-\uD83D\uDE00";
            viaSerde("seg-name-utf8-multibyte", s.segment());
        }
        for (int p : new int[] {0, 1, 127, 128, Integer.MAX_VALUE, -1, Integer.MIN_VALUE}) {
            Seg s = new Seg();
            s.partition = p;
            viaSerde("seg-partition" + p, s.segment());
        }
        {
            Seg s = new Seg();
            s.topicId = Uuid.ZERO_UUID;
            s.segId = Uuid.ZERO_UUID;
            viaSerde("seg-zero-uuids", s.segment());
            s = new Seg();
            s.topicId = Uuid.ONE_UUID;
            s.segId = new Uuid(-1, -1);
            viaSerde("seg-one-uuid-allones-segid", s.segment());
            s = new Seg();
            s.topicId = uuidStartingWith('-');
            s.segId = uuidStartingWith('_');
            viaSerde("seg-dash-topicid-underscore-segid", s.segment());
            s = new Seg();
            s.topicId = uuidStartingWith('_');
            s.segId = uuidStartingWith('-');
            viaSerde("seg-underscore-topicid-dash-segid", s.segment());
            s = new Seg();
            s.topicId = new Uuid(Long.MIN_VALUE, Long.MAX_VALUE);
            s.segId = new Uuid(Long.MAX_VALUE, Long.MIN_VALUE);
            viaSerde("seg-uuid-long-extremes", s.segment());
        }
        for (int size : new int[] {126, 16383, 16384}) {
            Seg s = new Seg();
            s.cm = cm(size);
            viaSerde("seg-" + cmTag(s.cm) + "-varint-boundary", s.segment());
        }
        {
            Seg s = new Seg();
            s.topic = name(249);
            s.partition = Integer.MAX_VALUE;
            s.brokerId = Integer.MIN_VALUE;
            s.maxTs = Long.MIN_VALUE;
            s.eventTs = Long.MAX_VALUE;
            s.size = Integer.MAX_VALUE;
            s.offsets(Long.MAX_VALUE, Long.MAX_VALUE, 1);
            s.cm = cm(128);
            s.txn = true;
            s.state = RemoteLogSegmentState.DELETE_SEGMENT_FINISHED;
            viaSerde("seg-all-extremes", s.segment());
        }
        for (int i = 0; i < 40; i++) {
            Seg s = new Seg();
            viaSerde("seg-random" + i + "-" + s.tag(), s.segment());
        }

        // ---------------- segment metadata update (api key 1)
        int[] updCm = {-1, 0, 1, 10, 127, 128};
        for (RemoteLogSegmentState st : RemoteLogSegmentState.values()) {
            for (int size : updCm) {
                if (st == RemoteLogSegmentState.COPY_SEGMENT_STARTED && size > 1) continue;
                Upd u = new Upd();
                u.state = st;
                u.cm = cm(size);
                viaSerde("upd-" + u.tag(), u.update());
            }
        }
        for (int b : INTS) {
            Upd u = new Upd();
            u.brokerId = b;
            viaSerde("upd-broker" + b, u.update());
        }
        for (long ts : new long[] {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE}) {
            Upd u = new Upd();
            u.eventTs = ts;
            viaSerde("upd-eventts" + ts, u.update());
        }
        for (int len : new int[] {1, 127, 128, 249}) {
            Upd u = new Upd();
            u.topic = name(len);
            viaSerde("upd-name" + len, u.update());
        }
        for (int p : new int[] {0, Integer.MAX_VALUE, -1}) {
            Upd u = new Upd();
            u.partition = p;
            viaSerde("upd-partition" + p, u.update());
        }
        {
            Upd u = new Upd();
            u.topicId = Uuid.ZERO_UUID;
            u.segId = Uuid.ZERO_UUID;
            viaSerde("upd-zero-uuids", u.update());
            u = new Upd();
            u.topicId = uuidStartingWith('-');
            u.segId = uuidStartingWith('_');
            viaSerde("upd-dash-topicid-underscore-segid", u.update());
            u = new Upd();
            u.topic = LEGAL;
            u.cm = cm(16384);
            viaSerde("upd-all-legal-chars-cm16384", u.update());
        }
        for (int i = 0; i < 15; i++) {
            Upd u = new Upd();
            viaSerde("upd-random" + i + "-" + u.tag(), u.update());
        }

        // ---------------- partition delete (api key 2)
        for (RemotePartitionDeleteState st : RemotePartitionDeleteState.values()) {
            for (int i = 0; i < 3; i++) {
                Del d = new Del();
                d.state = st;
                viaSerde("del-" + d.tag() + "-" + i, d.delete());
            }
        }
        for (int b : INTS) {
            Del d = new Del();
            d.brokerId = b;
            viaSerde("del-broker" + b, d.delete());
        }
        for (long ts : new long[] {Long.MIN_VALUE, -1, 0, Long.MAX_VALUE}) {
            Del d = new Del();
            d.eventTs = ts;
            viaSerde("del-eventts" + ts, d.delete());
        }
        for (int len : new int[] {1, 127, 128, 249}) {
            Del d = new Del();
            d.topic = name(len);
            viaSerde("del-name" + len, d.delete());
        }
        for (int p : new int[] {0, Integer.MAX_VALUE, -1}) {
            Del d = new Del();
            d.partition = p;
            viaSerde("del-partition" + p, d.delete());
        }
        {
            Del d = new Del();
            d.topicId = Uuid.ZERO_UUID;
            viaSerde("del-zero-uuid", d.delete());
            d = new Del();
            d.topicId = uuidStartingWith('-');
            viaSerde("del-dash-uuid", d.delete());
            d = new Del();
            d.topicId = uuidStartingWith('_');
            d.topic = LEGAL;
            viaSerde("del-underscore-uuid-all-legal-chars", d.delete());
        }
        for (int i = 0; i < 5; i++) {
            Del d = new Del();
            viaSerde("del-random" + i + "-" + d.tag(), d.delete());
        }

        // ---------------- segment metadata snapshot (api key 3)
        for (RemoteLogSegmentState st : RemoteLogSegmentState.values()) {
            for (int size : new int[] {-1, 0, 1, 128}) {
                Seg s = new Seg();
                s.state = st;
                s.cm = cm(size);
                viaSerde("snap-" + s.tag(), s.snapshot());
            }
        }
        {
            Seg s = new Seg();
            s.segId = Uuid.ZERO_UUID;
            s.maxTs = -1;
            viaSerde("snap-zero-segid-maxts-1", s.snapshot());
            s = new Seg();
            s.segId = uuidStartingWith('-');
            s.offsets(0, Long.MAX_VALUE, 3);
            viaSerde("snap-dash-segid-start0-end-longmax", s.snapshot());
            s = new Seg();
            s.segId = uuidStartingWith('_');
            s.start = Long.MIN_VALUE;
            s.end = -1;
            viaSerde("snap-underscore-segid-negative-offsets", s.snapshot());
            s = new Seg();
            s.brokerId = Integer.MIN_VALUE;
            s.size = Integer.MIN_VALUE;
            s.maxTs = Long.MIN_VALUE;
            s.eventTs = Long.MAX_VALUE;
            viaSerde("snap-int-long-extremes", s.snapshot());
            s = new Seg();
            s.brokerId = Integer.MAX_VALUE;
            s.size = Integer.MAX_VALUE;
            s.maxTs = Long.MAX_VALUE;
            s.eventTs = Long.MIN_VALUE;
            s.txn = true;
            viaSerde("snap-int-long-extremes-2", s.snapshot());
            s = new Seg();
            s.offsets(s.start, s.start + 1_000_000, 128);
            viaSerde("snap-epochs128", s.snapshot());
            s = new Seg();
            s.epochs = new TreeMap<>(Map.of(Integer.MIN_VALUE, Long.MIN_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE));
            viaSerde("snap-epochs-extremes", s.snapshot());
        }
        for (int i = 0; i < 10; i++) {
            Seg s = new Seg();
            viaSerde("snap-random" + i + "-" + s.tag(), s.snapshot());
        }

        // ---------------- wire-level values the object model refuses or cannot make
        Seg base = new Seg();
        base.cm = cm(3);
        RemoteLogSegmentMetadata segBase = base.segment();
        Class<RemoteLogSegmentMetadataRecord> SEG = RemoteLogSegmentMetadataRecord.class;
        viaWire("seg-negative-offsets", segBase, SEG, m -> m.setStartOffset(-5).setEndOffset(-1));
        viaWire("seg-start-longmin", segBase, SEG, m -> m.setStartOffset(Long.MIN_VALUE).setEndOffset(Long.MIN_VALUE));
        viaWire("seg-end-before-start", segBase, SEG, m -> m.setStartOffset(100).setEndOffset(50));
        viaWire("seg-empty-epochs", segBase, SEG, m -> m.setSegmentLeaderEpochs(new ArrayList<>()));
        viaWire("seg-epochs-descending", segBase, SEG, m -> m.setSegmentLeaderEpochs(new ArrayList<>(List.of(
                new RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry().setLeaderEpoch(9).setOffset(90),
                new RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry().setLeaderEpoch(3).setOffset(30)))));
        viaWire("seg-epochs-duplicate", segBase, SEG, m -> m.setSegmentLeaderEpochs(new ArrayList<>(List.of(
                new RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry().setLeaderEpoch(4).setOffset(10),
                new RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry().setLeaderEpoch(4).setOffset(20)))));
        for (byte st : new byte[] {4, -1, 127, -128}) {
            viaWire("seg-state" + st, segBase, SEG, m -> m.setRemoteLogSegmentState(st));
        }
        viaWire("seg-unknown-tags-2-127-128", segBase, SEG, m -> {
            m.setTxnIndexEmpty(true);
            m.unknownTaggedFields().add(new RawTaggedField(2, bytes(1)));
            m.unknownTaggedFields().add(new RawTaggedField(127, bytes(127)));
            m.unknownTaggedFields().add(new RawTaggedField(128, bytes(200)));
        });
        viaWire("seg-unknown-tags-nested", segBase, SEG, m -> {
            m.remoteLogSegmentId().topicIdPartition().unknownTaggedFields().add(new RawTaggedField(0, bytes(4)));
            m.remoteLogSegmentId().unknownTaggedFields().add(new RawTaggedField(1, new byte[0]));
            m.segmentLeaderEpochs().get(0).unknownTaggedFields().add(new RawTaggedField(0, bytes(2)));
            m.segmentLeaderEpochs().get(0).unknownTaggedFields().add(new RawTaggedField(10000, bytes(3)));
            m.unknownTaggedFields().add(new RawTaggedField(5, bytes(2)));
        });
        Upd ub = new Upd();
        ub.cm = cm(2);
        Class<RemoteLogSegmentMetadataUpdateRecord> UPD = RemoteLogSegmentMetadataUpdateRecord.class;
        for (byte st : new byte[] {4, -1}) {
            viaWire("upd-state" + st, ub.update(), UPD, m -> m.setRemoteLogSegmentState(st));
        }
        viaWire("upd-unknown-tag-2-and-nested", ub.update(), UPD, m -> {
            m.remoteLogSegmentId().topicIdPartition().unknownTaggedFields().add(new RawTaggedField(3, bytes(1)));
            m.unknownTaggedFields().add(new RawTaggedField(2, bytes(8)));
        });
        Class<RemotePartitionDeleteMetadataRecord> DEL = RemotePartitionDeleteMetadataRecord.class;
        for (byte st : new byte[] {3, -1, 127}) {
            viaWire("del-state" + st, new Del().delete(), DEL, m -> m.setRemotePartitionDeleteState(st));
        }
        viaWire("del-unknown-tags", new Del().delete(), DEL, m -> {
            m.topicIdPartition().unknownTaggedFields().add(new RawTaggedField(0, bytes(2)));
            m.unknownTaggedFields().add(new RawTaggedField(2, bytes(4)));
            m.unknownTaggedFields().add(new RawTaggedField(300, new byte[0]));
        });
        Class<RemoteLogSegmentMetadataSnapshotRecord> SNAP = RemoteLogSegmentMetadataSnapshotRecord.class;
        RemoteLogSegmentMetadataSnapshot snapBase = new Seg().snapshot();
        viaWire("snap-empty-epochs", snapBase, SNAP, m -> m.setSegmentLeaderEpochs(new ArrayList<>()));
        viaWire("snap-state4", snapBase, SNAP, m -> m.setRemoteLogSegmentState((byte) 4));
        viaWire("snap-unknown-tags", snapBase, SNAP, m -> {
            m.setTxnIndexEmpty(true);
            m.segmentLeaderEpochs().get(0).unknownTaggedFields().add(new RawTaggedField(1, bytes(4)));
            m.unknownTaggedFields().add(new RawTaggedField(2, bytes(1)));
        });
        return valueCases;
    }

    String valuesSource() {
        return "Apache Kafka 4.4.0 from Maven Central (" + Kafka44.KAFKA + "). Written by rlmeta tests/interop VectorWriter"
                + " (java.util.Random seed " + SEED + "). Cases with writer \"RemoteLogMetadataSerde.serialize\" are"
                + " org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde.serialize of"
                + " RemoteLogSegmentMetadata / RemoteLogSegmentMetadataUpdate / RemotePartitionDeleteMetadata /"
                + " RemoteLogSegmentMetadataSnapshot objects (each checked to deserialize back to an equal object); cases with"
                + " writer \"BytesApiMessageSerde.serialize (generated record)\" (names k44-wire-*) are the generated"
                + " org.apache.kafka.server.log.remote.metadata.storage.generated.*Record classes written by the"
                + " BytesApiMessageSerde that RemoteLogMetadataSerde uses internally, for values its object model refuses"
                + " (remoteLogMetadataSerde says what RemoteLogMetadataSerde.deserialize makes of them). All values are"
                + " version 0, the only version 4.4.0 has. record = the generated record read back from hex by that"
                + " BytesApiMessageSerde (TxnIndexEmpty, tag 0 of the segment and snapshot records, always spelled out;"
                + " it is the only tagged field in 4.4.0's schemas).";
    }

    // ================================================================== partitioner

    List<ObjectNode> partitioner() {
        List<ObjectNode> out = new ArrayList<>();
        Uuid example = new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L);
        for (int n : new int[] {1, 3, 50, 1000, Integer.MAX_VALUE}) {
            RemoteLogMetadataTopicPartitioner p = new RemoteLogMetadataTopicPartitioner(n);
            List<Object[]> inputs = new ArrayList<>();
            inputs.add(new Object[] {Uuid.ZERO_UUID, 0});
            inputs.add(new Object[] {Uuid.ONE_UUID, 1});
            inputs.add(new Object[] {new Uuid(-1, -1), Integer.MAX_VALUE});
            inputs.add(new Object[] {example, 0});
            inputs.add(new Object[] {example, 1});
            inputs.add(new Object[] {example, 2});
            inputs.add(new Object[] {uuidStartingWith('-'), Integer.MAX_VALUE});
            inputs.add(new Object[] {uuidStartingWith('_'), 49});
            inputs.add(new Object[] {uuid(), -1});
            inputs.add(new Object[] {uuid(), Integer.MIN_VALUE});
            int[] small = {0, 1, 2, 3, 7, 49, 50, 51, 999, 1000};
            for (int i = 0; i < 30; i++) {
                int part = switch (i % 3) {
                    case 0 -> small[rnd.nextInt(small.length)];
                    case 1 -> rnd.nextInt(100_000);
                    default -> rnd.nextInt(Integer.MAX_VALUE);
                };
                inputs.add(new Object[] {uuid(), part});
            }
            int i = 0;
            for (Object[] in : inputs) {
                Uuid id = (Uuid) in[0];
                int part = (Integer) in[1];
                ObjectNode c = Kafka44.NODES.objectNode();
                c.put("name", String.format("k44-part-n%d-%02d", n, i++));
                c.put("topicId", id.toString());
                c.put("partition", part);
                c.put("numPartitions", n);
                c.put("metadataPartition", p.metadataPartition(new TopicIdPartition(id, part, "t" + i)));
                out.add(c);
            }
        }
        return out;
    }

    String partitionerSource() {
        return "Apache Kafka 4.4.0 from Maven Central (" + Kafka44.KAFKA + "):"
                + " org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner(numPartitions)"
                + ".metadataPartition(TopicIdPartition); inputs from rlmeta tests/interop VectorWriter, java.util.Random seed "
                + SEED + " (after the value cases).";
    }

    // ================================================================== invalid

    final List<String> accepted = new ArrayList<>();
    final List<String> v1Rejections = new ArrayList<>();
    final List<ObjectNode> acceptedCases = new ArrayList<>();
    private final List<ObjectNode> invalidCases = new ArrayList<>();

    private void invalid(String name, byte[] value, String derivation) {
        String full = "k44-invalid-" + name;
        Throwable wire;
        try {
            ApiMessageAndVersion amv = Kafka44.readWire(value);
            accepted.add(full + " [" + derivation + "] hex " + abbreviate(Kafka44.hex(value)) + " -> read as version "
                    + amv.version() + ": " + abbreviate(RecordJson.toJson(amv.message()).toString()));
            ObjectNode c = Kafka44.NODES.objectNode();
            c.put("name", full.replace("k44-invalid-", "k44-accepted-"));
            c.put("apiKey", amv.message().apiKey());
            c.put("version", amv.version());
            c.set("record", RecordJson.toJson(amv.message()));
            c.put("hex", Kafka44.hex(value));
            c.put("derivation", derivation);
            acceptedCases.add(c);
            return;
        } catch (RuntimeException e) {
            wire = e;
        }
        Throwable serde = null;
        try {
            Kafka44.SERDE.deserialize(value);
        } catch (RuntimeException e) {
            serde = e;
        }
        if (serde == null || !Kafka44.describe(serde).equals(Kafka44.describe(wire))) {
            throw new IllegalStateException(full + ": RemoteLogMetadataSerde and BytesApiMessageSerde disagree: "
                    + (serde == null ? "accepted" : Kafka44.describe(serde)) + " vs " + Kafka44.describe(wire));
        }
        ObjectNode c = Kafka44.NODES.objectNode();
        c.put("name", full);
        c.put("hex", Kafka44.hex(value));
        c.put("error", wire.toString());
        c.set("causes", Kafka44.strings(Kafka44.causes(wire)));
        c.put("derivation", derivation);
        invalidCases.add(c);
    }

    static String abbreviate(String s) {
        return s.length() <= 240 ? s : s.substring(0, 240) + "...";
    }

    static byte[] b(int... xs) {
        byte[] out = new byte[xs.length];
        for (int i = 0; i < xs.length; i++) out[i] = (byte) xs[i];
        return out;
    }

    static byte[] slice(byte[] a, int from, int to) {
        return Arrays.copyOfRange(a, from, to);
    }

    /** Replaces bytes [from, to) of a with the given bytes. */
    static byte[] splice(byte[] a, int from, int to, byte[] with) {
        return Kafka44.concat(slice(a, 0, from), with, slice(a, to, a.length));
    }

    List<ObjectNode> invalid() {
        // Real values to damage. Name "t" keeps layouts simple; offsets within them are computed below.
        Seg s = new Seg();
        s.topic = "t";
        s.cm = Optional.of(new CustomMetadata(b(0xca, 0xfe, 0x01)));
        s.epochs = new TreeMap<>(Map.of(3, s.start, 5, s.start + 100));
        s.txn = true;
        s.state = RemoteLogSegmentState.COPY_SEGMENT_FINISHED;
        byte[] seg = Kafka44.SERDE.serialize(s.segment());
        Upd u = new Upd();
        u.topic = "t";
        u.cm = Optional.of(new CustomMetadata(b(0xbe, 0xef)));
        byte[] upd = Kafka44.SERDE.serialize(u.update());
        Del d = new Del();
        d.topic = "t";
        byte[] del = Kafka44.SERDE.serialize(d.delete());
        Seg sn = new Seg();
        sn.cm = Optional.of(new CustomMetadata(b(0x42)));
        sn.epochs = new TreeMap<>(Map.of(1, sn.start));
        sn.txn = true;
        byte[] snap = Kafka44.SERDE.serialize(sn.snapshot());

        // Layout of seg (api key 0, name "t"): [0..3) frame/key/version, 3 name len, 4 name,
        // 5..21 topic id, 21..25 partition, 25 tip tags, 26..42 segment id, 42 segid tags,
        // 43 start, 51 end, 59 broker, 63 maxTs, 71 eventTs, 79 epoch count, 80.. epochs (13 each),
        // 106 size, 110 cm len, 111..114 cm, 114 state, 115 tag count, 116 tag, 117 size, 118 value.
        final int nameLen = 3, tipTags = 25, sidTags = 42, epochCount = 79, cmLen = 110, tagCount = 115;
        if (seg.length != 119 || seg[epochCount] != 3 || seg[cmLen] != 4 || seg[tagCount] != 1) {
            throw new IllegalStateException("unexpected segment layout: " + Kafka44.hex(seg));
        }
        // Layout of upd: name len 3, ..., 43 brokerId, 47 eventTs, 55 cm len (3), 56..58 cm, 58 state, 59 tags.
        final int updCmLen = 55, updTags = 59;
        if (upd.length != 60 || upd[updCmLen] != 3) throw new IllegalStateException("unexpected update layout: " + Kafka44.hex(upd));
        // Layout of del: ..., 26 brokerId, 30 eventTs, 38 state, 39 tags.
        if (del.length != 40) throw new IllegalStateException("unexpected delete layout: " + Kafka44.hex(del));
        // Layout of snap: 3 segment id, 19 start, 27 end, 35 broker, 39 maxTs, 47 eventTs, 55 epoch count,
        // 56..69 one epoch, 69 size, 73 cm len, 74 cm, 75 state, 76 tag count 1, 77 tag 0, 78 size 1, 79 value.
        final int snapEpochCount = 55, snapTagCount = 76;
        if (snap.length != 80 || snap[snapEpochCount] != 2 || snap[snapTagCount] != 1) {
            throw new IllegalStateException("unexpected snapshot layout: " + Kafka44.hex(snap));
        }

        Map<String, byte[]> real = new LinkedHashMap<>();
        real.put("seg", seg);
        real.put("upd", upd);
        real.put("del", del);
        real.put("snap", snap);

        // ---- truncation at every length
        for (var e : real.entrySet()) {
            byte[] v = e.getValue();
            for (int n = 0; n < v.length; n++) {
                invalid("truncated-" + e.getKey() + "-" + n + "-of-" + v.length, slice(v, 0, n),
                        "the first " + n + " of the " + v.length + " bytes of a real " + e.getKey() + " value");
            }
        }
        // ---- trailing bytes
        for (var e : real.entrySet()) {
            invalid("trailing-00-after-" + e.getKey(), Kafka44.concat(e.getValue(), b(0)), "real " + e.getKey() + " value + 00");
            invalid("trailing-ff-after-" + e.getKey(), Kafka44.concat(e.getValue(), b(0xff)), "real " + e.getKey() + " value + ff");
        }
        invalid("trailing-10-bytes-after-seg", Kafka44.concat(seg, bytes(10)), "real seg value + 10 random bytes");
        invalid("two-values-del-del", Kafka44.concat(del, del), "two real del values concatenated");
        invalid("two-values-upd-seg", Kafka44.concat(upd, seg), "real upd value followed by real seg value");
        invalid("trailing-tag-section-after-del", Kafka44.concat(del, b(0)), "real del value with a second empty tag section");

        // ---- frame version
        byte[] body = slice(del, 1, del.length); // api key, version, body
        for (long fv : new long[] {0, 2, 99, 127, 128, 300, 32767}) {
            invalid("frame-version-" + fv, Kafka44.concat(Kafka44.uvarint(fv), body), "frame version " + fv + " before a real del api key/version/body");
        }
        invalid("frame-version-0-only", b(0), "frame version 0, nothing else");
        invalid("frame-version-32768-too-large", Kafka44.concat(Kafka44.uvarint(32768), body), "frame version 32768");
        invalid("frame-version-65537-too-large", Kafka44.concat(Kafka44.uvarint(65537), body), "frame version 65537 (low 16 bits = 1)");
        invalid("frame-version-uvarint-ffffffff", Kafka44.concat(Kafka44.uvarint(0xffffffffL), body), "frame version uvarint 0xffffffff (int -1)");
        invalid("frame-version-overlong-6-bytes", Kafka44.concat(b(0x81, 0x80, 0x80, 0x80, 0x80, 0x00), body), "frame version 1 as a 6-byte varint");
        invalid("frame-version-unterminated-varint", b(0x81), "frame version varint with continuation bit and nothing after");
        invalid("frame-version-unterminated-varint-5", b(0x81, 0x80, 0x80, 0x80, 0x80), "5 varint bytes all with continuation bit");
        invalid("empty-input", new byte[0], "no bytes");

        // ---- api key
        byte[] afterKey = slice(del, 2, del.length); // version, body
        for (long k : new long[] {4, 5, 99, 127, 128, 200, 32767}) {
            invalid("api-key-" + k, Kafka44.concat(b(1), Kafka44.uvarint(k), afterKey), "api key " + k + " with a real del version/body");
        }
        invalid("api-key-32768-too-large", Kafka44.concat(b(1), Kafka44.uvarint(32768), afterKey), "api key 32768");
        invalid("api-key-overlong-6-bytes", Kafka44.concat(b(1, 0x82, 0x80, 0x80, 0x80, 0x80, 0x00), afterKey), "api key 2 as a 6-byte varint");
        invalid("api-key-unterminated", b(1, 0x80), "api key varint cut after a continuation byte");

        // ---- version
        for (var e : real.entrySet()) {
            byte[] v = e.getValue();
            byte[] v1 = Kafka44.concat(slice(v, 0, 2), Kafka44.uvarint(1), slice(v, 3, v.length));
            try {
                Kafka44.readWire(v1);
                accepted.add("version-1-" + e.getKey() + ": Kafka 4.4.0 reads a version-0 body framed as version 1");
            } catch (RuntimeException x) {
                // Rejected only because 4.4.0 has no version 1; the KIP-1266 (v0-1) schema rlmeta follows reads it.
                v1Rejections.add("version-1-" + e.getKey() + " (" + Kafka44.hex(v1).substring(0, 12) + "...): " + Kafka44.describe(x));
            }
            for (long ver : new long[] {2, 127, 128, 32767}) {
                invalid("version-" + ver + "-" + e.getKey(), Kafka44.concat(slice(v, 0, 2), Kafka44.uvarint(ver), slice(v, 3, v.length)),
                        "real version-0 " + e.getKey() + " body framed as version " + ver);
            }
            invalid("version-32768-too-large-" + e.getKey(), Kafka44.concat(slice(v, 0, 2), Kafka44.uvarint(32768), slice(v, 3, v.length)),
                    "real " + e.getKey() + " body framed as version 32768");
        }
        invalid("version-overlong-6-bytes", Kafka44.concat(slice(del, 0, 2), b(0x80, 0x80, 0x80, 0x80, 0x80, 0x00), slice(del, 3, del.length)),
                "del version 0 as a 6-byte varint");

        // ---- strings (topic name of seg, compact string length at offset 3)
        invalid("name-length-null", splice(seg, nameLen, nameLen + 1, b(0)), "seg topic name compact length 0 (= null)");
        invalid("name-length-32768", splice(seg, nameLen, nameLen + 1, Kafka44.uvarint(32769)), "seg topic name length 32768 (> 0x7fff), rest of value as is");
        invalid("name-length-32768-with-bytes", Kafka44.concat(slice(seg, 0, 3), Kafka44.uvarint(32769), new byte[32768], slice(seg, 5, seg.length)),
                "seg topic name of 32768 zero bytes (> 0x7fff) followed by the rest of the value");
        invalid("name-length-200-past-end", splice(seg, nameLen, nameLen + 1, Kafka44.uvarint(201)), "seg topic name length 200 with fewer bytes left");
        invalid("name-length-uvarint-ffffffff", splice(seg, nameLen, nameLen + 1, Kafka44.uvarint(0xffffffffL)), "seg topic name length uvarint 0xffffffff");
        invalid("name-length-overlong-6-bytes", splice(seg, nameLen, nameLen + 1, b(0x82, 0x80, 0x80, 0x80, 0x80, 0x00)), "seg topic name length 2 as a 6-byte varint");

        // ---- epoch array count (seg offset 79, snap offset 55)
        invalid("epochs-count-null", splice(seg, epochCount, epochCount + 1, b(0)), "seg epoch array compact count 0 (= null)");
        invalid("epochs-count-null-snap", splice(snap, snapEpochCount, snapEpochCount + 1, b(0)), "snap epoch array compact count 0 (= null)");
        invalid("epochs-count-3-of-2", splice(seg, epochCount, epochCount + 1, b(4)), "seg epoch array says 3 entries, has 2");
        invalid("epochs-count-huge", splice(seg, epochCount, epochCount + 1, Kafka44.uvarint(0x7fffffffL)), "seg epoch array count 2147483646");
        invalid("epochs-count-1000001", splice(seg, epochCount, epochCount + 1, Kafka44.uvarint(1000002)), "seg epoch array count 1000001");
        invalid("epochs-count-uvarint-ffffffff", splice(seg, epochCount, epochCount + 1, Kafka44.uvarint(0xffffffffL)), "seg epoch array count uvarint 0xffffffff (int -1)");
        invalid("epochs-count-uvarint-80000000", splice(seg, epochCount, epochCount + 1, Kafka44.uvarint(0x80000000L)), "seg epoch array count uvarint 0x80000000");
        invalid("epochs-count-overlong-6-bytes", splice(seg, epochCount, epochCount + 1, b(0x83, 0x80, 0x80, 0x80, 0x80, 0x00)), "seg epoch array count 3 (=2 entries) as a 6-byte varint");

        // ---- custom metadata (nullable bytes)
        invalid("cm-length-past-end", splice(seg, cmLen, cmLen + 1, Kafka44.uvarint(101)), "seg customMetadata length 100 with fewer bytes left");
        invalid("cm-length-past-end-upd", splice(upd, updCmLen, updCmLen + 1, Kafka44.uvarint(0x7ffffffeL)), "upd customMetadata length 2147483645");
        invalid("cm-length-overlong-6-bytes", splice(upd, updCmLen, updCmLen + 1, b(0x83, 0x80, 0x80, 0x80, 0x80, 0x00)), "upd customMetadata length 2 as a 6-byte varint");

        // ---- tagged-field sections
        invalid("tag-count-5-nothing-after", Kafka44.concat(slice(del, 0, del.length - 1), b(5)), "del top-level tag count 5, no tags");
        invalid("tag-count-uvarint-ffffffff", Kafka44.concat(slice(del, 0, del.length - 1), Kafka44.uvarint(0xffffffffL)), "del top-level tag count uvarint 0xffffffff (int -1)");
        invalid("tag-count-uvarint-80000000", Kafka44.concat(slice(del, 0, del.length - 1), Kafka44.uvarint(0x80000000L)), "del top-level tag count uvarint 0x80000000");
        invalid("tag-count-overlong-6-bytes", Kafka44.concat(slice(del, 0, del.length - 1), b(0x80, 0x80, 0x80, 0x80, 0x80, 0x00)), "del top-level tag count 0 as a 6-byte varint");
        {
            int n = 10001;
            byte[] many = new byte[2 * n];
            for (int i = 0; i < n; i++) {
                many[2 * i] = 9;
                many[2 * i + 1] = 0;
            }
            invalid("tag-count-10001", Kafka44.concat(slice(del, 0, del.length - 1), Kafka44.uvarint(n), many),
                    "del top-level tag section with 10001 empty unknown tags (tag 9, size 0)");
        }
        invalid("tag-count-2-has-1", Kafka44.concat(slice(del, 0, del.length - 1), b(2, 9, 1, 0x55)), "del top-level tag count 2, one tag (9, size 1) present");
        invalid("tag-size-past-end", Kafka44.concat(slice(del, 0, del.length - 1), b(1, 9, 50, 1, 2)), "del unknown tag 9 with size 50 and 2 bytes");
        invalid("tag-size-uvarint-ffffffff", Kafka44.concat(slice(del, 0, del.length - 1), b(1, 9), Kafka44.uvarint(0xffffffffL)), "del unknown tag 9 with size uvarint 0xffffffff");
        invalid("tag-id-overlong-6-bytes", Kafka44.concat(slice(del, 0, del.length - 1), b(1, 0x89, 0x80, 0x80, 0x80, 0x80, 0x00, 0)), "del tag 9 as a 6-byte varint, size 0");
        invalid("tag-size-overlong-6-bytes", Kafka44.concat(slice(del, 0, del.length - 1), b(1, 9, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)), "del tag 9, size 0 as a 6-byte varint");
        invalid("nested-tip-tag-count-3", splice(seg, tipTags, tipTags + 1, b(3)), "seg topicIdPartition tag count 3 where there are no tags");
        invalid("nested-segid-tag-count-uvarint-ffffffff", splice(seg, sidTags, sidTags + 1, Kafka44.uvarint(0xffffffffL)), "seg remoteLogSegmentId tag count uvarint 0xffffffff");
        invalid("nested-epoch-tag-count-2", splice(seg, 92, 93, b(2)), "seg first epoch entry tag count 2 where there are no tags");
        if (seg[92] != 0) throw new IllegalStateException("unexpected epoch layout");
        // TxnIndexEmpty (tag 0, bool) is read with a fixed 1-byte decoder whatever its size says.
        invalid("txn-tag-size-0-at-end", Kafka44.concat(slice(seg, 0, tagCount), b(1, 0, 0)), "seg TxnIndexEmpty tag declared with size 0 and no data");
        invalid("txn-tag-size-2", Kafka44.concat(slice(seg, 0, tagCount), b(1, 0, 2, 1, 1)), "seg TxnIndexEmpty tag declared with size 2 and 2 data bytes");
        invalid("txn-tag-size-0-snap", Kafka44.concat(slice(snap, 0, snapTagCount), b(1, 0, 0)), "snap TxnIndexEmpty tag declared with size 0 and no data");
        invalid("update-tag-data-truncated", Kafka44.concat(slice(upd, 0, updTags), b(1, 2, 4, 0, 0)), "upd unknown tag 2 declared with size 4, 2 bytes present");

        // ---- probes: malformed-looking inputs that Kafka 4.4.0 is expected to ACCEPT. They are
        // left out of the file and listed on stdout (README "Inputs 4.4.0 accepts").
        invalid("probe-frame-version-uvarint-80000001", Kafka44.concat(Kafka44.uvarint(0x80000001L), body), "frame version uvarint 0x80000001 (int < 0, short 1)");
        invalid("probe-frame-version-2-byte-1", Kafka44.concat(b(0x81, 0x00), body), "frame version 1 as a non-minimal 2-byte varint");
        invalid("probe-frame-version-5-byte-high-bits", Kafka44.concat(b(0x81, 0x80, 0x80, 0x80, 0x70), body), "frame version varint 81 80 80 80 70 (bits above 32 dropped)");
        invalid("probe-api-key-uvarint-80000002", Kafka44.concat(b(1), Kafka44.uvarint(0x80000002L), afterKey), "api key uvarint 0x80000002 (short 2) before a real del body");
        invalid("probe-version-uvarint-ffffffff", Kafka44.concat(slice(del, 0, 2), Kafka44.uvarint(0xffffffffL), slice(del, 3, del.length)), "del body framed as version uvarint 0xffffffff (short -1)");
        invalid("probe-version-uvarint-ffffffff-seg", Kafka44.concat(slice(seg, 0, 2), Kafka44.uvarint(0xffffffffL), slice(seg, 3, seg.length)), "seg body framed as version uvarint 0xffffffff (short -1)");
        invalid("probe-version-uvarint-80000000", Kafka44.concat(slice(seg, 0, 2), Kafka44.uvarint(0x80000000L), slice(seg, 3, seg.length)), "seg body framed as version uvarint 0x80000000 (short 0)");
        invalid("version-65536-too-large-seg", Kafka44.concat(slice(seg, 0, 2), Kafka44.uvarint(0x10000L), slice(seg, 3, seg.length)), "seg body framed as version 65536 (> 32767)");
        invalid("probe-cm-length-uvarint-ffffffff", splice(upd, updCmLen, updCmLen + 3, Kafka44.uvarint(0xffffffffL)), "upd customMetadata length uvarint 0xffffffff read as null");
        invalid("cm-length-uvarint-80000000", splice(upd, updCmLen, updCmLen + 3, Kafka44.uvarint(0x80000000L)), "upd customMetadata length uvarint 0x80000000 (length 2147483647)");
        invalid("probe-name-length-non-minimal", splice(seg, nameLen, nameLen + 1, b(0x82, 0x00)), "seg topic name length as a non-minimal 2-byte varint");
        invalid("probe-txn-bool-2", Kafka44.concat(slice(seg, 0, tagCount), b(1, 0, 1, 2)), "seg TxnIndexEmpty byte 2");
        invalid("probe-txn-tag-size-5", Kafka44.concat(slice(seg, 0, tagCount), b(1, 0, 5, 1)), "seg TxnIndexEmpty tag declared with size 5, 1 data byte");
        invalid("probe-txn-tag-twice", Kafka44.concat(slice(seg, 0, tagCount), b(2, 0, 1, 1, 0, 1, 0)), "seg TxnIndexEmpty tag twice (true then false)");
        invalid("probe-tags-descending", Kafka44.concat(slice(del, 0, del.length - 1), b(2, 9, 0, 3, 0)), "del unknown tags 9 then 3");
        invalid("probe-upd-tag-0-and-1-v0", Kafka44.concat(slice(upd, 0, updTags), b(2, 0, 4, 0, 0, 0, 7, 1, 8, 0, 0, 0, 0, 0, 0, 0, 100)), "upd v0 with tags 0 (4 bytes) and 1 (8 bytes), shaped like KIP-1266 BrokerLeaderEpoch/EndOffset");
        invalid("probe-seg-tag-1-v0", Kafka44.concat(slice(seg, 0, tagCount), b(2, 0, 1, 1, 1, 4, 0, 0, 0, 7)), "seg v0 with TxnIndexEmpty and tag 1 (4 bytes), shaped like KIP-1266 BrokerLeaderEpoch");
        {
            int n = 10000;
            byte[] many = new byte[2 * n];
            for (int i = 0; i < n; i++) many[2 * i] = 9;
            invalid("probe-tag-count-10000", Kafka44.concat(slice(del, 0, del.length - 1), Kafka44.uvarint(n), many), "del with 10000 empty unknown tags (tag 9, size 0)");
        }
        return invalidCases;
    }

    String invalidSource() {
        return "Inputs rejected by Apache Kafka 4.4.0 from Maven Central (" + Kafka44.KAFKA + "):"
                + " each was given to org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde"
                + ".deserialize and to the BytesApiMessageSerde it uses, and both threw the same exception; error is"
                + " Throwable.toString() of it and causes its cause chain. Made by rlmeta tests/interop VectorWriter"
                + " (java.util.Random seed " + SEED + ") from real RemoteLogMetadataSerde.serialize output by truncation,"
                + " appending, or replacing varints (see derivation). Candidates that 4.4.0 accepted were left out, and so"
                + " were real version-0 bodies framed as version 1, which 4.4.0 rejects only because it has no version 1"
                + " (the KIP-1266 schema of apache/kafka#22459 that rlmeta follows reads them).";
    }
}
