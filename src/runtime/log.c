/*
 * Shutdown: turn the records into a pario log (docs/log-format.md).
 *
 * MPI jobs, at MPI_Finalize:
 *   1. every rank converts its ticks to seconds and fills its summary row;
 *   2. the files shared by several ranks are found and their records reduced
 *      to rank 0 (shared.c);
 *   3. each rank compresses its own block (zlib) and rank 0 writes the log,
 *      gathering the ranks' blocks one 4 MiB window at a time (MPI_Gatherv).
 * On a node with more ranks than cores each collective costs about one time
 * slice per rank, so the steps share their collectives where they can.
 * Other processes (non-MPI programs, ranks that never reach MPI_Finalize)
 * write a log of their own data from the exit path.
 */
#include "config.h"
#include "internal.h"
#include "shared.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- growable byte buffer (bounded by the records we hold) ------------ */
/* Room for n more bytes at b->p + b->len (NULL, and b->oom set, when there is none). */
static unsigned char *buf_room(struct pario_buf *b, size_t n)
{
    if (b->oom)
        return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *p = pario_realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

void pario_buf_put(struct pario_buf *b, const void *src, size_t n)
{
    unsigned char *at = buf_room(b, n);
    if (!at)
        return;
    memcpy(at, src, n);
    b->len += n;
}
static void put_u32(struct pario_buf *b, uint32_t v) { pario_buf_put(b, &v, 4); }
static void put_u64(struct pario_buf *b, uint64_t v) { pario_buf_put(b, &v, 8); }

static void put_json_string(struct pario_buf *b, const char *s)
{
    pario_buf_put(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            pario_buf_put(b, esc, 2);
        } else if (ch < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            pario_buf_put(b, esc, 6);
        } else {
            pario_buf_put(b, s, 1);
        }
    }
    pario_buf_put(b, "\"", 1);
}
static void put_text(struct pario_buf *b, const char *s) { pario_buf_put(b, s, strlen(s)); }

/* ---- blocks -------------------------------------------------------------*/
struct block_header {
    uint32_t kind;
    int32_t rank;
    uint64_t ulen, clen;
    uint32_t crc; /* crc32 of the compressed bytes */
    uint32_t reserved;
};

/* Append one compressed block holding `payload` to `out`, at zlib's fastest
 * level: the default level 6 shrinks the column-major records by only 5 %
 * more, and its streams of them inflate 2-3 times slower (docs/performance.md). */
void pario_put_block(struct pario_buf *out, uint32_t kind, int rank, const struct pario_buf *payload)
{
    uLongf clen = compressBound(payload->len);
    unsigned char *z = pario_malloc(clen ? clen : 1);
    if (!z || compress2(z, &clen, payload->p ? payload->p : (const Bytef *)"", payload->len, 1) != Z_OK) {
        pario_free(z);
        out->oom = 1;
        return;
    }
    struct block_header h = {.kind = kind, .rank = rank, .ulen = payload->len, .clen = clen,
                             .crc = (uint32_t)crc32(0L, z, (uInt)clen), .reserved = 0};
    pario_buf_put(out, &h, sizeof h);
    pario_buf_put(out, z, clen);
    pario_free(z);
}

static void put_file_header(struct pario_buf *out)
{
    pario_buf_put(out, PARIO_LOG_MAGIC, 8);
    put_u32(out, PARIO_LOG_VERSION);
    put_u32(out, 16);
}

/* ---- conversion of a rank's data to seconds ---------------------------- */

static void record_to_seconds(struct pario_record *r, void *arg)
{
    (void)arg;
    const struct pario_layer_desc *d = pario_layers[r->layer];
    double spt = pario_core.sec_per_tick;
    for (int i = 0; i < d->nfcounters; i++) {
        if (i == d->f_open_start || i == d->f_close_end)
            r->fcounters[i] = r->fcounters[i] > 0 ? (r->fcounters[i] - (double)pario_core.start_ticks) * spt : 0.0;
        else
            r->fcounters[i] *= spt;
    }
    /* Per-rank statistics: this rank is both fastest and slowest. */
    double t = r->fcounters[d->f_read_time] + r->fcounters[d->f_write_time] + r->fcounters[d->f_meta_time];
    int64_t bytes = r->counters[d->c_bytes_read] + r->counters[d->c_bytes_written];
    r->counters[d->c_nranks] = 1;
    r->counters[d->c_fastest_rank] = r->counters[d->c_slowest_rank] = pario_core.rank;
    r->counters[d->c_fastest_bytes] = r->counters[d->c_slowest_bytes] = bytes;
    r->fcounters[d->f_fastest_time] = r->fcounters[d->f_slowest_time] = t;
    r->fcounters[d->f_var_time] = r->fcounters[d->f_var_bytes] = 0.0;
}

static void fill_rank_row(double *row)
{
    double spt = pario_core.sec_per_tick;
    memset(row, 0, sizeof(double) * RANK_NUM_FIELDS);
    for (int i = 0; i < RANK_NUM_FIELDS; i++)
        row[i] = (double)pario_threads_sum(i);
    /* time classes are ticks; byte and call counts were accumulated as-is */
    static const int time_fields[] = {posix_read, posix_write, posix_meta, stdio_read, stdio_write,
                                      stdio_meta, mpiio_read,  mpiio_write, mpiio_meta, hdf5_read,
                                      hdf5_write, hdf5_meta,   pnetcdf_read, pnetcdf_write, pnetcdf_meta,
                                      mpi_coll,   mpi_p2p,     mpi_other,   mpi_init};
    for (size_t i = 0; i < sizeof time_fields / sizeof *time_fields; i++)
        row[time_fields[i]] *= spt;
    row[wall] = (double)(pario_core.end_ticks - pario_core.start_ticks) * spt - row[mpi_init];
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        row[maxrss] = (double)ru.ru_maxrss * 1024.0;
        row[cpu_user] = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
        row[cpu_sys] = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    }
    row[threads] = pario_thread_count();
    row[records_overflowed] = (double)pario_core.records_overflowed;
    row[finalized] = 0; /* set by the caller */
}

/* ---- payloads ---------------------------------------------------------- */

/* One record as the column writer sees it. */
struct record_row {
    uint64_t id;
    int64_t rank;
    const int64_t *counters;
    const double *fcounters;
};

/* Value i of an 8-byte column of n values at p (version 4, docs/log-format.md):
 * byte 6 of every value, then byte 7 of every value, then bytes 0-5 of each
 * value.  The two high bytes (a double's sign, exponent and top of mantissa; a
 * small integer's zeros) of like values then lie side by side, while a value
 * that recurs still recurs as 6 bytes that zlib matches. */
static void put_split(unsigned char *p, size_t n, size_t i, const void *value)
{
    uint64_t x;
    memcpy(&x, value, 8);
    p[i] = (unsigned char)(x >> 48);
    p[n + i] = (unsigned char)(x >> 56);
    for (int j = 0; j < 6; j++)
        p[2 * n + 6 * i + (size_t)j] = (unsigned char)(x >> (8 * j));
}

/* n records of a layer, column-major (docs/log-format.md): all ids, all ranks,
 * then each counter, then each float counter, 8 bytes a value, the counters'
 * columns split as put_split says.  Zeros and like values of a counter then
 * lie side by side, which zlib compresses far better than whole records one
 * after another. */
static void put_columns(struct pario_buf *b, const struct pario_layer_desc *d, const struct record_row *rows,
                        size_t n)
{
    size_t ncols = 2 + (size_t)d->ncounters + (size_t)d->nfcounters;
    unsigned char *p = buf_room(b, ncols * n * 8);
    if (!p)
        return;
    for (size_t i = 0; i < n; i++, p += 8)
        memcpy(p, &rows[i].id, 8);
    for (size_t i = 0; i < n; i++, p += 8)
        memcpy(p, &rows[i].rank, 8);
    for (int k = 0; k < d->ncounters; k++, p += 8 * n)
        for (size_t i = 0; i < n; i++)
            put_split(p, n, i, &rows[i].counters[k]);
    for (int k = 0; k < d->nfcounters; k++, p += 8 * n)
        for (size_t i = 0; i < n; i++)
            put_split(p, n, i, &rows[i].fcounters[k]);
    b->len += ncols * n * 8;
}

/* Which part of the RANK payload a walk over the records writes. Names and
 * hints are columnar (all ids, then all lengths, then the bytes) so that a
 * reader decodes a million of them with array operations. */
enum section { SEC_RECORDS, SEC_NAME_IDS, SEC_NAME_LENS, SEC_NAME_BYTES, SEC_HINT_LAYERS, SEC_HINT_IDS,
               SEC_HINT_LENS, SEC_HINT_BYTES, SEC_INJ_LAYERS, SEC_INJ_IDS, SEC_INJ_LENS, SEC_INJ_BYTES };

struct rank_ctx {
    struct pario_buf *b;
    struct record_row *rows; /* SEC_RECORDS: filled, n of them (at most cap), when not count_only */
    uint32_t n, cap;
    int count_only;
    enum section what;
};

static void rank_record(struct pario_record *r, void *arg)
{
    struct rank_ctx *rc = arg;
    int64_t minrank = -1;
    int shared = pario_shared_index(r->layer, r->id, &minrank) >= 0;
    int owner = !shared || minrank == pario_core.rank;
    const char *text = NULL;
    switch (rc->what) {
    case SEC_RECORDS:
        if (shared)
            return;
        if (!rc->count_only) {
            if (rc->n == rc->cap)
                return;
            rc->rows[rc->n] = (struct record_row){r->id, pario_core.rank, r->counters, r->fcounters};
        }
        rc->n++;
        return;
    case SEC_NAME_IDS: case SEC_NAME_LENS: case SEC_NAME_BYTES:
        text = r->name;
        break;
    case SEC_HINT_LAYERS: case SEC_HINT_IDS: case SEC_HINT_LENS: case SEC_HINT_BYTES:
        text = r->hints;
        break;
    default:
        text = r->injected;
        break;
    }
    if (!owner || !text)
        return;
    rc->n++;
    if (rc->count_only)
        return;
    switch (rc->what) {
    case SEC_HINT_LAYERS: case SEC_INJ_LAYERS: put_u32(rc->b, (uint32_t)r->layer); break;
    case SEC_NAME_IDS: case SEC_HINT_IDS: case SEC_INJ_IDS: put_u64(rc->b, r->id); break;
    case SEC_NAME_LENS: case SEC_HINT_LENS: case SEC_INJ_LENS: put_u32(rc->b, (uint32_t)strlen(text)); break;
    default: put_text(rc->b, text); break;
    }
}

static void walk(struct rank_ctx *rc, int layer)
{
    for (int l = 0; l < PARIO_NLAYERS; l++)
        if (layer < 0 || l == layer)
            pario_foreach_record(l, rank_record, rc);
}

/* u32 count, then the columns `first`..`last` of the section, in order. */
static void put_section(struct pario_buf *b, enum section first, enum section last, int layer)
{
    struct rank_ctx rc = {.b = b, .n = 0, .count_only = 1, .what = first};
    walk(&rc, layer);
    put_u32(b, rc.n);
    rc.count_only = 0;
    for (enum section s = first; s <= last; s++) {
        rc.what = s;
        walk(&rc, layer);
    }
}

/* u32 count, then the layer's records of this rank alone, column-major. */
static void put_rank_records(struct pario_buf *b, int layer)
{
    struct rank_ctx rc = {.b = b, .n = 0, .count_only = 1, .what = SEC_RECORDS};
    walk(&rc, layer);
    if (rc.n) {
        rc.rows = pario_malloc(rc.n * sizeof *rc.rows);
        if (!rc.rows) {
            b->oom = 1;
            return;
        }
        rc.count_only = 0;
        rc.cap = rc.n;
        rc.n = 0;
        walk(&rc, layer);
    }
    put_u32(b, rc.n);
    put_columns(b, pario_layers[layer], rc.rows, rc.n);
    pario_free(rc.rows);
}

static void build_rank_payload(struct pario_buf *b, const double *row)
{
    pario_buf_put(b, row, sizeof(double) * RANK_NUM_FIELDS);
    for (int l = 0; l < PARIO_NLAYERS; l++)
        put_rank_records(b, l);
    put_section(b, SEC_NAME_IDS, SEC_NAME_BYTES, -1);
    put_section(b, SEC_HINT_LAYERS, SEC_HINT_BYTES, -1);
    put_section(b, SEC_INJ_LAYERS, SEC_INJ_BYTES, -1);
}

static void build_shared_payload(struct pario_buf *b, struct pario_shared_elem *elems, const unsigned char *bitmap,
                                 size_t bm_bytes)
{
    struct record_row *rows = pario_nshared ? pario_malloc((size_t)pario_nshared * sizeof *rows) : NULL;
    if (pario_nshared && !rows) {
        b->oom = 1;
        return;
    }
    for (int l = 0; l < PARIO_NLAYERS; l++) {
        const struct pario_layer_desc *d = pario_layers[l];
        uint32_t n = 0;
        for (int i = 0; i < pario_nshared; i++) {
            if (pario_shared_keys[i].layer != l)
                continue;
            struct pario_shared_elem *e = &elems[i];
            double nr = (double)e->counters[d->c_nranks];
            if (nr > 0) {
                double mt = e->sum_t / nr, mb = e->sum_b / nr;
                e->fcounters[d->f_var_time] = e->sum_t2 / nr - mt * mt;
                e->fcounters[d->f_var_bytes] = e->sum_b2 / nr - mb * mb;
                if (e->fcounters[d->f_var_time] < 0)
                    e->fcounters[d->f_var_time] = 0;
                if (e->fcounters[d->f_var_bytes] < 0)
                    e->fcounters[d->f_var_bytes] = 0;
            }
            rows[n++] = (struct record_row){pario_shared_keys[i].id, -1, e->counters, e->fcounters};
        }
        put_u32(b, n);
        put_columns(b, d, rows, n);
    }
    pario_free(rows);
    /* bitmaps in the same (layer, id) order */
    put_u32(b, (uint32_t)bm_bytes);
    for (int l = 0; l < PARIO_NLAYERS && bm_bytes; l++)
        for (int i = 0; i < pario_nshared; i++)
            if (pario_shared_keys[i].layer == l)
                pario_buf_put(b, bitmap + (size_t)i * bm_bytes, bm_bytes);
}

/* ---- META -------------------------------------------------------------- */

/* MPI_Get_library_version's first line (at MPI_Init), NULL before. */
static const char *mpi_library;

static void read_cmdline(char *exe, size_t exesz, struct pario_buf *argv_json)
{
    exe[0] = '\0';
    FILE *f = fopen("/proc/self/cmdline", "r");
    put_text(argv_json, "[");
    if (f) {
        char arg[4096];
        size_t n = 0;
        int c, first = 1;
        while ((c = fgetc(f)) != EOF) {
            if (c == '\0' || n == sizeof arg - 1) {
                arg[n] = '\0';
                if (!first)
                    put_text(argv_json, ",");
                put_json_string(argv_json, arg);
                if (first) {
                    snprintf(exe, exesz, "%s", arg);
                    first = 0;
                }
                n = 0;
            } else {
                arg[n++] = (char)c;
            }
        }
        fclose(f);
    }
    put_text(argv_json, "]");
}

static void put_name_list(struct pario_buf *b, const char *const *names, int n)
{
    put_text(b, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            put_text(b, ",");
        put_json_string(b, names[i]);
    }
    put_text(b, "]");
}

#define X(name, doc) #name,
static const char *const rank_field_names[] = {PARIO_RANK_FIELDS};
#undef X

static void build_meta(struct pario_buf *b, int nprocs, int complete, const char *ranks_in_log, double end_epoch,
                       int64_t overflowed_total, double mpi_init_epoch)
{
    char exe[4096], num[128], host[256] = "";
    struct pario_buf argv_json = {0};
    read_cmdline(exe, sizeof exe, &argv_json);
    gethostname(host, sizeof host - 1);
    put_text(b, "{\"format\":\"pario-log\",\"version\":");
    snprintf(num, sizeof num, "%d", PARIO_LOG_VERSION);
    put_text(b, num);
    put_text(b, ",\"exe\":");
    put_json_string(b, exe);
    put_text(b, ",\"argv\":");
    pario_buf_put(b, argv_json.p, argv_json.len);
    pario_free(argv_json.p);
    snprintf(num, sizeof num, ",\"nprocs\":%d,\"complete\":%s,\"start_time\":%.6f,\"end_time\":%.6f", nprocs,
             complete ? "true" : "false", pario_core.start_epoch, end_epoch);
    put_text(b, num);
    snprintf(num, sizeof num, ",\"mpi_init_time\":%.6f,\"records_overflowed\":%lld,\"mem_cap\":%zu", mpi_init_epoch,
             (long long)overflowed_total, pario_arena_cap());
    put_text(b, num);
    put_text(b, ",\"hostname\":");
    put_json_string(b, host);
    const char *jobid = pario_config.slurm_job;
    put_text(b, ",\"jobid\":");
    put_json_string(b, jobid ? jobid : "");
    put_text(b, ",\"mpi_library\":");
    put_json_string(b, mpi_library ? mpi_library : "");
    put_text(b, ",\"timer\":");
    put_json_string(b, pario_use_tsc ? "tsc" : "clock_gettime");
    put_text(b, ",\"ranks_in_log\":");
    put_text(b, ranks_in_log);
    put_text(b, ",\"injected_hints\":{");
    const char *const *injected = pario_injected_hints();
    for (int i = 0; injected && injected[i]; i += 2) {
        if (i)
            put_text(b, ",");
        put_json_string(b, injected[i]);
        put_text(b, ":");
        put_json_string(b, injected[i + 1]);
    }
    put_text(b, "},\"injected_hint_sections\":[");
    for (int s = 0; s < pario_nhint_sections; s++) {
        const struct pario_hint_section *sec = &pario_hint_sections[s];
        put_text(b, s ? ",{\"glob\":" : "{\"glob\":");
        put_json_string(b, sec->glob);
        put_text(b, ",\"hints\":{");
        for (int i = 0; i < sec->n; i++) {
            if (i)
                put_text(b, ",");
            put_json_string(b, pario_hint_section_kv(sec, i, 0));
            put_text(b, ":");
            put_json_string(b, pario_hint_section_kv(sec, i, 1));
        }
        put_text(b, "}}");
    }
    put_text(b, "]");
    /* The command given to `pario run` (a JSON list it passes as PARIO_LAUNCH),
     * kept as a string so that a hand-set value cannot break the metadata;
     * suggestions repeat the user's own launcher options from it. */
    const char *launch = pario_config.launch;
    if (launch && strlen(launch) < 65536) {
        put_text(b, ",\"launch\":");
        put_json_string(b, launch);
    }
    /* PARIO_HINTS lines that were not injected (hints_file.c), and opens that only
     * succeeded without the injected hints. */
    put_text(b, ",\"rejected_hints\":[");
    for (int i = 0; i < pario_nrejected_hints; i++) {
        const struct pario_rejected_hint *h = &pario_rejected_hints[i];
        snprintf(num, sizeof num, "%s{\"line\":%d,\"text\":", i ? "," : "", h->line);
        put_text(b, num);
        put_json_string(b, h->text);
        put_text(b, ",\"reason\":");
        put_json_string(b, h->reason);
        put_text(b, "}");
    }
    snprintf(num, sizeof num, "],\"rejected_hints_total\":%d,\"hints_fallback_opens\":%d",
             pario_rejected_hints_total, atomic_load(&pario_hints_fallback_opens));
    put_text(b, num);
    /* The library layers: built against, found, active or why not. */
    put_text(b, ",\"library_layers\":{");
    for (int i = 0; pario_library_status[i]; i++) {
        const struct pario_library_status *l = pario_library_status[i];
        put_text(b, i ? "," : "");
        put_json_string(b, l->name);
        put_text(b, ":{\"built\":");
        put_json_string(b, l->built);
        put_text(b, ",\"found\":");
        put_json_string(b, l->found);
        put_text(b, l->active ? ",\"active\":true,\"why\":" : ",\"active\":false,\"why\":");
        put_json_string(b, l->active ? "" : l->why[0] ? l->why : "the program made no call to the library");
        put_text(b, "}");
    }
    put_text(b, "}");
    put_text(b, ",\"rank_fields\":");
    put_name_list(b, rank_field_names, RANK_NUM_FIELDS);
    put_text(b, ",\"layers\":[");
    for (int l = 0; l < PARIO_NLAYERS; l++) {
        const struct pario_layer_desc *d = pario_layers[l];
        if (l)
            put_text(b, ",");
        put_text(b, "{\"name\":");
        put_json_string(b, d->name);
        put_text(b, ",\"counters\":");
        put_name_list(b, d->counter_names, d->ncounters);
        put_text(b, ",\"fcounters\":");
        put_name_list(b, d->fcounter_names, d->nfcounters);
        put_text(b, "}");
    }
    put_text(b, "]}");
}

#define PARIO_LIBRARY_ENTRY(name) &pario_##name##_status,
struct pario_library_status *const pario_library_status[] = {PARIO_LIBRARIES(PARIO_LIBRARY_ENTRY) NULL};
#undef PARIO_LIBRARY_ENTRY

/* ---- log path -----------------------------------------------------------*/

static void default_name(char *out, size_t n, const char *dir, long id)
{
    char exe[4096] = "";
    struct pario_buf dummy = {0};
    read_cmdline(exe, sizeof exe, &dummy);
    pario_free(dummy.p);
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    if (!*base)
        base = "app";
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *job = pario_config.slurm_job, *step = pario_config.slurm_step;
    if (job && step)
        snprintf(out, n, "%s/%s-job%s.%s-%s.pario", dir, base, job, step, stamp);
    else if (job)
        snprintf(out, n, "%s/%s-job%s-%s.pario", dir, base, job, stamp);
    else
        snprintf(out, n, "%s/%s-%ld-%s.pario", dir, base, id, stamp);
}

/* ---- job steps ------------------------------------------------------------
 * Under a job script (`pario run -- ./job.sh`, or `eval "$(pario env)"` in
 * the script) PARIO_STEPS=1, and every MPI job the script starts writes a log
 * of its own: PARIO_LOG "X.pario" becomes "X.step<N>.pario", N the first free
 * number.  Rank 0 reserves it at MPI_Init by creating "<step log>.tmp"
 * exclusively (the writer's own temporary name), so that two steps running at
 * once get different numbers, and tells the other ranks. */
static char step_path[PATH_MAX + 64];

static int steps_wanted(void)
{
    const char *env = pario_config.log;
    struct stat st;
    if (!pario_config.steps || !env || env[strlen(env) - 1] == '/')
        return 0;
    return !(stat(env, &st) == 0 && S_ISDIR(st.st_mode)); /* a directory names every log anyway */
}

/* The program `pario run` started itself (an MPI program run without a
 * launcher) keeps the log name the user gave. */
static int is_direct_child(void)
{
    const char *parent = pario_config.parent_pid;
    return parent && atol(parent) == (long)getppid();
}

static void reserve_step(char *out, size_t n, const char *log)
{
    size_t len = strlen(log), stem = len;
    if (len > 6 && strcmp(log + len - 6, ".pario") == 0)
        stem = len - 6;
    char cand[PATH_MAX + 64], tmp[PATH_MAX + 80];
    for (int i = 1; i < 100000; i++) {
        snprintf(cand, sizeof cand, "%.*s.step%d.pario", (int)stem, log, i);
        struct stat st;
        if (stat(cand, &st) == 0)
            continue;
        snprintf(tmp, sizeof tmp, "%s.tmp", cand);
        int fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
        if (fd >= 0 || errno != EEXIST)
            break; /* reserved, or unwritable (the writer then falls back to $TMPDIR) */
    }
    snprintf(out, n, "%s", cand);
}

static void choose_step_log(void)
{
    if (!steps_wanted())
        return;
    if (pario_core.rank == 0 && !(pario_core.nprocs == 1 && is_direct_child()))
        reserve_step(step_path, sizeof step_path, pario_config.log);
    NEXT(PMPI_Bcast)(step_path, sizeof step_path, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* A job that dies before MPI_Finalize leaves per-rank logs; drop the empty
 * reservation so that the step log's name reads them together. */
static void drop_step_reservation(void)
{
    char tmp[PATH_MAX + 80];
    struct stat st;
    snprintf(tmp, sizeof tmp, "%s.tmp", step_path);
    if (step_path[0] && stat(tmp, &st) == 0 && st.st_size == 0)
        unlink(tmp);
}

/* Resolve PARIO_LOG (file, or directory) into a file path. */
static void log_path(char *out, size_t n, long id)
{
    const char *env = pario_config.log;
    struct stat st;
    if (step_path[0]) {
        snprintf(out, n, "%s", step_path);
    } else if (!env) {
        default_name(out, n, ".", id);
    } else if ((stat(env, &st) == 0 && S_ISDIR(st.st_mode)) || env[strlen(env) - 1] == '/') {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", env);
        size_t l = strlen(dir);
        while (l > 1 && dir[l - 1] == '/')
            dir[--l] = '\0';
        default_name(out, n, dir, id);
    } else {
        snprintf(out, n, "%s", env);
    }
}

/* Where a log goes when it cannot be written at `path`: the same name in
 * $TMPDIR, or /tmp. */
static void fallback_path(char *alt, size_t n, const char *path)
{
    const char *base = strrchr(path, '/');
    snprintf(alt, n, "%s/%s", pario_config.tmpdir, base ? base + 1 : path);
}

/* Say where the log went after it could not be written at `path` (err):
 * at `alt`, or (err2) nowhere. */
static void warn_fallback(const char *path, int err, const char *alt, int err2)
{
    if (err2)
        pario_warn("cannot write log %s (%s) nor %s; profile lost", path, strerror(err), alt);
    else
        pario_warn("cannot write log %s (%s); wrote %s instead", path, strerror(err), alt);
}

/* Write `head`, then the trace's spilled blocks, then `tail` to `path` with
 * POSIX calls (instrumentation is off).  Returns 0 or errno. */
static int write_file(const char *path, const struct pario_buf *head, const struct pario_buf *tail)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return errno;
    int err = 0;
    if (fwrite(head->p, 1, head->len, f) != head->len || pario_trace_copy_spill(f) != 0 ||
        (tail->len && fwrite(tail->p, 1, tail->len, f) != tail->len))
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    else
        pario_note_wrote(path);
    return err;
}

/* ---- exit path (no MPI_Finalize) -----------------------------------------*/

static void log_at_exit(void)
{
    int mpi_rank = -1;
    if (pario_core.mpi_initialized && !pario_core.mpi_finalized)
        mpi_rank = pario_core.rank;
    else if (!pario_core.mpi_initialized) {
        /* A descendant of the program `pario run` started (a shell, a tool
         * it spawned) is not the profiled program: stay silent. */
        const char *parent = pario_config.parent_pid;
        if (parent && atol(parent) != (long)getppid()) {
            pario_note_no_log("not-the-profiled-program");
            return;
        }
    } else {
        return;
    }
    pario_timer_calibrate();
    for (int l = 0; l < PARIO_NLAYERS; l++)
        pario_foreach_record(l, record_to_seconds, NULL);
    double row[RANK_NUM_FIELDS];
    fill_rank_row(row);
    row[finalized] = mpi_rank < 0 ? 1.0 : 0.0;

    pario_nshared = 0;
    struct pario_buf out = {0}, meta = {0}, shared = {0}, rank = {0}, end = {0};
    char ranks[64];
    snprintf(ranks, sizeof ranks, "[%d]", mpi_rank < 0 ? 0 : mpi_rank);
    build_meta(&meta, mpi_rank < 0 ? 1 : pario_core.nprocs, mpi_rank < 0, ranks, (double)time(NULL),
               pario_core.records_overflowed, 0.0);
    build_shared_payload(&shared, NULL, NULL, 0);
    build_rank_payload(&rank, row);
    put_file_header(&out);
    pario_put_block(&out, PARIO_BLOCK_META, -1, &meta);
    pario_put_block(&out, PARIO_BLOCK_SHARED, -1, &shared);
    pario_put_block(&out, PARIO_BLOCK_RANK, mpi_rank < 0 ? 0 : mpi_rank, &rank);
    /* the trace (a rank without MPI_Finalize: no clock offsets), then END */
    struct pario_buf tail = {0};
    int tblocks = 0;
    pario_trace_finish(&tail, mpi_rank < 0 ? 0 : mpi_rank, &tblocks);
    put_u64(&end, 3 + (uint64_t)tblocks);
    pario_put_block(&tail, PARIO_BLOCK_END, -1, &end);
    out.oom |= tail.oom;

    char path[PATH_MAX + 64];
    log_path(path, sizeof path, (long)getpid());
    if (mpi_rank >= 0) {
        if (mpi_rank == 0)
            drop_step_reservation();
        size_t l = strlen(path);
        snprintf(path + l, sizeof path - l, ".rank%d", mpi_rank);
        pario_warn("rank %d exited without MPI_Finalize; its data is in %s (incomplete job log)", mpi_rank,
                   path);
    }
    int err = out.oom ? ENOMEM : write_file(path, &out, &tail);
    if (err) {
        char alt[2 * PATH_MAX + 128];
        fallback_path(alt, sizeof alt, path);
        warn_fallback(path, err, alt, out.oom ? ENOMEM : write_file(alt, &out, &tail));
    }
    pario_free(out.p);
    pario_free(tail.p);
    pario_free(meta.p);
    pario_free(shared.p);
    pario_free(rank.p);
    pario_free(end.p);
}


/* ---- MPI path ------------------------------------------------------------*/

static double mpi_init_epoch;

static void log_mpi_init(const struct pario_mpi *mpi)
{
    (void)mpi;
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (NEXT(PMPI_Get_library_version)(lib, &len) == MPI_SUCCESS) {
        lib[strcspn(lib, "\n")] = '\0';
        mpi_library = lib;
    }
    mpi_init_epoch = (double)time(NULL);
    choose_step_log();
}

/* The log, in file order: every rank's head (file header, META and SHARED on
 * rank 0, its RANK block) in rank order, then every rank's trace (its spilled
 * TRACE blocks, read back from the temporary file, then `tail`: the last
 * TRACE block and TRACE_INDEX) in rank order, then END.  Rank 0 writes it
 * alone, one window of LOG_WINDOW bytes at a time: each rank sends it the
 * part of its head, and of its trace, that falls in the window (MPI_Gatherv;
 * the second only when some rank has a trace), so a rank holds at most one
 * window of its spilled trace, and rank 0 the window it writes and 40 bytes
 * per rank. */
#define LOG_WINDOW ((uint64_t)4 << 20) /* MPI counts are int */

/* One rank's part of the log, (rank 0) everyone's sizes, and the buffers
 * the writing needs, allocated before it starts so that it cannot fail half
 * way for want of memory. */
struct log_parts {
    const struct pario_buf *head, *tail;
    uint64_t spill;        /* bytes of its spilled trace, before `tail` */
    uint64_t lens[2];      /* bytes of its head, of its trace */
    uint64_t offs[2];      /* where they start among all heads, among all traces (0 in one window) */
    uint64_t tot[2];       /* bytes of all heads, of all traces */
    unsigned char *stage;  /* LOG_WINDOW bytes where the rank spilled a trace */
    uint64_t *sizes;       /* rank 0: each rank's lens[0], lens[1], oom, trace blocks; then offs[2] for oom, blocks */
    int *cnt, *dsp;        /* rank 0: a window's counts and displacements */
    unsigned char *win;    /* rank 0: the window (at most LOG_WINDOW bytes) */
    struct pario_buf end;  /* rank 0: the END block */
};

/* How much of [at, at+n) lies in [ws, we); *from: where that part starts within it. */
static uint64_t overlap(uint64_t at, uint64_t n, uint64_t ws, uint64_t we, uint64_t *from)
{
    uint64_t a = at > ws ? at : ws, b = at + n < we ? at + n : we;
    *from = a - at;
    return b > a ? b - a : 0;
}

/* Rank 0's counts and displacements in the window [ws, we) for part `which`
 * (0: the heads, 1: the traces), which starts `start` bytes into the log. */
static void window_layout(struct log_parts *lp, int nprocs, int which, uint64_t start, uint64_t ws, uint64_t we)
{
    uint64_t at = start, from;
    for (int r = 0; r < nprocs; r++) {
        uint64_t len = lp->sizes[4 * (size_t)r + (size_t)which];
        lp->cnt[r] = (int)overlap(at, len, ws, we, &from);
        lp->dsp[r] = lp->cnt[r] ? (int)(at + from - ws) : 0;
        at += len;
    }
}

/* This rank's trace bytes in [from, from + n) of its trace: from the tail, or
 * read back into the staging buffer where they start in the spilled part;
 * *bad set when that read fails. */
static const unsigned char *trace_part(const struct log_parts *lp, uint64_t from, uint64_t n, int *bad)
{
    if (from >= lp->spill)
        return lp->tail->p + (from - lp->spill);
    uint64_t s = lp->spill - from < n ? lp->spill - from : n;
    if (pario_trace_read_spill(lp->stage, from, (size_t)s) != 0)
        *bad = 1;
    else if (n > s)
        memcpy(lp->stage + s, lp->tail->p, (size_t)(n - s));
    return lp->stage;
}

/* Rank 0 writes the log to `f` (opened by it on `tmp`), the others send their
 * parts; then rank 0 renames `tmp` to `path`.  Returns 0 or an errno-ish code
 * agreed on by all ranks. */
static int write_windows(MPI_Comm comm, FILE *f, const char *tmp, const char *path, struct log_parts *lp, int rank,
                         int nprocs)
{
    static unsigned char none[1]; /* the send buffer of a rank with nothing in the window */
    int err = 0, bad = 0;
    uint64_t total = lp->tot[0] + lp->tot[1], tat = lp->tot[0] + lp->offs[1];
    for (uint64_t ws = 0; ws < total; ws += LOG_WINDOW) {
        uint64_t we = total - ws < LOG_WINDOW ? total : ws + LOG_WINDOW, from = 0;
        int n = (int)overlap(lp->offs[0], lp->lens[0], ws, we, &from);
        if (rank == 0)
            window_layout(lp, nprocs, 0, 0, ws, we);
        NEXT(PMPI_Gatherv)(n ? lp->head->p + from : none, n, MPI_BYTE, lp->win, lp->cnt, lp->dsp, MPI_BYTE, 0,
                           comm);
        if (lp->tot[1]) {
            n = (int)overlap(tat, lp->lens[1], ws, we, &from);
            const unsigned char *src = n ? trace_part(lp, from, (uint64_t)n, &bad) : none;
            if (rank == 0)
                window_layout(lp, nprocs, 1, lp->tot[0], ws, we);
            NEXT(PMPI_Gatherv)(src, n, MPI_BYTE, lp->win, lp->cnt, lp->dsp, MPI_BYTE, 0, comm);
        }
        if (rank == 0 && !bad && fwrite(lp->win, 1, (size_t)(we - ws), f) != we - ws)
            bad = 1;
    }
    if (rank == 0) {
        if (fwrite(lp->end.p, 1, lp->end.len, f) != lp->end.len)
            bad = 1;
        if (fclose(f) != 0)
            bad = 1;
    }
    /* only a rank with a trace can fail on its side */
    int anybad = bad;
    if (lp->tot[1])
        NEXT(PMPI_Reduce)(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, comm);
    if (rank == 0) {
        if (anybad)
            err = EIO;
        else if (rename(tmp, path) != 0)
            err = errno;
        if (err)
            unlink(tmp);
        else
            pario_note_wrote(path);
    }
    NEXT(PMPI_Bcast)(&err, 1, MPI_INT, 0, comm);
    return err;
}

/* What rank 0 tells every rank before the log is written. */
struct log_plan {
    int32_t err;     /* 0, or why no log is written at the path PARIO_LOG names */
    int32_t pad;
    uint64_t tot[2]; /* bytes of all heads, of all traces */
};

/* Rank 0 opens `path`.tmp (the temporary name keeps a half-written log from
 * replacing a good one); 0 or errno. */
static int open_tmp(const char *path, char *tmp, size_t n, FILE **f)
{
    *f = NULL;
    if ((size_t)snprintf(tmp, n, "%s.tmp", path) >= n)
        return ENAMETOOLONG;
    *f = fopen(tmp, "wb");
    return *f ? 0 : errno ? errno : EACCES;
}

/* Rank 0: sum the gathered sizes into plan->tot, and turn each rank's oom
 * and trace-block entries into where its head and its trace start (the
 * offsets scattered when the log takes more than one window).  Returns
 * whether some rank is out of memory; *blocks: the trace blocks of all. */
static int plan_sizes(struct log_parts *lp, int nprocs, struct log_plan *plan, uint64_t *blocks)
{
    uint64_t anyoom = 0;
    *blocks = 0;
    for (int r = 0; r < nprocs; r++) {
        uint64_t *z = lp->sizes + 4 * (size_t)r;
        anyoom |= z[2];
        *blocks += z[3];
        z[2] = plan->tot[0];
        z[3] = plan->tot[1];
        plan->tot[0] += z[0];
        plan->tot[1] += z[1];
    }
    return anyoom != 0;
}

/* Write the log: the ranks' sizes gathered to rank 0, which sums them, builds
 * END, opens the file and says whether to write and how much there is (one
 * broadcast); where the log takes more than one window, each rank's offsets
 * are scattered to it (in one window every rank sends all it has, and its
 * offsets stay 0); then the windows.  root_oom: rank 0 lacks the memory to
 * gather (every rank knows, from the shared-file detection).  If the log
 * cannot be written where PARIO_LOG says, it is written to the fallback
 * directory. */
static void write_log(MPI_Comm comm, struct log_parts *lp, int oom, int root_oom, int64_t trace_blocks, int rank,
                      int nprocs)
{
    if (root_oom) {
        if (rank == 0)
            pario_warn("out of memory while building the log; profile lost");
        return;
    }
    uint64_t mine[4] = {lp->lens[0], lp->lens[1], (uint64_t)oom, (uint64_t)trace_blocks};
    NEXT(PMPI_Gather)(mine, 4, MPI_UINT64_T, lp->sizes, 4, MPI_UINT64_T, 0, comm);
    struct log_plan plan = {0};
    static char path[PATH_MAX + 64]; /* rank 0's; static: PATH_MAX bytes off the stack */
    char tmp[2 * PATH_MAX + 136];    /* room for the fallback path below, and .tmp */
    FILE *f = NULL;
    if (rank == 0) {
        uint64_t blocks = 0;
        int anyoom = plan_sizes(lp, nprocs, &plan, &blocks);
        struct pario_buf count = {0};
        put_u64(&count, (uint64_t)nprocs + 2 + blocks);
        pario_put_block(&lp->end, PARIO_BLOCK_END, -1, &count);
        pario_free(count.p);
        uint64_t total = plan.tot[0] + plan.tot[1];
        lp->win = pario_malloc(total < LOG_WINDOW ? (size_t)total + 1 : LOG_WINDOW);
        log_path(path, sizeof path, (long)getpid());
        plan.err = anyoom || lp->end.oom || !lp->win ? ENOMEM : open_tmp(path, tmp, sizeof tmp, &f);
    }
    NEXT(PMPI_Bcast)(&plan, (int)sizeof plan, MPI_BYTE, 0, comm);
    lp->tot[0] = plan.tot[0];
    lp->tot[1] = plan.tot[1];
    /* the offsets serve the fallback directory too, where PARIO_LOG's cannot be opened */
    if (plan.err != ENOMEM && plan.tot[0] + plan.tot[1] > LOG_WINDOW) {
        uint64_t got[4];
        NEXT(PMPI_Scatter)(lp->sizes, 4, MPI_UINT64_T, got, 4, MPI_UINT64_T, 0, comm);
        lp->offs[0] = got[2];
        lp->offs[1] = got[3];
    }
    int err = plan.err ? plan.err : write_windows(comm, f, tmp, path, lp, rank, nprocs);
    if (err == ENOMEM) {
        if (rank == 0)
            pario_warn("out of memory while building the log; profile lost");
        return;
    }
    if (!err)
        return;
    char alt[2 * PATH_MAX + 128];
    int err2 = 0;
    if (rank == 0) {
        fallback_path(alt, sizeof alt, path);
        err2 = open_tmp(alt, tmp, sizeof tmp, &f);
    }
    NEXT(PMPI_Bcast)(&err2, 1, MPI_INT, 0, comm);
    if (!err2)
        err2 = write_windows(comm, f, tmp, alt, lp, rank, nprocs);
    if (rank == 0)
        warn_fallback(path, err, alt, err2);
}

/* PARIO_FINALIZE_TIMES=1: rank 0 says on stderr how long each phase took on
 * the slowest rank (and the communicator's dup at MPI_Init), and the most
 * heap the runtime took to write the log, on rank 0 and on any other rank
 * (bench/scale.py --phases, tests). */
static void finalize_times(const struct pario_mpi *mpi, double t_shared, double find, double t_compress,
                           double t_write, size_t heap_at_entry)
{
    if (!pario_config.finalize_times)
        return;
    int rank = mpi->rank;
    double t_enter = mpi->finalize_wtime, dup_seconds = mpi->dup_seconds;
    double now = NEXT(PMPI_Wtime)(), heap = (double)(pario_heap_peak() - heap_at_entry);
    /* The dup's time on the last rank to reach it is what the dup costs; the
     * first waited there for the others to leave MPI_Init as well (the least
     * is the greatest of the negated times: one reduction for both). */
    double mine[8] = {find,          t_compress - t_shared - find, t_write - t_compress, now - t_write,
                      now - t_enter, -dup_seconds, dup_seconds, rank == 0 ? 0.0 : heap};
    double worst[8];
    NEXT(PMPI_Reduce)(mine, worst, 8, MPI_DOUBLE, MPI_MAX, 0, mpi->comm);
    if (rank == 0)
        pario_warn("finalize phases (slowest rank): shared-file detection %.6f s, reduction %.6f s, "
                   "compression %.6f s, collective write %.6f s, in all %.6f s; "
                   "the runtime's communicator dup at MPI_Init %.6f s on the last rank to reach it, "
                   "%.6f s on the first (waiting for the others); "
                   "heap at most %.0f bytes on rank 0, %.0f on any other rank",
                   worst[0], worst[1], worst[2], worst[3], worst[4], -worst[5], worst[6], heap, worst[7]);
}

/* In MPI_Finalize: the records to seconds, the shared files found, every rank's bytes
 * gathered and written by rank 0 (collective over mpi->comm). */
static void log_mpi_finalize(const struct pario_mpi *mpi)
{
    pario_heap_reset_peak();
    size_t heap_at_entry = pario_heap_held();
    MPI_Comm comm = mpi->comm;
    int rank = mpi->rank, nprocs = mpi->nprocs;
    for (int l = 0; l < PARIO_NLAYERS; l++)
        pario_foreach_record(l, record_to_seconds, NULL);
    double row[RANK_NUM_FIELDS];
    fill_rank_row(row);
    row[finalized] = 1.0;

    /* rank 0's room to gather the ranks' sizes, asked for before the shared-file
     * detection, whose closing reduction tells every rank if it is missing */
    uint64_t *sizes = rank == 0 ? pario_malloc(4 * (size_t)nprocs * sizeof *sizes) : NULL;
    int *cnt = rank == 0 ? pario_malloc(2 * (size_t)nprocs * sizeof *cnt) : NULL;
    double t_shared = NEXT(PMPI_Wtime)();
    struct pario_shared_reduction shared_files;
    pario_shared_reduce(comm, rank, nprocs, rank == 0 && (!sizes || !cnt), &shared_files);

    /* this rank's bytes */
    double t_compress = NEXT(PMPI_Wtime)();
    struct pario_buf out = {0}, payload = {0};
    if (rank == 0) {
        put_file_header(&out);
        struct pario_buf meta = {0}, shared = {0};
        char ranks[64];
        snprintf(ranks, sizeof ranks, "\"all\"");
        build_meta(&meta, nprocs, 1, ranks, (double)time(NULL), shared_files.records_overflowed, mpi_init_epoch);
        build_shared_payload(&shared, shared_files.result, shared_files.bitmap, shared_files.bm_bytes);
        pario_put_block(&out, PARIO_BLOCK_META, -1, &meta);
        pario_put_block(&out, PARIO_BLOCK_SHARED, -1, &shared);
        pario_free(meta.p);
        pario_free(shared.p);
    }
    build_rank_payload(&payload, row);
    pario_put_block(&out, PARIO_BLOCK_RANK, rank, &payload);
    /* after every RANK block: each rank's TRACE blocks and TRACE_INDEX; END is rank 0's */
    struct pario_buf tail = {0};
    int tblocks = 0;
    pario_trace_finish(&tail, rank, &tblocks);
    uint64_t spill = pario_trace_spill_bytes();
    struct log_parts lp = {
        .head = &out, .tail = &tail, .spill = spill, .lens = {out.len, spill + tail.len},
        .stage = spill ? pario_malloc(LOG_WINDOW) : NULL,
        .sizes = sizes,
        .cnt = cnt,
    };
    lp.dsp = lp.cnt ? lp.cnt + nprocs : NULL;
    int oom = out.oom || tail.oom || (spill && !lp.stage);
    double t_write = NEXT(PMPI_Wtime)();
    write_log(comm, &lp, oom, shared_files.log_oom, tblocks, rank, nprocs);
    finalize_times(mpi, t_shared, shared_files.find_seconds, t_compress, t_write, heap_at_entry);
    pario_free(lp.stage);
    pario_free(lp.sizes);
    pario_free(lp.cnt);
    pario_free(lp.win);
    pario_free(lp.end.p);
    pario_free(out.p);
    pario_free(tail.p);
    pario_free(payload.p);
    pario_shared_free(&shared_files);
}

const struct pario_part pario_log_part = {
    .name = "log", .at_exit = log_at_exit, .mpi_init = log_mpi_init, .mpi_finalize = log_mpi_finalize};
