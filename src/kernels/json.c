/* The kernels' one-line JSON result: a small writer (kernel_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernel_common.h"
#include "kernel_parts.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== JSON ============================================================================ */

void kc_json_put(kc_json *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 1024;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *b = realloc(j->buf, cap);
        if (!b) {
            fprintf(stderr, "pario kernel: out of memory\n");
            exit(1);
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void jputs(kc_json *j, const char *s) { kc_json_put(j, s, strlen(s)); }

static void jprintf(kc_json *j, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void jprintf(kc_json *j, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        kc_json_put(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void jstring(kc_json *j, const char *s)
{
    jputs(j, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': jputs(j, "\\\""); break;
        case '\\': jputs(j, "\\\\"); break;
        case '\n': jputs(j, "\\n"); break;
        case '\r': jputs(j, "\\r"); break;
        case '\t': jputs(j, "\\t"); break;
        default:
            if (*p < 0x20)
                jprintf(j, "\\u%04x", *p);
            else
                kc_json_put(j, (const char *)p, 1);
        }
    }
    jputs(j, "\"");
}

void kc_json_key(kc_json *j, const char *key)
{
    if (j->need_comma)
        jputs(j, ",");
    if (key) {
        jstring(j, key);
        jputs(j, ":");
    }
    j->need_comma = 1;
}

void kc_json_str(kc_json *j, const char *key, const char *value)
{
    kc_json_key(j, key);
    if (value)
        jstring(j, value);
    else
        jputs(j, "null");
}

void kc_json_int(kc_json *j, const char *key, long long value)
{
    kc_json_key(j, key);
    jprintf(j, "%lld", value);
}

void kc_json_u64(kc_json *j, const char *key, uint64_t value)
{
    kc_json_key(j, key);
    jprintf(j, "%llu", (unsigned long long)value);
}

void kc_json_dbl(kc_json *j, const char *key, double value)
{
    kc_json_key(j, key);
    if (isfinite(value))
        jprintf(j, "%.9g", value);
    else
        jputs(j, "null");
}

void kc_json_bool(kc_json *j, const char *key, int value)
{
    kc_json_key(j, key);
    jputs(j, value ? "true" : "false");
}

void kc_json_null(kc_json *j, const char *key)
{
    kc_json_key(j, key);
    jputs(j, "null");
}

void kc_json_open(kc_json *j, const char *key)
{
    kc_json_key(j, key);
    jputs(j, "{");
    j->need_comma = 0;
}

void kc_json_close(kc_json *j)
{
    jputs(j, "}");
    j->need_comma = 1;
}

void kc_json_int_array(kc_json *j, const char *key, const long long *v, int n)
{
    kc_json_key(j, key);
    jputs(j, "[");
    for (int i = 0; i < n; i++)
        jprintf(j, "%s%lld", i ? "," : "", v[i]);
    jputs(j, "]");
}

void kc_json_raw(kc_json *j, const char *text) { jputs(j, text); }

void kc_json_info(kc_json *j, const char *key, MPI_Info info)
{
    kc_json_open(j, key);
    int nkeys = 0;
    if (info != MPI_INFO_NULL && MPI_Info_get_nkeys(info, &nkeys) == MPI_SUCCESS) {
        char k[MPI_MAX_INFO_KEY + 1];
        char *v = malloc(MPI_MAX_INFO_VAL + 1);
        for (int i = 0; v && i < nkeys; i++) {
            int flag = 0;
            if (MPI_Info_get_nthkey(info, i, k) != MPI_SUCCESS)
                continue;
            if (MPI_Info_get(info, k, MPI_MAX_INFO_VAL, v, &flag) != MPI_SUCCESS || !flag)
                continue;
            kc_json_str(j, k, v);
        }
        free(v);
    }
    kc_json_close(j);
}
