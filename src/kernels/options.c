/* Command-line options of the kernels: parsing and --help (kernel_parts.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernel_common.h"
#include "kernel_parts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* ==== options ============================================================================= */

static int parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    unsigned long long mul = 1;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': mul = 1ULL << 10; break;
        case 'm': case 'M': mul = 1ULL << 20; break;
        case 'g': case 'G': mul = 1ULL << 30; break;
        case 't': case 'T': mul = 1ULL << 40; break;
        default: return -1;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -1;
    }
    if (v > (unsigned long long)LLONG_MAX / mul)
        return -1;
    *out = (long long)(v * mul);
    return 0;
}

static int parse_int(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (!*s)
        return -1;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        return -1;
    *out = v;
    return 0;
}

static int parse_choice(const char *choices, const char *s)
{
    int idx = 0;
    size_t n = strlen(s);
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return idx;
        idx++;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static kc_opt *find_opt(kc_opt *tables[2], const char *name, size_t len)
{
    for (int t = 0; t < 2; t++)
        for (kc_opt *o = tables[t]; o && o->name; o++)
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                return o;
    return NULL;
}

/* Parse argv; returns 1 if --help was asked for. */
int kc_parse_args(kc_ctx *ctx, kc_opt *tables[2], int argc, char **argv)
{
    int help = 0;
    for (int i = 1; i < argc && !ctx->failed; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            help = 1;
            continue;
        }
        const char *name, *value = NULL;
        size_t nlen;
        if (strcmp(a, "-o") == 0) {
            name = "path";
            nlen = 4;
        } else if (strncmp(a, "--", 2) == 0 && a[2]) {
            name = a + 2;
            const char *eq = strchr(name, '=');
            nlen = eq ? (size_t)(eq - name) : strlen(name);
            if (eq)
                value = eq + 1;
        } else {
            kc_fail(ctx, "unexpected argument '%s' (options are --name value; see --help)", a);
            break;
        }
        kc_opt *o = find_opt(tables, name, nlen);
        if (!o) {
            kc_fail(ctx, "unknown option '--%.*s' (see --help)", (int)nlen, name);
            break;
        }
        if (o->type == KC_FLAG) {
            if (value) {
                kc_fail(ctx, "option --%s takes no value", o->name);
                break;
            }
            *(int *)o->dest = 1;
            o->given = 1;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc) {
                kc_fail(ctx, "option --%s needs a value", o->name);
                break;
            }
            value = argv[++i];
        }
        switch (o->type) {
        case KC_INT:
            if (parse_int(value, (long long *)o->dest))
                kc_fail(ctx, "option --%s: '%s' is not an integer", o->name, value);
            break;
        case KC_SIZE:
            if (parse_size(value, (long long *)o->dest))
                kc_fail(ctx, "option --%s: '%s' is not a size (a number with an optional k, m, g or t suffix)",
                        o->name, value);
            break;
        case KC_STR:
            *(const char **)o->dest = value;
            break;
        case KC_CHOICE: {
            int c = parse_choice(o->choices, value);
            if (c < 0)
                kc_fail(ctx, "option --%s: '%s' is not one of %s", o->name, value, o->choices);
            else
                *(int *)o->dest = c;
            break;
        }
        }
        o->given = 1;
    }
    return help;
}

/* The width --help fits, as pario's own commands: $COLUMNS where it is a positive number, else
 * the width of the terminal standard output writes to, else 80. */
static int help_width(void)
{
    const char *columns = getenv("COLUMNS");
    if (columns && *columns) {
        char *end;
        long v = strtol(columns, &end, 10);
        if (!*end && v > 0 && v < 100000)
            return (int)v;
    }
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* Print `text` from column `col` (where the line already is), wrapped at its spaces to `width`
 * columns, each further line starting at column `indent`; a word longer than a line is kept
 * whole (an option or a path pasted from here must work).  Ends the line. */
static void print_wrapped(FILE *f, const char *text, int col, int indent, int width)
{
    int empty = 1; /* no word on this line yet */
    for (const char *p = text; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        int len = (int)strcspn(p, " ");
        if (!empty && col + 1 + len > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            empty = 1;
        }
        if (!empty) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, (size_t)len, f);
        col += len;
        empty = 0;
        p += len;
    }
    fputc('\n', f);
}

/* Each option: its name (and value) in a column of 24, its help wrapped beside it with a hanging
 * indent (below the name where the name is longer, or the width too narrow for the column). */
static void print_opts(FILE *f, kc_opt *opts, int width)
{
    int indent = width >= 56 ? 28 : 6;
    for (kc_opt *o = opts; o && o->name; o++) {
        char left[96];
        const char *meta = "";
        switch (o->type) {
        case KC_INT: meta = " N"; break;
        case KC_SIZE: meta = " SIZE"; break;
        case KC_STR: meta = " VALUE"; break;
        case KC_FLAG: meta = ""; break;
        case KC_CHOICE: meta = NULL; break;
        }
        if (meta)
            snprintf(left, sizeof left, "--%s%s", o->name, meta);
        else
            snprintf(left, sizeof left, "--%s %s", o->name, o->choices);
        if (strlen(left) > 24 || indent < 28)
            fprintf(f, "  %s\n%*s", left, indent, "");
        else
            fprintf(f, "  %-24s  ", left);
        print_wrapped(f, o->help, indent, indent, width);
    }
}

void kc_usage(const kc_kernel *k, kc_opt *common)
{
    int width = help_width();
    printf("usage: pario-kernel-%s [options]\n", k->name);
    print_wrapped(stdout, k->pattern, 0, 0, width);
    printf("\n%s options:\n", k->name);
    print_opts(stdout, k->opts, width);
    printf("\ncommon options:\n");
    print_opts(stdout, common, width);
    printf("\n");
    print_wrapped(stdout, "MPI-IO hints: PARIO_KERNEL_HINTS=\"key=value,key=value\" (';' also separates), "
                  "PARIO_KERNEL_HINTS_FILE=FILE (lines 'key value', as ROMIO_HINTS), then --hints. "
                  "Prints one JSON line on stdout (rank 0). Exit codes: 0 ok, 1 I/O error or "
                  "verification failure, 2 bad parameters. See docs/kernels.md.", 0, 0, width);
}
