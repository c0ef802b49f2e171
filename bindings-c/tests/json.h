/*
 * A small JSON reader for the C tests: objects, arrays, strings (unescaped to UTF-8), numbers
 * (kept as their text, so 64-bit values stay exact), true, false, null.
 */
#ifndef RLMETA_TEST_JSON_H
#define RLMETA_TEST_JSON_H

#include <stddef.h>

typedef enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json {
    json_type type;
    const char *raw;     /* this value's text inside the parsed document */
    size_t raw_len;
    char *text;          /* STRING: the unescaped bytes, NUL-terminated; NUMBER: its text */
    size_t len;          /* length of text */
    size_t count;        /* ARRAY, OBJECT: number of elements or members */
    struct json *items;  /* ARRAY: the elements; OBJECT: the member values */
    struct json *keys;   /* OBJECT: the member names (STRING values) */
} json;

/* Parses `len` bytes of `src` into *out. Returns 1 on success; 0 with a message in errbuf on
 * failure (and *out left empty). `src` must outlive *out (raw points into it). */
int json_parse(const char *src, size_t len, json *out, char *errbuf, size_t errlen);

/* Releases what json_parse allocated. */
void json_free(json *v);

/* The member `key` of an object, or NULL (also when v is not an object). */
const json *json_get(const json *v, const char *key);

/* 0 when a and b are equal (objects: same members in any order; numbers: same text);
 * otherwise 1 with the path of the first difference written to path. */
int json_diff(const json *a, const json *b, char *path, size_t cap);

#endif
