/*
 * One line of a hints file, as the runtime (PARIO_HINTS) and the kernels
 * (PARIO_KERNEL_HINTS_FILE, PARIO_KERNEL_HINTS) read it: "key value" or
 * "key=value", '#' comments at the start or after a blank.  A line that would
 * make MPI_Info_set fail (empty key or value, over this MPI's limits, a control
 * or non-ASCII byte) or is ambiguous (several values) is refused with a reason,
 * the same rules as `pario run --hints` (python/pario/launch/hints.py); both parsers are
 * tested on one corpus, tests/data/hint-lines.tsv.  Header-only: the runtime and the
 * kernels are separate binaries.
 */
#ifndef PARIO_HINT_LINE_H
#define PARIO_HINT_LINE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int pario_is_blank(char c) { return c == ' ' || c == '\t'; }

/* -1 with the reason if s[0..len) has a byte that is not printable ASCII or a tab. */
static inline int pario_not_text(const char *s, size_t len, char *why, size_t whysz)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0) {
            snprintf(why, whysz, "not a text line: a NUL byte");
            return -1;
        }
        if ((c < 0x20 && c != '\t') || c >= 0x7f) {
            snprintf(why, whysz, "not a text line: byte 0x%02x", c);
            return -1;
        }
    }
    return 0;
}

/* s[0..len) cut in place before its '#' comment (one first on the line or after a
 * blank) and its trailing blanks: the new length. */
static inline size_t pario_strip_comment(char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == '#' && (i == 0 || pario_is_blank(s[i - 1]))) {
            s[i] = '\0';
            len = i;
            break;
        }
    while (len > 0 && pario_is_blank(s[len - 1]))
        s[--len] = '\0';
    return len;
}

/* One line (len bytes, s[len] writable) parsed in place: 1 with *key and *val set,
 * 0 for a blank or comment line, -1 with the reason in why. */
static inline int pario_parse_hint_line(char *s, size_t len, char **key, char **val, char *why, size_t whysz)
{
    if (len > 0 && s[len - 1] == '\r')
        s[--len] = '\0';
    if (pario_not_text(s, len, why, whysz))
        return -1;
    s[len] = '\0';
    len = pario_strip_comment(s, len);
    char *p = s;
    while (pario_is_blank(*p))
        p++;
    if (!*p)
        return 0;
    size_t klen = strcspn(p, " \t=");
    char *sep = p + klen, *v = sep;
    while (pario_is_blank(*v))
        v++;
    if (*v == '=')
        v++;
    while (pario_is_blank(*v))
        v++;
    if (klen == 0) {
        snprintf(why, whysz, "empty key");
        return -1;
    }
    if (klen >= MPI_MAX_INFO_KEY) {
        snprintf(why, whysz, "key of %zu characters, at most %d allowed", klen, MPI_MAX_INFO_KEY - 1);
        return -1;
    }
    *sep = '\0';
    if (!*v) {
        snprintf(why, whysz, "no value");
        return -1;
    }
    if (v[strcspn(v, " \t")]) {
        int tokens = 0;
        for (char *q = v; *q; q++)
            tokens += !pario_is_blank(*q) && (q == v || pario_is_blank(q[-1]));
        snprintf(why, whysz, "one value expected, found %d", tokens);
        return -1;
    }
    size_t vlen = strlen(v);
    if (vlen >= MPI_MAX_INFO_VAL) {
        snprintf(why, whysz, "value of %zu characters, at most %d allowed", vlen, MPI_MAX_INFO_VAL - 1);
        return -1;
    }
    *key = p;
    *val = v;
    return 1;
}

/* The rank of this process from the launcher's environment (before MPI_Init), 0 if unknown. */
static inline int pario_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

#endif
