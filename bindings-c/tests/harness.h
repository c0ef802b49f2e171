/*
 * What the C test files share: the tally and its check(), and small helpers of test_rlmeta.c.
 */
#ifndef RLMETA_TEST_HARNESS_H
#define RLMETA_TEST_HARNESS_H

#include "rlmeta.h"
#include "json.h"

#include <stddef.h>
#include <stdint.h>

extern int passed, failed, skipped;

/* Counts a passed or failed API check; prints the failure. */
void check(int ok, const char *what, ...);
int streq(const char *a, const char *b);
/* Bytes from hex (malloc'ed); NULL on bad input. *len gets the length. */
uint8_t *from_hex(const char *hex, size_t n, size_t *len);
void to_hex(const uint8_t *b, size_t n, char *out, size_t cap);
/* Exact integer from a JSON number's text. */
int int64_of(const json *v, int64_t min, int64_t max, int64_t *out);
const char *str_of(const json *v);
/* Writes "<what> failed with <status>: <error description>" into why and frees err. */
void take_error(RlmetaError *err, uint32_t status, char *why, size_t cap, const char *what);

/* test_store.c: the rlmeta_store_* API checks, and the replay and write-plan vector cases. */
void store_api_tests(void);
int replay_case(const json *c, char *why, size_t cap);
int plan_case(const json *c, char *why, size_t cap);

#endif
