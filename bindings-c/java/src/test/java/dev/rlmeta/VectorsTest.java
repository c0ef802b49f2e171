package dev.rlmeta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every case of every vector file in {@code rlmeta.vectors.dir} (tests/vectors): value, invalid,
 * key and partitioner cases (vectors README); other kinds are reported as skipped. The replay
 * files ({@code replay-*.json}) are run by {@link ReplayVectorsTest} through {@link MetadataStore}.
 */
class VectorsTest {
    /** 64-bit numbers are read exactly (Jackson keeps them as long or BigInteger, never double). */
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

    /** Equality of JSON trees where numbers compare by value (an int node equals a long node). */
    private static final Comparator<JsonNode> NUMBERS_BY_VALUE = (a, b) -> {
        if (a.isNumber() && b.isNumber()) {
            return a.isIntegralNumber() && b.isIntegralNumber()
                    ? a.bigIntegerValue().compareTo(b.bigIntegerValue())
                    : a.decimalValue().compareTo(b.decimalValue());
        }
        return a.equals(b) ? 0 : 1;
    };

    static Path vectorsDir() {
        return Path.of(System.getProperty("rlmeta.vectors.dir", "../../tests/vectors"));
    }

    @TestFactory
    Stream<DynamicNode> vectors() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(vectorsDir())) {
            files = s.filter(p -> p.toString().endsWith(".json"))
                    .filter(p -> !p.getFileName().toString().startsWith("replay-"))
                    .sorted().toList();
        }
        assertFalse(files.isEmpty(), "no vector files in " + vectorsDir().toAbsolutePath());
        List<DynamicNode> nodes = new ArrayList<>();
        for (Path file : files) {
            JsonNode doc = JSON.readTree(file.toFile());
            JsonNode cases = doc.get("cases");
            assertTrue(cases != null && cases.isArray(), file + " has no \"cases\" array");
            List<DynamicTest> tests = new ArrayList<>();
            for (JsonNode c : cases) {
                String name = c.path("name").asText("(unnamed)");
                tests.add(DynamicTest.dynamicTest(name, () -> runCase(c)));
            }
            nodes.add(DynamicContainer.dynamicContainer(file.getFileName().toString(), tests));
        }
        return nodes.stream();
    }

    private static void runCase(JsonNode c) throws IOException {
        JsonNode kind = c.get("kind");
        if (kind != null) {
            Assumptions.assumeTrue("value".equals(kind.asText()), "case kind " + kind + " is not run by this runner");
            valueCase(c);
        } else if (c.has("numPartitions")) {
            partitionerCase(c);
        } else if (c.has("key")) {
            keyCase(c);
        } else if (c.has("error")) {
            invalidCase(c);
        } else if (c.has("record")) {
            valueCase(c);
        } else {
            fail("cannot tell the kind of this case");
        }
    }

    private static String text(JsonNode c, String field) {
        JsonNode n = c.get(field);
        assertTrue(n != null && n.isTextual(), "\"" + field + "\" is not a string");
        return n.textValue();
    }

    private static BigInteger integer(JsonNode c, String field) {
        JsonNode n = c.get(field);
        assertTrue(n != null && n.isIntegralNumber(), "\"" + field + "\" is not an integer");
        return n.bigIntegerValue();
    }

    private static byte[] hex(JsonNode c) {
        return HexFormat.of().parseHex(text(c, "hex"));
    }

    /** Decoding hex gives the document; encoding the document gives hex. */
    private static void valueCase(JsonNode c) throws IOException {
        ObjectNode want = JSON.createObjectNode();
        for (String f : new String[] {"apiKey", "version", "record"}) {
            assertTrue(c.has(f), "case has no " + f);
            want.set(f, c.get(f));
        }
        byte[] bytes = hex(c);
        JsonNode got = JSON.readTree(RlMeta.decodeValueJson(bytes));
        if (!got.equals(NUMBERS_BY_VALUE, want)) {
            assertEquals(want.toString(), got.toString(), "decoded document differs");
        }
        byte[] encoded = RlMeta.encodeValueJson(JSON.writeValueAsString(want));
        assertEquals(HexFormat.of().formatHex(bytes), HexFormat.of().formatHex(encoded), "encoded bytes differ");
    }

    /** Decoding fails, with the kind of fault Kafka's error names. */
    private static void invalidCase(JsonNode c) {
        StringBuilder kafka = new StringBuilder(text(c, "error"));
        for (JsonNode cause : c.path("causes")) {
            kafka.append(" | ").append(cause.asText());
        }
        byte[] bytes = hex(c);
        RlMetaException e = assertThrows(RlMetaException.class, () -> RlMeta.decodeValueJson(bytes),
                () -> "decoded, Kafka refused it: " + kafka);
        assertNotEquals(RlMetaException.class, e.getClass(), "an exception of its kind's class");
        int want = RlMeta.errorKindForKafkaMessage(kafka.toString());
        if (want != 0) {
            assertEquals(want, e.getErrorCode(),
                    () -> "rlmeta says " + e.getMessage() + "; Kafka's error names " + RlMeta.errorKindName(want)
                            + " (" + kafka + ")");
        }
    }

    /** Formatting the fields gives the key; parsing the key gives the fields. */
    private static void keyCase(JsonNode c) {
        JsonNode update = c.get("update");
        assertTrue(update != null && update.isBoolean(), "\"update\" is not a bool");
        RecordKey want = new RecordKey(text(c, "topicId"), text(c, "topicName"),
                integer(c, "partition").intValueExact(), integer(c, "endOffset").longValueExact(),
                integer(c, "brokerLeaderEpoch").intValueExact(), update.booleanValue());
        String key = text(c, "key");
        assertEquals(key, want.format());
        assertEquals(want, RlMeta.keyParse(key));
        assertEquals(want, RlMeta.keyParseBytes(key.getBytes(StandardCharsets.UTF_8)));
    }

    private static void partitionerCase(JsonNode c) {
        int got = RlMeta.metadataPartition(text(c, "topicId"), integer(c, "partition").intValueExact(),
                integer(c, "numPartitions").intValueExact());
        assertEquals(integer(c, "metadataPartition").intValueExact(), got);
    }

    /** The runner itself fails on wrong expectations (guards against a runner that passes everything). */
    @TestFactory
    Stream<DynamicTest> runnerCanFail() throws IOException {
        JsonNode value = JSON.readTree("{\"apiKey\":1,\"version\":1,\"record\":{\"remoteLogSegmentId\":"
                + "{\"topicIdPartition\":{\"name\":\"j\",\"id\":\"OSksn54BLKZlV-3n-GiDbA\",\"partition\":0},"
                + "\"id\":\"UkGu-vAbUZ_Ut1vfA4bP-w\"},\"brokerId\":1663,\"eventTimestampMs\":1517128100168,"
                + "\"customMetadata\":null,\"remoteLogSegmentState\":0,\"brokerLeaderEpoch\":-1,\"endOffset\":-1},"
                + "\"hex\":\"010101026a39292c9f9e012ca66557ede7f868836c00000000005241aefaf01b519fd4b75bdf0386cffb"
                + "000000067f000001613be1a948000000\"}");
        ObjectNode wrongField = value.deepCopy();
        ((ObjectNode) wrongField.get("record")).put("brokerId", 1664);
        ObjectNode wrongHex = value.deepCopy();
        wrongHex.put("hex", value.get("hex").asText().replaceFirst("000000$", "000001"));
        JsonNode wrongKey = JSON.readTree("{\"topicId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"topicName\":\"E\",\"partition\":0,"
                + "\"endOffset\":0,\"brokerLeaderEpoch\":-1,\"update\":true,\"key\":\"AAAAAAAAAAAAAAAAAAAAAA:E:0:0:-1\"}");
        return Stream.of(
                DynamicTest.dynamicTest("the good case passes", () -> runCase(value)),
                DynamicTest.dynamicTest("a wrong field fails",
                        () -> assertThrows(AssertionError.class, () -> runCase(wrongField))),
                DynamicTest.dynamicTest("wrong bytes fail",
                        () -> assertThrows(Throwable.class, () -> runCase(wrongHex))),
                DynamicTest.dynamicTest("a wrong key fails",
                        () -> assertThrows(AssertionError.class, () -> runCase(wrongKey))));
    }
}
