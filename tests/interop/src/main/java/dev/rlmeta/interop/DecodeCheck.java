package dev.rlmeta.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.generated.MetadataRecordType;

/**
 * Checks vector files against Kafka 4.4.0. Usage: DecodeCheck [-v] FILE...
 *
 * <p>Value cases (apiKey, version, record, hex): Kafka's BytesApiMessageSerde (the one
 * RemoteLogMetadataSerde uses) must decode hex to exactly record, field by field; Kafka must
 * write the decoded record, and the record built from the JSON, back to exactly hex. Cases at a
 * version 4.4.0 does not support must be rejected (counted as passed, "expected rejection").
 * RemoteLogMetadataSerde.deserialize is also run; its failures (the object model refuses e.g.
 * negative offsets) are reported, not counted. Invalid cases (hex + error, no record): Kafka must
 * reject hex, except cases marked readBy "pr-a" (only the KIP-1266 classes reject those; 4.4.0
 * reading them is reported as an expected accept). Partitioner cases: Kafka's RemoteLogMetadataTopicPartitioner must agree. Other
 * cases (keys, replay, plans) are skipped. The last line printed is "N passed, M failed"; the exit
 * status is 1 if M > 0 or N == 0.
 */
public final class DecodeCheck {
    private int passed, failed, skipped, expectedAccepts, expectedRejections, readUnsupported, serdeRefused, invalidPassed, errorTextDiffers;
    private final boolean verbose;

    private DecodeCheck(boolean verbose) {
        this.verbose = verbose;
    }

    public static void main(String[] args) {
        boolean verbose = false;
        List<String> files = new ArrayList<>();
        for (String a : args) {
            for (String part : a.trim().split("\\s+")) { // exec.args may arrive as one string
                if (part.isEmpty()) continue;
                if (part.equals("-v") || part.equals("--verbose")) verbose = true;
                else files.add(part);
            }
        }
        DecodeCheck c = new DecodeCheck(verbose);
        if (files.isEmpty()) {
            System.out.println("usage: DecodeCheck [-v] FILE...");
            c.finish();
        }
        for (String f : files) c.file(f);
        c.finish();
    }

    private void finish() {
        if (expectedRejections > 0) System.out.println("  " + expectedRejections + " expected rejection(s): versions Kafka 4.4.0 does not support, rejected by it");
        if (readUnsupported > 0) System.out.println("  " + readUnsupported + " case(s) at a version 4.4.0 does not support that it nevertheless read");
        if (invalidPassed > 0) System.out.println("  " + invalidPassed + " invalid case(s) rejected as expected (" + errorTextDiffers + " with a different error text)");
        if (expectedAccepts > 0) System.out.println("  " + expectedAccepts + " invalid case(s) marked readBy pr-a that Kafka 4.4.0 reads (expected: only the KIP-1266 schema rejects them)");
        if (serdeRefused > 0) System.out.println("  " + serdeRefused + " value(s) decode on the wire but RemoteLogMetadataSerde.deserialize refuses them (object-model checks; see -v)");
        if (skipped > 0) System.out.println("  " + skipped + " case(s) skipped (kinds this checker does not handle)");
        System.out.println(passed + " passed, " + failed + " failed");
        System.out.flush();
        System.exit(failed > 0 || passed == 0 ? 1 : 0);
    }

    private void fail(String file, String name, String why) {
        failed++;
        System.out.println("FAIL " + file + ": " + name + ": " + why);
    }

    private void ok(String file, String name, String note) {
        passed++;
        if (verbose) System.out.println("ok   " + file + ": " + name + (note.isEmpty() ? "" : " (" + note + ")"));
    }

    private void file(String file) {
        JsonNode doc;
        try {
            doc = Kafka44.readJson(Path.of(file));
        } catch (Exception e) {
            fail(file, "(file)", "cannot read vector file: " + e);
            return;
        }
        JsonNode cases = doc.get("cases");
        if (cases == null || !cases.isArray()) {
            fail(file, "(file)", "no \"cases\" array");
            return;
        }
        for (int i = 0; i < cases.size(); i++) {
            JsonNode c = cases.get(i);
            String name = c.hasNonNull("name") ? c.get("name").asText() : "#" + i;
            try {
                String kind = c.hasNonNull("kind") ? c.get("kind").asText() : null;
                if ((kind == null || kind.equals("value")) && c.has("record") && c.has("hex")) valueCase(file, name, c);
                else if (kind == null && c.has("numPartitions")) partitionerCase(file, name, c);
                else if (kind == null && c.has("error") && c.has("hex") && !c.has("record")) invalidCase(file, name, c);
                else {
                    skipped++;
                    if (verbose) System.out.println("skip " + file + ": " + name + " (not a value, invalid or partitioner case)");
                }
            } catch (RuntimeException e) {
                fail(file, name, "checker error: " + Kafka44.describe(e));
            }
        }
    }

    // ------------------------------------------------------------------ value cases

    private static int intField(JsonNode c, String f) {
        JsonNode v = c.get(f);
        if (v == null || !v.canConvertToInt() || !v.isIntegralNumber()) throw new IllegalArgumentException("\"" + f + "\" missing or not an int: " + v);
        return v.intValue();
    }

    private void valueCase(String file, String name, JsonNode c) {
        int apiKey = intField(c, "apiKey");
        int version = intField(c, "version");
        JsonNode record = c.get("record");
        byte[] hex;
        try {
            hex = Kafka44.unhex(c.get("hex").asText());
        } catch (IllegalArgumentException e) {
            fail(file, name, "hex is not hex");
            return;
        }
        boolean supported;
        try {
            MetadataRecordType t = MetadataRecordType.fromId((short) apiKey);
            supported = apiKey == (short) apiKey && version >= t.lowestSupportedVersion() && version <= t.highestSupportedVersion();
        } catch (RuntimeException e) {
            supported = false;
        }
        ApiMessageAndVersion amv;
        try {
            amv = Kafka44.readWire(hex);
        } catch (RuntimeException e) {
            if (!supported) {
                expectedRejections++;
                System.out.println("EXPECTED-REJECTION " + file + ": " + name + ": apiKey " + apiKey + " version " + version
                        + " is not supported by Kafka 4.4.0, which says " + Kafka44.describe(e));
                ok(file, name, "expected rejection");
            } else {
                fail(file, name, "Kafka 4.4.0 cannot decode hex: " + Kafka44.describe(e));
            }
            return;
        }
        List<String> problems = new ArrayList<>();
        if (amv.message().apiKey() != apiKey) problems.add("apiKey: expected " + apiKey + ", Kafka decoded " + amv.message().apiKey());
        if (amv.version() != version) problems.add("version: expected " + version + ", Kafka decoded " + amv.version());
        ObjectNode got = RecordJson.toJson(amv.message());
        JsonNode want = supported ? record : asSeenBy44(apiKey, record);
        compare("record", want, got, problems);
        if (supported) {
            byte[] again = Kafka44.writeWire(amv.message(), (short) version);
            if (!Arrays.equals(again, hex)) {
                problems.add("Kafka writes the record it decoded differently (hex is not canonical): " + diff(again, hex));
            }
            try {
                ApiMessage built = RecordJson.fromJson(apiKey, record);
                byte[] enc = Kafka44.writeWire(built, (short) version);
                if (!Arrays.equals(enc, hex)) problems.add("Kafka's encoding of record differs from hex: " + diff(enc, hex));
            } catch (RecordJson.BadJson e) {
                problems.add("record does not fit Kafka 4.4.0's schema: " + e.getMessage());
            } catch (RuntimeException e) {
                problems.add("Kafka cannot encode record: " + Kafka44.describe(e));
            }
        }
        if (!problems.isEmpty()) {
            for (String p : problems) fail(file, name, p);
            failed -= problems.size() - 1; // one failure per case
            return;
        }
        String note = "";
        if (!supported) {
            readUnsupported++;
            note = "version " + version + " is not supported by 4.4.0 but it read the value; v1-only fields compared as unknown tags";
            System.out.println("READ-UNSUPPORTED-VERSION " + file + ": " + name + ": " + note);
        }
        try {
            Kafka44.SERDE.deserialize(hex);
        } catch (RuntimeException e) {
            serdeRefused++;
            if (verbose) System.out.println("note " + file + ": " + name + ": RemoteLogMetadataSerde.deserialize refuses it: " + Kafka44.describe(e));
        }
        ok(file, name, note);
    }

    /**
     * What Kafka 4.4.0 makes of a record at a version it does not know (KIP-1266 version 1): the
     * fields its schema lacks become unknown tagged fields when they differ from their defaults.
     */
    private static JsonNode asSeenBy44(int apiKey, JsonNode record) {
        if (!record.isObject()) return record;
        ObjectNode r = ((ObjectNode) record).deepCopy();
        TreeMap<Integer, byte[]> tags = new TreeMap<>();
        switch (apiKey) {
            case 0, 3 -> moveInt(r, "brokerLeaderEpoch", 0, 1, tags);
            case 1 -> {
                moveInt(r, "brokerLeaderEpoch", -1, 0, tags);
                moveLong(r, "endOffset", -1, 1, tags);
            }
            case 2 -> {
                moveInt(r, "brokerLeaderEpoch", 0, 0, tags);
                moveLong(r, "endOffset", 0, 1, tags);
            }
            default -> { }
        }
        if (!tags.isEmpty()) {
            List<JsonNode> all = new ArrayList<>();
            if (r.has("unknownTaggedFields")) r.get("unknownTaggedFields").forEach(all::add);
            for (Map.Entry<Integer, byte[]> e : tags.entrySet()) {
                ObjectNode t = Kafka44.NODES.objectNode();
                t.put("tag", e.getKey());
                t.put("hex", Kafka44.hex(e.getValue()));
                all.add(t);
            }
            all.sort((a, b) -> Integer.compare(a.get("tag").asInt(), b.get("tag").asInt()));
            ArrayNode arr = r.putArray("unknownTaggedFields");
            all.forEach(arr::add);
        }
        return r;
    }

    private static void moveInt(ObjectNode r, String field, int dflt, int tag, Map<Integer, byte[]> tags) {
        JsonNode v = r.remove(field);
        if (v != null && v.isIntegralNumber() && v.intValue() != dflt) tags.put(tag, ByteBuffer.allocate(4).putInt(v.intValue()).array());
    }

    private static void moveLong(ObjectNode r, String field, long dflt, int tag, Map<Integer, byte[]> tags) {
        JsonNode v = r.remove(field);
        if (v != null && v.isIntegralNumber() && v.longValue() != dflt) tags.put(tag, ByteBuffer.allocate(8).putLong(v.longValue()).array());
    }

    /** Where Kafka's bytes and the vector's hex first differ, with some context. */
    static String diff(byte[] kafka, byte[] hex) {
        int i = Arrays.mismatch(kafka, hex);
        int from = Math.max(0, i - 4);
        String k = Kafka44.hex(Arrays.copyOfRange(kafka, from, Math.min(kafka.length, i + 12)));
        String h = Kafka44.hex(Arrays.copyOfRange(hex, from, Math.min(hex.length, i + 12)));
        return "Kafka " + kafka.length + " bytes, hex " + hex.length + " bytes, first difference at byte " + i
                + " (from byte " + from + ": Kafka " + k + ", hex " + h + ")";
    }

    /** Field-by-field comparison; one message per differing field, naming its path. */
    static void compare(String path, JsonNode want, JsonNode got, List<String> out) {
        if (want.isObject() && got.isObject()) {
            Iterator<String> names = want.fieldNames();
            while (names.hasNext()) {
                String f = names.next();
                if (!got.has(f)) out.add("field " + path + "." + f + ": in the vector (" + want.get(f) + ") but not in Kafka 4.4.0's decoded record");
                else compare(path + "." + f, want.get(f), got.get(f), out);
            }
            Iterator<String> gotNames = got.fieldNames();
            while (gotNames.hasNext()) {
                String f = gotNames.next();
                if (!want.has(f)) out.add("field " + path + "." + f + ": missing from the vector; Kafka 4.4.0 decoded " + got.get(f));
            }
        } else if (want.isArray() && got.isArray()) {
            if (want.size() != got.size()) out.add("field " + path + ": vector has " + want.size() + " element(s), Kafka decoded " + got.size());
            for (int i = 0; i < Math.min(want.size(), got.size()); i++) compare(path + "[" + i + "]", want.get(i), got.get(i), out);
        } else if (want.isIntegralNumber() && got.isIntegralNumber()) {
            if (!want.bigIntegerValue().equals(got.bigIntegerValue())) out.add("field " + path + ": expected " + want + ", Kafka decoded " + got);
        } else if (!want.equals(got)) {
            out.add("field " + path + ": expected " + want + ", Kafka decoded " + got);
        }
    }

    // ------------------------------------------------------------------ other kinds

    private void invalidCase(String file, String name, JsonNode c) {
        byte[] hex;
        try {
            hex = Kafka44.unhex(c.get("hex").asText());
        } catch (IllegalArgumentException e) {
            fail(file, name, "hex is not hex");
            return;
        }
        try {
            ApiMessageAndVersion amv = Kafka44.readWire(hex);
            String what = "version " + amv.version() + " " + VectorWriter.abbreviate(RecordJson.toJson(amv.message()).toString());
            if (c.hasNonNull("readBy") && c.get("readBy").asText().equals("pr-a")) {
                // Only the KIP-1266 (PR #22459) classes reject it; 4.4.0, like Kafka before KIP-1266, may read it.
                expectedAccepts++;
                System.out.println("EXPECTED-ACCEPT " + file + ": " + name + ": readBy pr-a, and Kafka 4.4.0 reads it: " + what);
                ok(file, name, "accepted by 4.4.0 as expected for readBy pr-a");
            } else {
                fail(file, name, "Kafka 4.4.0 ACCEPTS this invalid input: " + what);
            }
        } catch (RuntimeException e) {
            invalidPassed++;
            String expected = c.get("error").asText();
            if (!expected.equals(e.toString())) {
                errorTextDiffers++;
                if (verbose) System.out.println("note " + file + ": " + name + ": Kafka 4.4.0 says " + Kafka44.describe(e) + "; the vector says " + expected);
            }
            ok(file, name, "rejected");
        }
    }

    private void partitionerCase(String file, String name, JsonNode c) {
        Uuid id = Uuid.fromString(c.get("topicId").asText());
        int partition = intField(c, "partition");
        int n = intField(c, "numPartitions");
        int want = intField(c, "metadataPartition");
        int got = new RemoteLogMetadataTopicPartitioner(n).metadataPartition(new TopicIdPartition(id, partition, "t"));
        if (got != want) fail(file, name, "metadataPartition: expected " + want + ", Kafka 4.4.0 computes " + got);
        else ok(file, name, "");
    }
}
