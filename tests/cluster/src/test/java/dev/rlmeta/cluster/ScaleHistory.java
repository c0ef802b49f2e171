package dev.rlmeta.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;

/**
 * The scale generator of issue 30: a stock {@code __remote_log_metadata} history as brokers that
 * predate KIP-1266 write it (version-0 values from Kafka's own {@link RemoteLogMetadataSerde}, null
 * keys, each record in the metadata partition Kafka's own {@link RemoteLogMetadataTopicPartitioner}
 * picks), for user partitions that brokers host (real topics) and partitions no broker hosts, with
 * realistic lifecycles: every segment COPY_SEGMENT_STARTED then COPY_SEGMENT_FINISHED after a
 * while, the oldest segments of a partition DELETE_SEGMENT_STARTED then DELETE_SEGMENT_FINISHED as
 * retention moves, offsets increasing, the leader epoch moving on now and then, and the partitions'
 * events interleaved as a cluster's uploads are. Deterministic for a seed. Produced fast (one
 * producer, large batches, lz4, acks=1). It knows what it wrote: the live (COPY_SEGMENT_FINISHED)
 * segments of each partition, which the caller checks against Kafka's own replay.
 */
final class ScaleHistory {
    /** What to write. */
    static final class Shape {
        long records = 20_000; // make test's; make scale-data passes 10,000,000
        int metadataPartitions = 50;
        double hostedShare = 0.2;       // of the records: those of the hosted partitions
        double deletedShare = 0.5;      // of a partition's segments: deleted by retention by the end
        long seed = 1266;

        static Shape fromProperties() {
            Shape s = new Shape();
            s.records = Long.getLong("rlmeta.scale.records", s.records);
            s.metadataPartitions = Integer.getInteger("rlmeta.scale.metadata.partitions", s.metadataPartitions);
            s.hostedShare = Double.parseDouble(System.getProperty("rlmeta.scale.hosted.share", "" + s.hostedShare));
            s.deletedShare = Double.parseDouble(System.getProperty("rlmeta.scale.deleted.share", "" + s.deletedShare));
            s.seed = Long.getLong("rlmeta.scale.seed", s.seed);
            return s;
        }

        @Override
        public String toString() {
            return String.format("%,d records, %d metadata partitions, %.0f%% of them for hosted partitions, %.0f%% of "
                    + "segments deleted, seed %d", records, metadataPartitions, hostedShare * 100, deletedShare * 100, seed);
        }
    }

    /**
     * One user partition's lifecycle as it is written. Copies finish and retention deletes in the
     * order segments were started, so each state is a range of the partition's segment numbers, and
     * a segment's id is a function of its number: a few counters a partition, whatever its history.
     */
    private static final class Part {
        final TopicIdPartition tp;
        final int metadataPartition;
        final long budget;             // records to write for it
        final long idMsb;
        final long idLsb;
        long written;
        long nextOffset;
        int epoch;
        long started;                  // segments [0, started) had their copy started
        long finished;                 // [0, finished) finished copying
        long deleteStarted;            // [0, deleteStarted) are being deleted or deleted
        long deleteFinished;           // [0, deleteFinished) deleted

        Part(TopicIdPartition tp, int metadataPartition, long budget, Random rnd) {
            this.tp = tp;
            this.metadataPartition = metadataPartition;
            this.budget = budget;
            this.idMsb = rnd.nextLong();
            this.idLsb = rnd.nextLong();
        }

        RemoteLogSegmentId id(long n) {
            return new RemoteLogSegmentId(tp, new Uuid(idMsb ^ n, idLsb + n * 0x9E3779B97F4A7C15L));
        }

        long open() { // copies started and not finished, and deletions started and not finished
            return (started - finished) + (deleteStarted - deleteFinished);
        }

        long live() {
            return finished - deleteStarted;
        }
    }

    /** What was written: records, and the live segments of each partition. */
    static final class Written {
        long records;
        long bytes;
        double seconds;
        final Map<TopicIdPartition, Long> live = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
    }

    private ScaleHistory() {}

    /**
     * Writes the history through `bootstrap`: `hosted` are real topics' partitions, and
     * `unhostedCount` partitions of made-up topics no broker hosts share the rest of the records.
     */
    static Written write(String bootstrap, Shape shape, List<TopicIdPartition> hosted, int unhostedCount) throws Exception {
        Random rnd = new Random(shape.seed);
        RemoteLogMetadataTopicPartitioner partitioner = new RemoteLogMetadataTopicPartitioner(shape.metadataPartitions);
        List<Part> parts = new ArrayList<>();
        long hostedRecords = hosted.isEmpty() ? 0 : (long) (shape.records * shape.hostedShare);
        long unhostedRecords = shape.records - hostedRecords;
        for (int i = 0; i < hosted.size(); i++) {
            long b = hostedRecords / hosted.size() + (i < hostedRecords % hosted.size() ? 1 : 0);
            parts.add(new Part(hosted.get(i), partitioner.metadataPartition(hosted.get(i)), b, rnd));
        }
        for (int i = 0; i < unhostedCount; i++) {
            TopicIdPartition tp = new TopicIdPartition(new Uuid(rnd.nextLong(), rnd.nextLong()), i % 100, "unhosted-" + (i / 100));
            long b = unhostedRecords / unhostedCount + (i < unhostedRecords % unhostedCount ? 1 : 0);
            parts.add(new Part(tp, partitioner.metadataPartition(tp), b, rnd));
        }
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1); // no reordering within a partition on a retry
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 1 << 20);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 128L << 20);
        Written w = new Written();
        AtomicReference<Exception> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        long ts = 1_700_000_000_000L;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            List<Part> open = new ArrayList<>(parts);
            while (!open.isEmpty()) {
                int i = rnd.nextInt(open.size());
                Part part = open.get(i);
                RemoteLogMetadata event = next(part, rnd, shape, ts++);
                byte[] value = serde.serialize(event);
                producer.send(new ProducerRecord<>(MetaTopic.NAME, part.metadataPartition, null, value), (md, e) -> {
                    if (e != null) {
                        failed.compareAndSet(null, e);
                    }
                });
                w.records++;
                w.bytes += value.length;
                if (++part.written >= part.budget) {
                    open.set(i, open.get(open.size() - 1));
                    open.remove(open.size() - 1);
                }
                if (failed.get() != null) {
                    throw failed.get();
                }
            }
            producer.flush();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        w.seconds = (System.nanoTime() - t0) / 1e9;
        for (Part part : parts.subList(0, hosted.size())) {
            w.live.put(part.tp, part.live());
        }
        return w;
    }

    /** The partition's next event: a copy starts, an upload finishes, or retention deletes the oldest. */
    private static RemoteLogMetadata next(Part part, Random rnd, Shape shape, long ts) {
        long left = part.budget - part.written;
        int pick = rnd.nextInt(100);
        boolean mustClose = left <= part.open(); // every open copy and deletion gets its end within the budget
        if (!mustClose && (part.started == part.finished || pick < 45) && left > part.open() + 1) {
            return copyStarted(part, rnd, ts, 1_000 + rnd.nextInt(99_000));
        }
        if (part.deleteStarted > part.deleteFinished && (pick >= 90 || part.started == part.finished)) {
            return update(part.id(part.deleteFinished++), RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, ts);
        }
        if (part.started > part.finished && (pick < 80 || mustClose)) {
            return update(part.id(part.finished++), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, ts);
        }
        if (part.live() > 1 && rnd.nextDouble() < shape.deletedShare * 1.2 && left > part.open() + 1) {
            return update(part.id(part.deleteStarted++), RemoteLogSegmentState.DELETE_SEGMENT_STARTED, ts);
        }
        if (part.deleteStarted > part.deleteFinished) {
            return update(part.id(part.deleteFinished++), RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, ts);
        }
        if (part.started > part.finished) {
            return update(part.id(part.finished++), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, ts);
        }
        return copyStarted(part, rnd, ts, 999); // no room for more: a last copy, finished by the next event if any
    }

    private static RemoteLogSegmentMetadata copyStarted(Part part, Random rnd, long ts, long length) {
        if (rnd.nextInt(50) == 0) {
            part.epoch++; // a leadership change or a replica set change: the next segments carry the new epoch
        }
        long start = part.nextOffset;
        long end = start + length;
        part.nextOffset = end + 1;
        return new RemoteLogSegmentMetadata(part.id(part.started++), start, end, ts, 1, ts, 1 << 30, Optional.empty(),
                RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(part.epoch, start));
    }

    private static RemoteLogSegmentMetadataUpdate update(RemoteLogSegmentId id, RemoteLogSegmentState state, long ts) {
        return new RemoteLogSegmentMetadataUpdate(id, ts, Optional.empty(), state, 1);
    }
}
