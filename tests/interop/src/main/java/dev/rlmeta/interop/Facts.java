package dev.rlmeta.interop;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot;
import org.apache.kafka.server.log.remote.metadata.storage.generated.MetadataRecordType;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataSnapshotRecord;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/** Prints facts about the Kafka 4.4.0 jars on the class path (README "Facts" section). */
public final class Facts {
    private Facts() {}

    static void section(String s) {
        System.out.println();
        System.out.println("== " + s);
    }

    static void attempt(String what, Supplier<Object> f) {
        try {
            Object r = f.get();
            System.out.println(what + " -> OK " + (r == null ? "" : r));
        } catch (RuntimeException e) {
            System.out.println(what + " -> " + Kafka44.describe(e));
        }
    }

    static String resource(String name) throws Exception {
        try (InputStream in = Facts.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) return null;
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toString(StandardCharsets.UTF_8);
        }
    }

    static void printTagged(JsonNode fields, String indent) {
        for (JsonNode f : fields) {
            String line = indent + f.get("name").asText() + " : " + f.get("type").asText() + " versions=" + f.get("versions").asText();
            if (f.has("tag")) line += "  TAGGED tag=" + f.get("tag").asText() + " taggedVersions=" + f.get("taggedVersions").asText();
            if (f.has("nullableVersions")) line += " nullableVersions=" + f.get("nullableVersions").asText();
            if (f.has("default")) line += " default=" + f.get("default").asText();
            System.out.println(line);
            if (f.has("fields")) printTagged(f.get("fields"), indent + "    ");
        }
    }

    public static void main(String[] args) throws Exception {
        section("Generated record classes (storage/.../generated) in kafka-storage-4.4.0.jar");
        for (MetadataRecordType t : MetadataRecordType.values()) {
            ApiMessage m = t.newMetadataRecord();
            Class<?> c = m.getClass();
            short lo = c.getField("LOWEST_SUPPORTED_VERSION").getShort(null);
            short hi = c.getField("HIGHEST_SUPPORTED_VERSION").getShort(null);
            Object[] schemas = (Object[]) c.getField("SCHEMAS").get(null);
            System.out.printf("apiKey %d %s: LOWEST_SUPPORTED_VERSION=%d HIGHEST_SUPPORTED_VERSION=%d SCHEMAS.length=%d%n",
                    t.id(), c.getSimpleName(), lo, hi, schemas.length);
            System.out.println("  SCHEMA_0 = " + c.getField("SCHEMA_0").get(null));
            String json = resource("message/" + c.getSimpleName() + ".json");
            if (json != null) {
                StringBuilder sb = new StringBuilder();
                for (String line : json.split("\n")) if (!line.trim().startsWith("//")) sb.append(line).append('\n');
                JsonNode spec = Kafka44.JSON.readTree(sb.toString());
                System.out.println("  message/" + c.getSimpleName() + ".json: validVersions=" + spec.get("validVersions").asText()
                        + " flexibleVersions=" + spec.get("flexibleVersions").asText());
                printTagged(spec.get("fields"), "    ");
            }
        }

        section("Public accessors mentioning txn / leader epoch / endOffset");
        for (Class<?> c : List.of(RemoteLogSegmentMetadata.class, RemoteLogSegmentMetadataUpdate.class,
                RemotePartitionDeleteMetadata.class, RemoteLogSegmentMetadataSnapshot.class)) {
            StringBuilder sb = new StringBuilder();
            for (Method m : c.getMethods()) {
                String n = m.getName().toLowerCase();
                if (n.contains("txn") || n.contains("leaderepoch") || n.contains("endoffset")) sb.append(' ').append(m.getName()).append("()");
            }
            System.out.println(c.getSimpleName() + ":" + sb);
            for (var k : c.getConstructors()) System.out.println("  ctor " + Arrays.toString(k.getParameterTypes()));
        }

        section("toString forms");
        Uuid topicId = new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L);
        Uuid segId = new Uuid(0x1111111111111111L, 0x2222222222222222L);
        TopicIdPartition tip = new TopicIdPartition(topicId, 0, "foo");
        RemoteLogSegmentId rsid = new RemoteLogSegmentId(tip, segId);
        Map<Integer, Long> epochs = new TreeMap<>(Map.of(0, 0L, 1, 20L, 2, 80L));
        System.out.println(topicId);
        System.out.println(tip);
        System.out.println(rsid);
        RemoteLogSegmentMetadata seg = new RemoteLogSegmentMetadata(rsid, 0, 100, -1, 1, 1700000000000L, 1024,
                Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs);
        System.out.println(seg);
        RemoteLogSegmentMetadata seg2 = new RemoteLogSegmentMetadata(rsid, 0, 100, 1700000000005L, 1, 1700000000000L, 1024,
                Optional.of(new CustomMetadata(new byte[] {0, 1, 2, 3})), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, epochs, true);
        System.out.println(seg2);
        RemoteLogSegmentMetadataUpdate upd = new RemoteLogSegmentMetadataUpdate(rsid, 1700000000000L,
                Optional.of(new CustomMetadata(new byte[] {0, 1, 2, 3})), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 2);
        System.out.println(upd);
        System.out.println(new RemoteLogSegmentMetadataUpdate(rsid, 1700000000000L, Optional.empty(),
                RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 2));
        RemotePartitionDeleteMetadata del = new RemotePartitionDeleteMetadata(tip, RemotePartitionDeleteState.DELETE_PARTITION_MARKED,
                1700000000000L, 1);
        System.out.println(del);
        RemoteLogSegmentMetadataSnapshot snap = RemoteLogSegmentMetadataSnapshot.create(seg2);
        System.out.println(snap);
        System.out.println(seg.createWithUpdates(upd));

        section("RemoteLogMetadataSerde: versions written, snapshot support, validation");
        for (Object o : List.of(seg2, upd, del, snap)) {
            byte[] b = Kafka44.SERDE.serialize((org.apache.kafka.server.log.remote.storage.RemoteLogMetadata) o);
            ApiMessageAndVersion amv = Kafka44.readWire(b);
            System.out.printf("%s -> %d bytes, frame=%d apiKey=%d version=%d; %s%n", o.getClass().getSimpleName(), b.length,
                    b[0], b[1], b[2], Kafka44.hex(b));
            System.out.println("  wire JSON: " + RecordJson.toJson(amv.message()));
        }
        attempt("new RemoteLogSegmentMetadata(startOffset=-1)", () -> new RemoteLogSegmentMetadata(rsid, -1, 100, -1, 1, 0, 0, epochs));
        attempt("new RemoteLogSegmentMetadata(endOffset < startOffset)", () -> new RemoteLogSegmentMetadata(rsid, 10, 9, -1, 1, 0, 0, epochs));
        attempt("new RemoteLogSegmentMetadata(empty epochs)", () -> new RemoteLogSegmentMetadata(rsid, 0, 9, -1, 1, 0, 0, Map.of()));
        attempt("new RemoteLogSegmentMetadataUpdate(state COPY_SEGMENT_STARTED)", () -> new RemoteLogSegmentMetadataUpdate(rsid, 0,
                Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, 0));
        attempt("new RemoteLogSegmentMetadataSnapshot(empty epochs)", () -> new RemoteLogSegmentMetadataSnapshot(segId, 0, 1, -1, 0, 0, 0,
                Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, Map.of(), false));
        attempt("new RemoteLogSegmentMetadataSnapshot(startOffset=-5, endOffset=-9)", () -> new RemoteLogSegmentMetadataSnapshot(segId, -5, -9, -1, 0, 0, 0,
                Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs, false));

        section("Reading values at version 1 (4.4.0 supports only version 0)");
        for (Object o : List.of(seg2, upd, del, snap)) {
            byte[] b = Kafka44.SERDE.serialize((org.apache.kafka.server.log.remote.storage.RemoteLogMetadata) o);
            b[2] = 1;
            attempt(o.getClass().getSimpleName() + " bytes with version byte 1, BytesApiMessageSerde.deserialize", () -> Kafka44.readWire(b));
        }
        RemoteLogSegmentMetadataSnapshotRecord emptySnap = new RemoteLogSegmentMetadataSnapshotRecord().setSegmentId(segId).setEndOffset(5);
        byte[] es = Kafka44.writeWire(emptySnap, (short) 0);
        es[2] = 1;
        attempt("snapshot record with EMPTY epoch array at version 1 (" + Kafka44.hex(es) + "), wire read",
                () -> RecordJson.toJson(Kafka44.readWire(es).message()));
        attempt("same, RemoteLogMetadataSerde.deserialize", () -> Kafka44.SERDE.deserialize(es));
        attempt("BytesApiMessageSerde.serialize(segment record, version 1)", () -> Kafka44.hex(Kafka44.writeWire(
                Kafka44.readWire(Kafka44.SERDE.serialize(seg2)).message(), (short) 1)));
        attempt("BytesApiMessageSerde.serialize(empty-epoch snapshot record, version 1)", () -> Kafka44.hex(Kafka44.writeWire(emptySnap, (short) 1)));

        section("Nullable bytes (customMetadata) with a negative length varint");
        byte[] u = Kafka44.SERDE.serialize(new RemoteLogSegmentMetadataUpdate(rsid, 0, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 2));
        // layout: ... brokerId(4) eventTs(8) customMetadata(uvarint 00) state(1) tags(1)
        int cmAt = u.length - 3;
        byte[] neg = Kafka44.concat(Arrays.copyOfRange(u, 0, cmAt), new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f},
                Arrays.copyOfRange(u, cmAt + 1, u.length));
        attempt("update with customMetadata length varint ffffffff0f (" + Kafka44.hex(neg) + ")",
                () -> RecordJson.toJson(Kafka44.readWire(neg).message()));

        section("RemoteLogMetadataTopicPartitioner (worked example of kafka-formats.md section 4)");
        RemoteLogMetadataTopicPartitioner part = new RemoteLogMetadataTopicPartitioner(50);
        for (int p = 0; p < 3; p++) System.out.println("partition " + p + " of " + topicId + ", N=50 -> " + part.metadataPartition(new TopicIdPartition(topicId, p, "foo")));
    }
}
