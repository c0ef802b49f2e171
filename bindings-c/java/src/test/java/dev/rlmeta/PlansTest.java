package dev.rlmeta;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The write-plan scripts ({@code tests/plans/*.json}, vectors README §6) through
 * {@link MetadataStore#plan}: every event becomes the Kafka 4.4.0 object a broker hands its
 * RemoteLogMetadataManager, serialized with Kafka's own serde; the planned records are fed back
 * through {@link MetadataStore#apply}; the produced log must equal the script's {@code expect}.
 */
class PlansTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();
    private static final HexFormat HEX = HexFormat.of();

    static Path plansDir() {
        return Path.of(System.getProperty("rlmeta.plans.dir", "../../tests/plans"));
    }

    @TestFactory
    Stream<DynamicTest> plans() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(plansDir())) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "no plan scripts in " + plansDir().toAbsolutePath());
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

    static RemoteLogSegmentId segmentId(JsonNode j) {
        return new RemoteLogSegmentId(tip(j.get("topicIdPartition")), Uuid.fromString(j.get("id").asText()));
    }

    static Optional<CustomMetadata> custom(JsonNode j) {
        JsonNode c = j.path("customMetadata");
        return c.isTextual() ? Optional.of(new CustomMetadata(HEX.parseHex(c.asText()))) : Optional.empty();
    }

    /** The Kafka object of a script event (the broker's call to its RemoteLogMetadataManager). */
    static RemoteLogMetadata kafkaObject(JsonNode e) {
        String op = e.get("op").asText();
        return switch (op) {
            case "copyStarted" -> {
                JsonNode s = e.get("segment");
                TreeMap<Integer, Long> epochs = new TreeMap<>();
                for (JsonNode le : s.get("segmentLeaderEpochs")) epochs.put(le.get("leaderEpoch").asInt(), le.get("offset").asLong());
                yield new RemoteLogSegmentMetadata(segmentId(s.get("remoteLogSegmentId")), s.get("startOffset").asLong(),
                        s.get("endOffset").asLong(), s.get("maxTimestampMs").asLong(), s.get("brokerId").asInt(),
                        s.get("eventTimestampMs").asLong(), s.get("segmentSizeInBytes").asInt(), custom(s),
                        RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs, s.path("txnIndexEmpty").asBoolean(false));
            }
            case "copyFinished", "deleteStarted", "deleteFinished" -> new RemoteLogSegmentMetadataUpdate(
                    segmentId(e.get("remoteLogSegmentId")), e.get("eventTimestampMs").asLong(), custom(e),
                    switch (op) {
                        case "copyFinished" -> RemoteLogSegmentState.COPY_SEGMENT_FINISHED;
                        case "deleteStarted" -> RemoteLogSegmentState.DELETE_SEGMENT_STARTED;
                        default -> RemoteLogSegmentState.DELETE_SEGMENT_FINISHED;
                    },
                    e.get("brokerId").asInt());
            case "partitionDelete" -> new RemotePartitionDeleteMetadata(tip(e.get("topicIdPartition")),
                    RemotePartitionDeleteState.forId((byte) e.get("state").asInt()), e.get("eventTimestampMs").asLong(),
                    e.get("brokerId").asInt());
            default -> throw new IllegalArgumentException("unknown op " + op);
        };
    }

    /** Whether Kafka 4.4.0's serde (as its metadata consumer uses it) deserializes a value. */
    static boolean kafkaReads(byte[] value) {
        try {
            SERDE.deserialize(value);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    static void run(JsonNode c) throws IOException {
        int level = c.get("featureLevel").asInt();
        // A plan case is a regression example: without the log it must produce it checks nothing.
        assertTrue(c.has("expect") && c.get("expect").isArray(), c.path("name").asText() + ": a plan case needs \"expect\"");
        List<JsonNode> log = new ArrayList<>();
        int tombstones = 0;
        try (MetadataStore s = new MetadataStore()) {
            for (JsonNode e : c.get("events")) {
                byte[] event = SERDE.serialize(kafkaObject(e));
                PlannedRecords r = s.plan(event, e.get("brokerLeaderEpoch").asInt(), level);
                MetadataStoreTest.Batch b = new MetadataStoreTest.Batch();
                for (int i = 0; i < r.size(); i++) {
                    b.add(log.size(), r.keys[i], r.values[i]);
                    String value = r.values[i] == null ? null : HEX.formatHex(r.values[i]);
                    if (value == null) tombstones++;
                    log.add(JSON.createObjectNode().put("key", new String(r.keys[i], UTF_8)).put("value", value));
                }
                byte[] outcomes = b.applyTo(s);
                for (int i = 0; i < outcomes.length; i++) {
                    byte o = outcomes[i];
                    // above level 0 a planned value is of version 1, which Kafka 4.4.0 cannot read
                    byte applied = level == 0 ? Outcome.APPLIED : Outcome.APPLIED_V1;
                    assertEquals(true, o == applied || o == Outcome.TOMBSTONE, "a planned record replays: outcome " + o);
                    assertEquals(o == Outcome.TOMBSTONE || level > 0, Outcome.fatalToKafka(o), "fatal to Kafka: " + o);
                    if (r.values[i] != null) {
                        // the flag agrees with what Kafka 4.4.0's own serde does with the value
                        assertEquals(Outcome.fatalToKafka(o), !kafkaReads(r.values[i]), "Kafka 4.4.0 reads outcome " + o);
                    }
                }
            }
        }
        assertEquals(c.get("expect"), JSON.valueToTree(log), "the produced log");
        System.out.printf("%s: %d events at level %d produced %d records (%d tombstones), equal to the expected log%n",
                c.get("name").asText(), c.get("events").size(), level, log.size(), tombstones);
    }
}
