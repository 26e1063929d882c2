/*
 * The collective-write engine: extended two-phase I/O (Thakur & Choudhary;
 * ROMIO's ADIOI_GEN_WriteStridedColl is the reference implementation) with
 * the overlap algorithms of Feki & Gabriel.  cw_write is a short pipeline:
 *
 *   my pieces      the file view and the memory type flattened; the call's
 *                  bytes as (file offset, length, stream position) pieces
 *   extents        allgather of every rank's first and last byte
 *   file domains   [min, max) split evenly among the aggregators, the
 *                  boundaries aligned to striping_unit when it is set
 *   requests       alltoall of counts, alltoallv of my pieces to the
 *                  aggregators of their domains
 *   cycles         each aggregator's data range cut in buffers of
 *                  cb_buffer_size / nbuf; every cycle shuffles the pieces
 *                  into the buffers (shuffle.c) and writes them with pwrite
 *                  on the aggregator's own descriptor (writer.c)
 *
 * The schedules of the algorithms differ only in three numbers: buffers
 * (nbuf), shuffles in flight (depth) and writer threads (0: the caller
 * writes).  See docs/collective.md for their timelines.
 */
#include "cw_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t default_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct cw_hooks cw_hooks = {.now = default_now};

void cw_set_hooks(const struct cw_hooks *h)
{
    cw_hooks = *h;
    if (!cw_hooks.now)
        cw_hooks.now = default_now;
}

uint64_t cw_now(void) { return cw_hooks.now(); }

/* ---- names ----------------------------------------------------------------*/

static const char *const algorithm_names[] = {
    [CW_OFF] = "mpi", [CW_NONE] = "none", [CW_COMM] = "comm", [CW_WRITE] = "write",
    [CW_WRITE_COMM] = "write-comm", [CW_WRITE_COMM_2] = "write-comm-2", [CW_AUTO] = "auto",
    [CW_DIRECT] = "direct",
};
static const char *const shuffle_names[] = {
    [CW_P2P] = "p2p", [CW_RMA_FENCE] = "rma-fence", [CW_RMA_LOCK] = "rma-lock",
};

int cw_algorithm_from_name(const char *name)
{
    for (int i = 0; i <= CW_AUTO; i++)
        if (strcmp(name, algorithm_names[i]) == 0)
            return i;
    return -1;
}

int cw_shuffle_from_name(const char *name)
{
    for (int i = CW_P2P; i <= CW_RMA_LOCK; i++)
        if (strcmp(name, shuffle_names[i]) == 0)
            return i;
    return -1;
}


/* ---- selection: PARIO_COLL, then the file's hints --------------------------*/

/* env_shuffle 0: PARIO_COLL named no shuffle (p2p, or auto's own choice) */
static int env_algorithm = CW_OFF, env_shuffle = 0;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
    const char *v = getenv("PARIO_COLL");
    if (!v || !v[0])
        return;
    char alg[64];
    snprintf(alg, sizeof alg, "%s", v);
    char *colon = strchr(alg, ':');
    if (colon)
        *colon++ = '\0';
    int a = cw_algorithm_from_name(alg), s = colon ? cw_shuffle_from_name(colon) : 0;
    if (a < 0 || s < 0) {
        if (cw_hooks.warn)
            cw_hooks.warn("PARIO_COLL=%s is not ALGO[:SHUFFLE] (ALGO none, comm, write, write-comm, "
                          "write-comm-2, auto or mpi; SHUFFLE p2p, rma-fence or rma-lock); the MPI library "
                          "does the collective writes",
                          v);
        return;
    }
    env_algorithm = a;
    env_shuffle = s;
}

static int64_t parse_bytes(const char *s, int64_t fallback)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v <= 0)
        return fallback;
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    else if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

static int info_get(MPI_Info info, const char *key, char *val, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL || NEXT(PMPI_Info_get)(info, key, len - 1, val, &flag) != MPI_SUCCESS)
        return 0;
    return flag;
}

/* Update h from the keys present in info (absent keys keep their value). */
static void parse_hints(struct cw_hints *h, MPI_Info info)
{
    char v[256];
    if (info_get(info, "pario_cb_algorithm", v, sizeof v)) {
        int a = cw_algorithm_from_name(v);
        if (a >= 0)
            h->algorithm = a;
    }
    if (info_get(info, "pario_cb_shuffle", v, sizeof v)) {
        int s = cw_shuffle_from_name(v);
        if (s > 0)
            h->shuffle = s;
    }
    if (info_get(info, "cb_buffer_size", v, sizeof v)) {
        int64_t b = parse_bytes(v, h->cb_buffer_size);
        h->cb_buffer_size = b > CW_MAX_BUFFER ? CW_MAX_BUFFER : b;
    }
    if (info_get(info, "cb_nodes", v, sizeof v))
        h->cb_nodes = (int)parse_bytes(v, h->cb_nodes);
    if (info_get(info, "cb_config_list", v, sizeof v))
        snprintf(h->cb_config_list, sizeof h->cb_config_list, "%s", v);
    if (info_get(info, "striping_unit", v, sizeof v))
        h->striping_unit = parse_bytes(v, h->striping_unit);
}

/* ---- open / set_info / close ------------------------------------------------*/

static struct cw_file *new_file(MPI_Comm comm, const char *path, int amode, const struct cw_hints *h)
{
    struct cw_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    const char *p = path; /* without ROMIO's "ufs:" prefix (the caller strips it) */
    /* the MPI library opened it relative to the current directory: keep the
     * absolute path, since the descriptor is opened later */
    if (p[0] != '/') {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || snprintf(f->path, sizeof f->path, "%s/%s", cwd, p) >= (int)sizeof f->path) {
            free(f);
            return NULL;
        }
    } else {
        snprintf(f->path, sizeof f->path, "%s", p);
    }
    f->amode = amode;
    f->hints = *h;
    f->fd = -1;
    struct stat st;
    f->fs_block = stat(f->path, &st) == 0 && st.st_blksize > 0 ? (int64_t)st.st_blksize : 0;
    f->win = MPI_WIN_NULL;
    f->comm = MPI_COMM_NULL;
    if (NEXT(PMPI_Comm_dup)(comm, &f->comm) != MPI_SUCCESS) {
        free(f);
        return NULL;
    }
    NEXT(PMPI_Comm_set_errhandler)(f->comm, MPI_ERRORS_RETURN);
    NEXT(PMPI_Comm_rank)(f->comm, &f->rank);
    NEXT(PMPI_Comm_size)(f->comm, &f->nprocs);
    return f;
}

static void default_hints(struct cw_hints *h)
{
    pthread_once(&env_once, read_env);
    memset(h, 0, sizeof *h);
    h->algorithm = env_algorithm;
    h->shuffle = env_shuffle;
    h->cb_buffer_size = (int64_t)16 << 20;
}

struct cw_file *cw_file_open(MPI_File fh, MPI_Comm comm, const char *path, int amode, MPI_Info info)
{
    struct cw_hints h;
    default_hints(&h);
    parse_hints(&h, info);
    /* The decision depends on values every rank has alike (environment,
     * hints of a collective open), so all ranks agree without a message. */
    if (h.algorithm == CW_OFF || !path)
        return NULL;
    /* the stripe the MPI library found (Lustre/GPFS) as the default; the
     * caller's hints, parsed again, still win */
    MPI_Info effect = MPI_INFO_NULL;
    if (NEXT(PMPI_File_get_info)(fh, &effect) == MPI_SUCCESS && effect != MPI_INFO_NULL) {
        char v[64];
        if (info_get(effect, "striping_unit", v, sizeof v)) {
            h.striping_unit = parse_bytes(v, 0);
            parse_hints(&h, info);
        }
        NEXT(PMPI_Info_free)(&effect);
    }
    return new_file(comm, path, amode, &h);
}

void cw_file_set_info(struct cw_file *f, MPI_Info info)
{
    if (!f || info == MPI_INFO_NULL)
        return;
    struct cw_hints before = f->hints;
    parse_hints(&f->hints, info);
    if (before.cb_nodes != f->hints.cb_nodes || strcmp(before.cb_config_list, f->hints.cb_config_list) != 0)
        f->aggs_valid = 0; /* chosen again at the next write (collective, as set_info is) */
}

static void free_view(struct cw_view *v)
{
    pario_flat_free(&v->ft);
    free(v->prefix);
    memset(v, 0, sizeof *v);
}

void cw_file_view_changed(struct cw_file *f)
{
    if (f)
        free_view(&f->view);
}

static void free_buffers(struct cw_file *f)
{
    if (f->win != MPI_WIN_NULL)
        NEXT(PMPI_Win_free)(&f->win); /* owns f->buf */
    else
        free(f->buf);
    f->win = MPI_WIN_NULL;
    f->buf = NULL;
    f->buf_size = f->win_size = 0;
}

void cw_file_close(struct cw_file *f)
{
    if (!f)
        return;
    free_buffers(f);
    cw_writer_stop(f->writer);
    if (f->fd >= 0)
        close(f->fd);
    free_view(&f->view);
    free(f->aggs);
    if (f->comm != MPI_COMM_NULL)
        NEXT(PMPI_Comm_free)(&f->comm);
    free(f);
}

/* ---- aggregators: cb_nodes spread over the nodes, as cb_config_list allows --*/

/* How many aggregators cb_config_list allows on the node named 'host':
 * entries "name:count" or "*:count", count "*" for all; first match wins.
 * -1: no limit (the list was not given). */
static int config_cap(const char *list, const char *host)
{
    if (!list[0])
        return -1;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    char *save = NULL;
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        while (*e == ' ')
            e++;
        char *colon = strchr(e, ':');
        int count = 1;
        if (colon) {
            *colon = '\0';
            count = strcmp(colon + 1, "*") == 0 ? INT_MAX : atoi(colon + 1);
        }
        if (strcmp(e, "*") == 0 || strcmp(e, host) == 0)
            return count < 0 ? 0 : count;
    }
    return 0;
}

#define AUTO_AGGREGATORS_PER_NODE 4

static int choose_aggregators(struct cw_file *f)
{
    int np = f->nprocs, rc;
    free_buffers(f); /* sized for the old aggregators (collective if a window exists) */
    MPI_Comm node;
    rc = NEXT(PMPI_Comm_split_type)(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int local = 0, leader = f->rank;
    NEXT(PMPI_Comm_rank)(node, &local);
    NEXT(PMPI_Bcast)(&leader, 1, MPI_INT, 0, node);
    NEXT(PMPI_Comm_free)(&node);
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int hlen = 0;
    NEXT(PMPI_Get_processor_name)(host, &hlen);
    int my_cap = config_cap(f->hints.cb_config_list, host);
    int mine[3] = {leader, local, my_cap};
    int *all = malloc((size_t)np * 3 * sizeof *all);
    int *aggs = malloc((size_t)np * sizeof *aggs);
    if (!all || !aggs) {
        free(all);
        free(aggs);
        return MPI_ERR_NO_MEM;
    }
    rc = NEXT(PMPI_Allgather)(mine, 3, MPI_INT, all, 3, MPI_INT, f->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(aggs);
        return rc;
    }
    int nnodes = 0;
    for (int r = 0; r < np; r++)
        nnodes += all[3 * r] == r; /* a node's leader is its lowest rank */
    int want = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : nnodes;
    /* auto, left to choose: one aggregator's write stream bounds a node's
     * bandwidth, so more per node, up to half its ranks (docs/performance.md,
     * "auto's aggregators") */
    if (f->hints.algorithm == CW_AUTO && f->hints.cb_nodes <= 0 && !f->hints.cb_config_list[0]) {
        int per_node = np / nnodes / 2;
        want = nnodes * (per_node < 1 ? 1 : per_node > AUTO_AGGREGATORS_PER_NODE ? AUTO_AGGREGATORS_PER_NODE
                                                                                 : per_node);
    }
    if (want > np)
        want = np;
    /* round robin over the nodes: every node's local rank 0, then 1, ... */
    int n = 0;
    for (int lr = 0; lr < np && n < want; lr++)
        for (int r = 0; r < np && n < want; r++)
            if (all[3 * r + 1] == lr && (all[3 * r + 2] < 0 || lr < all[3 * r + 2]))
                aggs[n++] = r;
    if (n == 0)
        aggs[n++] = 0; /* a list that allows none: ROMIO keeps one */
    free(all);
    free(f->aggs);
    f->aggs = aggs;
    f->naggs = n;
    f->my_agg = -1;
    for (int i = 0; i < n; i++)
        if (aggs[i] == f->rank)
            f->my_agg = i;
    f->aggs_valid = 1;
    return MPI_SUCCESS;
}

/* ---- the file view ----------------------------------------------------------*/

static int load_view(struct cw_file *f, MPI_File fh)
{
    struct cw_view *v = &f->view;
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    int rc = NEXT(PMPI_File_get_view)(fh, &disp, &etype, &ftype, rep);
    if (rc != MPI_SUCCESS)
        return rc;
    free_view(v);
    v->valid = 1;
    v->native = strcmp(rep, "native") == 0;
    v->disp = disp;
    int esize = 0;
    NEXT(PMPI_Type_size)(etype, &esize);
    v->etype_size = esize;
    const struct pario_flat *flat = NULL;
    if (v->native && esize > 0 && pario_flatten(ftype, CW_MAX_PIECES, &flat) == MPI_SUCCESS &&
        pario_flat_count(flat, 1, CW_MAX_PIECES, &v->ft) == MPI_SUCCESS && v->ft.size > 0) {
        v->prefix = malloc((size_t)(v->ft.nseg + 1) * sizeof *v->prefix);
        v->usable = v->prefix != NULL;
        int64_t reach = INT64_MIN;
        for (int64_t i = 0; v->usable && i < v->ft.nseg; i++) {
            /* MPI: a filetype's displacements are non-negative and
             * monotonically non-decreasing; tiles must not overlap */
            if (v->ft.off[i] < 0 || v->ft.off[i] < reach)
                v->usable = 0;
            reach = v->ft.off[i] + v->ft.len[i];
            v->prefix[i] = i ? v->prefix[i - 1] + v->ft.len[i - 1] : 0;
        }
        if (v->usable) {
            v->prefix[v->ft.nseg] = v->ft.size;
            if (v->ft.nseg > 0 && reach - v->ft.off[0] > v->ft.extent)
                v->usable = 0;
        }
    }
    int comb, ni, na, nd;
    if (NEXT(PMPI_Type_get_envelope)(etype, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        NEXT(PMPI_Type_free)(&etype);
    if (NEXT(PMPI_Type_get_envelope)(ftype, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        NEXT(PMPI_Type_free)(&ftype);
    return MPI_SUCCESS;
}

/* The file pieces of data bytes [p0, p0 + nbytes) of the view, merged. */
static int view_pieces(const struct cw_view *v, int64_t p0, int64_t nbytes, struct cw_piece **out, int64_t *n)
{
    const struct pario_flat *ft = &v->ft;
    *out = NULL;
    *n = 0;
    if (nbytes == 0)
        return 0;
    if (ft->nseg == 1 && ft->len[0] == ft->extent) { /* contiguous view */
        struct cw_piece *p = malloc(sizeof *p);
        if (!p)
            return -1;
        int64_t t = p0 / ft->size, r = p0 % ft->size;
        *p = (struct cw_piece){v->disp + t * ft->extent + ft->off[0] + r, nbytes, 0};
        *out = p;
        *n = 1;
        return 0;
    }
    /* count first, bounded */
    int64_t t = p0 / ft->size, r = p0 % ft->size;
    int64_t lo = cw_segment_at(v->prefix, ft->nseg, r);
    int64_t cap = 16, cnt = 0, left = nbytes, j = lo, skip = r - v->prefix[lo], pos = 0;
    struct cw_piece *p = malloc((size_t)cap * sizeof *p);
    if (!p)
        return -1;
    while (left > 0) {
        int64_t off = v->disp + t * ft->extent + ft->off[j] + skip;
        int64_t len = ft->len[j] - skip < left ? ft->len[j] - skip : left;
        if (cnt > 0 && p[cnt - 1].off + p[cnt - 1].len == off) {
            p[cnt - 1].len += len;
        } else {
            if (cnt == CW_MAX_PIECES) {
                free(p);
                return -1;
            }
            if (cnt == cap) {
                cap = cap * 2 > CW_MAX_PIECES ? CW_MAX_PIECES : cap * 2;
                struct cw_piece *q = realloc(p, (size_t)cap * sizeof *q);
                if (!q) {
                    free(p);
                    return -1;
                }
                p = q;
            }
            p[cnt++] = (struct cw_piece){off, len, pos};
        }
        pos += len;
        left -= len;
        skip = 0;
        if (++j == ft->nseg) {
            j = 0;
            t++;
        }
    }
    *out = p;
    *n = cnt;
    return 0;
}

/* ---- the call ---------------------------------------------------------------*/

static void free_ctx(struct cw_ctx *call)
{
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        if (call->cycles[i].c >= 0)
            cw_cycle_release(&call->cycles[i]);
    free(call->mine);
    free(call->my_first);
    free(call->my_cur);
    free(call->my_skip);
    pario_flat_free(&call->mem);
    free(call->mpos);
    free(call->fd_hi);
    free(call->agg_start);
    free(call->agg_end);
    free(call->peer_pieces);
    free(call->peer_first);
    free(call->peer_cur);
    free(call->peer_skip);
    free(call->written);
}

/* The caller's data: contiguous (call->mbase) or its segments with stream positions. */
static int memory_layout(struct cw_ctx *call, const void *buf, int count, MPI_Datatype type)
{
    const struct pario_flat *m;
    call->buf = buf;
    if (count == 0)
        return 0;
    if (pario_flatten(type, CW_MAX_PIECES, &m) != MPI_SUCCESS)
        return -1;
    if (m->nseg == 1 && (count == 1 || m->len[0] == m->extent)) {
        call->mbase = (const char *)buf + m->off[0];
        return 0;
    }
    if (pario_flat_count(m, count, CW_MAX_PIECES, &call->mem) != MPI_SUCCESS)
        return -1;
    if (call->mem.nseg == 1) {
        call->mbase = (const char *)buf + call->mem.off[0];
        return 0;
    }
    call->mpos = malloc((size_t)(call->mem.nseg + 1) * sizeof *call->mpos);
    if (!call->mpos)
        return -1;
    call->mpos[0] = 0;
    for (int64_t i = 0; i < call->mem.nseg; i++)
        call->mpos[i + 1] = call->mpos[i] + call->mem.len[i];
    return 0;
}

/* Domains: [min, max) split in naggs, boundaries on striping_unit multiples. */
static int file_domains(struct cw_ctx *call, int64_t min_st, int64_t max_end)
{
    int na = call->f->naggs;
    call->fd_hi = malloc((size_t)na * sizeof *call->fd_hi);
    if (!call->fd_hi)
        return -1;
    int64_t span = max_end - min_st, size = (span + na - 1) / na;
    /* the stripe (hint, or what the MPI library reports on Lustre/GPFS), else the block
     * size: no two aggregators write into one stripe or file-system block */
    int64_t su = call->f->hints.striping_unit > 0 ? call->f->hints.striping_unit : call->f->fs_block;
    int64_t base = min_st;
    if (su > 0) {
        size = (size + su - 1) / su * su;
        base = min_st / su * su;
    }
    for (int a = 0; a < na; a++) {
        int64_t hi = base + (a + 1) * size; /* domain a ends here, the next starts here */
        call->fd_hi[a] = hi > max_end ? max_end : (hi < min_st ? min_st : hi);
    }
    call->fd_hi[na - 1] = max_end;
    return 0;
}

/* Split my pieces at the domain boundaries; my_first[a] indexes them. */
static int split_at_domains(struct cw_ctx *call)
{
    int na = call->f->naggs;
    call->my_first = calloc((size_t)na + 1, sizeof *call->my_first);
    call->my_cur = calloc((size_t)na, sizeof *call->my_cur);
    call->my_skip = calloc((size_t)na, sizeof *call->my_skip);
    if (!call->my_first || !call->my_cur || !call->my_skip)
        return -1;
    int64_t extra = 0;
    for (int64_t i = 0, a = 0; i < call->nmine; i++) {
        int64_t end = call->mine[i].off + call->mine[i].len;
        while (a < na - 1 && call->fd_hi[a] <= call->mine[i].off)
            a++;
        for (int64_t b = a; b < na - 1 && call->fd_hi[b] < end; b++)
            extra++;
    }
    struct cw_piece *out = malloc((size_t)(call->nmine + extra + 1) * sizeof *out);
    if (!out)
        return -1;
    int64_t n = 0;
    int a = 0;
    for (int64_t i = 0; i < call->nmine; i++) {
        struct cw_piece p = call->mine[i];
        while (p.len > 0) {
            while (a < na - 1 && call->fd_hi[a] <= p.off)
                call->my_first[++a] = n;
            int64_t cut = a < na - 1 && p.off + p.len > call->fd_hi[a] ? call->fd_hi[a] - p.off : p.len;
            out[n++] = (struct cw_piece){p.off, cut, p.pos};
            p.off += cut;
            p.pos += cut;
            p.len -= cut;
        }
    }
    while (a < na)
        call->my_first[++a] = n;
    free(call->mine);
    call->mine = out;
    call->nmine = n;
    return 0;
}

/* Alltoall of counts, alltoallv of (offset, length) to the aggregators; the
 * aggregators' data ranges, then everyone learns them (allgather). */
static int exchange_requests(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int np = f->nprocs, na = f->naggs, rc;
    int *scnt = calloc((size_t)np, sizeof *scnt), *sdsp = calloc((size_t)np, sizeof *sdsp);
    int *rcnt = calloc((size_t)np, sizeof *rcnt), *rdsp = calloc((size_t)np, sizeof *rdsp);
    int64_t *sbuf = malloc((size_t)(2 * call->nmine + 1) * sizeof *sbuf);
    int64_t *rbuf = NULL, ranges[2] = {0, 0}, *all = malloc((size_t)np * 2 * sizeof *all);
    MPI_Datatype pair = MPI_DATATYPE_NULL;
    rc = MPI_ERR_NO_MEM;
    if (!scnt || !sdsp || !rcnt || !rdsp || !sbuf || !all)
        goto out;
    for (int a = 0; a < na; a++) {
        scnt[f->aggs[a]] = (int)(call->my_first[a + 1] - call->my_first[a]);
        sdsp[f->aggs[a]] = (int)call->my_first[a];
    }
    for (int64_t i = 0; i < call->nmine; i++) {
        sbuf[2 * i] = call->mine[i].off;
        sbuf[2 * i + 1] = call->mine[i].len;
    }
    if ((rc = NEXT(PMPI_Alltoall)(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, f->comm)) != MPI_SUCCESS)
        goto out;
    int64_t total = 0;
    for (int r = 0; r < np; r++) {
        rdsp[r] = (int)total;
        total += rcnt[r];
    }
    rc = MPI_ERR_NO_MEM;
    rbuf = malloc((size_t)(2 * total + 1) * sizeof *rbuf);
    call->peer_pieces = malloc((size_t)(total + 1) * sizeof *call->peer_pieces);
    call->peer_first = calloc((size_t)np + 1, sizeof *call->peer_first);
    call->peer_cur = calloc((size_t)np, sizeof *call->peer_cur);
    call->peer_skip = calloc((size_t)np, sizeof *call->peer_skip);
    if (!rbuf || !call->peer_pieces || !call->peer_first || !call->peer_cur || !call->peer_skip)
        goto out;
    if ((rc = NEXT(PMPI_Type_contiguous)(2, MPI_INT64_T, &pair)) != MPI_SUCCESS || (rc = NEXT(PMPI_Type_commit)(&pair)) != MPI_SUCCESS)
        goto out;
    if ((rc = NEXT(PMPI_Alltoallv)(sbuf, scnt, sdsp, pair, rbuf, rcnt, rdsp, pair, f->comm)) != MPI_SUCCESS)
        goto out;
    int64_t st = INT64_MAX, end = 0;
    for (int r = 0; r < np; r++) {
        call->peer_first[r + 1] = call->peer_first[r] + rcnt[r];
        call->peer_cur[r] = call->peer_first[r];
    }
    for (int64_t i = 0; i < total; i++) {
        call->peer_pieces[i] = (struct cw_piece){rbuf[2 * i], rbuf[2 * i + 1], 0};
        if (rbuf[2 * i] < st)
            st = rbuf[2 * i];
        if (rbuf[2 * i] + rbuf[2 * i + 1] > end)
            end = rbuf[2 * i] + rbuf[2 * i + 1];
    }
    if (total > 0) {
        ranges[0] = st;
        ranges[1] = end;
    }
    if ((rc = NEXT(PMPI_Allgather)(ranges, 2, MPI_INT64_T, all, 2, MPI_INT64_T, f->comm)) != MPI_SUCCESS)
        goto out;
    rc = MPI_ERR_NO_MEM;
    call->agg_start = malloc((size_t)na * sizeof *call->agg_start);
    call->agg_end = malloc((size_t)na * sizeof *call->agg_end);
    if (!call->agg_start || !call->agg_end)
        goto out;
    for (int a = 0; a < na; a++) {
        call->agg_start[a] = all[2 * f->aggs[a]];
        call->agg_end[a] = all[2 * f->aggs[a] + 1];
    }
    for (int a = 0; a < na; a++)
        call->my_cur[a] = call->my_first[a];
    rc = MPI_SUCCESS;
out:
    if (pair != MPI_DATATYPE_NULL)
        NEXT(PMPI_Type_free)(&pair);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(sbuf);
    free(rbuf);
    free(all);
    return rc;
}

static int64_t count_cycles(const struct cw_ctx *call, int64_t buf_bytes)
{
    int64_t n = 0;
    for (int a = 0; a < call->f->naggs; a++) {
        int64_t span = call->agg_end[a] - call->agg_start[a];
        int64_t c = span > 0 ? (span + buf_bytes - 1) / buf_bytes : 0;
        if (c > n)
            n = c;
    }
    return n;
}

/* The shape of each algorithm's schedule. */
static void set_schedule(struct cw_ctx *call, int alg)
{
    static const struct { int nbuf, depth, nwriters; } shapes[] = {
        [CW_NONE] = {1, 1, 0},       [CW_COMM] = {2, 2, 0},       [CW_WRITE] = {2, 1, 1},
        [CW_WRITE_COMM] = {2, 2, 1}, [CW_WRITE_COMM_2] = {4, 2, 2},
    };
    call->algorithm = alg;
    call->nbuf = shapes[alg].nbuf;
    call->depth = shapes[alg].depth;
    call->nwriters = shapes[alg].nwriters;
    call->buf_bytes = call->f->hints.cb_buffer_size / call->nbuf;
    if (call->buf_bytes < 1)
        call->buf_bytes = 1;
    call->ncycles = call->agg_start ? count_cycles(call, call->buf_bytes) : 0;
}

/* ---- auto: the variant of each call, from the file's earlier calls --------
 *
 * Calls of a file fall in two classes: one buffer cycle (nothing to overlap:
 * only the shuffle matters) and several.  Each class has a list of candidate
 * variants.  The first is the static choice, fitted on the 16-core bench runs
 * of docs/performance.md ("auto's static choice and aggregators"): for
 * several cycles write:rma-lock, the best geometric mean over the kernels;
 * for one cycle none:p2p (an RMA window is not worth creating for one cycle).
 * A shuffle named by the hints or PARIO_COLL replaces the static choice's.
 * The other candidates are the variants that were fastest in some
 * configuration of those runs, and no others: each try of a slower one costs
 * a call.  The first call of a class runs the static choice.  Later calls run
 * the best measured so far, except that a call tries a candidate not yet
 * measured (or, every AUTO_RECHECK calls, the runner-up again) when the time
 * such tries cost beyond the best stays within AUTO_EXPLORE_SHARE of the
 * class's time, counting the try as if it took twice the best's time: a file
 * written a few times runs the static choice only.  The cost of a call is the
 * slowest rank's time per byte of the call's file range, and every rank sees
 * the same slowest time (the allreduce that ends the call), so all ranks make
 * the same choices without a message of their own. */

#define AUTO_EXPLORE_SHARE 0.1
#define AUTO_RECHECK 16

struct cw_variant {
    int algorithm, shuffle;
};

static const struct cw_variant many_cycles[] = {
    {CW_WRITE, CW_RMA_LOCK}, {CW_COMM, CW_RMA_LOCK}, {CW_WRITE_COMM, CW_RMA_LOCK}, {CW_NONE, CW_RMA_LOCK}};
static const struct cw_variant one_cycle[] = {{CW_NONE, CW_P2P}, {CW_NONE, CW_RMA_LOCK}, {CW_NONE, CW_RMA_FENCE}};

/* The candidates of a class, the static choice first; returns how many. */
static int candidates(const struct cw_file *f, int cls, struct cw_variant *out)
{
    const struct cw_variant *list = cls ? many_cycles : one_cycle;
    int n = cls ? (int)(sizeof many_cycles / sizeof *many_cycles) : (int)(sizeof one_cycle / sizeof *one_cycle);
    struct cw_variant first = list[0];
    if (f->hints.shuffle)
        first.shuffle = f->hints.shuffle;
    int k = 0;
    out[k++] = first;
    for (int i = 0; i < n && k < CW_AUTO_MAX_CANDIDATES; i++)
        if (list[i].algorithm != first.algorithm || list[i].shuffle != first.shuffle)
            out[k++] = list[i];
    return k;
}

/* The candidate this call runs, and whether it runs to be measured. */
static int auto_choose(const struct cw_auto *a, int n, int64_t span, int *explore)
{
    *explore = 0;
    if (a->best < 0)
        return 0;
    double est = a->v[a->best].cost * (double)span; /* what the best would take */
    if (a->excess_ns + est > AUTO_EXPLORE_SHARE * (a->total_ns + est))
        return a->best;
    for (int i = 0; i < n; i++)
        if (a->v[i].calls == 0) {
            *explore = 1;
            return i;
        }
    if (a->calls - a->last_try < AUTO_RECHECK)
        return a->best;
    int runner = -1;
    for (int i = 0; i < n; i++)
        if (i != a->best && (runner < 0 || a->v[i].cost < a->v[runner].cost))
            runner = i;
    if (runner < 0)
        return a->best;
    *explore = 1;
    return runner;
}

/* The file's auto state for calls of this class, taken over from the least
 * recently used class when the file has no room left. */
static int auto_class_of(struct cw_file *f, int cycles, int size_log2)
{
    int slot = 0;
    for (int i = 0; i < CW_AUTO_CLASSES; i++) {
        struct cw_auto *a = &f->autos[i];
        if (a->used && a->cycles == cycles && a->size_log2 == size_log2)
            return i;
        if (!a->used || (f->autos[slot].used && a->last_call < f->autos[slot].last_call))
            slot = i;
    }
    struct cw_auto *a = &f->autos[slot];
    memset(a, 0, sizeof *a);
    a->used = 1;
    a->cycles = cycles;
    a->size_log2 = size_log2;
    a->best = -1;
    return slot;
}

static void auto_pick(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int cycles = count_cycles(call, f->hints.cb_buffer_size) > 1, size_log2 = 0;
    for (int64_t s = call->span; s > 1; s >>= 1)
        size_log2++;
    int c = auto_class_of(f, cycles, size_log2), explore = 0;
    struct cw_auto *a = &f->autos[c];
    a->last_call = f->auto_calls++;
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    int i = auto_choose(a, candidates(f, cycles, list), call->span, &explore);
    struct cw_variant v = list[i];
    call->auto_class = c;
    call->auto_candidate = i;
    call->auto_explored = explore;
    call->shuffle = v.shuffle;
    set_schedule(call, v.algorithm);
}

/* After the call: its slowest rank's time, on every rank. */
static void auto_learn(struct cw_file *f, const struct cw_ctx *call, uint64_t t_call)
{
    if (call->auto_class < 0 || call->span <= 0)
        return;
    struct cw_auto *a = &f->autos[call->auto_class];
    int i = call->auto_candidate;
    double cost = (double)t_call / (double)call->span;
    if (call->auto_explored) {
        double over = (double)t_call - a->v[a->best].cost * (double)call->span;
        a->excess_ns += over > 0 ? over : 0;
        a->last_try = a->calls;
    }
    a->v[i].cost = a->v[i].calls ? 0.5 * a->v[i].cost + 0.5 * cost : cost;
    a->v[i].calls++;
    a->v[i].last = a->calls;
    a->calls++;
    a->total_ns += (double)t_call;
    int best = -1;
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    int n = candidates(f, a->cycles, list);
    for (int j = 0; j < n; j++)
        if (a->v[j].calls && (best < 0 || a->v[j].cost < a->v[best].cost))
            best = j;
    a->best = best;
}

/* auto's best variant of the class of this call, as the log keeps it. */
static int auto_kept(const struct cw_file *f, const struct cw_ctx *call)
{
    if (call->auto_class < 0 || f->autos[call->auto_class].best < 0)
        return 0;
    const struct cw_auto *a = &f->autos[call->auto_class];
    struct cw_variant list[CW_AUTO_MAX_CANDIDATES];
    candidates(f, a->cycles, list);
    return cw_variant_code(list[a->best].algorithm, list[a->best].shuffle);
}

/* The aggregator's buffers: in the RMA window, or malloc'd for p2p. */
static int cycle_buffers(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    int64_t bytes = call->buf_bytes * call->nbuf;
    if (call->shuffle != CW_P2P) {
        if (f->win == MPI_WIN_NULL && f->buf) {
            free(f->buf);
            f->buf = NULL;
            f->buf_size = 0;
        }
        return cw_window_for(call, bytes);
    }
    if (f->win != MPI_WIN_NULL) { /* left by an RMA call: every rank decides alike */
        if (f->win_size >= bytes)
            return MPI_SUCCESS;
        free_buffers(f);
    }
    if (f->my_agg < 0 || f->buf_size >= bytes)
        return MPI_SUCCESS;
    free(f->buf);
    f->buf = malloc((size_t)bytes);
    f->buf_size = f->buf ? bytes : 0;
    return f->buf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static struct cw_cycle *slot_of(struct cw_ctx *call, int64_t c) { return &call->cycles[c % call->nbuf]; }

/* Wait until cycle cy's write is done (the buffer is free), moving the
 * shuffles in flight meanwhile. */
static void wait_write(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (atomic_load_explicit(&cy->write_state, memory_order_acquire) != 1)
        return;
    uint64_t t0 = cw_now();
    while (atomic_load_explicit(&cy->write_state, memory_order_acquire) == 1) {
        for (int i = 0; i < call->nbuf; i++) {
            struct cw_cycle *o = &call->cycles[i];
            int done;
            if (o->c >= 0 && !o->shuffled && call->shuffle != CW_RMA_FENCE)
                cw_cycle_test(call, o, &done);
        }
        sched_yield();
    }
    call->t_wait += cw_now() - t0;
}

static void finish_cycle(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (cy->c < 0)
        return;
    wait_write(call, cy);
    if (cy->write_err && !call->err)
        call->err = cy->write_err;
    cw_cycle_release(cy);
}

/* Claim the slot of cycle c (its buffer free) and prepare it. */
static int start_cycle(struct cw_ctx *call, int64_t c)
{
    struct cw_cycle *cy = slot_of(call, c);
    finish_cycle(call, cy);
    cy->c = c;
    cy->slot = (int)(c % call->nbuf);
    cy->bufp = call->f->buf ? call->f->buf + (int64_t)cy->slot * call->buf_bytes : NULL;
    return cw_cycle_prepare(call, cy);
}

static void write_cycle(struct cw_ctx *call, struct cw_cycle *cy)
{
    if (call->f->my_agg < 0 || !cy->has_data || call->err) {
        atomic_store(&cy->write_state, 2); /* after an error: keep shuffling, write nothing */
        return;
    }
    if (call->writer)
        cw_writer_submit(call->writer, call, cy);
    else
        cw_write_cycle(call, cy);
}

/* p2p and rma-lock: messages, in cycle order, 'depth' shuffles in flight. */
static int run_messages(struct cw_ctx *call)
{
    int64_t posted = 0;
    int rc = MPI_SUCCESS;
    for (int64_t c = 0; c < call->ncycles && rc == MPI_SUCCESS; c++) {
        while (posted < call->ncycles && posted < c + call->depth && rc == MPI_SUCCESS) {
            rc = start_cycle(call, posted);
            if (rc == MPI_SUCCESS)
                rc = cw_cycle_post(call, slot_of(call, posted));
            posted++;
        }
        struct cw_cycle *cy = slot_of(call, c);
        int done = 0;
        uint64_t t0 = cw_now();
        while (rc == MPI_SUCCESS && !done) {
            rc = cw_cycle_test(call, cy, &done);
            if (!done)
                sched_yield(); /* 2 cores, many ranks: let the writers and peers run */
        }
        call->t_shuffle += cw_now() - t0; /* waiting for the peers is the shuffle's time */
        if (rc == MPI_SUCCESS)
            write_cycle(call, cy);
    }
    return rc;
}

/* rma-fence: one fence per cycle closes its epoch and opens the next's;
 * with one buffer (none) the write sits between two fences. */
static int run_fences(struct cw_ctx *call)
{
    MPI_Win win = call->f->win;
    int rc = MPI_SUCCESS;
    if (call->ncycles == 0)
        return MPI_SUCCESS;
    rc = start_cycle(call, 0);
    uint64_t t0 = cw_now();
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOPRECEDE, win);
    call->t_shuffle += cw_now() - t0;
    if (rc == MPI_SUCCESS)
        rc = cw_cycle_puts(call, slot_of(call, 0));
    for (int64_t c = 0; c < call->ncycles && rc == MPI_SUCCESS; c++) {
        struct cw_cycle *cy = slot_of(call, c);
        int more = c + 1 < call->ncycles;
        if (call->nbuf == 1) {
            t0 = cw_now();
            rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOSUCCEED, win);
            call->t_shuffle += cw_now() - t0;
            cy->shuffled = 1;
            write_cycle(call, cy);
            if (more && rc == MPI_SUCCESS) {
                rc = start_cycle(call, c + 1);
                t0 = cw_now();
                if (rc == MPI_SUCCESS)
                    rc = NEXT(PMPI_Win_fence)(MPI_MODE_NOPRECEDE, win);
                call->t_shuffle += cw_now() - t0;
                if (rc == MPI_SUCCESS)
                    rc = cw_cycle_puts(call, slot_of(call, c + 1));
            }
            continue;
        }
        if (more)
            rc = start_cycle(call, c + 1); /* buffer free and holes read before the epoch opens */
        t0 = cw_now();
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Win_fence)(more ? 0 : MPI_MODE_NOSUCCEED, win);
        call->t_shuffle += cw_now() - t0;
        cy->shuffled = 1;
        if (more && rc == MPI_SUCCESS)
            rc = cw_cycle_puts(call, slot_of(call, c + 1));
        write_cycle(call, cy);
    }
    return rc;
}

/* errno of a failed read/write -> MPI error class, as ROMIO maps them. */
static int error_class(int err)
{
    switch (err) {
    case 0:
        return MPI_SUCCESS;
    case ENOSPC:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EBADF:
        return MPI_ERR_FILE;
    default:
        return MPI_ERR_IO;
    }
}

/* Local reasons to give the call to the MPI library (alike on every rank). */
static enum cw_fallback file_fallback(struct cw_file *f, MPI_File fh)
{
    int atomic = 0;
    if (NEXT(PMPI_File_get_atomicity)(fh, &atomic) != MPI_SUCCESS)
        return CW_FB_OTHER;
    if (atomic)
        return CW_FB_ATOMIC;
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return CW_FB_SEQUENTIAL;
    if (f->amode & MPI_MODE_RDONLY)
        return CW_FB_OTHER; /* the MPI library reports the error */
    if (!f->view.native)
        return CW_FB_DATAREP;
    return CW_FB_NONE;
}

/* auto, as ROMIO's romio_cb_write=automatic: when every rank's bytes are
 * one contiguous range of the file and of memory, and no two ranks' ranges
 * interleave, two-phase would only add a copy: each rank writes its own.
 * A rank that can writes before the allgather, which then carries its
 * result: one collective per call, as ROMIO's independent path.  If another
 * rank cannot (two-phase or the MPI library then writes everything), the
 * same bytes are written again: correct, and the rare case.  Two single
 * ranges that overlap are writes to the same bytes, which MPI leaves
 * undefined outside atomic mode. */
static int direct_capable(struct cw_ctx *call)
{
    struct cw_file *f = call->f;
    if (call->nmine == 0)
        return 1;
    if (call->nmine > 1 || !call->mbase)
        return 0;
    if (f->fd < 0 && !f->fd_failed) {
        f->fd = open(f->path, O_RDWR | O_CLOEXEC);
        f->fd_failed = f->fd < 0;
    }
    return f->fd >= 0;
}

static int cmp_range(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

/* Do the ranks' [first, last) ranges (the first two of 'stride' values a
 * rank in all[]) overlap? */
static int interleaved(const int64_t *all, int stride, int np)
{
    int64_t *r = malloc((size_t)np * 2 * sizeof *r);
    if (!r)
        return 1;
    int n = 0;
    for (int i = 0; i < np; i++)
        if (all[stride * i + 1] > all[stride * i]) {
            r[2 * n] = all[stride * i];
            r[2 * n + 1] = all[stride * i + 1];
            n++;
        }
    qsort(r, (size_t)n, 2 * sizeof *r, cmp_range);
    int over = 0;
    for (int i = 1; i < n && !over; i++)
        over = r[2 * i] < r[2 * i - 1];
    free(r);
    return over;
}

/* The file ranges of the ranks that wrote their own bytes (all[] as the
 * allgather left it), sorted and merged, for the aggregators to skip. */
static int written_ranges(struct cw_ctx *call, const int64_t *all)
{
    int np = call->f->nprocs, n = 0;
    int64_t *r = malloc((size_t)np * 2 * sizeof *r);
    if (!r)
        return -1;
    for (int i = 0; i < np; i++)
        if (all[5 * i + 3] && all[5 * i + 1] > all[5 * i]) {
            r[2 * n] = all[5 * i];
            r[2 * n + 1] = all[5 * i + 1];
            n++;
        }
    qsort(r, (size_t)n, 2 * sizeof *r, cmp_range);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && r[2 * i] <= r[2 * m - 1]) {
            if (r[2 * i + 1] > r[2 * m - 1])
                r[2 * m - 1] = r[2 * i + 1];
        } else {
            r[2 * m] = r[2 * i];
            r[2 * m + 1] = r[2 * i + 1];
            m++;
        }
    }
    call->written = r;
    call->nwritten = m;
    return 0;
}

static void write_direct(struct cw_ctx *call)
{
    if (call->nmine == 0)
        return;
    uint64_t t0 = cw_now();
    call->err = cw_pwrite_all(call->f->fd, call->mbase, call->mine[0].len, call->mine[0].off);
    atomic_fetch_add(&call->t_write, cw_now() - t0);
}

static int run_call(struct cw_ctx *call, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
                    int count, MPI_Datatype type, int64_t *bytes_out, struct cw_stats *stats)
{
    struct cw_file *f = call->f;
    int rc;
    uint64_t t0 = cw_now();
    int tsize = 0;
    NEXT(PMPI_Type_size)(type, &tsize);
    int64_t bytes = count > 0 ? (int64_t)count * tsize : 0;
    *bytes_out = bytes;
    /* where the data starts in the view, in bytes of data */
    MPI_Offset pos = offset;
    if (!explicit_offset && NEXT(PMPI_File_get_position)(fh, &pos) != MPI_SUCCESS)
        pos = -1;
    /* what this rank can do: 0 fine, else a reason (the worst one wins) */
    int reason = CW_FB_NONE;
    if (!f->view.usable)
        reason = CW_FB_DATATYPE;
    else if (count < 0 || pos < 0 || bytes % f->view.etype_size != 0)
        reason = CW_FB_OTHER; /* the MPI library reports the error */
    else if (memory_layout(call, buf, count, type) != 0 ||
             view_pieces(&f->view, pos * f->view.etype_size, bytes, &call->mine, &call->nmine) != 0)
        reason = CW_FB_DATATYPE;
    if (reason == CW_FB_NONE && f->my_agg >= 0 && f->fd < 0 && !f->fd_failed) {
        f->fd = open(f->path, O_RDWR | O_CLOEXEC);
        if (f->fd < 0)
            f->fd_failed = 1;
    }
    if (f->my_agg >= 0 && f->fd < 0 && reason == CW_FB_NONE)
        reason = CW_FB_OTHER;
    int direct_ok = reason == CW_FB_NONE && f->hints.algorithm == CW_AUTO && direct_capable(call);
    if (direct_ok)
        write_direct(call);
    /* extents, agreement and the direct writes' results in one allgather */
    int wrote = direct_ok && !call->err; /* this rank's bytes are in the file */
    int64_t mine[5] = {INT64_MAX, 0, reason, wrote, error_class(call->err)};
    int64_t *all = malloc((size_t)f->nprocs * 5 * sizeof *all);
    if (!all)
        return MPI_ERR_NO_MEM;
    if (call->nmine > 0) {
        mine[0] = call->mine[0].off;
        mine[1] = call->mine[call->nmine - 1].off + call->mine[call->nmine - 1].len;
    }
    rc = NEXT(PMPI_Allgather)(mine, 5, MPI_INT64_T, all, 5, MPI_INT64_T, f->comm);
    /* the file range of the call, and of the ranks that still have bytes to write */
    int64_t min_st = INT64_MAX, max_end = 0, left_st = INT64_MAX, left_end = 0;
    int64_t worst = 0, direct = 1, direct_rc = MPI_SUCCESS;
    for (int r = 0; rc == MPI_SUCCESS && r < f->nprocs; r++) {
        const int64_t *a = all + 5 * r;
        min_st = a[0] < min_st ? a[0] : min_st;
        max_end = a[1] > max_end ? a[1] : max_end;
        if (!a[3]) {
            left_st = a[0] < left_st ? a[0] : left_st;
            left_end = a[1] > left_end ? a[1] : left_end;
        }
        worst = a[2] > worst ? a[2] : worst;
        direct &= a[3];
        direct_rc = a[4] > direct_rc ? a[4] : direct_rc;
    }
    int all_direct = (int)direct;
    if (rc == MPI_SUCCESS && direct)
        direct = !interleaved(all, 5, f->nprocs);
    if (rc == MPI_SUCCESS && !all_direct && worst == CW_FB_NONE && written_ranges(call, all) != 0)
        rc = MPI_ERR_NO_MEM;
    free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    call->span = max_end > min_st ? max_end - min_st : 0;
    /* What a rank wrote itself stays written once: with ranks that cannot,
     * it gives the MPI library or the two-phase write none of its bytes (the
     * aggregators read them back as holes, after this allgather). */
    if (wrote && !all_direct)
        call->direct_bytes = bytes;
    if (worst != CW_FB_NONE) {
        stats->reason = (enum cw_fallback)worst;
        stats->direct_bytes = call->direct_bytes;
        return MPI_SUCCESS; /* served stays 0: the MPI library writes */
    }
    if (!all_direct) {
        if (wrote)
            call->nmine = 0;
        min_st = left_st;
        max_end = left_end;
    }
    stats->served = 1;
    call->t_setup = cw_now() - t0 - atomic_load(&call->t_write); /* a direct write is write time */
    if (direct) {
        call->algorithm = CW_DIRECT;
        call->ncycles = 0;
        call->agreed = 1;
        call->agreed_rc = (int)direct_rc;
        return MPI_SUCCESS;
    }
    if (max_end <= min_st) { /* nobody writes anything (under auto, direct took it) */
        set_schedule(call, f->hints.algorithm);
        return MPI_SUCCESS;
    }
    if (file_domains(call, min_st, max_end) != 0 || split_at_domains(call) != 0)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = exchange_requests(call);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->hints.algorithm == CW_AUTO)
        auto_pick(call);
    else
        set_schedule(call, f->hints.algorithm);
    rc = cycle_buffers(call);
    call->t_setup = cw_now() - t0;
    if (rc != MPI_SUCCESS)
        return rc;
    if (call->nwriters > 0 && f->my_agg >= 0 && call->ncycles > 1) {
        /* the threads live as long as the file: a call does not pay their start */
        if (f->writer && f->nwriters < call->nwriters) {
            cw_writer_stop(f->writer);
            f->writer = NULL;
        }
        if (!f->writer && (f->writer = cw_writer_start(call->nwriters)) != NULL)
            f->nwriters = call->nwriters;
        call->writer = f->writer;
    }
    rc = call->shuffle == CW_RMA_FENCE ? run_fences(call) : run_messages(call);
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        finish_cycle(call, &call->cycles[i]);
    return rc;
}

void cw_direct_done(struct cw_file *f, MPI_File fh, int explicit_offset, int64_t bytes, MPI_Status *status)
{
    if (!explicit_offset && bytes > 0) {
        MPI_Offset pos;
        NEXT(PMPI_File_get_position)(fh, &pos);
        NEXT(PMPI_File_seek)(fh, pos + bytes / f->view.etype_size, MPI_SEEK_SET);
    }
    if (status != MPI_STATUS_IGNORE && status != NULL)
        NEXT(PMPI_Status_set_elements_x)(status, MPI_BYTE, (MPI_Count)bytes);
}

int cw_write(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
             int count, MPI_Datatype type, MPI_Status *status, struct cw_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->comm_rank = f->rank;
    stats->auto_class = -1;
    if (f->hints.algorithm == CW_OFF)
        return MPI_SUCCESS;
    uint64_t t_start = cw_now();
    if (!f->view.valid && load_view(f, fh) != MPI_SUCCESS) {
        stats->reason = CW_FB_OTHER;
        return MPI_SUCCESS;
    }
    enum cw_fallback fb = file_fallback(f, fh);
    if (fb != CW_FB_NONE) {
        stats->reason = fb;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    if (!f->aggs_valid)
        rc = choose_aggregators(f);
    if (rc != MPI_SUCCESS) {
        stats->reason = CW_FB_OTHER;
        return MPI_SUCCESS;
    }
    struct cw_ctx call;
    memset(&call, 0, sizeof call);
    call.f = f;
    call.shuffle = f->hints.shuffle ? f->hints.shuffle : CW_P2P;
    call.auto_class = -1;
    for (int i = 0; i < CW_MAX_SLOTS; i++)
        call.cycles[i].c = -1;
    int64_t bytes = 0;
    rc = run_call(&call, fh, explicit_offset, offset, buf, count, type, &bytes, stats);
    if (stats->served) {
        /* every rank returns the same result, the worst error anywhere, and
         * learns the slowest rank's time (auto compares variants by it) */
        int64_t mine[2] = {rc != MPI_SUCCESS ? rc : error_class(call.err), (int64_t)(cw_now() - t_start)};
        int64_t worst[2] = {mine[0], mine[1]};
        if (call.agreed)
            worst[0] = call.agreed_rc; /* the allgather carried every rank's result */
        else if (NEXT(PMPI_Allreduce)(mine, worst, 2, MPI_INT64_T, MPI_MAX, f->comm) != MPI_SUCCESS)
            worst[0] = mine[0] != MPI_SUCCESS ? mine[0] : MPI_ERR_OTHER;
        rc = (int)worst[0];
        if (!call.agreed) {
            stats->t_call = (uint64_t)worst[1];
            auto_learn(f, &call, (uint64_t)worst[1]);
        }
        stats->algorithm = call.algorithm;
        stats->shuffle = call.shuffle;
        stats->cycles = call.ncycles;
        stats->aggregators = f->naggs;
        stats->t_setup = call.t_setup;
        stats->t_shuffle = call.t_shuffle;
        stats->t_write = atomic_load(&call.t_write);
        stats->t_wait = call.t_wait;
        stats->auto_explored = call.auto_explored;
        stats->auto_class = call.auto_class < 0 ? -1 : f->autos[call.auto_class].cycles;
        stats->auto_kept = auto_kept(f, &call);
        if (rc == MPI_SUCCESS)
            cw_direct_done(f, fh, explicit_offset, bytes, status);
    }
    free_ctx(&call);
    return rc;
}

int cw_write_begin(struct cw_file *f, MPI_File fh, int explicit_offset, MPI_Offset offset, const void *buf,
                   int count, MPI_Datatype type, struct cw_stats *stats)
{
    int rc = cw_write(f, fh, explicit_offset, offset, buf, count, type, &f->split_status, stats);
    if (stats->served) {
        f->split_pending = 1;
        f->split_rc = rc;
    }
    f->split_direct = stats->served ? 0 : stats->direct_bytes;
    return rc;
}

int64_t cw_split_direct_bytes(struct cw_file *f)
{
    if (!f)
        return 0;
    int64_t bytes = f->split_direct;
    f->split_direct = 0;
    return bytes;
}

int cw_write_end(struct cw_file *f, MPI_Status *status, int *rc)
{
    if (!f || !f->split_pending)
        return 0;
    f->split_pending = 0;
    *rc = f->split_rc;
    if (status != MPI_STATUS_IGNORE && f->split_rc == MPI_SUCCESS)
        *status = f->split_status; /* what the write at _begin set */
    return 1;
}
