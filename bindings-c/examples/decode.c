/*
 * Decodes a __remote_log_metadata record value given in hex on the command line and prints it
 * as JSON, with the KIP-1266 key it is written under when it has one.
 *
 *   decode 0100000...
 */
#include "rlmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <record value in hex>\n", argv[0]);
        return 2;
    }
    size_t n = strlen(argv[1]);
    uint8_t *value = malloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(argv[1][2 * i]), lo = hex_digit(argv[1][2 * i + 1]);
        if (n % 2 || hi < 0 || lo < 0) {
            fprintf(stderr, "not hex: %s\n", argv[1]);
            free(value);
            return 2;
        }
        value[i] = (uint8_t)(hi * 16 + lo);
    }

    RlmetaBuf json = {0}, key = {0};
    RlmetaError *err = NULL;
    uint32_t status = rlmeta_value_decode_json(value, n / 2, &json, &err);
    if (status != RLMETA_OK) {
        fprintf(stderr, "error: %s\n", rlmeta_error_describe(err));
        rlmeta_error_free(err);
        free(value);
        return 1;
    }
    printf("%s\n", (const char *)json.data);
    if (rlmeta_key_for_value(value, n / 2, &key, NULL) == RLMETA_OK)
        printf("key: %s\n", (const char *)key.data);
    rlmeta_buf_free(&key);
    rlmeta_buf_free(&json);
    free(value);
    return 0;
}
