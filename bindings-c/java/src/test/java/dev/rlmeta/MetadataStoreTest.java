package dev.rlmeta;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.KafkaStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;
import org.junit.jupiter.api.Test;

/**
 * The MetadataStore surface with Kafka 4.4.0's own objects: events are Kafka's serde bytes, and
 * what the store returns is decoded with Kafka's serde and compared with the objects Kafka's
 * {@code createWithUpdates} builds.
 */
class MetadataStoreTest {
    static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    static final Uuid TOPIC = new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L);
    static final TopicIdPartition TP = new TopicIdPartition(TOPIC, new TopicPartition("orders", 0));
    static final long MSB = TOPIC.getMostSignificantBits();
    static final long LSB = TOPIC.getLeastSignificantBits();

    /** Records packed as MetadataStore.apply takes them. */
    static final class Batch {
        final List<Long> offsets = new ArrayList<>();
        final ByteArrayOutputStream data = new ByteArrayOutputStream();
        final List<Integer> keys = new ArrayList<>();
        final List<Integer> values = new ArrayList<>();

        Batch add(long offset, byte[] key, byte[] value) {
            offsets.add(offset);
            keys.add(key == null ? -1 : key.length);
            values.add(value == null ? -1 : value.length);
            if (key != null) data.writeBytes(key);
            if (value != null) data.writeBytes(value);
            return this;
        }

        byte[] applyTo(MetadataStore s) {
            return s.apply(offsets.stream().mapToLong(Long::longValue).toArray(), data.toByteArray(),
                    keys.stream().mapToInt(Integer::intValue).toArray(),
                    values.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    private long next;

    /** Produces planned records: applies them as the consumer would read them back. */
    byte[] produce(MetadataStore s, PlannedRecords r) {
        Batch b = new Batch();
        for (int i = 0; i < r.size(); i++) b.add(next++, r.keys[i], r.values[i]);
        return b.applyTo(s);
    }

    static RemoteLogSegmentMetadata started(Uuid id, long start, long end, int epoch) {
        return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(TP, id), start, end, 1_700_000_000_000L, 1,
                1_700_000_000_001L, 1024, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                Map.of(epoch, start));
    }

    static RemoteLogSegmentMetadataUpdate update(Uuid id, RemoteLogSegmentState state, long ts, byte[] custom) {
        return new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(TP, id), ts,
                Optional.ofNullable(custom).map(CustomMetadata::new), state, 2);
    }

    @Test
    void aSegmentLifecycleThroughThePlannerAnswersAsKafka() {
        Uuid id = new Uuid(0x1111111111111111L, 0x2222222222222222L);
        try (MetadataStore s = new MetadataStore()) {
            s.loadPartition(MSB, LSB, "orders", 0);
            assertFalse(s.isInitialized(MSB, LSB, 0));
            RlMetaException e = assertThrows(RlMetaException.NotInitialized.class, () -> s.segments(MSB, LSB, 0));
            assertEquals(15, e.getErrorCode());
            assertTrue(s.markInitialized(MSB, LSB, "orders", 0));
            assertTrue(s.isInitialized(MSB, LSB, 0));

            RemoteLogSegmentMetadata copy = started(id, 0, 99, 5);
            PlannedRecords r = s.plan(SERDE.serialize(copy), 5, 2);
            assertEquals(1, r.size());
            assertEquals(RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 99, 5, false), new String(r.keys[0], UTF_8));
            // planned at level 2: a version-1 value, applied, which a stock broker cannot read
            assertArrayEquals(new byte[] {Outcome.APPLIED_V1}, produce(s, r));
            assertTrue(Outcome.fatalToKafka(Outcome.APPLIED_V1));
            byte[][] listed = s.segments(MSB, LSB, 0);
            assertEquals(1, listed.length);
            assertEquals(copy, SERDE.deserialize(listed[0]));
            assertArrayEquals(SERDE.serialize(copy), listed[0], "the store's bytes are Kafka's serde bytes");
            assertNull(s.segmentFor(MSB, LSB, 0, 5, 10), "a copy in progress is not found by offset");

            RemoteLogSegmentMetadataUpdate finished =
                    update(id, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1_700_000_000_005L, new byte[] {1, 2, 3});
            r = s.plan(SERDE.serialize(finished), 5, 2);
            assertEquals(RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 99, 5, true), new String(r.keys[0], UTF_8));
            assertArrayEquals(new byte[] {Outcome.APPLIED_V1}, produce(s, r));
            RemoteLogSegmentMetadata now = copy.createWithUpdates(finished);
            assertEquals(now, SERDE.deserialize(s.segmentFor(MSB, LSB, 0, 5, 10)));
            assertArrayEquals(SERDE.serialize(now), s.segmentFor(MSB, LSB, 0, 5, 99));
            assertNull(s.segmentFor(MSB, LSB, 0, 5, 100));
            assertEquals(99, s.highestOffsetForEpoch(MSB, LSB, 0, 5));
            assertEquals(MetadataStore.NO_OFFSET, s.highestOffsetForEpoch(MSB, LSB, 0, 4));
            assertEquals(1024, s.remoteLogSize(MSB, LSB, 0, 5));
            assertEquals(0, s.remoteLogSize(MSB, LSB, 0, 6));
            assertEquals(1, s.segmentsForEpoch(MSB, LSB, 0, 5).length);
            assertEquals(0, s.segmentsForEpoch(MSB, LSB, 0, 6).length);
            assertEquals(now, SERDE.deserialize(s.nextSegmentWithTxnIndex(MSB, LSB, 0, 5, 0)));
            assertArrayEquals(new byte[] {RemoteLogSegmentState.COPY_SEGMENT_FINISHED.id()},
                    s.segmentState(MSB, LSB, 0, id.getMostSignificantBits(), id.getLeastSignificantBits()));
            assertNull(s.segmentState(MSB, LSB, 0, 7, 7));
            assertTrue(s.dumpJson().contains("\"" + id + "\""), s.dumpJson());

            // A second upload attempt under the same key pair while the first is live: refused.
            RemoteLogSegmentMetadata retry = started(new Uuid(3, 4), 0, 99, 5);
            RlMetaException refused = assertThrows(RlMetaException.InvalidState.class,
                    () -> s.plan(SERDE.serialize(retry), 5, 2));
            assertEquals(16, refused.getErrorCode());

            // Deletion at level 2: the final update comes with tombstones of the segment's keys.
            produce(s, s.plan(SERDE.serialize(update(id, RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 6L, null)), 7, 2));
            r = s.plan(SERDE.serialize(update(id, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 7L, null)), 7, 2);
            byte[] out = produce(s, r);
            int tombstones = 0;
            for (int i = 0; i < r.size(); i++) {
                if (r.values[i] == null) {
                    tombstones++;
                    assertEquals(Outcome.TOMBSTONE, out[i]);
                }
            }
            assertEquals(2, tombstones, "the segment key and the update key are tombstoned");
            assertEquals(0, s.segments(MSB, LSB, 0).length);

            // The partition is deleted: marked, started, finished.
            assertEquals(-1, s.partitionDeleteState(MSB, LSB, 0));
            for (RemotePartitionDeleteState st : RemotePartitionDeleteState.values()) {
                produce(s, s.plan(SERDE.serialize(new RemotePartitionDeleteMetadata(TP, st, 8L, 1)), 7, 2));
                assertEquals(st.id(), s.partitionDeleteState(MSB, LSB, 0));
            }
            assertThrows(RlMetaException.NotFound.class, () -> s.segments(MSB, LSB, 0));
            assertFalse(s.markInitialized(MSB, LSB, "orders", 0), "a deleted partition stays deleted");
            System.out.println("MetadataStore: copy, finish, refusal, delete with tombstones, partition delete agree with Kafka's objects");
        }
    }

    /**
     * planBackfill over JNI: a segment stock Kafka wrote (null keys, Kafka's serde) is planned again
     * under its KIP-1266 keys (the newest epoch of its data), applied, then nothing is planned
     * again; level 0 and an unknown partition are refused with their typed exceptions.
     */
    @Test
    void planBackfillKeysAStockSegmentOnce() {
        Uuid id = new Uuid(0x3333333333333333L, 0x4444444444444444L);
        try (MetadataStore s = new MetadataStore()) {
            s.loadPartition(MSB, LSB, "orders", 0);
            RemoteLogSegmentMetadata copy = started(id, 0, 99, 4);
            RemoteLogSegmentMetadataUpdate finished = update(id, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 9L, null);
            new Batch().add(0, null, SERDE.serialize(copy)).add(1, null, SERDE.serialize(finished)).applyTo(s);
            assertTrue(s.markInitialized(MSB, LSB, "orders", 0));
            next = 2;
            RlMetaException level0 = assertThrows(RlMetaException.InvalidState.class, () -> s.planBackfill(MSB, LSB, 0, 7, 0));
            assertEquals(16, level0.getErrorCode());
            assertThrows(RlMetaException.NotFound.class, () -> s.planBackfill(1, 2, 0, 7, 1));
            PlannedRecords r = s.planBackfill(MSB, LSB, 0, -1, 1);
            assertEquals(2, r.size());
            assertEquals(RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 99, 4, false), new String(r.keys[0], UTF_8));
            assertEquals(RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 99, 4, true), new String(r.keys[1], UTF_8));
            produce(s, r);
            assertEquals(0, s.planBackfill(MSB, LSB, 0, 7, 1).size(), "what is keyed is not planned again");
            assertEquals(copy.createWithUpdates(finished), SERDE.deserialize(s.segments(MSB, LSB, 0)[0]));
        }
    }

    /**
     * resurrections over JNI (issue 31 item 9): in a held store, a stock segment is backfilled, then
     * deleted by the leader; the deposed leader's backfill records of it land late and bring it back,
     * in rlmeta's store and in Kafka's own store fed the same log. The store counts it, planBackfill
     * deletes it again (DELETE_SEGMENT_STARTED, then DELETE_SEGMENT_FINISHED with its tombstones), and
     * then Kafka's store holds nothing either, replaying the whole log or the log compacted (null keys
     * dropped, each key's last record, with and without tombstones).
     */
    @Test
    void aDeletedSegmentBroughtBackByALateBackfillIsDeletedAgain() throws Exception {
        Uuid id = new Uuid(0x5555555555555555L, 0x6666666666666666L);
        List<byte[][]> log = new ArrayList<>();
        try (MetadataStore s = new MetadataStore(true)) {
            s.loadPartition(MSB, LSB, "orders", 0);
            RemoteLogSegmentMetadata copy = started(id, 0, 99, 4);
            byte[] v0 = SERDE.serialize(copy);
            byte[] v1 = SERDE.serialize(update(id, RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 9L, null));
            new Batch().add(0, null, v0).add(1, null, v1).applyTo(s);
            log.add(new byte[][] {null, v0});
            log.add(new byte[][] {null, v1});
            assertTrue(s.markInitialized(MSB, LSB, "orders", 0));
            next = 2;
            PlannedRecords zombie = s.planBackfill(MSB, LSB, 0, 5, 1); // a deposed leader's plan, landing late
            produce(s, s.planBackfill(MSB, LSB, 0, 7, 1), log);
            produce(s, s.plan(SERDE.serialize(update(id, RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 10L, null)), 7, 1), log);
            produce(s, s.plan(SERDE.serialize(update(id, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 11L, null)), 7, 1), log);
            assertEquals(0, s.segments(MSB, LSB, 0).length);
            assertEquals(0, s.resurrections(MSB, LSB, 0));
            produce(s, zombie, log);
            assertEquals(1, s.segments(MSB, LSB, 0).length, "the late backfill brought the segment back");
            assertEquals(1, kafkaSegments(log, false, true).size(), "Kafka's store serves it too");
            assertEquals(1, kafkaSegments(log, true, false).size(), "and so does the log compacted");
            assertEquals(1, s.resurrections(MSB, LSB, 0));
            assertEquals(0, s.resurrections(1, 2, 0), "a partition not held");
            PlannedRecords started = s.planBackfill(MSB, LSB, 0, 7, 1);
            assertEquals(1, started.size());
            assertEquals(RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 99, 4, true), new String(started.keys[0], UTF_8));
            produce(s, started, log);
            PlannedRecords finished = s.planBackfill(MSB, LSB, 0, 7, 1);
            assertNull(finished.values[0], "the segment record's key is tombstoned first");
            assertNull(finished.values[finished.size() - 1], "then the update key");
            produce(s, finished, log);
            assertEquals(0, s.segments(MSB, LSB, 0).length);
            assertEquals(0, s.resurrections(MSB, LSB, 0));
            assertEquals(0, s.planBackfill(MSB, LSB, 0, 7, 1).size());
        }
        assertEquals(List.of(), kafkaSegments(log, false, true), "Kafka's store, the whole log");
        assertEquals(List.of(), kafkaSegments(log, true, true), "Kafka's store, compacted, tombstones kept");
        assertEquals(List.of(), kafkaSegments(log, true, false), "Kafka's store, compacted, tombstones gone");
    }

    /** {@link #produce}, also appending each record to {@code log} as {key, value}. */
    void produce(MetadataStore s, PlannedRecords r, List<byte[][]> log) {
        for (int i = 0; i < r.size(); i++) {
            log.add(new byte[][] {r.keys[i], r.values[i]});
        }
        produce(s, r);
    }

    /**
     * The segments of {@link #TP} Kafka 4.4.0's own store holds after replaying {@code log}, whole or
     * compacted as Kafka's cleaner leaves it. Values are given at version 0 (the same record, which
     * Kafka 4.4.0 reads; the KIP-1266 fields become tagged fields it keeps unread).
     */
    static List<RemoteLogSegmentMetadata> kafkaSegments(List<byte[][]> log, boolean compacted, boolean tombstones)
            throws Exception {
        List<byte[][]> records = log;
        if (compacted) {
            Map<String, Integer> last = new java.util.HashMap<>();
            for (int i = 0; i < log.size(); i++) {
                if (log.get(i)[0] != null) last.put(new String(log.get(i)[0], UTF_8), i);
            }
            records = new ArrayList<>();
            for (int i = 0; i < log.size(); i++) {
                byte[][] r = log.get(i);
                if (r[0] != null && last.get(new String(r[0], UTF_8)) == i && (tombstones || r[1] != null)) records.add(r);
            }
        }
        ReplayVectorsTest.Kafka kafka = new ReplayVectorsTest.Kafka();
        kafka.load(TP);
        for (int i = 0; i < records.size(); i++) {
            byte[] value = records.get(i)[1];
            if (value != null) {
                value = RlMeta.encodeValueJson(version0(RlMeta.decodeValueJson(value)));
            }
            kafka.apply(i, value);
        }
        kafka.store.markInitialized(TP);
        return KafkaStoreAccess.segments(kafka.store, TP);
    }

    /** A value's JSON document at version 0: the KIP-1266 fields (an update's endOffset too) at their defaults. */
    static String version0(String json) throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode doc = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(json);
        com.fasterxml.jackson.databind.node.ObjectNode rec = (com.fasterxml.jackson.databind.node.ObjectNode) doc.get("record");
        rec.remove("brokerLeaderEpoch");
        if (!rec.has("startOffset")) {
            rec.remove("endOffset"); // an update's: a KIP-1266 field (a segment record's is its own)
        }
        doc.put("version", 0);
        return mapper.writeValueAsString(doc);
    }

    /** Java's outcome constants are the core's table exactly: one constant per code, named as the core names it. */
    @Test
    void outcomeConstantsAreTheCoresTable() throws Exception {
        Map<Byte, String> constants = new java.util.TreeMap<>();
        for (java.lang.reflect.Field f : Outcome.class.getFields()) {
            if (f.getType() == byte.class && java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                constants.put(f.getByte(null), f.getName().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
            }
        }
        assertEquals(Outcome.COUNT, constants.size(), "Java constants " + constants);
        for (byte c = 0; c < Outcome.COUNT; c++) {
            assertEquals(constants.get(c), Outcome.name(c), "name of code " + c);
        }
        assertNull(Outcome.name((byte) Outcome.COUNT));
        assertNull(Outcome.name((byte) -1));
        System.out.println("Outcome: " + Outcome.COUNT + " codes, Java constants named as the core's table " + constants.values());
    }

    /** The panic hook is refused without -Drlmeta.test.hooks=true; with it, it poisons the store as a core bug would. */
    @Test
    void panicHookIsGatedAndPoisonsTheStore() {
        assertEquals(null, System.getProperty(MetadataStore.TEST_HOOKS_PROPERTY), "this JVM must run without test hooks");
        long live = MetadataStore.liveStores();
        try (MetadataStore s = new MetadataStore()) {
            assertEquals(live + 1, MetadataStore.liveStores());
            assertThrows(UnsupportedOperationException.class, s::panicForTest);
            s.loadPartition(MSB, LSB, "orders", 0);
            System.setProperty(MetadataStore.TEST_HOOKS_PROPERTY, "true");
            try {
                RlMetaException.Internal e = assertThrows(RlMetaException.Internal.class, s::panicForTest);
                assertTrue(e.getMessage().contains("panic"), e.getMessage());
            } finally {
                System.clearProperty(MetadataStore.TEST_HOOKS_PROPERTY);
            }
            assertThrows(RlMetaException.Internal.class, () -> s.isInitialized(MSB, LSB, 0));
            assertThrows(RlMetaException.Internal.class, () -> s.apply(new long[0], new byte[0], new int[0], new int[0]));
        }
        assertEquals(live, MetadataStore.liveStores(), "close() frees the native store");
        System.out.println("MetadataStore: panicForTest refused without the property; with it the store is poisoned "
                + "(every call throws Internal) and close() still frees it");
    }

    @Test
    void everyRecordGetsItsOutcomeCode() {
        Uuid id = new Uuid(5, 6);
        byte[] segment = SERDE.serialize(started(id, 0, 9, 1));
        byte[] startedAgain = SERDE.serialize(update(id, RemoteLogSegmentState.COPY_SEGMENT_STARTED, 2L, null));
        byte[] bad = SERDE.serialize(update(id, RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 3L, null));
        byte[] key = RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 9, 1, false).getBytes(UTF_8);
        try (MetadataStore s = new MetadataStore()) {
            byte[] out = new Batch()
                    .add(0, "remote.log.metadata.version".getBytes(UTF_8), "2".getBytes(UTF_8))
                    .add(1, "remote.log.metadata.version".getBytes(UTF_8), "9".getBytes(UTF_8))
                    .add(2, null, new byte[] {1, 2, 3})
                    .add(3, key, null)
                    .add(4, key, segment)
                    .add(4, key, segment)
                    .add(5, "not a key".getBytes(UTF_8), startedAgain)
                    .add(6, null, bad)
                    .applyTo(s);
            assertArrayEquals(new byte[] {Outcome.LEVEL_2, Outcome.LEVEL_INVALID, Outcome.UNDECODABLE,
                    Outcome.TOMBSTONE, Outcome.APPLIED, Outcome.ALREADY_APPLIED, Outcome.REJECTED, Outcome.DROPPED}, out);
            for (byte c : new byte[] {Outcome.LEVEL_0, Outcome.LEVEL_2, Outcome.LEVEL_INVALID, Outcome.UNDECODABLE,
                    Outcome.TOMBSTONE, Outcome.SNAPSHOT_RECORD, Outcome.PARTITION_DELETED, Outcome.REJECTED,
                    Outcome.APPLIED_V1, Outcome.ORPHANED_V1, Outcome.APPLIED_WITH_BAD_KEY_V1, Outcome.DROPPED_V1,
                    Outcome.ALREADY_APPLIED_V1}) {
                assertTrue(Outcome.fatalToKafka(c), "fatal: " + c);
            }
            for (byte c : new byte[] {Outcome.APPLIED, Outcome.ORPHANED, Outcome.APPLIED_WITH_BAD_KEY, Outcome.BAD_KEY,
                    Outcome.DROPPED, Outcome.ALREADY_APPLIED, (byte) 99, (byte) -1}) {
                assertFalse(Outcome.fatalToKafka(c), "not fatal: " + c);
            }
            assertArrayEquals(new byte[0], s.apply(new long[0], new byte[0], new int[0], new int[0]));

            // The other outcomes, from real records of another partition.
            TopicIdPartition tp1 = new TopicIdPartition(TOPIC, new TopicPartition("orders", 1));
            Uuid other = new Uuid(7, 8);
            RemoteLogSegmentMetadata seg1 = new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp1, other), 0, 9,
                    1L, 1, 1L, 10, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(1, 0L));
            byte[] wrongKey = RlMeta.keyFormat(TOPIC.toString(), "orders", 0, 9, 1, false).getBytes(UTF_8);
            byte[] orphan = SERDE.serialize(new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(tp1, new Uuid(9, 9)), 2L,
                    Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1));
            byte[] snapshot = SERDE.serialize(
                    org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot.create(seg1));
            byte[] deleted = SERDE.serialize(
                    new RemotePartitionDeleteMetadata(tp1, RemotePartitionDeleteState.DELETE_PARTITION_FINISHED, 3L, 1));
            out = new Batch()
                    .add(10, wrongKey, SERDE.serialize(seg1))
                    .add(11, null, orphan)
                    .add(12, null, snapshot)
                    .add(13, "remote.log.metadata.version".getBytes(UTF_8), "0".getBytes(UTF_8))
                    .add(14, "remote.log.metadata.version".getBytes(UTF_8), "1".getBytes(UTF_8))
                    .add(15, null, deleted)
                    .add(16, null, SERDE.serialize(seg1))
                    .applyTo(s);
            assertArrayEquals(new byte[] {Outcome.APPLIED_WITH_BAD_KEY, Outcome.ORPHANED, Outcome.SNAPSHOT_RECORD,
                    Outcome.LEVEL_0, Outcome.LEVEL_1, Outcome.APPLIED, Outcome.PARTITION_DELETED}, out);
            System.out.println("MetadataStore.apply: every outcome but BAD_KEY (which apply reports as APPLIED_WITH_BAD_KEY) from real records");
        }
    }

    @Test
    void failuresAreTypedExceptions() {
        try (MetadataStore s = new MetadataStore()) {
            RlMetaException nf = assertThrows(RlMetaException.NotFound.class, () -> s.segmentFor(MSB, LSB, 0, 0, 0));
            assertEquals(14, nf.getErrorCode());
            assertThrows(RlMetaException.NotFound.class, () -> s.highestOffsetForEpoch(MSB, LSB, 0, 0));
            assertThrows(RlMetaException.NotFound.class, () -> s.remoteLogSize(MSB, LSB, 0, 0));
            assertThrows(RlMetaException.NotFound.class, () -> s.segmentsForEpoch(MSB, LSB, 0, 0));
            assertThrows(RlMetaException.NotFound.class, () -> s.nextSegmentWithTxnIndex(MSB, LSB, 0, 0, 0));
            assertFalse(s.isInitialized(MSB, LSB, 0));
            assertEquals(-1, s.partitionDeleteState(MSB, LSB, 0));
            RlMetaException layout = assertThrows(RlMetaException.InvalidArgument.class,
                    () -> s.apply(new long[] {0}, new byte[] {1}, new int[] {-1}, new int[] {2}));
            assertEquals(11, layout.getErrorCode());
            assertThrows(RlMetaException.InvalidArgument.class,
                    () -> s.apply(new long[] {0, 1}, new byte[0], new int[] {-1}, new int[] {-1}));
            assertThrows(RlMetaException.InvalidArgument.class,
                    () -> s.apply(new long[] {0}, new byte[0], new int[] {-2}, new int[] {-1}));
            assertThrows(NullPointerException.class, () -> s.apply(null, new byte[0], new int[0], new int[0]));
            assertThrows(NullPointerException.class, () -> s.apply(new long[0], null, new int[0], new int[0]));
            assertThrows(NullPointerException.class, () -> s.apply(new long[] {0}, new byte[0], null, new int[] {-1}));
            assertThrows(NullPointerException.class, () -> s.apply(new long[] {0}, new byte[0], new int[] {-1}, null));
            assertThrows(NullPointerException.class, () -> s.plan(null, 0, 0));
            assertThrows(NullPointerException.class, () -> s.loadPartition(MSB, LSB, null, 0));
            RlMetaException truncated = assertThrows(RlMetaException.Truncated.class, () -> s.plan(new byte[] {1, 0}, 0, 2));
            assertEquals(1, truncated.getErrorCode());
            byte[] copy = SERDE.serialize(started(new Uuid(1, 1), 0, 9, 1));
            assertThrows(RlMetaException.class, () -> s.plan(copy, 1, 3));
            assertThrows(RlMetaException.class, () -> s.plan(copy, 1, 70000));
            byte[] toStarted = SERDE.serialize(update(new Uuid(1, 1), RemoteLogSegmentState.COPY_SEGMENT_STARTED, 1, null));
            assertThrows(RlMetaException.InvalidArgument.class, () -> s.plan(toStarted, 1, 2));
            assertThrows(RlMetaException.NotFound.class, () -> s.plan(
                    SERDE.serialize(update(new Uuid(1, 1), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1, null)), 1, 2));
        }
        System.out.println("MetadataStore: not found, bad layouts, nulls, undecodable events, bad levels are typed");
    }

    /**
     * memoryBytes and segmentCount over JNI. memoryBytes, the core's account of the native store
     * (the plugin's off-heap cache): nothing for an empty store or for records of partitions a
     * broker's store does not hold, more with every segment held, less once a partition is
     * unloaded. segmentCount: the listing's length, with the listing's exceptions.
     */
    @Test
    void memoryBytesAndSegmentCountOfAHeldPartition() {
        try (MetadataStore s = new MetadataStore(true)) {
            assertEquals(0, s.memoryBytes(), "an empty store");
            Batch other = new Batch();
            Uuid notHeld = new Uuid(7, 7);
            for (int i = 0; i < 50; i++) {
                RemoteLogSegmentMetadata m = new RemoteLogSegmentMetadata(
                        new RemoteLogSegmentId(new TopicIdPartition(notHeld, new TopicPartition("other", 0)),
                                new Uuid(8, i + 1)), i * 10L, i * 10L + 9, 1_700_000_000_000L, 1, 1_700_000_000_001L,
                        1024, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(0, i * 10L));
                other.add(i, null, SERDE.serialize(m));
            }
            other.applyTo(s);
            assertEquals(0, s.memoryBytes(), "records of a partition the store does not hold");

            s.loadPartition(MSB, LSB, "orders", 0);
            long loaded = s.memoryBytes();
            assertTrue(loaded > 0, "a loaded partition's slot: " + loaded);
            long[] after = new long[3];
            for (int round = 0; round < 3; round++) {
                Batch b = new Batch();
                for (int i = 0; i < 100; i++) {
                    int n = round * 100 + i;
                    b.add(100 + n, null, SERDE.serialize(started(new Uuid(9, n + 1), n * 10L, n * 10L + 9, 1)));
                }
                b.applyTo(s);
                after[round] = s.memoryBytes();
            }
            // a segment row alone is 104 bytes (the core's layout test); growth is in chunks
            assertTrue(after[0] >= loaded + 100 * 104, "100 segments: " + loaded + " -> " + after[0]);
            assertTrue(after[2] > after[0] && after[2] >= loaded + 300 * 104, "300 segments: " + after[2]);
            // segmentCount: the listing's length without the listing, with its exceptions
            assertThrows(RlMetaException.NotInitialized.class, () -> s.segments(MSB, LSB, 0));
            assertThrows(RlMetaException.NotInitialized.class, () -> s.segmentCount(MSB, LSB, 0));
            assertThrows(RlMetaException.NotFound.class, () -> s.segmentCount(7, 7, 0));
            s.markInitialized(MSB, LSB, "orders", 0);
            assertEquals(300, s.segmentCount(MSB, LSB, 0));
            assertEquals(s.segments(MSB, LSB, 0).length, s.segmentCount(MSB, LSB, 0));
            s.unloadPartition(MSB, LSB, 0);
            assertTrue(s.memoryBytes() < loaded + 104, "unloaded: " + s.memoryBytes() + " (loaded empty: " + loaded + ")");
            System.out.printf("MetadataStore: memoryBytes %d empty, %d with 300 segments held, %d unloaded%n", loaded,
                    after[2], s.memoryBytes());
        }
    }

    @Test
    void unloadForgetsAndCloseIsFinal() {
        MetadataStore s = new MetadataStore();
        new Batch().add(0, null, SERDE.serialize(started(new Uuid(9, 9), 0, 9, 1))).applyTo(s);
        assertTrue(s.markInitialized(MSB, LSB, "orders", 0));
        assertEquals(1, s.segments(MSB, LSB, 0).length);
        s.unloadPartition(MSB, LSB, 0);
        assertThrows(RlMetaException.NotFound.class, () -> s.segments(MSB, LSB, 0));
        s.unloadPartition(MSB, LSB, 0);
        s.loadPartition(MSB, LSB, "orders", 0);
        s.markInitialized(MSB, LSB, "orders", 0);
        assertEquals(0, s.segments(MSB, LSB, 0).length, "a partition loaded again starts empty");
        s.close();
        s.close();
        assertThrows(IllegalStateException.class, () -> s.segments(MSB, LSB, 0));
        assertThrows(IllegalStateException.class, () -> s.apply(new long[0], new byte[0], new int[0], new int[0]));
        System.out.println("MetadataStore: unload forgets a partition; close is idempotent and final");
    }

    @Test
    void applyQueriesAndCloseFromManyThreads() throws Exception {
        MetadataStore s = new MetadataStore();
        s.markInitialized(MSB, LSB, "orders", 0);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong answers = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.ConcurrentLinkedQueue<Throwable> errors = new java.util.concurrent.ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            Thread r = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        for (byte[] b : s.segments(MSB, LSB, 0)) SERDE.deserialize(b);
                        s.highestOffsetForEpoch(MSB, LSB, 0, 1);
                        answers.incrementAndGet();
                    }
                } catch (IllegalStateException closed) {
                    // close() won the race: the expected end
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            r.start();
            readers.add(r);
        }
        // The readers are querying before the first apply (on a loaded machine the applies could
        // otherwise all finish before a reader thread ran).
        while (answers.get() == 0 && errors.isEmpty()) Thread.onSpinWait();
        int segments = 300;
        for (int i = 0; i < segments; i++) {
            new Batch().add(i, null, SERDE.serialize(started(new Uuid(1, i), i * 10L, i * 10L + 9, 1))).applyTo(s);
        }
        assertEquals(segments, s.segments(MSB, LSB, 0).length);
        s.close(); // while the readers still run
        stop.set(true);
        for (Thread r : readers) r.join(10_000);
        assertTrue(errors.isEmpty(), () -> "reader failed: " + errors.peek());
        assertTrue(answers.get() > 0, "the readers got answers");
        System.out.println("MetadataStore: " + segments + " applies next to 3 query threads (" + answers.get()
                + " answers), then close under them: no error, no crash");
    }
}
