/* A small JSON reader for the C tests (see json.h). */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200

typedef struct parser {
    const char *src;
    size_t len;
    size_t pos;
    char *err;
    size_t errlen;
    int failed;
} parser;

static int fail(parser *p, const char *fmt, ...) {
    if (!p->failed) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(p->err, p->errlen, "JSON error at byte %zu: %s", p->pos, msg);
        p->failed = 1;
    }
    return 0;
}

static void skip_ws(parser *p) {
    while (p->pos < p->len) {
        char c = p->src[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int peek(parser *p) {
    return p->pos < p->len ? (unsigned char)p->src[p->pos] : -1;
}

static int literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->src + p->pos, word, n) != 0)
        return fail(p, "expected %s", word);
    p->pos += n;
    return 1;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int parse_number(parser *p, json *v) {
    size_t start = p->pos;
    if (peek(p) == '-') p->pos++;
    if (peek(p) == '0') {
        p->pos++;
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p))) p->pos++;
    } else {
        return fail(p, "bad number");
    }
    if (peek(p) == '.') {
        p->pos++;
        if (!is_digit(peek(p))) return fail(p, "bad fraction");
        while (is_digit(peek(p))) p->pos++;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') p->pos++;
        if (!is_digit(peek(p))) return fail(p, "bad exponent");
        while (is_digit(peek(p))) p->pos++;
    }
    v->type = JSON_NUMBER;
    v->len = p->pos - start;
    v->text = malloc(v->len + 1);
    if (!v->text) return fail(p, "out of memory");
    memcpy(v->text, p->src + start, v->len);
    v->text[v->len] = 0;
    return 1;
}

static int hex4(parser *p, unsigned *out) {
    unsigned u = 0;
    if (p->len - p->pos < 4) return fail(p, "short \\u escape");
    for (int i = 0; i < 4; i++) {
        char c = p->src[p->pos++];
        u <<= 4;
        if (c >= '0' && c <= '9') u |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') u |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') u |= (unsigned)(c - 'A' + 10);
        else return fail(p, "bad \\u escape");
    }
    *out = u;
    return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string starting at the opening quote; unescaped into v->text. */
static int parse_string(parser *p, json *v) {
    p->pos++; /* the quote */
    size_t start = p->pos;
    /* The unescaped text is never longer than the escaped one. */
    size_t end = start;
    while (end < p->len && p->src[end] != '"') end += p->src[end] == '\\' ? 2 : 1;
    if (end >= p->len) return fail(p, "unterminated string");
    char *o = malloc(end - start + 1);
    if (!o) return fail(p, "out of memory");
    size_t n = 0;
    v->type = JSON_STRING;
    v->text = o;
    while (p->src[p->pos] != '"') {
        unsigned char c = (unsigned char)p->src[p->pos++];
        if (c < 0x20) return fail(p, "control character in string");
        if (c != '\\') { o[n++] = (char)c; continue; }
        char e = p->src[p->pos++];
        switch (e) {
        case '"': o[n++] = '"'; break;
        case '\\': o[n++] = '\\'; break;
        case '/': o[n++] = '/'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (!hex4(p, &cp)) return 0;
            if (cp >= 0xd800 && cp < 0xdc00 && p->len - p->pos >= 6 && p->src[p->pos] == '\\' &&
                p->src[p->pos + 1] == 'u') {
                size_t save = p->pos;
                p->pos += 2;
                if (!hex4(p, &lo)) return 0;
                if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else p->pos = save; /* a lone high surrogate, kept as is */
            }
            /* Six escaped bytes never unescape to more than four. */
            n += put_utf8(o + n, cp);
            break;
        }
        default: return fail(p, "bad escape \\%c", e);
        }
    }
    p->pos++; /* the closing quote */
    o[n] = 0;
    v->len = n;
    return 1;
}

static int parse_value(parser *p, json *v, int depth);

static int grow(parser *p, json **items, size_t count, size_t *cap) {
    if (count < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 8;
    json *n = realloc(*items, ncap * sizeof **items);
    if (!n) return fail(p, "out of memory");
    *items = n;
    *cap = ncap;
    return 1;
}

static int parse_array(parser *p, json *v, int depth) {
    size_t cap = 0;
    v->type = JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (peek(p) == ']') { p->pos++; return 1; }
    for (;;) {
        if (!grow(p, &v->items, v->count, &cap)) return 0;
        memset(&v->items[v->count], 0, sizeof(json));
        v->count++;
        if (!parse_value(p, &v->items[v->count - 1], depth + 1)) return 0;
        skip_ws(p);
        if (peek(p) == ',') { p->pos++; continue; }
        if (peek(p) == ']') { p->pos++; return 1; }
        return fail(p, "expected , or ] in array");
    }
}

static int parse_object(parser *p, json *v, int depth) {
    size_t cap = 0, kcap = 0;
    v->type = JSON_OBJECT;
    p->pos++;
    skip_ws(p);
    if (peek(p) == '}') { p->pos++; return 1; }
    for (;;) {
        if (!grow(p, &v->items, v->count, &cap) || !grow(p, &v->keys, v->count, &kcap)) return 0;
        memset(&v->items[v->count], 0, sizeof(json));
        memset(&v->keys[v->count], 0, sizeof(json));
        v->count++;
        json *key = &v->keys[v->count - 1];
        skip_ws(p);
        if (peek(p) != '"') return fail(p, "expected a member name");
        key->raw = p->src + p->pos;
        if (!parse_string(p, key)) return 0;
        key->raw_len = (size_t)(p->src + p->pos - key->raw);
        skip_ws(p);
        if (peek(p) != ':') return fail(p, "expected :");
        p->pos++;
        if (!parse_value(p, &v->items[v->count - 1], depth + 1)) return 0;
        skip_ws(p);
        if (peek(p) == ',') { p->pos++; continue; }
        if (peek(p) == '}') { p->pos++; return 1; }
        return fail(p, "expected , or } in object");
    }
}

static int parse_value(parser *p, json *v, int depth) {
    if (depth > MAX_DEPTH) return fail(p, "nested too deeply");
    skip_ws(p);
    v->raw = p->src + p->pos;
    int ok;
    switch (peek(p)) {
    case '{': ok = parse_object(p, v, depth); break;
    case '[': ok = parse_array(p, v, depth); break;
    case '"': ok = parse_string(p, v); break;
    case 't': v->type = JSON_TRUE; ok = literal(p, "true"); break;
    case 'f': v->type = JSON_FALSE; ok = literal(p, "false"); break;
    case 'n': v->type = JSON_NULL; ok = literal(p, "null"); break;
    case -1: ok = fail(p, "unexpected end of input"); break;
    default: ok = parse_number(p, v); break;
    }
    v->raw_len = (size_t)(p->src + p->pos - v->raw);
    return ok;
}

int json_parse(const char *src, size_t len, json *out, char *errbuf, size_t errlen) {
    parser p = {src, len, 0, errbuf, errlen, 0};
    memset(out, 0, sizeof *out);
    if (errlen) errbuf[0] = 0;
    if (parse_value(&p, out, 0)) {
        skip_ws(&p);
        if (p.pos == p.len) return 1;
        fail(&p, "trailing characters");
    }
    json_free(out);
    return 0;
}

void json_free(json *v) {
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        if (v->items) json_free(&v->items[i]);
        if (v->keys) json_free(&v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->text);
    memset(v, 0, sizeof *v);
}

const json *json_get(const json *v, const char *key) {
    if (!v || v->type != JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < v->count; i++)
        if (v->keys[i].len == n && memcmp(v->keys[i].text, key, n) == 0) return &v->items[i];
    return NULL;
}

static void append(char *path, size_t cap, const char *fmt, ...) {
    size_t used = strlen(path);
    if (used >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path + used, cap - used, fmt, ap);
    va_end(ap);
}

static const char *type_name(json_type t) {
    static const char *names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return names[t];
}

int json_diff(const json *a, const json *b, char *path, size_t cap) {
    if (a->type != b->type) {
        append(path, cap, ": %s vs %s", type_name(a->type), type_name(b->type));
        return 1;
    }
    switch (a->type) {
    case JSON_NUMBER:
    case JSON_STRING:
        if (a->len != b->len || memcmp(a->text, b->text, a->len) != 0) {
            append(path, cap, ": %.*s vs %.*s", (int)a->raw_len, a->raw, (int)b->raw_len, b->raw);
            return 1;
        }
        return 0;
    case JSON_ARRAY:
        if (a->count != b->count) {
            append(path, cap, ": %zu vs %zu elements", a->count, b->count);
            return 1;
        }
        for (size_t i = 0; i < a->count; i++) {
            size_t mark = strlen(path);
            append(path, cap, "[%zu]", i);
            if (json_diff(&a->items[i], &b->items[i], path, cap)) return 1;
            if (mark < cap) path[mark] = 0;
        }
        return 0;
    case JSON_OBJECT:
        for (size_t i = 0; i < a->count; i++) {
            size_t mark = strlen(path);
            append(path, cap, ".%s", a->keys[i].text);
            const json *other = NULL;
            for (size_t j = 0; j < b->count && !other; j++)
                if (b->keys[j].len == a->keys[i].len &&
                    memcmp(b->keys[j].text, a->keys[i].text, a->keys[i].len) == 0)
                    other = &b->items[j];
            if (!other) {
                append(path, cap, ": only in the first");
                return 1;
            }
            if (json_diff(&a->items[i], other, path, cap)) return 1;
            if (mark < cap) path[mark] = 0;
        }
        if (a->count != b->count) {
            append(path, cap, ": %zu vs %zu members", a->count, b->count);
            return 1;
        }
        return 0;
    default:
        return 0;
    }
}
