/*
 * Tests of rlmeta's C ABI: explicit API checks, then every case of every vector file given on
 * the command line (value, invalid, key, partitioner, replay and write-plan cases; the last two
 * through the rlmeta_store_* API, in test_store.c; other kinds are skipped and counted).
 * The last line printed is "N passed, M failed"; the exit status is 1 on failures.
 *
 *   test_rlmeta tests/vectors/v0.json tests/vectors/keys.json ...
 */
#include "harness.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int passed, failed, skipped;

/* ------------------------------------------------------------------------------ helpers */

void check(int ok, const char *what, ...) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, what);
    printf("FAIL api: ");
    vprintf(what, ap);
    printf("\n");
    va_end(ap);
}

int streq(const char *a, const char *b) {
    return a && b && strcmp(a, b) == 0;
}

/* Bytes from hex; NULL on bad input. *len gets the length. */
uint8_t *from_hex(const char *hex, size_t n, size_t *len) {
    if (n % 2) return NULL;
    uint8_t *out = malloc(n / 2 + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 2) {
        unsigned v;
        if (sscanf(hex + i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[i]) ||
            !strchr("0123456789abcdefABCDEF", hex[i + 1])) {
            free(out);
            return NULL;
        }
        out[i / 2] = (uint8_t)v;
    }
    *len = n / 2;
    return out;
}

void to_hex(const uint8_t *b, size_t n, char *out, size_t cap) {
    size_t i = 0;
    for (; i < n && 2 * i + 2 < cap; i++) sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * i] = 0;
}

/* Exact integer from a JSON number's text. */
int int64_of(const json *v, int64_t min, int64_t max, int64_t *out) {
    if (!v || v->type != JSON_NUMBER) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(v->text, &end, 10);
    if (errno || *end || x < min || x > max) return 0;
    *out = x;
    return 1;
}

const char *str_of(const json *v) {
    return v && v->type == JSON_STRING ? v->text : NULL;
}

/* Writes "<error description>" of err into why and frees it. */
void take_error(RlmetaError *err, uint32_t status, char *why, size_t cap, const char *what) {
    snprintf(why, cap, "%s failed with %" PRIu32 ": %s", what, status,
             err ? rlmeta_error_describe(err) : "(no error handle)");
    rlmeta_error_free(err);
}

/* ------------------------------------------------------------------------------ api tests */

/* A version-1 segment record (vectors README §1) used by several tests. */
static const char SEGMENT_DOC[] =
    "{\"apiKey\":0,\"version\":1,\"record\":{"
    "\"remoteLogSegmentId\":{\"topicIdPartition\":{\"name\":\"foo\",\"id\":\"ASNFZ4mrze_-3LqYdlQyEA\","
    "\"partition\":3},\"id\":\"EREREREREREiIiIiIiIiIg\"},"
    "\"startOffset\":0,\"endOffset\":9223372036854775807,\"brokerId\":1,\"maxTimestampMs\":-1,"
    "\"eventTimestampMs\":1700000000000,"
    "\"segmentLeaderEpochs\":[{\"leaderEpoch\":0,\"offset\":0},{\"leaderEpoch\":1,\"offset\":20}],"
    "\"segmentSizeInBytes\":1024,\"customMetadata\":null,\"remoteLogSegmentState\":0,"
    "\"txnIndexEmpty\":false,\"brokerLeaderEpoch\":7}}";
static const char SEGMENT_KEY[] = "ASNFZ4mrze_-3LqYdlQyEA:foo:3:9223372036854775807:7";

static void test_version(void) {
    const char *v = rlmeta_version();
    check(v && v[0] >= '0' && v[0] <= '9', "rlmeta_version gives a version, got %s", v ? v : "NULL");
}

static void test_round_trip(RlmetaBuf *value) {
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_value_encode_json(SEGMENT_DOC, strlen(SEGMENT_DOC), value, &err);
    check(st == RLMETA_OK && err == NULL && value->data && value->len > 0,
          "encode the sample segment: %s", err ? rlmeta_error_describe(err) : "");
    rlmeta_error_free(err);
    if (st) return;
    check(value->data[value->len] == 0, "buffers end with a NUL byte");

    RlmetaBuf text = {0};
    st = rlmeta_value_decode_json(value->data, value->len, &text, NULL);
    check(st == RLMETA_OK && strlen((char *)text.data) == text.len, "decode the sample segment");
    json got, want;
    char msg[256], path[512] = "";
    if (st == RLMETA_OK && json_parse((char *)text.data, text.len, &got, msg, sizeof msg)) {
        json_parse(SEGMENT_DOC, strlen(SEGMENT_DOC), &want, msg, sizeof msg);
        check(!json_diff(&got, &want, path, sizeof path), "decode(encode(doc)) == doc: %s", path);
        json_free(&want);
        json_free(&got);
    } else {
        check(0, "decoded JSON parses: %s", msg);
    }
    rlmeta_buf_free(&text);
    check(text.data == NULL && text.len == 0, "rlmeta_buf_free resets the buffer");
    rlmeta_buf_free(&text); /* twice is harmless */
}

static void test_null_arguments(const RlmetaBuf *value) {
    RlmetaBuf out = {(uint8_t *)0x1, 77}; /* a sentinel: must stay untouched on failure */
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_value_decode_json(NULL, 5, &out, &err);
    check(st == RLMETA_INVALID_ARGUMENT && rlmeta_error_code(err) == st &&
              streq(rlmeta_error_field(err), "value"),
          "NULL value with a length: invalid_argument, field value (got %" PRIu32 ")", st);
    check(out.data == (uint8_t *)0x1 && out.len == 77, "nothing written on failure");
    rlmeta_error_free(err);

    err = NULL;
    st = rlmeta_value_decode_json(value->data, value->len, NULL, &err);
    check(st == RLMETA_INVALID_ARGUMENT && streq(rlmeta_error_field(err), "out_json"),
          "NULL output: invalid_argument, field out_json");
    rlmeta_error_free(err);

    st = rlmeta_value_decode_json(NULL, 0, &out, NULL);
    check(st == RLMETA_TRUNCATED, "NULL value of length 0 is empty input: truncated (got %" PRIu32 ")", st);
    check(rlmeta_value_decode_json(value->data, value->len, NULL, NULL) == RLMETA_INVALID_ARGUMENT,
          "err may be NULL");
    check(rlmeta_value_encode_json(NULL, 3, &out, NULL) == RLMETA_INVALID_ARGUMENT,
          "encode: NULL json");
    check(rlmeta_value_encode_json("{}", 2, NULL, NULL) == RLMETA_INVALID_ARGUMENT,
          "encode: NULL output");

    err = NULL;
    st = rlmeta_key_format(NULL, "foo", 0, 0, 0, false, &out, &err);
    check(st == RLMETA_INVALID_ARGUMENT && streq(rlmeta_error_field(err), "topic_id"),
          "key_format: NULL topic_id");
    rlmeta_error_free(err);
    check(rlmeta_key_format("ASNFZ4mrze_-3LqYdlQyEA", NULL, 0, 0, 0, false, &out, NULL) ==
              RLMETA_INVALID_ARGUMENT,
          "key_format: NULL topic");
    check(rlmeta_key_format("ASNFZ4mrze_-3LqYdlQyEA", "foo", 0, 0, 0, false, NULL, NULL) ==
              RLMETA_INVALID_ARGUMENT,
          "key_format: NULL output");
    check(rlmeta_key_parse(NULL, 4, NULL, NULL) == RLMETA_INVALID_ARGUMENT, "key_parse: NULLs");
    RlmetaKey key = {(char *)0x1, (char *)0x2, 1, 2, 3, true};
    check(rlmeta_key_parse(NULL, 4, &key, NULL) == RLMETA_INVALID_ARGUMENT &&
              key.topic_id == (char *)0x1 && key.topic == (char *)0x2 && key.end_offset == 2,
          "key_parse: NULL key, output untouched");
    check(rlmeta_key_for_value(value->data, value->len, NULL, NULL) == RLMETA_INVALID_ARGUMENT,
          "key_for_value: NULL output");
    int32_t part = -7;
    check(rlmeta_metadata_partition(NULL, 0, 50, &part, NULL) == RLMETA_INVALID_ARGUMENT &&
              part == -7,
          "metadata_partition: NULL topic_id");
    check(rlmeta_metadata_partition("ASNFZ4mrze_-3LqYdlQyEA", 0, 50, NULL, NULL) ==
              RLMETA_INVALID_ARGUMENT,
          "metadata_partition: NULL output");
    check(rlmeta_error_kind_for_kafka_message(NULL) == 0, "kind_for_kafka_message(NULL) == 0");
}

static void test_frees_and_accessors(void) {
    rlmeta_buf_free(NULL);
    RlmetaBuf empty = {0};
    rlmeta_buf_free(&empty);
    rlmeta_key_free(NULL);
    RlmetaKey k = {0};
    rlmeta_key_free(&k);
    rlmeta_error_free(NULL);
    check(rlmeta_error_code(NULL) == RLMETA_OK && rlmeta_error_message(NULL) == NULL &&
              rlmeta_error_kind(NULL) == NULL && rlmeta_error_describe(NULL) == NULL &&
              rlmeta_error_field(NULL) == NULL && rlmeta_error_offset(NULL) == -1,
          "error accessors accept NULL");
    static const uint32_t codes[] = {
        RLMETA_TRUNCATED,      RLMETA_TRAILING_BYTES,   RLMETA_BAD_FRAME_VERSION, RLMETA_UNKNOWN_API_KEY,
        RLMETA_UNSUPPORTED_VERSION, RLMETA_INVALID_LENGTH, RLMETA_INVALID_VARINT, RLMETA_INVALID_UTF8,
        RLMETA_INVALID_KEY,    RLMETA_INVALID_UUID,     RLMETA_INVALID_ARGUMENT,  RLMETA_INVALID_JSON,
        RLMETA_INVALID_RECORD, RLMETA_NOT_FOUND,        RLMETA_NOT_INITIALIZED,   RLMETA_INVALID_STATE,
        RLMETA_CORRUPT,        RLMETA_LIMIT_EXCEEDED,   RLMETA_INVALID_LAYOUT,    RLMETA_LAYOUT_MISMATCH,
        RLMETA_INTERNAL};
    int named = 1;
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) named &= rlmeta_error_kind_name(codes[i]) != NULL;
    check(named && streq(rlmeta_error_kind_name(RLMETA_TRUNCATED), "truncated") &&
              rlmeta_error_kind_name(0) == NULL && rlmeta_error_kind_name(1000) == NULL,
          "rlmeta_error_kind_name names every RLMETA_* code, not 0 or 1000");
}

static void test_truncated(const RlmetaBuf *value) {
    /* Every proper prefix of a valid value fails, with an error handle matching the status. */
    int all_fail = 1, consistent = 1;
    for (size_t cut = 0; cut < value->len; cut++) {
        RlmetaBuf out = {0};
        RlmetaError *err = NULL;
        uint32_t st = rlmeta_value_decode_json(value->data, cut, &out, &err);
        all_fail &= st != RLMETA_OK && out.data == NULL;
        consistent &= err != NULL && rlmeta_error_code(err) == st && rlmeta_error_message(err) &&
                      rlmeta_error_offset(err) >= -1 && rlmeta_error_offset(err) <= (int64_t)cut;
        rlmeta_error_free(err);
        rlmeta_buf_free(&out);
    }
    check(all_fail, "every proper prefix of a value fails to decode");
    check(consistent, "every prefix's error handle matches its status");

    /* Cut 3 bytes into the 8-byte startOffset: it starts at byte 45, after the frame (3 bytes)
     * and the segment id (topic name 1+3, topic id 16, partition 4, tags 1, id 16, tags 1). */
    RlmetaError *err = NULL;
    RlmetaBuf out = {0};
    size_t cut = 48;
    uint32_t st = rlmeta_value_decode_json(value->data, cut, &out, &err);
    const char *field = rlmeta_error_field(err);
    int64_t off = rlmeta_error_offset(err);
    const char *msg = rlmeta_error_message(err), *desc = rlmeta_error_describe(err);
    check(st == RLMETA_TRUNCATED && streq(rlmeta_error_kind(err), "truncated"),
          "a truncated value is RLMETA_TRUNCATED (got %" PRIu32 ")", st);
    check(off == 45, "truncated: offset %" PRId64 " is where startOffset begins (45)", off);
    check(streq(field, "startOffset"), "truncated: field startOffset (got %s)", field ? field : "NULL");
    check(streq(msg, "needs 8 byte(s), only 3 left"), "truncated: message (got %s)", msg ? msg : "NULL");
    check(streq(desc, "truncated (code 1) at byte 45, field startOffset: needs 8 byte(s), only 3 left"),
          "truncated: description (got %s)", desc ? desc : "NULL");
    rlmeta_error_free(err);
}

static void test_errors(const RlmetaBuf *value) {
    RlmetaError *err = NULL;
    RlmetaBuf out = {0};
    uint32_t st = rlmeta_value_encode_json("\"\xff\"", 3, &out, &err);
    check(st == RLMETA_INVALID_UTF8 && rlmeta_error_offset(err) == 1 &&
              streq(rlmeta_error_field(err), "json"),
          "encode: invalid UTF-8 is invalid_utf8 at byte 1 (got %" PRIu32 ")", st);
    rlmeta_error_free(err);
    check(rlmeta_value_encode_json("{", 1, &out, NULL) == RLMETA_INVALID_JSON, "encode: bad JSON");
    check(rlmeta_value_encode_json("{\"apiKey\":0}", 12, &out, NULL) == RLMETA_INVALID_JSON,
          "encode: missing fields");

    /* A value followed by a stray byte. */
    uint8_t *longer = malloc(value->len + 1);
    memcpy(longer, value->data, value->len);
    longer[value->len] = 0;
    check(rlmeta_value_decode_json(longer, value->len + 1, &out, NULL) == RLMETA_TRAILING_BYTES,
          "decode: trailing bytes");
    free(longer);
    uint8_t frame[] = {0x02, 0x00, 0x00};
    check(rlmeta_value_decode_json(frame, sizeof frame, &out, NULL) == RLMETA_BAD_FRAME_VERSION,
          "decode: bad frame version");

    RlmetaKey key = {0};
    err = NULL;
    st = rlmeta_key_parse((const uint8_t *)"nope", 4, &key, &err);
    check(st == RLMETA_INVALID_KEY && key.topic == NULL && rlmeta_error_message(err),
          "key_parse: malformed key is invalid_key");
    rlmeta_error_free(err);
    check(rlmeta_key_parse((const uint8_t *)"\xff", 1, &key, NULL) == RLMETA_INVALID_KEY,
          "key_parse: non-UTF-8 key is invalid_key");
    check(rlmeta_key_format("short", "foo", 0, 0, 0, false, &out, NULL) == RLMETA_INVALID_UUID,
          "key_format: bad uuid is invalid_uuid");
    check(rlmeta_key_format("ASNFZ4mrze_-3LqYdlQyEA", "f\xff", 0, 0, 0, false, &out, NULL) ==
              RLMETA_INVALID_UTF8,
          "key_format: non-UTF-8 topic is invalid_utf8");
    int32_t p = -7;
    err = NULL;
    st = rlmeta_metadata_partition("ASNFZ4mrze_-3LqYdlQyEA", 0, 0, &p, &err);
    check(st == RLMETA_INVALID_ARGUMENT && p == -7 && streq(rlmeta_error_field(err), "numPartitions"),
          "metadata_partition: 0 partitions is invalid_argument");
    rlmeta_error_free(err);
    check(rlmeta_error_kind_for_kafka_message("java.nio.BufferUnderflowException") == RLMETA_TRUNCATED &&
              rlmeta_error_kind_for_kafka_message("something else") == 0,
          "kind_for_kafka_message classifies");
}

static void test_keys(const RlmetaBuf *value) {
    RlmetaBuf out = {0};
    RlmetaError *err = (RlmetaError *)0x1; /* untouched on success */
    uint32_t st = rlmeta_key_for_value(value->data, value->len, &out, &err);
    check(st == RLMETA_OK && err == (RlmetaError *)0x1 && streq((char *)out.data, SEGMENT_KEY) &&
              out.len == strlen(SEGMENT_KEY),
          "key_for_value of the sample segment (got %s)", out.data ? (char *)out.data : "NULL");
    rlmeta_buf_free(&out);

    RlmetaKey k = {0};
    st = rlmeta_key_parse((const uint8_t *)SEGMENT_KEY, strlen(SEGMENT_KEY), &k, NULL);
    check(st == RLMETA_OK && streq(k.topic_id, "ASNFZ4mrze_-3LqYdlQyEA") && streq(k.topic, "foo") &&
              k.partition == 3 && k.end_offset == INT64_MAX && k.broker_leader_epoch == 7 && !k.update,
          "key_parse of the sample key");
    rlmeta_key_free(&k);
    check(k.topic_id == NULL && k.topic == NULL, "rlmeta_key_free resets the strings");
    rlmeta_key_free(&k);

    st = rlmeta_key_format("ASNFZ4mrze_-3LqYdlQyEA", "foo", 3, INT64_MIN, -1, true, &out, NULL);
    check(st == RLMETA_OK && streq((char *)out.data, "ASNFZ4mrze_-3LqYdlQyEA:foo:3:-9223372036854775808:-1:UPDATE"),
          "key_format with :UPDATE and Long.MIN_VALUE");
    rlmeta_buf_free(&out);
}

static void test_panic(void) {
    /* No input reaches a panic through the C ABI; the guard that turns one into RLMETA_INTERNAL
     * is covered by the crate's unit test error::tests::a_panic_becomes_an_internal_error. */
    skipped++;
    printf("skip api: a panic cannot be provoked through the C ABI (covered by a Rust unit test)\n");
}

/* The level of a read metadata partition: the higher of its level record's (-1: none) and the
 * one its topic's cleanup.policy implies (level 1's retention expires the level records). */
static void test_partition_level_with_policy(void) {
    static const struct { int32_t record; const char *policy; int32_t want; } cases[] = {
        {-1, "delete", 0},         {-1, "compact,delete", 1}, {-1, "delete,compact", 1},
        {-1, "compact", 1},        {0, "compact,delete", 1},  {1, "delete", 1},
        {1, "compact,delete", 1},  {2, "compact,delete", 2},  {2, "compact", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t got = -9;
        uint32_t st = rlmeta_partition_level_with_policy(cases[i].record, cases[i].policy, &got, NULL);
        check(st == RLMETA_OK && got == cases[i].want,
              "partition_level_with_policy(%" PRId32 ", %s) = %" PRId32 " (got %" PRId32 ", status %" PRIu32 ")",
              cases[i].record, cases[i].policy, cases[i].want, got, st);
    }
    int32_t got = -9;
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_partition_level_with_policy(-1, "retain", &got, &err);
    check(st == RLMETA_INVALID_ARGUMENT && got == -9 && streq(rlmeta_error_field(err), "cleanup.policy"),
          "partition_level_with_policy: an unknown policy is invalid_argument on cleanup.policy");
    rlmeta_error_free(err);
    err = NULL;
    st = rlmeta_partition_level_with_policy(3, "compact", &got, &err);
    check(st == RLMETA_INVALID_ARGUMENT && got == -9 && rlmeta_error_message(err),
          "partition_level_with_policy: record level 3 is invalid_argument");
    rlmeta_error_free(err);
    check(rlmeta_partition_level_with_policy(-1, NULL, &got, NULL) == RLMETA_INVALID_ARGUMENT,
          "partition_level_with_policy: NULL policy");
    check(rlmeta_partition_level_with_policy(-1, "delete", NULL, NULL) == RLMETA_INVALID_ARGUMENT,
          "partition_level_with_policy: NULL output");
}

static void api_tests(void) {
    RlmetaBuf value = {0};
    test_version();
    test_frees_and_accessors();
    test_round_trip(&value);
    if (value.data) {
        test_null_arguments(&value);
        test_truncated(&value);
        test_errors(&value);
        test_keys(&value);
    }
    test_partition_level_with_policy();
    test_panic();
    rlmeta_buf_free(&value);
    store_api_tests();
}

/* ------------------------------------------------------------------------------ vectors */

typedef int (*case_fn)(const json *c, char *why, size_t cap);

static int value_case(const json *c, char *why, size_t cap) {
    const json *api = json_get(c, "apiKey"), *ver = json_get(c, "version"), *rec = json_get(c, "record");
    const char *hex = str_of(json_get(c, "hex"));
    if (!api || !ver || !rec || !hex) return snprintf(why, cap, "needs apiKey, version, record, hex"), 0;
    size_t len = 0;
    uint8_t *bytes = from_hex(hex, strlen(hex), &len);
    if (!bytes) return snprintf(why, cap, "bad hex"), 0;

    /* The expected document, from the case's own text. */
    size_t doc_cap = api->raw_len + ver->raw_len + rec->raw_len + 64;
    char *doc = malloc(doc_cap);
    int doc_len = snprintf(doc, doc_cap, "{\"apiKey\":%.*s,\"version\":%.*s,\"record\":%.*s}",
                           (int)api->raw_len, api->raw, (int)ver->raw_len, ver->raw,
                           (int)rec->raw_len, rec->raw);
    int ok = 0;
    json want = {0}, got = {0};
    RlmetaBuf text = {0}, enc = {0};
    RlmetaError *err = NULL;
    char msg[256], path[1024] = "decoded";
    uint32_t st = rlmeta_value_decode_json(bytes, len, &text, &err);
    if (st) {
        take_error(err, st, why, cap, "decode");
    } else if (!json_parse((char *)text.data, text.len, &got, msg, sizeof msg)) {
        snprintf(why, cap, "decoded JSON does not parse: %s", msg);
    } else if (!json_parse(doc, (size_t)doc_len, &want, msg, sizeof msg)) {
        snprintf(why, cap, "case JSON does not parse: %s", msg);
    } else if (json_diff(&got, &want, path, sizeof path)) {
        snprintf(why, cap, "decoded document differs at %s", path);
    } else if ((st = rlmeta_value_encode_json(doc, (size_t)doc_len, &enc, &err))) {
        take_error(err, st, why, cap, "encode");
    } else if (enc.len != len || memcmp(enc.data, bytes, len) != 0) {
        char got_hex[512];
        to_hex(enc.data, enc.len, got_hex, sizeof got_hex);
        snprintf(why, cap, "encoded bytes differ: got %s", got_hex);
    } else {
        ok = 1;
    }
    json_free(&want);
    json_free(&got);
    rlmeta_buf_free(&text);
    rlmeta_buf_free(&enc);
    free(doc);
    free(bytes);
    return ok;
}

static int invalid_case(const json *c, char *why, size_t cap) {
    const char *hex = str_of(json_get(c, "hex")), *error = str_of(json_get(c, "error"));
    if (!hex || !error) return snprintf(why, cap, "needs hex and error"), 0;
    size_t len = 0;
    uint8_t *bytes = from_hex(hex, strlen(hex), &len);
    if (!bytes) return snprintf(why, cap, "bad hex"), 0;
    /* Kafka's error and its causes, as one text. */
    const json *causes = json_get(c, "causes");
    size_t text_cap = strlen(error) + 1;
    for (size_t i = 0; causes && causes->type == JSON_ARRAY && i < causes->count; i++)
        text_cap += causes->items[i].len + 3;
    char *text = malloc(text_cap);
    strcpy(text, error);
    for (size_t i = 0; causes && causes->type == JSON_ARRAY && i < causes->count; i++)
        if (causes->items[i].type == JSON_STRING) strcat(strcat(text, " | "), causes->items[i].text);

    RlmetaBuf out = {0};
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_value_decode_json(bytes, len, &out, &err);
    uint32_t want = rlmeta_error_kind_for_kafka_message(text);
    int ok = 0;
    if (st == RLMETA_OK) {
        snprintf(why, cap, "decoded, Kafka refused it (%.200s): %.300s", text, (char *)out.data);
    } else if (rlmeta_error_code(err) != st) {
        snprintf(why, cap, "status %" PRIu32 " but error handle code %" PRIu32, st, rlmeta_error_code(err));
    } else if (want && want != st) {
        snprintf(why, cap, "rlmeta says %s; Kafka's error names %s (%.300s)", rlmeta_error_describe(err),
                 rlmeta_error_kind_name(want), text);
    } else {
        ok = 1;
    }
    rlmeta_error_free(err);
    rlmeta_buf_free(&out);
    free(text);
    free(bytes);
    return ok;
}

static int key_case(const json *c, char *why, size_t cap) {
    const char *topic_id = str_of(json_get(c, "topicId")), *topic = str_of(json_get(c, "topicName"));
    const json *key = json_get(c, "key"), *update = json_get(c, "update");
    int64_t partition, end_offset, epoch;
    if (!topic_id || !topic || !key || key->type != JSON_STRING || !update ||
        (update->type != JSON_TRUE && update->type != JSON_FALSE) ||
        !int64_of(json_get(c, "partition"), INT32_MIN, INT32_MAX, &partition) ||
        !int64_of(json_get(c, "endOffset"), INT64_MIN, INT64_MAX, &end_offset) ||
        !int64_of(json_get(c, "brokerLeaderEpoch"), INT32_MIN, INT32_MAX, &epoch))
        return snprintf(why, cap, "malformed key case"), 0;
    int is_update = update->type == JSON_TRUE;
    RlmetaBuf out = {0};
    RlmetaError *err = NULL;
    RlmetaKey k = {0};
    int ok = 0;
    uint32_t st = rlmeta_key_format(topic_id, topic, (int32_t)partition, end_offset, (int32_t)epoch,
                                    is_update, &out, &err);
    if (st) {
        take_error(err, st, why, cap, "key_format");
    } else if (out.len != key->len || memcmp(out.data, key->text, key->len) != 0) {
        snprintf(why, cap, "formatted %s, expected %s", (char *)out.data, key->text);
    } else if ((st = rlmeta_key_parse((const uint8_t *)key->text, key->len, &k, &err))) {
        take_error(err, st, why, cap, "key_parse");
    } else if (!streq(k.topic_id, topic_id) || !streq(k.topic, topic) || k.partition != partition ||
               k.end_offset != end_offset || k.broker_leader_epoch != epoch || k.update != is_update) {
        snprintf(why, cap, "parsed %s:%s:%" PRId32 ":%" PRId64 ":%" PRId32 "%s", k.topic_id, k.topic,
                 k.partition, k.end_offset, k.broker_leader_epoch, k.update ? " (update)" : "");
    } else {
        ok = 1;
    }
    rlmeta_key_free(&k);
    rlmeta_buf_free(&out);
    return ok;
}

static int partitioner_case(const json *c, char *why, size_t cap) {
    const char *topic_id = str_of(json_get(c, "topicId"));
    int64_t partition, num, want;
    if (!topic_id || !int64_of(json_get(c, "partition"), INT32_MIN, INT32_MAX, &partition) ||
        !int64_of(json_get(c, "numPartitions"), INT32_MIN, INT32_MAX, &num) ||
        !int64_of(json_get(c, "metadataPartition"), INT32_MIN, INT32_MAX, &want))
        return snprintf(why, cap, "malformed partitioner case"), 0;
    int32_t got = -1;
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_metadata_partition(topic_id, (int32_t)partition, (int32_t)num, &got, &err);
    if (st) return take_error(err, st, why, cap, "metadata_partition"), 0;
    if (got != want) return snprintf(why, cap, "got %" PRId32 ", expected %" PRId64, got, want), 0;
    return 1;
}

/* The kind of a case, as the vectors README defines it (an explicit "kind", or its fields). */
static case_fn classify(const json *c, const char **kind) {
    const json *k = json_get(c, "kind");
    *kind = k ? str_of(k) : NULL;
    if (k) {
        if (streq(*kind, "value")) return value_case;
        if (streq(*kind, "replay")) return replay_case;
        if (streq(*kind, "plan")) return plan_case;
        return NULL;
    }
    if (json_get(c, "numPartitions")) return *kind = "partitioner", partitioner_case;
    if (json_get(c, "key")) return *kind = "key", key_case;
    if (json_get(c, "error")) return *kind = "invalid", invalid_case;
    if (json_get(c, "record")) return *kind = "value", value_case;
    *kind = "unknown";
    return NULL;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

static void run_file(const char *path) {
    size_t len = 0;
    char *src = read_file(path, &len);
    char msg[256];
    json doc;
    if (!src) {
        failed++;
        printf("FAIL %s: cannot read\n", path);
        return;
    }
    if (!json_parse(src, len, &doc, msg, sizeof msg)) {
        failed++;
        printf("FAIL %s: %s\n", path, msg);
        free(src);
        return;
    }
    const json *cases = json_get(&doc, "cases");
    if (!cases || cases->type != JSON_ARRAY) {
        failed++;
        printf("FAIL %s: no \"cases\" array\n", path);
    }
    int file_pass = 0, file_fail = 0, file_skip = 0;
    for (size_t i = 0; cases && cases->type == JSON_ARRAY && i < cases->count; i++) {
        const json *c = &cases->items[i];
        const char *name = str_of(json_get(c, "name")), *kind = NULL;
        case_fn run = classify(c, &kind);
        char why[2048] = "";
        if (!run && kind && !streq(kind, "unknown")) {
            file_skip++;
            continue;
        }
        if (run && run(c, why, sizeof why)) {
            file_pass++;
        } else {
            file_fail++;
            printf("FAIL %s: %s (%s): %s\n", path, name ? name : "(unnamed)", kind ? kind : "?",
                   run ? why : "cannot tell the kind of this case");
        }
    }
    printf("  %s: %d passed, %d failed%s", path, file_pass, file_fail, file_skip ? "" : "\n");
    if (file_skip) printf(", %d skipped (kinds this runner does not run)\n", file_skip);
    passed += file_pass;
    failed += file_fail;
    skipped += file_skip;
    json_free(&doc);
    free(src);
}

int main(int argc, char **argv) {
    api_tests();
    printf("  api: %d passed, %d failed\n", passed, failed);
    if (argc < 2) {
        failed++;
        printf("FAIL: no vector files given\n");
    }
    for (int i = 1; i < argc; i++) run_file(argv[i]);
    /* One summary line, the last: the make rules print it alone, skips included. */
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed || passed == 0 ? 1 : 0;
}
