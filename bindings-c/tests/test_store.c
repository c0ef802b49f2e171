/*
 * The rlmeta_store_* API of the C ABI: explicit checks (outcomes, queries, the planner, errors,
 * frees), and the runners of the replay vectors (vectors README §5) and the write-plan scripts
 * (§6) through it: records applied in batches, every query answered through the store, every
 * planned record fed back through apply.
 */
#include "harness.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------ helpers */

/* Kafka's uuid text (22 characters of URL-safe base64, no padding) as its two halves. */
static int uuid_of(const char *s, int64_t *msb, int64_t *lsb) {
    static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if (!s || strlen(s) != 22) return 0;
    uint8_t b[17] = {0};
    uint32_t acc = 0;
    int bits = 0, n = 0;
    for (int i = 0; i < 22; i++) {
        const char *p = strchr(B64, s[i]);
        if (!p || !*p) return 0;
        acc = (acc << 6) | (uint32_t)(p - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[n++] = (uint8_t)(acc >> bits);
        }
    }
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) hi = hi << 8 | b[i];
    for (int i = 8; i < 16; i++) lo = lo << 8 | b[i];
    *msb = (int64_t)hi;
    *lsb = (int64_t)lo;
    return n == 16;
}

/* A topicIdPartition object {"id", "name", "partition"}. */
typedef struct tip {
    int64_t msb, lsb;
    const char *name;
    int32_t partition;
} tip;

static int tip_of(const json *j, tip *out) {
    int64_t p;
    out->name = str_of(json_get(j, "name"));
    return out->name && uuid_of(str_of(json_get(j, "id")), &out->msb, &out->lsb) &&
           int64_of(json_get(j, "partition"), INT32_MIN, INT32_MAX, &p) && ((out->partition = (int32_t)p), 1);
}

/* Records packed as rlmeta_store_apply takes them. */
typedef struct batch {
    int64_t *offsets;
    int32_t *keys, *values;
    uint8_t *data;
    size_t count, cap, len, data_cap;
} batch;

static void batch_add(batch *b, int64_t offset, const uint8_t *key, int32_t klen, const uint8_t *value, int32_t vlen) {
    if (b->count == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->offsets = realloc(b->offsets, b->cap * sizeof *b->offsets);
        b->keys = realloc(b->keys, b->cap * sizeof *b->keys);
        b->values = realloc(b->values, b->cap * sizeof *b->values);
    }
    size_t need = b->len + (size_t)(klen > 0 ? klen : 0) + (size_t)(vlen > 0 ? vlen : 0);
    if (need > b->data_cap) {
        while (need > b->data_cap) b->data_cap = b->data_cap ? b->data_cap * 2 : 4096;
        b->data = realloc(b->data, b->data_cap);
    }
    if (klen > 0) memcpy(b->data + b->len, key, (size_t)klen), b->len += (size_t)klen;
    if (vlen > 0) memcpy(b->data + b->len, value, (size_t)vlen), b->len += (size_t)vlen;
    b->offsets[b->count] = offset;
    b->keys[b->count] = klen;
    b->values[b->count] = vlen;
    b->count++;
}

/* Applies and empties the batch; outcomes go to out (count of them) when out is not NULL. */
static uint32_t batch_apply(batch *b, RlmetaStore *s, uint8_t *out, RlmetaError **err) {
    uint8_t *outcomes = malloc(b->count + 1);
    uint32_t st = rlmeta_store_apply(s, b->offsets, b->data, b->len, b->keys, b->values, b->count, outcomes, err);
    if (out && st == RLMETA_OK) memcpy(out, outcomes, b->count);
    free(outcomes);
    b->count = b->len = 0;
    return st;
}

static void batch_free(batch *b) {
    free(b->offsets);
    free(b->keys);
    free(b->values);
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* The segment id of a segment value, into id (23 bytes); 0 if it does not decode. */
static int segment_id(const RlmetaBuf *v, char *id) {
    RlmetaBuf text = {0};
    json doc;
    char msg[128];
    int ok = 0;
    if (rlmeta_value_decode_json(v->data, v->len, &text, NULL) == RLMETA_OK &&
        json_parse((char *)text.data, text.len, &doc, msg, sizeof msg)) {
        const char *s = str_of(json_get(json_get(json_get(&doc, "record"), "remoteLogSegmentId"), "id"));
        if (s && strlen(s) == 22) memcpy(id, s, 23), ok = 1;
        json_free(&doc);
    }
    rlmeta_buf_free(&text);
    return ok;
}

/* The value of a segment value's field as JSON number text, or -1 if absent. */
static int64_t segment_field(const RlmetaBuf *v, const char *field) {
    RlmetaBuf text = {0};
    json doc;
    char msg[128];
    int64_t out = -1;
    if (rlmeta_value_decode_json(v->data, v->len, &text, NULL) == RLMETA_OK &&
        json_parse((char *)text.data, text.len, &doc, msg, sizeof msg)) {
        int64_of(json_get(json_get(&doc, "record"), field), INT64_MIN, INT64_MAX, &out);
        json_free(&doc);
    }
    rlmeta_buf_free(&text);
    return out;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

/* ------------------------------------------------------------------------------ api tests */

static const char TOPIC_ID[] = "ASNFZ4mrze_-3LqYdlQyEA"; /* 0x0123456789abcdef, 0xfedcba9876543210 */
static const int64_t MSB = 0x0123456789abcdefLL;
static const int64_t LSB = (int64_t)0xfedcba9876543210ULL;

/* The serde value of an event, from its JSON document. */
static RlmetaBuf encode(const char *doc) {
    RlmetaBuf out = {0};
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_value_encode_json(doc, strlen(doc), &out, &err);
    check(st == RLMETA_OK, "encode %s: %s", doc, err ? rlmeta_error_describe(err) : "");
    rlmeta_error_free(err);
    return out;
}

#define SEGMENT_ID_JSON "{\"topicIdPartition\":{\"name\":\"orders\",\"id\":\"ASNFZ4mrze_-3LqYdlQyEA\",\"partition\":0},\"id\":\"EREREREREREiIiIiIiIiIg\"}"

static const char COPY_STARTED[] =
    "{\"apiKey\":0,\"version\":0,\"record\":{\"remoteLogSegmentId\":" SEGMENT_ID_JSON ","
    "\"startOffset\":0,\"endOffset\":99,\"brokerId\":1,\"maxTimestampMs\":1700000000000,"
    "\"eventTimestampMs\":1700000000001,\"segmentLeaderEpochs\":[{\"leaderEpoch\":5,\"offset\":0}],"
    "\"segmentSizeInBytes\":1024,\"customMetadata\":null,\"remoteLogSegmentState\":0,\"txnIndexEmpty\":false}}";

static RlmetaBuf update_doc(int state, int64_t ts) {
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"apiKey\":1,\"version\":0,\"record\":{\"remoteLogSegmentId\":" SEGMENT_ID_JSON ","
             "\"brokerId\":2,\"eventTimestampMs\":%" PRId64 ",\"customMetadata\":\"010203\",\"remoteLogSegmentState\":%d}}",
             ts, state);
    return encode(doc);
}

/* Plans an event and applies the planned records back at offsets *next..; returns the status. */
static uint32_t produce(RlmetaStore *s, const RlmetaBuf *event, int32_t epoch, int32_t level, int64_t *next,
                        size_t *records, size_t *tombstones) {
    RlmetaPlanned p = {{0}, {0}};
    RlmetaError *err = NULL;
    uint32_t st = rlmeta_store_plan(s, event->data, event->len, epoch, level, &p, &err);
    rlmeta_error_free(err);
    if (st) return st;
    batch b = {0};
    for (size_t i = 0; i < p.keys.len; i++) {
        const RlmetaBuf *k = &p.keys.items[i], *v = &p.values.items[i];
        batch_add(&b, (*next)++, k->data, (int32_t)k->len, v->data, v->data ? (int32_t)v->len : -1);
        if (!v->data && tombstones) (*tombstones)++;
    }
    if (records) *records = p.keys.len;
    uint8_t *out = malloc(b.count + 1);
    st = batch_apply(&b, s, out, NULL);
    for (size_t i = 0; st == RLMETA_OK && i < p.keys.len; i++) {
        /* above level 0 a planned value is of version 1: applied, and fatal to a stock broker */
        uint8_t applied = level == 0 ? RLMETA_OUTCOME_APPLIED : RLMETA_OUTCOME_APPLIED_V1;
        check(out[i] == (p.values.items[i].data ? applied : RLMETA_OUTCOME_TOMBSTONE),
              "planned record %zu replays (outcome %u)", i, out[i]);
        check(rlmeta_outcome_fatal_to_kafka(out[i]) == (level > 0 || !p.values.items[i].data),
              "planned record %zu at level %d: fatal to Kafka", i, (int)level);
    }
    free(out);
    batch_free(&b);
    rlmeta_planned_free(&p);
    rlmeta_planned_free(&p); /* twice is harmless */
    return st;
}

static void test_store_lifecycle(void) {
    RlmetaStore *s = rlmeta_store_new();
    check(s != NULL, "rlmeta_store_new");
    RlmetaError *err = NULL;
    bool flag = true;
    int64_t next = 0, n = 0;
    RlmetaBufList list = {0};
    check(rlmeta_store_load_partition(s, MSB, LSB, "orders", 0, NULL, NULL) == RLMETA_OK, "load_partition");
    check(rlmeta_store_is_initialized(s, MSB, LSB, 0, &flag, NULL) == RLMETA_OK && !flag, "loaded, not initialized");
    uint32_t st = rlmeta_store_segments(s, MSB, LSB, 0, false, 0, &list, &err);
    check(st == RLMETA_NOT_INITIALIZED && rlmeta_error_code(err) == 15 && list.items == NULL,
          "a query before initialization is RLMETA_NOT_INITIALIZED");
    rlmeta_error_free(err);
    err = NULL;
    check(rlmeta_store_mark_initialized(s, MSB, LSB, "orders", 0, &flag, NULL) == RLMETA_OK && flag, "mark_initialized");

    RlmetaBuf copy = encode(COPY_STARTED);
    size_t records = 0, tombstones = 0;
    RlmetaPlanned p = {{0}, {0}};
    st = rlmeta_store_plan(s, copy.data, copy.len, 5, 2, &p, NULL);
    check(st == RLMETA_OK && p.keys.len == 1 && streq((char *)p.keys.items[0].data, "ASNFZ4mrze_-3LqYdlQyEA:orders:0:99:5"),
          "plan a copy start: one record under the upload key");
    rlmeta_planned_free(&p);
    check(produce(s, &copy, 5, 2, &next, &records, NULL) == RLMETA_OK && records == 1, "produce the copy start");
    st = rlmeta_store_segments(s, MSB, LSB, 0, false, 0, &list, NULL);
    check(st == RLMETA_OK && list.len == 1 && segment_field(&list.items[0], "remoteLogSegmentState") == 0,
          "the listed segment is COPY_SEGMENT_STARTED");
    /* The version-0 value of the segment as it is now: the copy start itself. */
    check(st == RLMETA_OK && list.len == 1 && list.items[0].len == copy.len &&
              memcmp(list.items[0].data, copy.data, copy.len) == 0,
          "a segment's value is the serde value of its current state");
    rlmeta_buf_list_free(&list);
    rlmeta_buf_list_free(&list);
    RlmetaBuf seg = {(uint8_t *)0x1, 5};
    check(rlmeta_store_segment_for(s, MSB, LSB, 0, 5, 10, &seg, NULL) == RLMETA_OK && seg.data == NULL && seg.len == 0,
          "a copy in progress is not found by offset ({NULL, 0})");

    RlmetaBuf finished = update_doc(1, 1700000000005LL);
    check(produce(s, &finished, 5, 2, &next, NULL, NULL) == RLMETA_OK, "produce the copy finish");
    st = rlmeta_store_segment_for(s, MSB, LSB, 0, 5, 10, &seg, NULL);
    char id[23] = "";
    check(st == RLMETA_OK && segment_id(&seg, id) && streq(id, "EREREREREREiIiIiIiIiIg") &&
              segment_field(&seg, "remoteLogSegmentState") == 1 && segment_field(&seg, "brokerId") == 2 &&
              segment_field(&seg, "eventTimestampMs") == 1700000000005LL,
          "segment_for: the finished segment with its last update's broker and time");
    rlmeta_buf_free(&seg);
    check(rlmeta_store_highest_offset_for_epoch(s, MSB, LSB, 0, 5, &n, NULL) == RLMETA_OK && n == 99, "highest offset 99");
    check(rlmeta_store_highest_offset_for_epoch(s, MSB, LSB, 0, 4, &n, NULL) == RLMETA_OK && n == RLMETA_NO_OFFSET,
          "no offset for epoch 4");
    check(rlmeta_store_remote_log_size(s, MSB, LSB, 0, 5, &n, NULL) == RLMETA_OK && n == 1024, "remote log size 1024");
    check(rlmeta_store_segments(s, MSB, LSB, 0, true, 5, &list, NULL) == RLMETA_OK && list.len == 1, "one segment in epoch 5");
    rlmeta_buf_list_free(&list);
    check(rlmeta_store_next_segment_with_txn_index(s, MSB, LSB, 0, 5, 0, &seg, NULL) == RLMETA_OK && seg.data != NULL,
          "next segment with a transaction index");
    rlmeta_buf_free(&seg);
    int32_t state = 9;
    check(rlmeta_store_segment_state(s, MSB, LSB, 0, 0x1111111111111111LL, 0x2222222222222222LL, &state, NULL) == RLMETA_OK &&
              state == 1,
          "segment_state COPY_SEGMENT_FINISHED");
    check(rlmeta_store_segment_state(s, MSB, LSB, 0, 7, 7, &state, NULL) == RLMETA_OK && state == -1, "unknown segment: -1");
    RlmetaBuf dump = {0};
    check(rlmeta_store_dump_json(s, &dump, NULL) == RLMETA_OK && strstr((char *)dump.data, "EREREREREREiIiIiIiIiIg"),
          "dump_json names the segment");
    rlmeta_buf_free(&dump);

    /* Another upload attempt under the same key pair while the first is live: refused. */
    char retry[sizeof COPY_STARTED + 8];
    strcpy(retry, COPY_STARTED);
    char *at = strstr(retry, "EREREREREREiIiIiIiIiIg");
    memcpy(at, "MzMzMzMzMzNERERERERERA", 22);
    RlmetaBuf other = encode(retry);
    st = rlmeta_store_plan(s, other.data, other.len, 5, 2, &p, &err);
    check(st == RLMETA_INVALID_STATE && p.keys.items == NULL && strstr(rlmeta_error_message(err), "not yet DELETE_SEGMENT_FINISHED"),
          "a second upload under a live key is RLMETA_INVALID_STATE");
    rlmeta_error_free(err);
    err = NULL;
    rlmeta_buf_free(&other);

    RlmetaBuf del_started = update_doc(2, 6), del_finished = update_doc(3, 7);
    check(produce(s, &del_started, 7, 2, &next, NULL, NULL) == RLMETA_OK, "produce the delete start");
    check(produce(s, &del_finished, 7, 2, &next, &records, &tombstones) == RLMETA_OK && tombstones == 2,
          "the delete finish at level 2 tombstones both keys");
    check(rlmeta_store_segments(s, MSB, LSB, 0, false, 0, &list, NULL) == RLMETA_OK && list.len == 0, "no segment left");
    rlmeta_buf_list_free(&list);
    int32_t pd = 0;
    check(rlmeta_store_partition_delete_state(s, MSB, LSB, 0, &pd, NULL) == RLMETA_OK && pd == -1, "no partition delete yet");
    for (int i = 0; i < 3; i++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"apiKey\":2,\"version\":0,\"record\":{\"topicIdPartition\":{\"name\":\"orders\",\"id\":\"%s\",\"partition\":0},"
                 "\"brokerId\":1,\"eventTimestampMs\":8,\"remotePartitionDeleteState\":%d}}",
                 TOPIC_ID, i);
        RlmetaBuf ev = encode(doc);
        check(produce(s, &ev, 7, 2, &next, NULL, NULL) == RLMETA_OK &&
                  rlmeta_store_partition_delete_state(s, MSB, LSB, 0, &pd, NULL) == RLMETA_OK && pd == i,
              "partition delete state %d", i);
        rlmeta_buf_free(&ev);
    }
    check(rlmeta_store_segments(s, MSB, LSB, 0, false, 0, &list, NULL) == RLMETA_NOT_FOUND, "a deleted partition: not found");
    check(rlmeta_store_mark_initialized(s, MSB, LSB, "orders", 0, &flag, NULL) == RLMETA_OK && !flag, "a deleted partition stays deleted");
    check(rlmeta_store_unload_partition(s, MSB, LSB, 0, NULL) == RLMETA_OK, "unload");
    check(rlmeta_store_partition_delete_state(s, MSB, LSB, 0, &pd, NULL) == RLMETA_OK && pd == -1, "unloaded: forgotten");
    rlmeta_buf_free(&copy);
    rlmeta_buf_free(&finished);
    rlmeta_buf_free(&del_started);
    rlmeta_buf_free(&del_finished);
    rlmeta_store_free(s);
}

static void test_store_outcomes_and_errors(void) {
    RlmetaStore *s = rlmeta_store_new();
    RlmetaError *err = NULL;
    batch b = {0};
    const char *level = "remote.log.metadata.version";
    const uint8_t garbage[] = {1, 2, 3};
    const char *key = "ASNFZ4mrze_-3LqYdlQyEA:orders:0:99:5";
    batch_add(&b, 0, (const uint8_t *)level, (int32_t)strlen(level), (const uint8_t *)"1", 1);
    batch_add(&b, 1, NULL, -1, garbage, 3);
    batch_add(&b, 2, (const uint8_t *)key, (int32_t)strlen(key), NULL, -1);
    batch_add(&b, 3, NULL, -1, NULL, -1);
    uint8_t out[4] = {99, 99, 99, 99};
    uint32_t st = batch_apply(&b, s, out, NULL);
    check(st == RLMETA_OK && out[0] == RLMETA_OUTCOME_LEVEL_1 && out[1] == RLMETA_OUTCOME_UNDECODABLE &&
              out[2] == RLMETA_OUTCOME_TOMBSTONE && out[3] == RLMETA_OUTCOME_TOMBSTONE,
          "apply: level record, garbage, tombstones (got %u %u %u %u)", out[0], out[1], out[2], out[3]);
    check(rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_TOMBSTONE) && rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_REJECTED) &&
              !rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_DROPPED) && !rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_APPLIED) &&
              rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_APPLIED_V1) && rlmeta_outcome_fatal_to_kafka(RLMETA_OUTCOME_DROPPED_V1) &&
              !rlmeta_outcome_fatal_to_kafka(200),
          "rlmeta_outcome_fatal_to_kafka");

    int64_t offsets[1] = {0};
    int32_t kl[1] = {-1}, vl[1] = {5};
    out[0] = 77;
    st = rlmeta_store_apply(s, offsets, garbage, 3, kl, vl, 1, out, &err);
    check(st == RLMETA_INVALID_ARGUMENT && out[0] == 77 && strstr(rlmeta_error_message(err), "add up"),
          "a layout that does not add up is RLMETA_INVALID_ARGUMENT, outcomes untouched");
    rlmeta_error_free(err);
    err = NULL;
    check(rlmeta_store_apply(s, NULL, NULL, 0, NULL, NULL, 0, NULL, NULL) == RLMETA_OK, "an empty batch with NULL arrays");
    check(rlmeta_store_apply(s, NULL, garbage, 3, kl, vl, 1, out, NULL) == RLMETA_INVALID_ARGUMENT, "NULL offsets");
    check(rlmeta_store_apply(s, offsets, garbage, 3, kl, vl, 1, NULL, NULL) == RLMETA_INVALID_ARGUMENT, "NULL outcomes");
    check(rlmeta_store_apply(NULL, offsets, garbage, 3, kl, vl, 1, out, NULL) == RLMETA_INVALID_ARGUMENT, "NULL store");

    RlmetaBuf seg = {(uint8_t *)0x1, 5};
    st = rlmeta_store_segment_for(s, MSB, LSB, 0, 0, 0, &seg, &err);
    check(st == RLMETA_NOT_FOUND && seg.data == (uint8_t *)0x1 && rlmeta_error_code(err) == 14,
          "an unknown partition is RLMETA_NOT_FOUND, output untouched");
    rlmeta_error_free(err);
    err = NULL;
    check(rlmeta_store_segment_for(s, MSB, LSB, 0, 0, 0, NULL, NULL) == RLMETA_INVALID_ARGUMENT, "NULL output");
    check(rlmeta_store_load_partition(s, MSB, LSB, NULL, 0, NULL, NULL) == RLMETA_INVALID_ARGUMENT, "NULL topic");
    RlmetaPlanned p = {{0}, {0}};
    check(rlmeta_store_plan(s, garbage, 3, 0, 2, &p, NULL) != RLMETA_OK && p.keys.items == NULL, "plan of garbage fails");
    RlmetaBuf copy = encode(COPY_STARTED);
    check(rlmeta_store_plan(s, copy.data, copy.len, 0, 3, &p, NULL) != RLMETA_OK, "level 3 is refused");
    check(rlmeta_store_plan(s, copy.data, copy.len, 0, 70000, &p, NULL) == RLMETA_INVALID_ARGUMENT, "level 70000 is refused");
    RlmetaBuf to_started = update_doc(0, 1);
    check(rlmeta_store_plan(s, to_started.data, to_started.len, 0, 2, &p, NULL) == RLMETA_INVALID_ARGUMENT,
          "an update to COPY_SEGMENT_STARTED is no event");
    RlmetaBuf unknown = update_doc(1, 1);
    check(rlmeta_store_plan(s, unknown.data, unknown.len, 0, 2, &p, NULL) == RLMETA_NOT_FOUND, "an update of an unknown segment");
    rlmeta_buf_free(&copy);
    rlmeta_buf_free(&to_started);
    rlmeta_buf_free(&unknown);
    rlmeta_planned_free(NULL);
    rlmeta_buf_list_free(NULL);
    rlmeta_store_free(NULL);
    batch_free(&b);
    rlmeta_store_free(s);
}

/* A reader thread: lists and looks up until told to stop; counts answers and failures. */
typedef struct reader {
    RlmetaStore *store;
    atomic_int *stop;
    atomic_long answers, failures;
} reader;

static void *read_loop(void *arg) {
    reader *r = arg;
    while (!atomic_load(r->stop)) {
        RlmetaBufList list = {0};
        int64_t hi;
        if (rlmeta_store_segments(r->store, MSB, LSB, 0, false, 0, &list, NULL) != RLMETA_OK ||
            rlmeta_store_highest_offset_for_epoch(r->store, MSB, LSB, 0, 5, &hi, NULL) != RLMETA_OK)
            atomic_fetch_add(&r->failures, 1);
        else
            atomic_fetch_add(&r->answers, 1);
        rlmeta_buf_list_free(&list);
    }
    return NULL;
}

/* Applies from this thread while two others query the same store (the header's promise). */
static void test_store_threads(void) {
    RlmetaStore *s = rlmeta_store_new();
    bool done;
    rlmeta_store_mark_initialized(s, MSB, LSB, "orders", 0, &done, NULL);
    atomic_int stop = 0;
    reader readers[2] = {{s, &stop, 0, 0}, {s, &stop, 0, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, read_loop, &readers[i]);
    /* Both readers are querying before the first apply (under valgrind threads run one at a
       time, and the writer could otherwise finish before a reader was ever scheduled). */
    for (int i = 0; i < 2; i++)
        while (atomic_load(&readers[i].answers) + atomic_load(&readers[i].failures) == 0) sched_yield();
    int segments = 200, applied = 0;
    for (int i = 0; i < segments; i++) {
        char doc[sizeof COPY_STARTED + 64];
        snprintf(doc, sizeof doc,
                 "{\"apiKey\":0,\"version\":0,\"record\":{\"remoteLogSegmentId\":{\"topicIdPartition\":{\"name\":\"orders\","
                 "\"id\":\"ASNFZ4mrze_-3LqYdlQyEA\",\"partition\":0},\"id\":\"AAAAAAAAA%03dAAAAAAAAAA\"},"
                 "\"startOffset\":%d,\"endOffset\":%d,\"brokerId\":1,\"maxTimestampMs\":1,\"eventTimestampMs\":1,"
                 "\"segmentLeaderEpochs\":[{\"leaderEpoch\":5,\"offset\":%d}],\"segmentSizeInBytes\":1,"
                 "\"customMetadata\":null,\"remoteLogSegmentState\":0}}",
                 i, i * 10, i * 10 + 9, i * 10);
        RlmetaBuf v = encode(doc);
        batch b = {0};
        uint8_t out = 99;
        batch_add(&b, i, NULL, -1, v.data, (int32_t)v.len);
        if (batch_apply(&b, s, &out, NULL) == RLMETA_OK && out == RLMETA_OUTCOME_APPLIED) applied++;
        batch_free(&b);
        rlmeta_buf_free(&v);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    long a0 = atomic_load(&readers[0].answers), a1 = atomic_load(&readers[1].answers);
    long failures = atomic_load(&readers[0].failures) + atomic_load(&readers[1].failures);
    check(applied == segments && failures == 0 && a0 > 0 && a1 > 0,
          "applies beside two query threads: %d applied, %ld and %ld answers, %ld failures",
          applied, a0, a1, failures);
    rlmeta_store_free(s);
}

/* A held store (a broker's view): a partition that leaves and comes back is rebuilt by a replay
 * from offset 0, whatever was read while it was away; the records of a partition not held are
 * NOT_HELD and leave nothing behind. */
static void test_store_held(void) {
    RlmetaStore *s = rlmeta_store_new_held();
    check(s != NULL, "rlmeta_store_new_held");
    bool fresh = false, flag = false;
    RlmetaBufList list = {0};
    RlmetaBuf copy = encode(COPY_STARTED), done = update_doc(1, 1700000000002);
    const RlmetaBuf *log[2] = {&copy, &done};
    uint8_t out = 0xff;
    check(rlmeta_store_load_partition(s, MSB, LSB, "orders", 0, &fresh, NULL) == RLMETA_OK && fresh,
          "a first load asks for a replay");
    check(rlmeta_store_load_partition(s, MSB, LSB, "orders", 0, &fresh, NULL) == RLMETA_OK && !fresh,
          "loading a held partition again does not");
    check(rlmeta_store_unload_partition(s, MSB, LSB, 0, NULL) == RLMETA_OK, "unload");
    for (int i = 0; i < 2; i++) {
        batch b = {0};
        batch_add(&b, i, NULL, -1, log[i]->data, (int32_t)log[i]->len);
        check(batch_apply(&b, s, &out, NULL) == RLMETA_OK && out == RLMETA_OUTCOME_NOT_HELD,
              "record %d of a partition not held: NOT_HELD (%u)", i, out);
        batch_free(&b);
    }
    check(rlmeta_store_load_partition(s, MSB, LSB, "orders", 0, &fresh, NULL) == RLMETA_OK && fresh,
          "back: the store kept nothing, a replay is needed");
    for (int i = 0; i < 2; i++) {
        batch b = {0};
        batch_add(&b, i, NULL, -1, log[i]->data, (int32_t)log[i]->len);
        check(batch_apply(&b, s, &out, NULL) == RLMETA_OK && out == RLMETA_OUTCOME_APPLIED,
              "replayed record %d applies (%u)", i, out);
        batch_free(&b);
    }
    check(rlmeta_store_mark_initialized(s, MSB, LSB, "orders", 0, &flag, NULL) == RLMETA_OK && flag, "initialized");
    check(rlmeta_store_segments(s, MSB, LSB, 0, false, 0, &list, NULL) == RLMETA_OK && list.len == 1 &&
              segment_field(&list.items[0], "remoteLogSegmentState") == 1,
          "the replayed segment is COPY_SEGMENT_FINISHED");
    rlmeta_buf_list_free(&list);
    rlmeta_buf_free(&copy);
    rlmeta_buf_free(&done);
    rlmeta_store_free(s);
}

void store_api_tests(void) {
    test_store_held();
    test_store_lifecycle();
    test_store_outcomes_and_errors();
    test_store_threads();
}

/* ------------------------------------------------------------------------------ replay */

/* One query against its expected answer; 1 if it agrees, else 0 with why. */
static int replay_query(const RlmetaStore *s, const json *q, char *why, size_t cap) {
    tip t;
    const char *op = str_of(json_get(q, "op"));
    if (!op || !tip_of(json_get(q, "topicIdPartition"), &t)) return snprintf(why, cap, "bad query"), 0;
    int64_t epoch = 0, offset = 0;
    int64_of(json_get(q, "leaderEpoch"), INT32_MIN, INT32_MAX, &epoch);
    int64_of(json_get(q, "offset"), INT64_MIN, INT64_MAX, &offset);
    const json *expect = json_get(q, "expect"), *ordered = json_get(q, "ordered");
    const char *want_error = str_of(json_get(q, "error"));
    RlmetaError *err = NULL;
    RlmetaBuf seg = {0};
    RlmetaBufList list = {0};
    int64_t number = 0;
    int32_t state = 0;
    uint32_t st;
    enum { ID, NUMBER, IDS } kind;
    if (streq(op, "segmentFor")) {
        st = rlmeta_store_segment_for(s, t.msb, t.lsb, t.partition, (int32_t)epoch, offset, &seg, &err), kind = ID;
    } else if (streq(op, "highestOffsetForEpoch")) {
        st = rlmeta_store_highest_offset_for_epoch(s, t.msb, t.lsb, t.partition, (int32_t)epoch, &number, &err), kind = NUMBER;
        if (st == RLMETA_OK && number == RLMETA_NO_OFFSET) kind = ID; /* null */
    } else if (streq(op, "listSegments") || streq(op, "listSegmentsForEpoch")) {
        st = rlmeta_store_segments(s, t.msb, t.lsb, t.partition, streq(op, "listSegmentsForEpoch"), (int32_t)epoch, &list, &err);
        kind = IDS;
    } else if (streq(op, "segmentState")) {
        int64_t im, il;
        if (!uuid_of(str_of(json_get(q, "segmentId")), &im, &il)) return snprintf(why, cap, "bad segmentId"), 0;
        st = rlmeta_store_segment_state(s, t.msb, t.lsb, t.partition, im, il, &state, &err), kind = NUMBER;
        number = state;
        if (st == RLMETA_OK && state == -1) kind = ID; /* null */
    } else {
        return snprintf(why, cap, "unknown op %s", op), 0;
    }
    int ok = 0;
    if (st != RLMETA_OK) {
        uint32_t code = streq(want_error, "notFound") ? RLMETA_NOT_FOUND : streq(want_error, "notInitialized") ? RLMETA_NOT_INITIALIZED : 0;
        ok = st == code;
        if (!ok) snprintf(why, cap, "got %s", rlmeta_error_describe(err));
        rlmeta_error_free(err);
        return ok;
    }
    if (want_error) return snprintf(why, cap, "got an answer, expected error %s", want_error), 0;
    if (!expect) return snprintf(why, cap, "no expect"), 0;
    if (kind == ID) {
        char id[23] = "";
        if (seg.data && !segment_id(&seg, id)) snprintf(why, cap, "the segment does not decode");
        else if (!seg.data) ok = expect->type == JSON_NULL;
        else ok = streq(str_of(expect), id);
        if (!ok && !why[0]) snprintf(why, cap, "got %s", seg.data ? id : "null");
        rlmeta_buf_free(&seg);
    } else if (kind == NUMBER) {
        int64_t want;
        ok = int64_of(expect, INT64_MIN, INT64_MAX, &want) && want == number;
        if (!ok) snprintf(why, cap, "got %" PRId64, number);
    } else {
        char (*ids)[23] = calloc(list.len + 1, sizeof *ids), (*wants)[23] = calloc(expect->count + 1, sizeof *wants);
        ok = expect->type == JSON_ARRAY && expect->count == list.len;
        for (size_t i = 0; ok && i < list.len; i++) {
            const char *w = str_of(&expect->items[i]);
            ok = segment_id(&list.items[i], ids[i]) && w && strlen(w) == 22;
            if (ok) memcpy(wants[i], w, 23);
        }
        if (ok && ordered && ordered->type == JSON_FALSE) {
            qsort(ids, list.len, sizeof *ids, cmp_str);
            qsort(wants, list.len, sizeof *wants, cmp_str);
        }
        for (size_t i = 0; ok && i < list.len; i++) ok = streq(ids[i], wants[i]);
        if (!ok) snprintf(why, cap, "got %zu segments, expected %zu, or other ids", list.len, expect->count);
        free(ids);
        free(wants);
        rlmeta_buf_list_free(&list);
    }
    return ok;
}

int replay_case(const json *c, char *why, size_t cap) {
    const json *events = json_get(c, "events"), *queries = json_get(c, "queries");
    if (!events || events->type != JSON_ARRAY || !queries || queries->type != JSON_ARRAY)
        return snprintf(why, cap, "needs events and queries"), 0;
    RlmetaStore *s = rlmeta_store_new();
    batch b = {0};
    RlmetaError *err = NULL;
    int ok = 1;
    uint32_t st = RLMETA_OK;
    for (size_t i = 0; ok && i < events->count; i++) {
        const json *e = &events->items[i], *mark = json_get(e, "markInitialized");
        if (mark) {
            tip t;
            bool done;
            if ((st = batch_apply(&b, s, NULL, &err))) break;
            if (!tip_of(mark, &t)) { ok = 0; snprintf(why, cap, "event #%zu: bad partition", i); break; }
            if ((st = rlmeta_store_mark_initialized(s, t.msb, t.lsb, t.name, t.partition, &done, &err))) break;
            continue;
        }
        int64_t offset;
        const char *key = str_of(json_get(e, "key")), *hex = str_of(json_get(e, "value"));
        size_t vlen = 0;
        uint8_t *value = hex ? from_hex(hex, strlen(hex), &vlen) : NULL;
        if (!int64_of(json_get(e, "offset"), INT64_MIN, INT64_MAX, &offset) || (hex && !value)) {
            ok = 0;
            snprintf(why, cap, "event #%zu: bad offset or value", i);
        } else {
            batch_add(&b, offset, (const uint8_t *)key, key ? (int32_t)strlen(key) : -1, value, value ? (int32_t)vlen : -1);
        }
        free(value);
    }
    if (ok && st == RLMETA_OK) st = batch_apply(&b, s, NULL, &err);
    if (st) {
        take_error(err, st, why, cap, "apply");
        ok = 0;
    }
    for (size_t i = 0; ok && i < queries->count; i++) {
        char qwhy[512] = "";
        if (!replay_query(s, &queries->items[i], qwhy, sizeof qwhy)) {
            ok = 0;
            snprintf(why, cap, "query #%zu %.*s: %s", i, (int)(queries->items[i].raw_len > 300 ? 300 : queries->items[i].raw_len),
                     queries->items[i].raw, qwhy);
        }
    }
    batch_free(&b);
    rlmeta_store_free(s);
    return ok;
}

/* ------------------------------------------------------------------------------ plans */

/* The serde value (as JSON) a broker's object for a script event encodes to. */
static char *event_doc(const json *e) {
    const char *op = str_of(json_get(e, "op"));
    const json *seg = json_get(e, "segment"), *id = json_get(e, "remoteLogSegmentId");
    const json *broker = json_get(e, "brokerId"), *ts = json_get(e, "eventTimestampMs"), *cm = json_get(e, "customMetadata");
    size_t cap = e->raw_len + 256;
    char *doc = malloc(cap);
    if (streq(op, "copyStarted") && seg && seg->raw_len > 2) {
        /* The segment object is the record's fields but its state. */
        snprintf(doc, cap, "{\"apiKey\":0,\"version\":0,\"record\":%.*s,\"remoteLogSegmentState\":0}}",
                 (int)seg->raw_len - 1, seg->raw);
    } else if ((streq(op, "copyFinished") || streq(op, "deleteStarted") || streq(op, "deleteFinished")) && id && broker && ts) {
        int state = streq(op, "copyFinished") ? 1 : streq(op, "deleteStarted") ? 2 : 3;
        snprintf(doc, cap,
                 "{\"apiKey\":1,\"version\":0,\"record\":{\"remoteLogSegmentId\":%.*s,\"brokerId\":%.*s,"
                 "\"eventTimestampMs\":%.*s,\"customMetadata\":%.*s,\"remoteLogSegmentState\":%d}}",
                 (int)id->raw_len, id->raw, (int)broker->raw_len, broker->raw, (int)ts->raw_len, ts->raw,
                 cm ? (int)cm->raw_len : 4, cm ? cm->raw : "null", state);
    } else if (streq(op, "partitionDelete") && json_get(e, "topicIdPartition") && json_get(e, "state") && broker && ts) {
        const json *t = json_get(e, "topicIdPartition"), *state = json_get(e, "state");
        snprintf(doc, cap,
                 "{\"apiKey\":2,\"version\":0,\"record\":{\"topicIdPartition\":%.*s,\"brokerId\":%.*s,"
                 "\"eventTimestampMs\":%.*s,\"remotePartitionDeleteState\":%.*s}}",
                 (int)t->raw_len, t->raw, (int)broker->raw_len, broker->raw, (int)ts->raw_len, ts->raw,
                 (int)state->raw_len, state->raw);
    } else {
        free(doc);
        return NULL;
    }
    return doc;
}

int plan_case(const json *c, char *why, size_t cap) {
    const json *events = json_get(c, "events"), *expect = json_get(c, "expect");
    int64_t level;
    if (!events || events->type != JSON_ARRAY || !int64_of(json_get(c, "featureLevel"), 0, 2, &level))
        return snprintf(why, cap, "needs featureLevel and events"), 0;
    /* A plan case is a regression example: without the log it must produce it checks nothing. */
    if (!expect || expect->type != JSON_ARRAY)
        return snprintf(why, cap, "a plan case needs \"expect\" (an array of the records it produces)"), 0;
    RlmetaStore *s = rlmeta_store_new();
    size_t produced = 0;
    int ok = 1;
    for (size_t i = 0; ok && i < events->count; i++) {
        const json *e = &events->items[i];
        int64_t epoch;
        char *doc = event_doc(e);
        RlmetaBuf value = {0};
        RlmetaPlanned p = {{0}, {0}};
        RlmetaError *err = NULL;
        uint32_t st;
        if (!doc || !int64_of(json_get(e, "brokerLeaderEpoch"), INT32_MIN, INT32_MAX, &epoch)) {
            ok = 0;
            snprintf(why, cap, "event #%zu: not a lifecycle event", i);
        } else if ((st = rlmeta_value_encode_json(doc, strlen(doc), &value, &err))) {
            ok = 0;
            take_error(err, st, why, cap, "encode the event");
        } else if ((st = rlmeta_store_plan(s, value.data, value.len, (int32_t)epoch, (int32_t)level, &p, &err))) {
            ok = 0;
            take_error(err, st, why, cap, "plan");
        }
        batch b = {0};
        for (size_t r = 0; ok && r < p.keys.len; r++, produced++) {
            const RlmetaBuf *k = &p.keys.items[r], *v = &p.values.items[r];
            batch_add(&b, (int64_t)produced, k->data, (int32_t)k->len, v->data, v->data ? (int32_t)v->len : -1);
            if (!expect) continue;
            const json *want = produced < expect->count ? &expect->items[produced] : NULL;
            const char *want_key = str_of(json_get(want, "key")), *want_value = str_of(json_get(want, "value"));
            char *hex = v->data ? malloc(2 * v->len + 3) : NULL;
            if (hex) to_hex(v->data, v->len, hex, 2 * v->len + 3);
            if (!want || !streq(want_key, (char *)k->data) || (hex ? !streq(want_value, hex) : want_value != NULL)) {
                ok = 0;
                snprintf(why, cap, "event #%zu: record #%zu is %s = %.60s..., expected %.*s", i, produced, (char *)k->data,
                         hex ? hex : "null", want ? (int)(want->raw_len > 200 ? 200 : want->raw_len) : 4, want ? want->raw : "none");
            }
            free(hex);
        }
        uint8_t *out = malloc(b.count + 1);
        size_t n = b.count;
        if (ok && (st = batch_apply(&b, s, out, &err))) {
            ok = 0;
            take_error(err, st, why, cap, "apply the planned records");
        }
        for (size_t r = 0; ok && r < n; r++) {
            uint8_t applied = level == 0 ? RLMETA_OUTCOME_APPLIED : RLMETA_OUTCOME_APPLIED_V1;
            if (out[r] != applied && out[r] != RLMETA_OUTCOME_TOMBSTONE) {
                ok = 0;
                snprintf(why, cap, "event #%zu: a planned record replays with outcome %u", i, out[r]);
            }
        }
        free(out);
        batch_free(&b);
        rlmeta_planned_free(&p);
        rlmeta_buf_free(&value);
        free(doc);
    }
    if (ok && expect && produced != expect->count) {
        ok = 0;
        snprintf(why, cap, "produced %zu records, expected %zu", produced, expect->count);
    }
    rlmeta_store_free(s);
    return ok;
}
