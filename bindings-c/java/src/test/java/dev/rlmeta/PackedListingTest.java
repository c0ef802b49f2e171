package dev.rlmeta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
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
import org.junit.jupiter.api.Test;

/**
 * The packed listings ({@link MetadataStore#packedSegments}, {@link MetadataStore#packedSegmentsForEpoch},
 * read through {@link PackedValues}) against Kafka 4.4.0's own {@code RemotePartitionMetadataStore}
 * fed the same records: random partition histories (uploads, retried uploads that leave segments
 * unreferenced, leader epoch changes, deletions, custom metadata), compared after every few records.
 * The full listing is Kafka's set (Kafka's order is a hash map's) in the order of the array listing;
 * each epoch's listing is Kafka's set in Kafka's order of start offsets, in the order of the array
 * listing (segments that share a start offset, all unreferenced, Kafka orders by a hash set's
 * iteration, the core by when they became unreferenced: counted, not the packing's concern). A listing taken before the partition
 * changes reads, to its end after the change, what Kafka listed before it.
 */
class PackedListingTest {
    static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    static final Uuid TOPIC = new Uuid(0x5eed5eed5eed5eedL, 0x1234567890abcdefL);
    static final TopicIdPartition TP = new TopicIdPartition(TOPIC, new TopicPartition("listings", 3));
    static final long MSB = TOPIC.getMostSignificantBits();
    static final long LSB = TOPIC.getLeastSignificantBits();

    /** Epoch listings equal to Kafka's but for the order of segments that share a start offset. */
    static int tiesOrderedOtherwise;

    static List<RemoteLogSegmentMetadata> read(PackedValues v) {
        List<RemoteLogSegmentMetadata> out = new ArrayList<>();
        while (v.hasNext()) out.add((RemoteLogSegmentMetadata) SERDE.deserialize(v.next()));
        return out;
    }

    /** A random history of one partition: each record's value, in order. */
    static List<byte[]> history(Random r, int steps) {
        List<byte[]> out = new ArrayList<>();
        List<RemoteLogSegmentId> started = new ArrayList<>();
        List<RemoteLogSegmentId> finished = new ArrayList<>();
        List<RemoteLogSegmentId> deleting = new ArrayList<>();
        long next = 0;
        long lastStart = 0;
        int epoch = 0;
        int ids = 0;
        for (int i = 0; i < steps; i++) {
            double x = r.nextDouble();
            long ts = 1_700_000_000_000L + i * 1_000L;
            Optional<CustomMetadata> custom = r.nextInt(5) == 0
                    ? Optional.of(new CustomMetadata(new byte[] {(byte) i, 7, (byte) r.nextInt()})) : Optional.empty();
            if (x < 0.45 || started.isEmpty() && finished.isEmpty() && deleting.isEmpty()) {
                boolean retry = next > 0 && r.nextInt(6) == 0; // the same data uploaded again under a new id
                long start = retry ? lastStart : next;
                long end = start + 1 + r.nextInt(200);
                Map<Integer, Long> epochs = new TreeMap<>();
                epochs.put(epoch, start);
                if (r.nextInt(4) == 0) {
                    epoch += 1 + r.nextInt(2);
                    epochs.put(epoch, start + (end - start) / 2);
                }
                RemoteLogSegmentId id = new RemoteLogSegmentId(TP, new Uuid(r.nextLong(), ++ids));
                out.add(SERDE.serialize(new RemoteLogSegmentMetadata(id, start, end, ts - 5, 1 + r.nextInt(3), ts,
                        1 + r.nextInt(1 << 20), custom, RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs)));
                started.add(id);
                lastStart = start;
                if (!retry) next = end + 1;
            } else if (x < 0.75 && !started.isEmpty()) {
                RemoteLogSegmentId id = started.remove(r.nextInt(started.size()));
                out.add(update(id, ts, custom, RemoteLogSegmentState.COPY_SEGMENT_FINISHED));
                finished.add(id);
            } else if (x < 0.9 && !finished.isEmpty()) {
                RemoteLogSegmentId id = finished.remove(r.nextInt(Math.min(3, finished.size()))); // the oldest, as retention
                out.add(update(id, ts, custom, RemoteLogSegmentState.DELETE_SEGMENT_STARTED));
                deleting.add(id);
            } else if (!deleting.isEmpty()) {
                RemoteLogSegmentId id = deleting.remove(0);
                out.add(update(id, ts, Optional.empty(), RemoteLogSegmentState.DELETE_SEGMENT_FINISHED));
            }
        }
        return out;
    }

    static byte[] update(RemoteLogSegmentId id, long ts, Optional<CustomMetadata> custom, RemoteLogSegmentState s) {
        return SERDE.serialize(new RemoteLogSegmentMetadataUpdate(id, ts, custom, s, 2));
    }

    static void apply(MetadataStore s, long offset, byte[] value) {
        byte[] outcome = new MetadataStoreTest.Batch().add(offset, null, value).applyTo(s);
        assertEquals(1, outcome.length);
    }

    /** Every listing of ours against Kafka's on the same records; returns how many were compared. */
    static int agree(MetadataStore s, ReplayVectorsTest.Kafka kafka, String where) throws Exception {
        List<RemoteLogSegmentMetadata> kafkaAll = KafkaStoreAccess.segments(kafka.store, TP);
        List<RemoteLogSegmentMetadata> all = read(s.packedSegments(MSB, LSB, TP.partition()));
        assertEquals(new HashSet<>(kafkaAll), new HashSet<>(all), where + ": listRemoteLogSegments(tp)");
        assertEquals(kafkaAll.size(), all.size(), where + ": listRemoteLogSegments(tp) has no duplicate");
        // the same values in the same order as the array listing (the store's order: by start offset)
        byte[][] arrays = s.segments(MSB, LSB, TP.partition());
        PackedValues packed = s.packedSegments(MSB, LSB, TP.partition());
        for (byte[] b : arrays) assertArrayEquals(b, packed.next(), where);
        assertFalse(packed.hasNext(), where);
        int n = 1;
        TreeSet<Integer> epochs = new TreeSet<>(List.of(0));
        for (RemoteLogSegmentMetadata m : kafkaAll) epochs.addAll(m.segmentLeaderEpochs().keySet());
        epochs.add(epochs.last() + 1);
        for (int e : epochs) {
            String what = where + ": listRemoteLogSegments(tp, " + e + ")";
            List<RemoteLogSegmentMetadata> kafkaEpoch = KafkaStoreAccess.segments(kafka.store, TP, e);
            List<RemoteLogSegmentMetadata> epoch = read(s.packedSegmentsForEpoch(MSB, LSB, TP.partition(), e));
            assertEquals(new HashSet<>(kafkaEpoch), new HashSet<>(epoch), what);
            assertEquals(startOffsets(kafkaEpoch), startOffsets(epoch), what + ": Kafka's order");
            if (!kafkaEpoch.equals(epoch)) {
                // segments with one start offset, both unreferenced: Kafka keeps them in a hash
                // set's order, the core in the order they became so (docs/DIFFERENCES.md; the same
                // with the array listing, not the packing's: counted and reported)
                tiesOrderedOtherwise++;
            }
            byte[][] epochArrays = s.segmentsForEpoch(MSB, LSB, TP.partition(), e);
            PackedValues epochPacked = s.packedSegmentsForEpoch(MSB, LSB, TP.partition(), e);
            for (byte[] b : epochArrays) assertArrayEquals(b, epochPacked.next(), what);
            assertFalse(epochPacked.hasNext(), what);
            n++;
        }
        return n;
    }

    static List<Long> startOffsets(List<RemoteLogSegmentMetadata> ms) {
        List<Long> out = new ArrayList<>();
        for (RemoteLogSegmentMetadata m : ms) out.add(m.startOffset());
        return out;
    }

    @Test
    void packedListingsAreKafkasOnRandomHistories() throws Exception {
        int compared = 0;
        int unreferencedSeen = 0;
        for (int seed = 1; seed <= 8; seed++) {
            Random r = new Random(seed);
            List<byte[]> history = history(r, 150 + r.nextInt(250));
            ReplayVectorsTest.Kafka kafka = new ReplayVectorsTest.Kafka();
            kafka.load(TP);
            kafka.store.markInitialized(TP);
            try (MetadataStore s = new MetadataStore()) {
                s.loadPartition(MSB, LSB, TP.topic(), TP.partition());
                s.markInitialized(MSB, LSB, TP.topic(), TP.partition());
                for (int i = 0; i < history.size(); i++) {
                    apply(s, i, history.get(i));
                    kafka.apply(i, history.get(i));
                    if (i % 19 == 18 || i == history.size() - 1) {
                        compared += agree(s, kafka, "seed " + seed + " after record " + i);
                    }
                }
                // epochs whose listing Kafka sorts (segments left unreferenced by a retried upload)
                List<RemoteLogSegmentMetadata> all = KafkaStoreAccess.segments(kafka.store, TP);
                for (RemoteLogSegmentMetadata m : all) {
                    if (all.stream().filter(o -> o.startOffset() == m.startOffset()).count() > 1) {
                        unreferencedSeen++;
                    }
                }
            }
        }
        assertTrue(unreferencedSeen > 0, "the histories left some segment unreferenced by a retried upload");
        System.out.println("PackedListingTest: 8 random histories, " + compared + " packed listings equal Kafka's"
                + " (" + unreferencedSeen + " segments sharing a start offset; " + tiesOrderedOtherwise
                + " epoch listings order segments of one start offset otherwise than Kafka's hash set)");
    }

    /** A listing is a snapshot: taken, then the partition changes, then read: what Kafka listed before. */
    @Test
    void aListingTakenBeforeAChangeReadsTheStateItWasTakenIn() throws Exception {
        Random r = new Random(99);
        List<byte[]> history = history(r, 300);
        ReplayVectorsTest.Kafka kafka = new ReplayVectorsTest.Kafka();
        kafka.load(TP);
        kafka.store.markInitialized(TP);
        int changedAfterTaking = 0;
        try (MetadataStore s = new MetadataStore()) {
            s.loadPartition(MSB, LSB, TP.topic(), TP.partition());
            s.markInitialized(MSB, LSB, TP.topic(), TP.partition());
            for (int i = 0; i < history.size(); i++) {
                List<RemoteLogSegmentMetadata> kafkaBefore = KafkaStoreAccess.segments(kafka.store, TP);
                int epoch = kafkaBefore.isEmpty() ? 0 : kafkaBefore.get(0).segmentLeaderEpochs().firstKey();
                List<RemoteLogSegmentMetadata> kafkaEpochBefore = KafkaStoreAccess.segments(kafka.store, TP, epoch);
                PackedValues all = s.packedSegments(MSB, LSB, TP.partition());
                PackedValues forEpoch = s.packedSegmentsForEpoch(MSB, LSB, TP.partition(), epoch);
                // the first segment read before the change, the rest after it
                List<RemoteLogSegmentMetadata> got = new ArrayList<>();
                if (all.hasNext()) got.add((RemoteLogSegmentMetadata) SERDE.deserialize(all.next()));
                apply(s, i, history.get(i));
                kafka.apply(i, history.get(i));
                got.addAll(read(all));
                assertEquals(new HashSet<>(kafkaBefore), new HashSet<>(got), "record " + i);
                assertEquals(kafkaBefore.size(), got.size(), "record " + i);
                List<RemoteLogSegmentMetadata> gotEpoch = read(forEpoch);
                assertEquals(new HashSet<>(kafkaEpochBefore), new HashSet<>(gotEpoch), "record " + i + ", epoch " + epoch);
                assertEquals(startOffsets(kafkaEpochBefore), startOffsets(gotEpoch), "record " + i + ", epoch " + epoch);
                if (!new HashSet<>(KafkaStoreAccess.segments(kafka.store, TP)).equals(new HashSet<>(kafkaBefore))) {
                    changedAfterTaking++;
                }
            }
        }
        assertTrue(changedAfterTaking > 100, "the listing changed under a listing taken in most steps");
        System.out.println("PackedListingTest: " + changedAfterTaking + " listings read across a change of the partition"
                + " give the state they were taken in");
    }

    @Test
    void packedValuesReadsItsLayoutAndRefusesATornOne() {
        PackedValues empty = new PackedValues(new byte[0][]);
        assertFalse(empty.hasNext());
        assertThrows(NoSuchElementException.class, empty::next);
        PackedValues emptyChunks = new PackedValues(new byte[][] {{}, {}});
        assertFalse(emptyChunks.hasNext());
        PackedValues three = new PackedValues(new byte[][] {{0, 0, 0, 2, 9, 8, 0, 0, 0, 0}, {}, {0, 0, 0, 1, 7}});
        assertArrayEquals(new byte[] {9, 8}, three.next());
        assertTrue(three.hasNext());
        assertArrayEquals(new byte[0], three.next());
        assertArrayEquals(new byte[] {7}, three.next(), "across an empty chunk");
        assertFalse(three.hasNext());
        assertThrows(NoSuchElementException.class, three::next);
        assertThrows(IllegalStateException.class, () -> new PackedValues(new byte[][] {{0, 0, 1}}).next(), "a cut length");
        assertThrows(IllegalStateException.class, () -> new PackedValues(new byte[][] {{0, 0, 0, 3, 1, 2}, {3}}).next(),
                "a value split across chunks");
        assertThrows(IllegalStateException.class, () -> new PackedValues(new byte[][] {{(byte) 0x80, 0, 0, 0, 1}}).next(),
                "a negative length");
    }

    /** A listing over several chunks reads as the array listing, chunk boundaries unseen. */
    @Test
    void aLargeListingSpansChunks() throws Exception {
        int n = 4_000; // about 110 bytes each: six or more 64 KiB chunks
        ReplayVectorsTest.Kafka kafka = new ReplayVectorsTest.Kafka();
        kafka.load(TP);
        kafka.store.markInitialized(TP);
        try (MetadataStore s = new MetadataStore()) {
            s.loadPartition(MSB, LSB, TP.topic(), TP.partition());
            s.markInitialized(MSB, LSB, TP.topic(), TP.partition());
            MetadataStoreTest.Batch batch = new MetadataStoreTest.Batch();
            for (int i = 0; i < n; i++) {
                RemoteLogSegmentId id = new RemoteLogSegmentId(TP, new Uuid(i + 1, ~i));
                byte[] v = SERDE.serialize(new RemoteLogSegmentMetadata(id, i * 100L, i * 100L + 99, 5, 1, 6, 1000,
                        i % 3 == 0 ? Optional.of(new CustomMetadata(new byte[i % 50])) : Optional.empty(),
                        RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(i / 500, i * 100L)));
                batch.add(2L * i, null, v);
                kafka.apply(2L * i, v);
                byte[] f = update(id, 7, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED);
                batch.add(2L * i + 1, null, f);
                kafka.apply(2L * i + 1, f);
            }
            assertEquals(2 * n, batch.applyTo(s).length);
            long bytes = 0;
            for (byte[] b : s.segments(MSB, LSB, TP.partition())) bytes += 4 + b.length;
            assertTrue(bytes > 5 * 64 * 1024, "the listing needs several chunks: " + bytes + " bytes");
            assertEquals(10, agree(s, kafka, "4,000 segments"), "the full listing and the epochs 0..7 and 8");
            assertEquals(n, read(s.packedSegments(MSB, LSB, TP.partition())).size());
        }
    }

    @Test
    void packedListingsRefuseAsTheArrayListingsDo() {
        MetadataStore s = new MetadataStore();
        {
            assertThrows(RlMetaException.NotFound.class, () -> s.packedSegments(MSB, LSB, 0));
            s.loadPartition(MSB, LSB, TP.topic(), 0);
            assertThrows(RlMetaException.NotInitialized.class, () -> s.packedSegments(MSB, LSB, 0));
            assertThrows(RlMetaException.NotInitialized.class, () -> s.packedSegmentsForEpoch(MSB, LSB, 0, 0));
            s.markInitialized(MSB, LSB, TP.topic(), 0);
            assertFalse(s.packedSegments(MSB, LSB, 0).hasNext());
            assertFalse(s.packedSegmentsForEpoch(MSB, LSB, 0, 3).hasNext());
            s.close();
            assertThrows(IllegalStateException.class, () -> s.packedSegments(MSB, LSB, 0));
        }
    }
}
