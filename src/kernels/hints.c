/* MPI-IO hints of a kernel run: PARIO_KERNEL_HINTS_FILE, PARIO_KERNEL_HINTS and
 * --hints, read on rank 0 by the runtime's rules (pario-hint-line.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernel_common.h"
#include "kernel_parts.h"
#include "pario-hint-line.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== hints ================================================================================= */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Append "key=value\n" lines parsed from a "k=v,k=v" (or ';'-separated) list. */
static int hints_from_list(kc_json *out, const char *list, const char *source, char *err, size_t errsz)
{
    char *copy = strdup(list);
    if (!copy)
        return -1;
    const char *sep = strchr(copy, ';') ? ";" : ",";
    char *save = NULL;
    for (char *tok = strtok_r(copy, sep, &save); tok; tok = strtok_r(NULL, sep, &save)) {
        char *item = trim(tok);
        if (!*item)
            continue;
        char *eq = strchr(item, '=');
        if (!eq || eq == item) {
            snprintf(err, errsz, "bad hint '%s' in %s: expected key=value", item, source);
            free(copy);
            return -1;
        }
        /* the rules of a hints-file line: a bad hint is a bad parameter (exit 2),
         * never an MPI_ERR_INFO abort */
        char *key = NULL, *val = NULL, why[96];
        if (pario_parse_hint_line(item, strlen(item), &key, &val, why, sizeof why) != 1) {
            *eq = '\0';
            snprintf(err, errsz, "bad hint '%.64s' in %s: %s", trim(item), source, why);
            free(copy);
            return -1;
        }
        kc_json_raw(out, key);
        kc_json_raw(out, "=");
        kc_json_raw(out, val);
        kc_json_raw(out, "\n");
    }
    free(copy);
    return 0;
}

/* A ROMIO_HINTS-style file: "key value" per line ('#' comments); "key=value" is accepted too. */
static int hints_from_file(kc_json *out, const char *file, char *err, size_t errsz)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, errsz, "cannot read hints file %s (PARIO_KERNEL_HINTS_FILE): %s", file, strerror(errno));
        return -1;
    }
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strcspn(line, "\n");
        char *s = NULL, *val = NULL, why[96];
        int got = pario_parse_hint_line(line, len, &s, &val, why, sizeof why);
        if (got == 0)
            continue;
        if (got < 0) {
            snprintf(err, errsz, "hints file %s line %d: %s", file, lineno, why);
            fclose(f);
            return -1;
        }
        kc_json_raw(out, s);
        kc_json_raw(out, "=");
        kc_json_raw(out, val);
        kc_json_raw(out, "\n");
    }
    fclose(f);
    return 0;
}

/* Rank 0 reads the environment (so that only rank 0 needs it) and broadcasts
 * the hints as "key=value\n" lines; every rank builds the same MPI_Info. */
void kc_build_hints(kc_ctx *ctx, MPI_Info *info)
{
    char err[KC_MSG] = "";
    kc_json lines = {0};
    kc_json_raw(&lines, "");
    if (ctx->rank == 0) {
        const char *file = getenv("PARIO_KERNEL_HINTS_FILE");
        const char *list = getenv("PARIO_KERNEL_HINTS");
        int bad = 0;
        if (file && *file)
            bad = hints_from_file(&lines, file, err, sizeof err);
        if (!bad && list && *list)
            hints_from_list(&lines, list, "PARIO_KERNEL_HINTS", err, sizeof err);
        if (lines.len >= KC_HINTS_MAX)
            snprintf(err, sizeof err, "hints from the environment are longer than %d bytes", KC_HINTS_MAX);
    }
    MPI_Bcast(err, KC_MSG, MPI_CHAR, 0, MPI_COMM_WORLD);
    int n = (int)lines.len;
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (err[0]) {
        kc_fail(ctx, "%s", err);
        free(lines.buf);
        return;
    }
    if (ctx->rank != 0) {
        lines.len = 0;
        char *tmp = calloc((size_t)n + 1, 1);
        if (tmp) {
            kc_json_put(&lines, tmp, (size_t)n);
            free(tmp);
        }
    }
    MPI_Bcast(lines.buf, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (ctx->hints_cli && hints_from_list(&lines, ctx->hints_cli, "--hints", err, sizeof err)) {
        kc_fail(ctx, "%s", err);
        free(lines.buf);
        return;
    }
    if (lines.len == 0) {
        *info = MPI_INFO_NULL;
        free(lines.buf);
        return;
    }
    MPI_Info_create(info);
    char *save = NULL;
    for (char *l = strtok_r(lines.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(l, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (strlen(l) >= MPI_MAX_INFO_KEY || strlen(eq + 1) >= MPI_MAX_INFO_VAL) {
            kc_fail(ctx, "hint '%s' is too long for MPI_Info", l);
            break;
        }
        MPI_Info_set(*info, l, eq + 1);
    }
    free(lines.buf);
}
