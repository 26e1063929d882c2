/*
 * The hints file (PARIO_HINTS): read once at start-up into the global hints
 * and the per-file sections, which mpiio.c injects at MPI_File_open and the
 * library layers (hdf5.c, pnetcdf.c) read their own keys from.
 */
#include "core.h" /* first: defines _GNU_SOURCE */
#include "config.h"
#include "internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pario-hint-line.h"

/*
 * Every line that would make PMPI_Info_set fail (and so abort the program
 * under MPI_ERRORS_ARE_FATAL) or is ambiguous is skipped and recorded: the
 * log lists it as rejected_hints, rank 0 warns once.  The rules are those of
 * `pario run --hints` (python/pario/launch/hints.py), with this MPI's limits.
 *
 * Lines before the first "[GLOB]" header apply to every file; the lines under
 * a header apply to the files whose name matches GLOB (pario_file_hints).  The
 * lists are built once, before any thread can open a file, and only read
 * afterwards: no lock. */
struct pario_rejected_hint pario_rejected_hints[PARIO_MAX_REJECTED];
int pario_nrejected_hints = 0;
int pario_rejected_hints_total = 0;
atomic_int pario_hints_fallback_opens = 0;
struct pario_hint_section pario_hint_sections[PARIO_MAX_HINT_SECTIONS];
int pario_nhint_sections = 0;
static const char *section_kv[2 * PARIO_MAX_HINTS]; /* the sections' hints, in file order */

static void reject_hint(int line, const char *text, size_t len, const char *reason)
{
    pario_rejected_hints_total++;
    if (pario_nrejected_hints >= PARIO_MAX_REJECTED)
        return;
    struct pario_rejected_hint *h = &pario_rejected_hints[pario_nrejected_hints++];
    h->line = line;
    size_t i = 0;
    for (; i < len && i < sizeof h->text - 1; i++) {
        unsigned char c = (unsigned char)text[i];
        h->text[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    h->text[i] = '\0';
    snprintf(h->reason, sizeof h->reason, "%s", reason);
}

/* A section header "[GLOB]" (s: a text line, len bytes, s[len] writable), parsed
 * in place: 0 if the line is not a header (its first non-blank is not '['), 1
 * with *glob set, -1 with the reason.  Same rules as python/pario/launch/hints.py. */
int pario_parse_section_header(char *s, size_t len, char **glob, char *why, size_t whysz)
{
    size_t lead = 0;
    while (lead < len && pario_is_blank(s[lead]))
        lead++;
    if (lead == len || s[lead] != '[')
        return 0; /* untouched: not a header */
    if (s[len - 1] == '\r')
        s[--len] = '\0';
    s[len] = '\0';
    char *p = s + lead;
    if (pario_not_text(s, len, why, whysz))
        return -1;
    len = pario_strip_comment(s, len);
    if (s[len - 1] != ']' || s + len - 1 == p) {
        snprintf(why, whysz, "section header not closed by ']' (expected [GLOB] alone on its line)");
        return -1;
    }
    s[--len] = '\0';
    p++;
    if (!*p) {
        snprintf(why, whysz, "empty glob in section header []");
        return -1;
    }
    if (strlen(p) > PARIO_MAX_HINT_GLOB) {
        snprintf(why, whysz, "glob of %zu characters, at most %d allowed", strlen(p), PARIO_MAX_HINT_GLOB);
        return -1;
    }
    *glob = p;
    return 1;
}

/* The global hints (read_hints_file), NULL-terminated key/value list. */
static const char *const *inject_hints;

const char *const *pario_injected_hints(void) { return inject_hints; }

static void read_hints_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        pario_warn("cannot read PARIO_HINTS file %s: %s; no hints injected", path, strerror(errno));
        return;
    }
    enum { MAXH = PARIO_MAX_HINTS, LINE = 4096, MAXBYTES = 1 << 20 };
    static const char *list[2 * MAXH + 1];
    static int line_of[MAXH];  /* of every hint kept, globals and sections alike */
    int n = 0, nsec = 0, lineno = 0, c = 0;
    int scope = 0;            /* index in line_of where the current scope's hints start */
    int bad_section = 0;      /* the lines under a rejected header are rejected too */
    size_t total = 0;
    char line[LINE], why[96];
    while (c != EOF) {
        size_t len = 0;
        int too_long = 0;
        lineno++;
        while ((c = getc(f)) != EOF && ++total <= MAXBYTES && c != '\n') {
            if (len < LINE - 1)
                line[len++] = (char)c;
            else
                too_long = 1;
        }
        if (total > MAXBYTES) {
            reject_hint(lineno, line, len, "file larger than 1 MiB: not a hints file, the rest is ignored");
            break;
        }
        if (c == EOF && len == 0)
            break;
        line[len] = '\0';
        if (too_long) {
            if (!pario_not_text(line, len, why, sizeof why))
                snprintf(why, sizeof why, "line longer than %d bytes", LINE - 1);
            reject_hint(lineno, line, len, why);
            continue;
        }
        char shown[sizeof pario_rejected_hints[0].text];
        size_t shown_len = len < sizeof shown ? len : sizeof shown - 1;
        memcpy(shown, line, shown_len);
        char *glob = NULL;
        int header = pario_parse_section_header(line, len, &glob, why, sizeof why);
        if (header != 0) {
            bad_section = 1;
            if (header > 0 && nsec >= PARIO_MAX_HINT_SECTIONS) {
                snprintf(why, sizeof why, "more than %d sections", PARIO_MAX_HINT_SECTIONS);
                header = -1;
            }
            char *gs = header > 0 ? pario_arena_strdup(glob, PARIO_MAX_HINT_GLOB + 1) : NULL;
            if (header > 0 && !gs) {
                snprintf(why, sizeof why, "no memory left for it");
                header = -1;
            }
            if (header < 0) {
                reject_hint(lineno, shown, shown_len, why);
                continue;
            }
            pario_hint_sections[nsec++] = (struct pario_hint_section){.glob = gs, .first = n / 2, .n = 0};
            bad_section = 0;
            scope = n / 2;
            continue;
        }
        char *k = NULL, *v = NULL;
        int got = pario_parse_hint_line(line, len, &k, &v, why, sizeof why);
        if (got > 0 && bad_section) {
            got = -1;
            snprintf(why, sizeof why, "under a rejected section header");
        }
        if (got < 0)
            reject_hint(lineno, shown, shown_len, why);
        if (got <= 0)
            continue;
        int dup = -1;
        for (int i = 2 * scope; i < n && dup < 0; i += 2)
            if (strcmp(list[i], k) == 0)
                dup = line_of[i / 2];
        if (dup >= 0) {
            snprintf(why, sizeof why, "duplicate key (first on line %d)", dup);
            reject_hint(lineno, shown, shown_len, why);
            continue;
        }
        if (n >= 2 * MAXH) {
            snprintf(why, sizeof why, "more than %d hints", MAXH);
            reject_hint(lineno, shown, shown_len, why);
            continue;
        }
        char *ks = pario_arena_strdup(k, MPI_MAX_INFO_KEY), *vs = pario_arena_strdup(v, MPI_MAX_INFO_VAL);
        if (!ks || !vs) {
            reject_hint(lineno, shown, shown_len, "no memory left for it");
            continue;
        }
        line_of[n / 2] = lineno;
        list[n++] = ks;
        list[n++] = vs;
        if (nsec)
            pario_hint_sections[nsec - 1].n++;
    }
    fclose(f);
    /* list: the global hints, then each section's; the globals end with a NULL
     * (inject_hints) and the sections' move to section_kv. */
    int nglobal = nsec ? pario_hint_sections[0].first : n / 2;
    for (int i = 2 * nglobal; i < n; i++)
        section_kv[i - 2 * nglobal] = list[i];
    for (int s = 0; s < nsec; s++)
        pario_hint_sections[s].first -= nglobal;
    list[2 * nglobal] = NULL;
    inject_hints = list;
    pario_nhint_sections = nsec;
    if (pario_rejected_hints_total && pario_config.launcher_rank == 0) {
        const struct pario_rejected_hint *h = &pario_rejected_hints[0];
        pario_warn("PARIO_HINTS %s: %d line(s) skipped, first line %d: %s; the other %d hint(s) are injected "
                   "(the log lists them as rejected_hints)",
                   path, pario_rejected_hints_total, h->line, h->reason, n / 2);
    }
}

const char *pario_hint_section_kv(const struct pario_hint_section *s, int i, int value)
{
    return section_kv[2 * (s->first + i) + value];
}

/* The name a section's glob is matched against: the path as given when the
 * glob has a '/', else the base name. */
static int section_matches(const char *glob, const char *filename)
{
    const char *name = filename;
    if (!strchr(glob, '/')) {
        const char *slash = strrchr(filename, '/');
        name = slash ? slash + 1 : filename;
    }
    return fnmatch(glob, name, 0) == 0;
}

/* 1 if key is one of a library layer's (hdf5.*), not an MPI-IO hint. */
static int library_key(const char *key)
{
    return strncmp(key, PARIO_HDF5_HINT_PREFIX, strlen(PARIO_HDF5_HINT_PREFIX)) == 0;
}

/* The hints for filename whose key starts with prefix (want = 1), or all but
 * the library layers' keys (prefix NULL). */
static int file_hints(const char *filename, const char **kv, const char *prefix)
{
    int n = 0;
    size_t plen = prefix ? strlen(prefix) : 0;
#define WANTED(k) (prefix ? strncmp((k), prefix, plen) == 0 : !library_key(k))
    for (int i = 0; inject_hints && inject_hints[i]; i += 2) {
        if (!WANTED(inject_hints[i]))
            continue;
        kv[n++] = inject_hints[i];
        kv[n++] = inject_hints[i + 1];
    }
    for (int s = 0; filename && s < pario_nhint_sections; s++) {
        const struct pario_hint_section *sec = &pario_hint_sections[s];
        if (!section_matches(sec->glob, filename))
            continue;
        for (int i = 0; i < sec->n; i++) {
            const char *k = pario_hint_section_kv(sec, i, 0), *v = pario_hint_section_kv(sec, i, 1);
            if (!WANTED(k))
                continue;
            int j = 0;
            while (j < n && strcmp(kv[j], k) != 0)
                j += 2;
            if (j == n) { /* a new key; at most PARIO_MAX_HINTS distinct keys exist in all */
                kv[n++] = k;
                n++;
            }
            kv[j + 1] = v;
        }
    }
#undef WANTED
    return n / 2;
}

int pario_file_hints(const char *filename, const char **kv) { return file_hints(filename, kv, NULL); }

int pario_library_hints(const char *filename, const char *prefix, const char **kv)
{
    return file_hints(filename, kv, prefix);
}

static void hints_start(const struct pario_config *cfg)
{
    if (cfg->hints)
        read_hints_file(cfg->hints);
}

const struct pario_part pario_hints_part = {.name = "hints", .start = hints_start};
