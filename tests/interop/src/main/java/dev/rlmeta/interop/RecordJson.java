package dev.rlmeta.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataSnapshotRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataUpdateRecord;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemotePartitionDeleteMetadataRecord;

/**
 * The vector JSON form of a record (vectors README section 1) <-> Kafka 4.4.0's generated record
 * classes. Field names are the schema's in lowerCamelCase, nested as in the schema; uuids in
 * Kafka's string form; bytes as lowercase hex; the 4.4.0 schemas' only tagged field,
 * TxnIndexEmpty (tag 0, versions 0+, segment and snapshot records), is always present;
 * {@code unknownTaggedFields} only when a struct carries some.
 */
final class RecordJson {
    private RecordJson() {}

    // ------------------------------------------------------------------ message -> JSON

    static ObjectNode toJson(ApiMessage m) {
        if (m instanceof RemoteLogSegmentMetadataRecord r) return segment(r);
        if (m instanceof RemoteLogSegmentMetadataUpdateRecord r) return update(r);
        if (m instanceof RemotePartitionDeleteMetadataRecord r) return partitionDelete(r);
        if (m instanceof RemoteLogSegmentMetadataSnapshotRecord r) return snapshot(r);
        throw new IllegalArgumentException("not a __remote_log_metadata record: " + m.getClass());
    }

    private static ObjectNode obj() {
        return Kafka44.NODES.objectNode();
    }

    private static void tags(ObjectNode o, List<RawTaggedField> fields) {
        if (fields == null || fields.isEmpty()) return;
        ArrayNode a = o.putArray("unknownTaggedFields");
        for (RawTaggedField f : fields) {
            ObjectNode t = a.addObject();
            t.put("tag", f.tag());
            t.put("hex", Kafka44.hex(f.data()));
        }
    }

    private static void bytes(ObjectNode o, String name, byte[] b) {
        if (b == null) o.putNull(name);
        else o.put(name, Kafka44.hex(b));
    }

    private static ObjectNode tip(String name, Uuid id, int partition, List<RawTaggedField> unknown) {
        ObjectNode o = obj();
        o.put("name", name);
        o.put("id", id.toString());
        o.put("partition", partition);
        tags(o, unknown);
        return o;
    }

    static ObjectNode segment(RemoteLogSegmentMetadataRecord r) {
        ObjectNode o = obj();
        RemoteLogSegmentMetadataRecord.RemoteLogSegmentIdEntry sid = r.remoteLogSegmentId();
        RemoteLogSegmentMetadataRecord.TopicIdPartitionEntry t = sid.topicIdPartition();
        ObjectNode s = o.putObject("remoteLogSegmentId");
        s.set("topicIdPartition", tip(t.name(), t.id(), t.partition(), t.unknownTaggedFields()));
        s.put("id", sid.id().toString());
        tags(s, sid.unknownTaggedFields());
        o.put("startOffset", r.startOffset());
        o.put("endOffset", r.endOffset());
        o.put("brokerId", r.brokerId());
        o.put("maxTimestampMs", r.maxTimestampMs());
        o.put("eventTimestampMs", r.eventTimestampMs());
        ArrayNode eps = o.putArray("segmentLeaderEpochs");
        for (RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry e : r.segmentLeaderEpochs()) {
            ObjectNode n = eps.addObject();
            n.put("leaderEpoch", e.leaderEpoch());
            n.put("offset", e.offset());
            tags(n, e.unknownTaggedFields());
        }
        o.put("segmentSizeInBytes", r.segmentSizeInBytes());
        bytes(o, "customMetadata", r.customMetadata());
        o.put("remoteLogSegmentState", r.remoteLogSegmentState());
        o.put("txnIndexEmpty", r.txnIndexEmpty());
        tags(o, r.unknownTaggedFields());
        return o;
    }

    static ObjectNode update(RemoteLogSegmentMetadataUpdateRecord r) {
        ObjectNode o = obj();
        RemoteLogSegmentMetadataUpdateRecord.RemoteLogSegmentIdEntry sid = r.remoteLogSegmentId();
        RemoteLogSegmentMetadataUpdateRecord.TopicIdPartitionEntry t = sid.topicIdPartition();
        ObjectNode s = o.putObject("remoteLogSegmentId");
        s.set("topicIdPartition", tip(t.name(), t.id(), t.partition(), t.unknownTaggedFields()));
        s.put("id", sid.id().toString());
        tags(s, sid.unknownTaggedFields());
        o.put("brokerId", r.brokerId());
        o.put("eventTimestampMs", r.eventTimestampMs());
        bytes(o, "customMetadata", r.customMetadata());
        o.put("remoteLogSegmentState", r.remoteLogSegmentState());
        tags(o, r.unknownTaggedFields());
        return o;
    }

    static ObjectNode partitionDelete(RemotePartitionDeleteMetadataRecord r) {
        ObjectNode o = obj();
        RemotePartitionDeleteMetadataRecord.TopicIdPartitionEntry t = r.topicIdPartition();
        o.set("topicIdPartition", tip(t.name(), t.id(), t.partition(), t.unknownTaggedFields()));
        o.put("brokerId", r.brokerId());
        o.put("eventTimestampMs", r.eventTimestampMs());
        o.put("remotePartitionDeleteState", r.remotePartitionDeleteState());
        tags(o, r.unknownTaggedFields());
        return o;
    }

    static ObjectNode snapshot(RemoteLogSegmentMetadataSnapshotRecord r) {
        ObjectNode o = obj();
        o.put("segmentId", r.segmentId().toString());
        o.put("startOffset", r.startOffset());
        o.put("endOffset", r.endOffset());
        o.put("brokerId", r.brokerId());
        o.put("maxTimestampMs", r.maxTimestampMs());
        o.put("eventTimestampMs", r.eventTimestampMs());
        ArrayNode eps = o.putArray("segmentLeaderEpochs");
        for (RemoteLogSegmentMetadataSnapshotRecord.SegmentLeaderEpochEntry e : r.segmentLeaderEpochs()) {
            ObjectNode n = eps.addObject();
            n.put("leaderEpoch", e.leaderEpoch());
            n.put("offset", e.offset());
            tags(n, e.unknownTaggedFields());
        }
        o.put("segmentSizeInBytes", r.segmentSizeInBytes());
        bytes(o, "customMetadata", r.customMetadata());
        o.put("remoteLogSegmentState", r.remoteLogSegmentState());
        o.put("txnIndexEmpty", r.txnIndexEmpty());
        tags(o, r.unknownTaggedFields());
        return o;
    }

    // ------------------------------------------------------------------ JSON -> message

    /** Thrown when a record JSON does not fit Kafka 4.4.0's schema. */
    static final class BadJson extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadJson(String msg) {
            super(msg);
        }
    }

    /** Strict view of one JSON object: every field must be used, types must fit exactly. */
    private static final class In {
        final JsonNode node;
        final String path;
        final Set<String> used = new HashSet<>();

        In(JsonNode node, String path) {
            if (node == null || !node.isObject()) throw new BadJson(path + ": expected an object, got " + node);
            this.node = node;
            this.path = path;
        }

        private String p(String f) {
            return path.isEmpty() ? f : path + "." + f;
        }

        JsonNode get(String f) {
            used.add(f);
            JsonNode v = node.get(f);
            if (v == null) throw new BadJson(p(f) + ": missing");
            return v;
        }

        private BigInteger integer(String f) {
            JsonNode v = get(f);
            if (!v.isIntegralNumber()) throw new BadJson(p(f) + ": expected an integer, got " + v);
            return v.bigIntegerValue();
        }

        private BigInteger ranged(String f, long min, long max) {
            BigInteger b = integer(f);
            if (b.compareTo(BigInteger.valueOf(min)) < 0 || b.compareTo(BigInteger.valueOf(max)) > 0) {
                throw new BadJson(p(f) + ": " + b + " is out of range [" + min + ", " + max + "]");
            }
            return b;
        }

        long i64(String f) {
            return ranged(f, Long.MIN_VALUE, Long.MAX_VALUE).longValue();
        }

        int i32(String f) {
            return ranged(f, Integer.MIN_VALUE, Integer.MAX_VALUE).intValue();
        }

        byte i8(String f) {
            return ranged(f, Byte.MIN_VALUE, Byte.MAX_VALUE).byteValue();
        }

        boolean bool(String f) {
            JsonNode v = get(f);
            if (!v.isBoolean()) throw new BadJson(p(f) + ": expected a boolean, got " + v);
            return v.booleanValue();
        }

        String str(String f) {
            JsonNode v = get(f);
            if (!v.isTextual()) throw new BadJson(p(f) + ": expected a string, got " + v);
            return v.textValue();
        }

        Uuid uuid(String f) {
            String s = str(f);
            try {
                return Uuid.fromString(s);
            } catch (RuntimeException e) {
                throw new BadJson(p(f) + ": not a Kafka uuid string: " + s + " (" + e + ")");
            }
        }

        byte[] nullableBytes(String f) {
            JsonNode v = get(f);
            if (v.isNull()) return null;
            if (!v.isTextual()) throw new BadJson(p(f) + ": expected hex or null, got " + v);
            return hexOf(p(f), v.textValue());
        }

        In sub(String f) {
            return new In(get(f), p(f));
        }

        List<In> objects(String f) {
            JsonNode v = get(f);
            if (!v.isArray()) throw new BadJson(p(f) + ": expected an array, got " + v);
            List<In> out = new ArrayList<>();
            for (int i = 0; i < v.size(); i++) out.add(new In(v.get(i), p(f) + "[" + i + "]"));
            return out;
        }

        void unknownTags(List<RawTaggedField> into) {
            if (!node.has("unknownTaggedFields")) return;
            for (In t : objects("unknownTaggedFields")) {
                int tag = t.i32("tag");
                byte[] data = hexOf(t.p("hex"), t.str("hex"));
                t.done();
                into.add(new RawTaggedField(tag, data));
            }
        }

        void done() {
            Iterator<String> names = node.fieldNames();
            while (names.hasNext()) {
                String n = names.next();
                if (!used.contains(n)) {
                    throw new BadJson(p(n) + ": field not in Kafka 4.4.0's schema of this record");
                }
            }
        }
    }

    private static byte[] hexOf(String path, String s) {
        if (!s.equals(s.toLowerCase(java.util.Locale.ROOT))) throw new BadJson(path + ": hex must be lowercase");
        try {
            return Kafka44.unhex(s);
        } catch (IllegalArgumentException e) {
            throw new BadJson(path + ": not hex: " + s);
        }
    }

    /** Builds Kafka's generated record for apiKey from a vector {@code record} object. */
    static ApiMessage fromJson(int apiKey, JsonNode record) {
        In in = new In(record, "");
        ApiMessage m;
        switch (apiKey) {
            case 0 -> m = segmentFrom(in);
            case 1 -> m = updateFrom(in);
            case 2 -> m = partitionDeleteFrom(in);
            case 3 -> m = snapshotFrom(in);
            default -> throw new BadJson("apiKey " + apiKey + " is not a __remote_log_metadata record");
        }
        in.unknownTags(m.unknownTaggedFields());
        in.done();
        return m;
    }

    private static RemoteLogSegmentMetadataRecord segmentFrom(In in) {
        In sid = in.sub("remoteLogSegmentId");
        In t = sid.sub("topicIdPartition");
        var tipE = new RemoteLogSegmentMetadataRecord.TopicIdPartitionEntry()
                .setName(t.str("name")).setId(t.uuid("id")).setPartition(t.i32("partition"));
        t.unknownTags(tipE.unknownTaggedFields());
        t.done();
        var sidE = new RemoteLogSegmentMetadataRecord.RemoteLogSegmentIdEntry()
                .setTopicIdPartition(tipE).setId(sid.uuid("id"));
        sid.unknownTags(sidE.unknownTaggedFields());
        sid.done();
        List<RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry> eps = new ArrayList<>();
        for (In e : in.objects("segmentLeaderEpochs")) {
            var ee = new RemoteLogSegmentMetadataRecord.SegmentLeaderEpochEntry()
                    .setLeaderEpoch(e.i32("leaderEpoch")).setOffset(e.i64("offset"));
            e.unknownTags(ee.unknownTaggedFields());
            e.done();
            eps.add(ee);
        }
        return new RemoteLogSegmentMetadataRecord()
                .setRemoteLogSegmentId(sidE)
                .setStartOffset(in.i64("startOffset"))
                .setEndOffset(in.i64("endOffset"))
                .setBrokerId(in.i32("brokerId"))
                .setMaxTimestampMs(in.i64("maxTimestampMs"))
                .setEventTimestampMs(in.i64("eventTimestampMs"))
                .setSegmentLeaderEpochs(eps)
                .setSegmentSizeInBytes(in.i32("segmentSizeInBytes"))
                .setCustomMetadata(in.nullableBytes("customMetadata"))
                .setRemoteLogSegmentState(in.i8("remoteLogSegmentState"))
                .setTxnIndexEmpty(in.bool("txnIndexEmpty"));
    }

    private static RemoteLogSegmentMetadataUpdateRecord updateFrom(In in) {
        In sid = in.sub("remoteLogSegmentId");
        In t = sid.sub("topicIdPartition");
        var tipE = new RemoteLogSegmentMetadataUpdateRecord.TopicIdPartitionEntry()
                .setName(t.str("name")).setId(t.uuid("id")).setPartition(t.i32("partition"));
        t.unknownTags(tipE.unknownTaggedFields());
        t.done();
        var sidE = new RemoteLogSegmentMetadataUpdateRecord.RemoteLogSegmentIdEntry()
                .setTopicIdPartition(tipE).setId(sid.uuid("id"));
        sid.unknownTags(sidE.unknownTaggedFields());
        sid.done();
        return new RemoteLogSegmentMetadataUpdateRecord()
                .setRemoteLogSegmentId(sidE)
                .setBrokerId(in.i32("brokerId"))
                .setEventTimestampMs(in.i64("eventTimestampMs"))
                .setCustomMetadata(in.nullableBytes("customMetadata"))
                .setRemoteLogSegmentState(in.i8("remoteLogSegmentState"));
    }

    private static RemotePartitionDeleteMetadataRecord partitionDeleteFrom(In in) {
        In t = in.sub("topicIdPartition");
        var tipE = new RemotePartitionDeleteMetadataRecord.TopicIdPartitionEntry()
                .setName(t.str("name")).setId(t.uuid("id")).setPartition(t.i32("partition"));
        t.unknownTags(tipE.unknownTaggedFields());
        t.done();
        return new RemotePartitionDeleteMetadataRecord()
                .setTopicIdPartition(tipE)
                .setBrokerId(in.i32("brokerId"))
                .setEventTimestampMs(in.i64("eventTimestampMs"))
                .setRemotePartitionDeleteState(in.i8("remotePartitionDeleteState"));
    }

    private static RemoteLogSegmentMetadataSnapshotRecord snapshotFrom(In in) {
        List<RemoteLogSegmentMetadataSnapshotRecord.SegmentLeaderEpochEntry> eps = new ArrayList<>();
        for (In e : in.objects("segmentLeaderEpochs")) {
            var ee = new RemoteLogSegmentMetadataSnapshotRecord.SegmentLeaderEpochEntry()
                    .setLeaderEpoch(e.i32("leaderEpoch")).setOffset(e.i64("offset"));
            e.unknownTags(ee.unknownTaggedFields());
            e.done();
            eps.add(ee);
        }
        return new RemoteLogSegmentMetadataSnapshotRecord()
                .setSegmentId(in.uuid("segmentId"))
                .setStartOffset(in.i64("startOffset"))
                .setEndOffset(in.i64("endOffset"))
                .setBrokerId(in.i32("brokerId"))
                .setMaxTimestampMs(in.i64("maxTimestampMs"))
                .setEventTimestampMs(in.i64("eventTimestampMs"))
                .setSegmentLeaderEpochs(eps)
                .setSegmentSizeInBytes(in.i32("segmentSizeInBytes"))
                .setCustomMetadata(in.nullableBytes("customMetadata"))
                .setRemoteLogSegmentState(in.i8("remoteLogSegmentState"))
                .setTxnIndexEmpty(in.bool("txnIndexEmpty"));
    }
}
