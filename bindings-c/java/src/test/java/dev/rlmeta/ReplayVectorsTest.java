package dev.rlmeta;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ReplicaNotAvailableException;
import org.apache.kafka.server.log.remote.metadata.storage.KafkaStoreAccess;
import org.apache.kafka.server.log.remote.metadata.storage.RemotePartitionMetadataStore;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteResourceNotFoundException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The replay vector files ({@code tests/vectors/replay-*.json}, vectors README §5) through the
 * MetadataStore surface: each case's records applied in batches (one apply call between two
 * markInitialized events), then every query answered through MetadataStore and compared with the
 * case's expected answer. The same records are also fed to Kafka 4.4.0's own
 * {@code RemotePartitionMetadataStore} as its ConsumerTask feeds it, and for every initialized
 * partition the segment objects the store returns (decoded with Kafka's serde) must equal Kafka's
 * objects: lookups, listings, highest offsets, remote log sizes and transaction-index lookups.
 */
class ReplayVectorsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    private static final HexFormat HEX = HexFormat.of();

    static List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(VectorsTest.vectorsDir())) {
            return s.filter(p -> p.getFileName().toString().matches("replay-.*\\.json")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> replayCases() throws IOException {
        List<Path> files = files();
        assertFalse(files.isEmpty(), "no replay-*.json in " + VectorsTest.vectorsDir().toAbsolutePath());
        List<DynamicTest> tests = new ArrayList<>();
        for (Path f : files) {
            for (JsonNode c : JSON.readTree(f.toFile()).get("cases")) {
                tests.add(DynamicTest.dynamicTest(f.getFileName() + " " + c.get("name").asText(), () -> run(c)));
            }
        }
        return tests.stream();
    }

    static TopicIdPartition tip(JsonNode j) {
        return new TopicIdPartition(Uuid.fromString(j.get("id").asText()),
                new TopicPartition(j.get("name").asText(), j.get("partition").asInt()));
    }

    static long msb(TopicIdPartition tp) {
        return tp.topicId().getMostSignificantBits();
    }

    static long lsb(TopicIdPartition tp) {
        return tp.topicId().getLeastSignificantBits();
    }

    /** Kafka's store fed as ConsumerTask feeds it (tests/interop's KafkaReplayer, in short). */
    static final class Kafka {
        final RemotePartitionMetadataStore store = new RemotePartitionMetadataStore();
        final Set<TopicIdPartition> loaded = new HashSet<>();
        final Map<TopicIdPartition, Long> last = new HashMap<>();

        void load(TopicIdPartition tp) {
            if (loaded.add(tp)) store.maybeLoadPartition(tp);
        }

        void apply(long offset, byte[] value) {
            if (value == null) return; // a 4.4.0 consumer dies on tombstones: never given to Kafka
            RemoteLogMetadata m;
            TopicIdPartition tp;
            try {
                m = SERDE.deserialize(value);
                tp = m.topicIdPartition();
            } catch (RuntimeException e) {
                return; // undecodable, or a snapshot record: Kafka's consumer would stop
            }
            load(tp);
            Long l = last.get(tp);
            if (l != null && offset <= l) return;
            try {
                store.handleRemoteLogMetadata(m);
                last.put(tp, offset);
            } catch (RuntimeException e) {
                // Kafka throws (an update to COPY_SEGMENT_STARTED, ...): skipped, as the vectors do
            }
        }
    }

    static void run(JsonNode c) throws RemoteStorageException {
        Kafka kafka = new Kafka();
        Set<TopicIdPartition> seen = new HashSet<>();
        int batches = 0;
        try (MetadataStore s = new MetadataStore()) {
            MetadataStoreTest.Batch batch = new MetadataStoreTest.Batch();
            for (JsonNode e : c.get("events")) {
                if (e.has("markInitialized")) {
                    if (!batch.offsets.isEmpty()) {
                        batch.applyTo(s);
                        batches++;
                        batch = new MetadataStoreTest.Batch();
                    }
                    TopicIdPartition tp = tip(e.get("markInitialized"));
                    s.markInitialized(msb(tp), lsb(tp), tp.topic(), tp.partition());
                    kafka.load(tp);
                    kafka.store.markInitialized(tp);
                    seen.add(tp);
                    continue;
                }
                long offset = e.get("offset").asLong();
                byte[] key = e.path("key").isTextual() ? e.get("key").asText().getBytes(UTF_8) : null;
                byte[] value = e.path("value").isTextual() ? HEX.parseHex(e.get("value").asText()) : null;
                batch.add(offset, key, value);
                kafka.apply(offset, value);
            }
            if (!batch.offsets.isEmpty()) {
                batch.applyTo(s);
                batches++;
            }
            List<String> failures = new ArrayList<>();
            int i = 0;
            for (JsonNode q : c.get("queries")) {
                String why = check(s, q);
                if (why != null) failures.add("query #" + i + " " + q + ": " + why);
                i++;
            }
            int compared = 0;
            for (TopicIdPartition tp : kafka.loaded) {
                if (!kafka.store.isInitialized(tp)) continue;
                compared += agree(s, kafka.store, tp, c.get("queries"), failures);
            }
            if (!failures.isEmpty()) fail(String.join("\n  ", failures));
            System.out.printf("%s: %d queries as expected, %d answers equal Kafka's objects, %d apply batches%n",
                    c.get("name").asText(), c.get("queries").size(), compared, batches);
        }
    }

    static String id(byte[] segment) {
        return ((RemoteLogSegmentMetadata) SERDE.deserialize(segment)).remoteLogSegmentId().id().toString();
    }

    static List<String> ids(byte[][] segments) {
        List<String> out = new ArrayList<>();
        for (byte[] b : segments) out.add(id(b));
        return out;
    }

    /** One query against its expected answer; null when it agrees, else why not. */
    static String check(MetadataStore s, JsonNode q) {
        TopicIdPartition tp = tip(q.get("topicIdPartition"));
        long m = msb(tp), l = lsb(tp);
        int p = tp.partition();
        int epoch = q.path("leaderEpoch").asInt();
        Object got;
        try {
            switch (q.get("op").asText()) {
                case "segmentFor" -> {
                    byte[] b = s.segmentFor(m, l, p, epoch, q.get("offset").asLong());
                    got = b == null ? null : id(b);
                }
                case "highestOffsetForEpoch" -> {
                    long o = s.highestOffsetForEpoch(m, l, p, epoch);
                    got = o == MetadataStore.NO_OFFSET ? null : (Object) o;
                }
                case "listSegments" -> got = ids(s.segments(m, l, p));
                case "listSegmentsForEpoch" -> got = ids(s.segmentsForEpoch(m, l, p, epoch));
                case "segmentState" -> {
                    Uuid sid = Uuid.fromString(q.get("segmentId").asText());
                    byte[] b = s.segmentState(m, l, p, sid.getMostSignificantBits(), sid.getLeastSignificantBits());
                    got = b == null ? null : (Object) (long) b[0];
                }
                default -> {
                    return "unknown op";
                }
            }
        } catch (RlMetaException e) {
            String want = q.path("error").asText(null);
            int code = "notFound".equals(want) ? RlMetaException.NotFound.CODE
                    : "notInitialized".equals(want) ? RlMetaException.NotInitialized.CODE : -1;
            return e.getErrorCode() == code ? null : "got " + e.getMessage() + ", expected " + q.get("expect");
        }
        if (q.has("error")) return "got " + got + ", expected error " + q.get("error");
        Object want = JSON.convertValue(q.get("expect"), Object.class);
        if (want instanceof Integer n) want = n.longValue();
        if (want instanceof List<?> w && got instanceof List<?> g && !q.path("ordered").asBoolean(true)) {
            return new HashSet<>(w).equals(new HashSet<>(g)) && w.size() == g.size() ? null : "got " + got;
        }
        return java.util.Objects.equals(want, got) ? null : "got " + got;
    }

    static RemoteLogSegmentMetadata object(byte[] b) {
        return b == null ? null : (RemoteLogSegmentMetadata) SERDE.deserialize(b);
    }

    static Set<RemoteLogSegmentMetadata> objects(byte[][] bs) {
        Set<RemoteLogSegmentMetadata> out = new HashSet<>();
        for (byte[] b : bs) out.add(object(b));
        return out;
    }

    /** Kafka's answers for a partition both stores hold initialized; returns how many were compared. */
    static int agree(MetadataStore s, RemotePartitionMetadataStore k, TopicIdPartition tp, JsonNode queries,
            List<String> failures) throws RemoteStorageException {
        long m = msb(tp), l = lsb(tp);
        int p = tp.partition();
        int n = 0;
        List<RemoteLogSegmentMetadata> all;
        try {
            all = KafkaStoreAccess.segments(k, tp);
        } catch (RemoteResourceNotFoundException | ReplicaNotAvailableException e) {
            return 0; // deleted by Kafka: the queries above checked ours
        }
        Set<RemoteLogSegmentMetadata> kafkaAll = new HashSet<>(all);
        if (!kafkaAll.equals(objects(s.segments(m, l, p)))) failures.add(tp + ": listRemoteLogSegments differs from Kafka's objects");
        n++;
        Set<Integer> epochs = new HashSet<>();
        for (RemoteLogSegmentMetadata x : all) epochs.addAll(x.segmentLeaderEpochs().keySet());
        List<long[]> lookups = new ArrayList<>();
        for (JsonNode q : queries) {
            if (q.has("leaderEpoch") && tip(q.get("topicIdPartition")).equals(tp)) {
                epochs.add(q.get("leaderEpoch").asInt());
                if (q.has("offset")) lookups.add(new long[] {q.get("leaderEpoch").asInt(), q.get("offset").asLong()});
            }
        }
        for (int epoch : epochs) {
            List<RemoteLogSegmentMetadata> ke = KafkaStoreAccess.segments(k, tp, epoch);
            if (!new HashSet<>(ke).equals(objects(s.segmentsForEpoch(m, l, p, epoch))))
                failures.add(tp + " epoch " + epoch + ": listRemoteLogSegments(epoch) differs from Kafka's objects");
            long size = 0;
            for (RemoteLogSegmentMetadata x : ke) size += x.segmentSizeInBytes();
            if (size != s.remoteLogSize(m, l, p, epoch)) failures.add(tp + " epoch " + epoch + ": remoteLogSize differs");
            Optional<Long> hi = KafkaStoreAccess.highestOffsetForEpoch(k, tp, epoch);
            long ours = s.highestOffsetForEpoch(m, l, p, epoch);
            if (!hi.equals(ours == MetadataStore.NO_OFFSET ? Optional.empty() : Optional.of(ours)))
                failures.add(tp + " epoch " + epoch + ": highestOffsetForEpoch " + ours + " vs Kafka " + hi);
            n += 3;
        }
        for (long[] eo : lookups) {
            int epoch = (int) eo[0];
            RemoteLogSegmentMetadata want = KafkaStoreAccess.segmentFor(k, tp, epoch, eo[1]).orElse(null);
            if (!java.util.Objects.equals(want, object(s.segmentFor(m, l, p, epoch, eo[1]))))
                failures.add(tp + " segmentFor(" + epoch + ", " + eo[1] + ") differs from Kafka's " + want);
            RemoteLogSegmentMetadata txn = KafkaStoreAccess.nextSegmentWithTxnIndex(k, tp, epoch, eo[1]).orElse(null);
            if (!java.util.Objects.equals(txn, object(s.nextSegmentWithTxnIndex(m, l, p, epoch, eo[1]))))
                failures.add(tp + " nextSegmentWithTxnIndex(" + epoch + ", " + eo[1] + ") differs from Kafka's " + txn);
            n += 2;
        }
        return n;
    }
}
