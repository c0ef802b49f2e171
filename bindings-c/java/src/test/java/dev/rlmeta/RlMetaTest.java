package dev.rlmeta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class RlMetaTest {
    /** A version-1 segment record (vectors README §1). */
    static final String SEGMENT_DOC = "{\"apiKey\":0,\"version\":1,\"record\":{"
            + "\"remoteLogSegmentId\":{\"topicIdPartition\":{\"name\":\"foo\",\"id\":\"ASNFZ4mrze_-3LqYdlQyEA\","
            + "\"partition\":3},\"id\":\"EREREREREREiIiIiIiIiIg\"},"
            + "\"startOffset\":0,\"endOffset\":9223372036854775807,\"brokerId\":1,\"maxTimestampMs\":-1,"
            + "\"eventTimestampMs\":1700000000000,"
            + "\"segmentLeaderEpochs\":[{\"leaderEpoch\":0,\"offset\":0},{\"leaderEpoch\":1,\"offset\":20}],"
            + "\"segmentSizeInBytes\":1024,\"customMetadata\":null,\"remoteLogSegmentState\":0,"
            + "\"txnIndexEmpty\":false,\"brokerLeaderEpoch\":7}}";
    static final String SEGMENT_KEY = "ASNFZ4mrze_-3LqYdlQyEA:foo:3:9223372036854775807:7";
    static final String TOPIC_ID = "ASNFZ4mrze_-3LqYdlQyEA";

    @Test
    void versionsAgree() {
        assertEquals(NativeLoader.version(), RlMeta.version(), "the pom's version is the crate's");
    }

    @Test
    void roundTripsAValueAndDerivesItsKey() {
        byte[] value = RlMeta.encodeValueJson(SEGMENT_DOC);
        String json = RlMeta.decodeValueJson(value);
        assertArrayEquals(value, RlMeta.encodeValueJson(json));
        assertTrue(json.contains("\"endOffset\":9223372036854775807"), json);
        assertEquals(SEGMENT_KEY, RlMeta.keyForValue(value));
    }

    @Test
    void keysFormatAndParse() {
        RecordKey k = new RecordKey(TOPIC_ID, "foo", 3, Long.MIN_VALUE, -1, true);
        assertEquals(TOPIC_ID + ":foo:3:-9223372036854775808:-1:UPDATE", k.format());
        assertEquals(k, RecordKey.parse(k.format()));
        assertEquals(k, RlMeta.keyParseBytes(k.format().getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void truncatedValueCarriesCodeOffsetAndField() {
        byte[] value = RlMeta.encodeValueJson(SEGMENT_DOC);
        // startOffset begins at byte 45: frame (3), segment id (name 1+3, topic id 16, partition 4,
        // tags 1, id 16, tags 1); cut 3 bytes into it.
        byte[] cut = Arrays.copyOf(value, 48);
        RlMetaException.Truncated e = assertThrows(RlMetaException.Truncated.class, () -> RlMeta.decodeValueJson(cut));
        assertEquals(1, e.getErrorCode());
        assertEquals(RlMetaException.Truncated.CODE, e.getErrorCode());
        assertEquals("truncated", e.getKind());
        assertEquals(45, e.getOffset());
        assertEquals("startOffset", e.getField());
        assertEquals("needs 8 byte(s), only 3 left", e.getDetail());
        assertEquals("truncated (code 1) at byte 45, field startOffset: needs 8 byte(s), only 3 left", e.getMessage());
        // Every proper prefix fails with an RlMetaException, never anything else.
        for (int n = 0; n < value.length; n++) {
            byte[] prefix = Arrays.copyOf(value, n);
            assertThrows(RlMetaException.class, () -> RlMeta.decodeValueJson(prefix));
        }
    }

    @Test
    void errorsHaveTheirKindsClassAndCode() {
        RlMetaException.TrailingBytes t = assertThrows(RlMetaException.TrailingBytes.class,
                () -> RlMeta.decodeValueJson(Arrays.copyOf(RlMeta.encodeValueJson(SEGMENT_DOC), 200)));
        assertEquals(2, t.getErrorCode());
        assertEquals(3, assertThrows(RlMetaException.BadFrameVersion.class,
                () -> RlMeta.decodeValueJson(new byte[] {2, 0, 0})).getErrorCode());
        assertEquals(12, assertThrows(RlMetaException.InvalidJson.class, () -> RlMeta.encodeValueJson("{")).getErrorCode());
        assertEquals(9, assertThrows(RlMetaException.InvalidKey.class, () -> RlMeta.keyParse("nope")).getErrorCode());
        assertEquals(9, assertThrows(RlMetaException.InvalidKey.class,
                () -> RlMeta.keyParseBytes(new byte[] {(byte) 0xff})).getErrorCode());
        assertEquals(10, assertThrows(RlMetaException.InvalidUuid.class,
                () -> RlMeta.keyFormat("short", "foo", 0, 0, 0, false)).getErrorCode());
        assertEquals(10, assertThrows(RlMetaException.InvalidUuid.class,
                () -> RlMeta.metadataPartition("short", 0, 50)).getErrorCode());
        RlMetaException.InvalidArgument a = assertThrows(RlMetaException.InvalidArgument.class,
                () -> RlMeta.metadataPartition(TOPIC_ID, 0, 0));
        assertEquals(11, a.getErrorCode());
        assertEquals("numPartitions", a.getField());
        assertEquals(-1, a.getOffset());
        assertEquals(RlMetaException.Truncated.CODE, RlMeta.errorKindForKafkaMessage("java.nio.BufferUnderflowException"));
        assertEquals(0, RlMeta.errorKindForKafkaMessage("something else"));
    }

    /** Java's table of exception classes covers the core's table exactly. */
    @Test
    void everyCoreCodeHasItsExceptionClass() {
        int[] codes = RlMeta.errorCodes();
        assertTrue(codes.length >= 19, "codes: " + Arrays.toString(codes));
        for (int code : codes) {
            RlMetaException e = RlMetaException.create(code, RlMeta.errorKindName(code), "d", "m", -1, null);
            assertTrue(e.getClass() != RlMetaException.class, "code " + code + " has no subclass");
            String snake = e.getClass().getSimpleName().replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
            assertEquals(RlMeta.errorKindName(code), snake, "class of code " + code);
            assertEquals(code, e.getErrorCode());
        }
        assertNull(RlMeta.errorKindName(0));
        assertNull(RlMeta.errorKindName(-1));
        assertInstanceOf(RlMetaException.class, RlMetaException.create(1000, "future", "d", "m", -1, null));
    }

    @Test
    void nullArgumentsThrowNullPointerException() {
        Executable[] calls = {
            () -> RlMeta.decodeValueJson(null),
            () -> RlMeta.encodeValueJson(null),
            () -> RlMeta.keyFormat(null, "foo", 0, 0, 0, false),
            () -> RlMeta.keyFormat(TOPIC_ID, null, 0, 0, 0, false),
            () -> RlMeta.keyParse(null),
            () -> RlMeta.keyParseBytes(null),
            () -> RlMeta.keyForValue(null),
            () -> RlMeta.metadataPartition(null, 0, 50),
            () -> RlMeta.errorKindForKafkaMessage(null),
        };
        for (Executable call : calls) {
            NullPointerException e = assertThrows(NullPointerException.class, call);
            assertTrue(e.getMessage().endsWith("must not be null"), e.getMessage());
        }
    }

    /** Many calls, failing and not, so that -Xcheck:jni sees local references handled over time. */
    @Test
    void manyCalls() {
        byte[] value = RlMeta.encodeValueJson(SEGMENT_DOC);
        for (int i = 0; i < 20_000; i++) {
            assertEquals(SEGMENT_KEY, RlMeta.keyForValue(value));
            assertThrows(RlMetaException.Truncated.class, () -> RlMeta.decodeValueJson(new byte[] {1}));
            assertEquals(3, RlMeta.keyParse(SEGMENT_KEY).partition());
        }
    }

    @Test
    void writeLevelTakesTheHigherOfRecordAndPolicy() {
        assertEquals(0, RlMeta.writeLevel(-1, -1, "delete"));
        // the policy not known (reading topic configs not permitted): only a level record of 1+ decides
        assertEquals(2, RlMeta.writeLevel(-1, 2, null));
        assertEquals(1, RlMeta.writeLevel(-1, 1, null));
        assertEquals(-1, RlMeta.writeLevel(-1, 0, null));
        assertEquals(-1, RlMeta.writeLevel(-1, -1, null));
        assertEquals(1, RlMeta.writeLevel(-1, -1, "compact,delete"));
        assertEquals(1, RlMeta.writeLevel(-1, -1, "delete, compact"));
        assertEquals(1, RlMeta.writeLevel(-1, -1, "compact"));
        assertEquals(1, RlMeta.writeLevel(-1, 0, "compact,delete"));
        assertEquals(1, RlMeta.writeLevel(-1, 1, "delete"));
        assertEquals(2, RlMeta.writeLevel(-1, 2, "compact,delete"));
        assertEquals(2, RlMeta.writeLevel(-1, 2, "compact"));
        RlMetaException.InvalidArgument p = assertThrows(RlMetaException.InvalidArgument.class,
                () -> RlMeta.writeLevel(-1, -1, "retain"));
        assertEquals("cleanup.policy", p.getField());
        assertThrows(RlMetaException.InvalidArgument.class, () -> RlMeta.writeLevel(-1, 3, "compact"));
        assertThrows(RlMetaException.InvalidArgument.class, () -> RlMeta.writeLevel(-1, -3, "delete"));
        assertThrows(RlMetaException.InvalidArgument.class, () -> RlMeta.writeLevel(5, -1, "delete"));
    }

    @Test
    void writeLevelFinalizedWinsAndUnreadIsUnknown() {
        assertEquals(1, RlMeta.writeLevel(1, 2, "compact"));
        assertEquals(0, RlMeta.writeLevel(0, -2, null));
        assertEquals(-1, RlMeta.writeLevel(-1, -2, "compact"));
        // supported but not finalized is "none finalized": a topic already at 2 stays at 2 (the
        // migration tool's own rule said 0 here; it now asks the same core function)
        assertEquals(2, RlMeta.writeLevel(-1, 2, "compact"));
    }

    @Test
    void freshTopicPlanFollowsTheLevelConfigs() {
        assertArrayEquals(new String[] {"cleanup.policy", "compact", "remote.storage.enable", "false"},
                RlMeta.freshTopicConfigs(-1, -1L));
        assertArrayEquals(new byte[] {'2'}, RlMeta.freshTopicLevelRecord(-1));
        String[] v0 = RlMeta.freshTopicConfigs(0, 604800000L);
        assertEquals(java.util.List.of("cleanup.policy", "delete", "retention.ms", "604800000", "remote.storage.enable",
                "false"), java.util.List.of(v0));
        assertNull(RlMeta.freshTopicLevelRecord(0));
        assertThrows(RlMetaException.InvalidArgument.class, () -> RlMeta.freshTopicConfigs(9, -1L));
    }
}
