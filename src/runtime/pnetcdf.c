/*
 * PnetCDF layer: files and variables of programs that call libpnetcdf.
 *
 * libpario.so never links libpnetcdf: the wrappers (ncmpi_create/open/close,
 * enddef/redef/sync, def_var/inq_varid, every put/get/iput/iget/bput of every
 * shape in the flexible and the typed forms, wait/wait_all) find the real
 * functions with dlsym(RTLD_NEXT), and so do the inquiry functions pario calls
 * itself, at the first intercepted call.  If the loaded library's major.minor
 * is not the one of the pnetcdf.h the runtime was built with, or a symbol is
 * missing, the layer stays silent (every call passes through) and META's
 * library_layers says why.  Built without pnetcdf.h (PARIO_HAVE_PNETCDF
 * unset), the file holds only the descriptors and the status.
 *
 * A PnetCDF call is outermost I/O: the thread's depth is raised while it runs,
 * so the MPI-IO and POSIX calls beneath update their file counters and not the
 * rank's time classes.  At create/open the PARIO_HINTS hints for the file are
 * merged into a copy of the MPI_Info given (nc_header_align_size, ... and the
 * MPI-IO hints beneath); after open and enddef the header size/extent and the
 * alignments in effect (ncmpi_inq_file_info) are recorded.
 */
#include "core.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every rank sees alike, and per-rank maxima: reduced by max. */
static const unsigned char pnetcdf_file_max_reduced[PNETCDF_FILE_NUM_COUNTERS] = {
    [PNETCDF_FILE_HEADER_SIZE] = 1,  [PNETCDF_FILE_HEADER_EXTENT] = 1, [PNETCDF_FILE_HEADER_ALIGN] = 1,
    [PNETCDF_FILE_VAR_ALIGN] = 1,    [PNETCDF_FILE_RECORD_ALIGN] = 1,
};
static const unsigned char pnetcdf_var_max_reduced[PNETCDF_VAR_NUM_COUNTERS] = {
    [PNETCDF_VAR_MAX_READ_SIZE] = 1, [PNETCDF_VAR_MAX_WRITE_SIZE] = 1, [PNETCDF_VAR_NDIMS] = 1,
    [PNETCDF_VAR_NPOINTS] = 1,       [PNETCDF_VAR_DATATYPE_SIZE] = 1,  [PNETCDF_VAR_IS_RECORD_VAR] = 1,
    [PNETCDF_VAR_FILE_REC_ID] = 1,
};

const struct pario_layer_desc pario_pnetcdf_file_desc = {
    PARIO_LAYER_DESC_COMMON(PNETCDF_FILE, pnetcdf_file),
    PARIO_LAYER_DESC_NO_REQUESTS,
    .c_max_reduced = pnetcdf_file_max_reduced,
};

const struct pario_layer_desc pario_pnetcdf_var_desc = {
    PARIO_LAYER_DESC_COMMON(PNETCDF_VAR, pnetcdf_var),
    PARIO_LAYER_DESC_AGGREGATE(PNETCDF_VAR),
    .c_max_reduced = pnetcdf_var_max_reduced,
};

#ifndef PARIO_HAVE_PNETCDF
struct pario_library_status pario_pnetcdf_status = {
    .name = "pnetcdf",
    .built = "",
    .why = "pario was built without pnetcdf.h: the layer has no wrappers",
};
#else
#include <mpi.h>
#include <pnetcdf.h>

#include "trace.h"

#define STR_(x) #x
#define STR(x) STR_(x)
struct pario_library_status pario_pnetcdf_status = {.name = "pnetcdf", .built = PNETCDF_VERSION};

/* ---- the library's own functions that pario calls -------------------------- */
static struct {
    __typeof__(&ncmpi_inq_libvers) libvers;
    __typeof__(&ncmpi_inq_varndims) varndims;
    __typeof__(&ncmpi_inq_vartype) vartype;
    __typeof__(&ncmpi_inq_vardimid) vardimid;
    __typeof__(&ncmpi_inq_dimlen) dimlen;
    __typeof__(&ncmpi_inq_unlimdim) unlimdim;
    __typeof__(&ncmpi_inq_varname) varname;
    __typeof__(&ncmpi_inq_header_size) header_size;
    __typeof__(&ncmpi_inq_header_extent) header_extent;
    __typeof__(&ncmpi_inq_file_info) file_info;
} fn;

static int pnc_state;       /* 1: recording, -1: silent; set once by pnc_setup */
static pthread_once_t pnc_once = PTHREAD_ONCE_INIT;
/* > 0 inside a wrapper: calls the library makes to its own API pass through. */
static __thread int pnc_nest __attribute__((tls_model("initial-exec")));

static void *pnc_real(const char *name) { return dlsym(RTLD_NEXT, name); }

static void pnc_setup(void)
{
    struct pario_library_status *st = &pario_pnetcdf_status;
    const char *missing = NULL;
#define RESOLVE(field, name)                                                                       \
    if (!(fn.field = (__typeof__(fn.field))pnc_real(#name)) && !missing)                           \
        missing = #name;
    RESOLVE(libvers, ncmpi_inq_libvers)
    RESOLVE(varndims, ncmpi_inq_varndims)
    RESOLVE(vartype, ncmpi_inq_vartype)
    RESOLVE(vardimid, ncmpi_inq_vardimid)
    RESOLVE(dimlen, ncmpi_inq_dimlen)
    RESOLVE(unlimdim, ncmpi_inq_unlimdim)
    RESOLVE(varname, ncmpi_inq_varname)
    RESOLVE(header_size, ncmpi_inq_header_size)
    RESOLVE(header_extent, ncmpi_inq_header_extent)
    RESOLVE(file_info, ncmpi_inq_file_info)
#undef RESOLVE
    const char *v = fn.libvers ? fn.libvers() : NULL;
    if (v) { /* "1.12.3 of February 21, 2022": the first word */
        size_t n = strcspn(v, " ");
        snprintf(st->found, sizeof st->found, "%.*s", (int)(n < sizeof st->found ? n : sizeof st->found - 1), v);
    }
    int major = -1, minor = -1;
    if (v && sscanf(v, "%d.%d", &major, &minor) != 2)
        major = minor = -1;
    if (missing)
        snprintf(st->why, sizeof st->why, "%.120s not found in the PnetCDF library the program loaded", missing);
    else if (major != PNETCDF_VERSION_MAJOR || minor != PNETCDF_VERSION_MINOR)
        snprintf(st->why, sizeof st->why,
                 "pario was built against PnetCDF " STR(PNETCDF_VERSION_MAJOR) "." STR(PNETCDF_VERSION_MINOR)
                 " and the program loaded %.64s: its calls pass through unrecorded",
                 st->found[0] ? st->found : "an unknown version");
    st->active = st->why[0] == '\0';
    pnc_state = st->active ? 1 : -1;
}

/* Record this call?  Pario on, the library checked and matching, and not a
 * call the library makes to itself. */
static inline int pnc_on(void)
{
    if (!pario_active() || pnc_nest)
        return 0;
    if (__builtin_expect(pnc_state == 0, 0))
        pthread_once(&pnc_once, pnc_setup);
    return pnc_state > 0;
}

/* ---- files and variables --------------------------------------------------
 * ncid -> file state, a flat table (PnetCDF's ids are small integers); each
 * file's variables in chunks allocated at first sight; nonblocking requests
 * in a table indexed by request id (PnetCDF numbers them in order). */
#define PNC_FILES 1024
#define VAR_CHUNK 256
#define VAR_CHUNKS 64 /* variables 0 .. 16383 have records */
#define PNC_REQS 4096
#define PNC_MAX_DIMS 64

struct pnc_var {
    int ready; /* 0 not looked up, 1 ok, -1 no record */
    int ndims, tsize, unlim_index; /* unlim_index: position of the unlimited dimension, -1 none */
    int dimids[PNC_MAX_DIMS];
    struct pario_record *rec;
};

struct pnc_req {
    int id;       /* the request id + 1; 0: free */
    int varid;
    int is_write;
    int64_t bytes;
};

struct pnc_file {
    int used, ncid;
    int ci; /* the trace's index of the file's communicator, -1 */
    struct pario_record *rec;
    struct pnc_var *chunks[VAR_CHUNKS];
    struct pnc_req *reqs; /* PNC_REQS, at the first nonblocking post */
    int64_t untracked[2]; /* posted requests the table had no room for: gets [0], puts [1] */
};

static struct pnc_file files[PNC_FILES];
static pthread_mutex_t pnc_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pnc_file *file_of(int ncid)
{
    if (ncid < 0)
        return NULL;
    struct pnc_file *f = &files[ncid % PNC_FILES];
    return f->used && f->ncid == ncid ? f : NULL;
}

/* ncmpi_ type sizes in the file (external types). */
static int xtype_size(nc_type t)
{
    switch (t) {
    case NC_BYTE: case NC_CHAR: case NC_UBYTE: return 1;
    case NC_SHORT: case NC_USHORT: return 2;
    case NC_INT: case NC_FLOAT: case NC_UINT: return 4;
    case NC_DOUBLE: case NC_INT64: case NC_UINT64: return 8;
    default: return 0;
    }
}

/* The library calls pario makes itself, inside the caller's depth. */
#define SELF(call)                                                                                 \
    ({                                                                                             \
        pnc_nest++;                                                                                \
        __typeof__(call) r_ = call;                                                                \
        pnc_nest--;                                                                                \
        r_;                                                                                        \
    })

/* Look a variable up (name, dimensions, type) and make its record. */
static void var_fill(struct pnc_file *f, int varid, struct pnc_var *v)
{
    char name[NC_MAX_NAME + 1] = "";
    int ndims = 0, unlim = -1;
    nc_type t = 0;
    v->ready = -1;
    v->unlim_index = -1;
    if (SELF(fn.varname(f->ncid, varid, name)) != NC_NOERR || SELF(fn.varndims(f->ncid, varid, &ndims)) != NC_NOERR ||
        ndims < 0 || ndims > PNC_MAX_DIMS || SELF(fn.vartype(f->ncid, varid, &t)) != NC_NOERR)
        return;
    if (ndims > 0 && SELF(fn.vardimid(f->ncid, varid, v->dimids)) != NC_NOERR)
        return;
    SELF(fn.unlimdim(f->ncid, &unlim));
    int64_t npoints = 1;
    for (int i = 0; i < ndims; i++) {
        MPI_Offset len = 0;
        if (unlim >= 0 && v->dimids[i] == unlim) {
            v->unlim_index = i;
            continue; /* one record */
        }
        SELF(fn.dimlen(f->ncid, v->dimids[i], &len));
        npoints *= len;
    }
    v->ndims = ndims;
    v->tsize = xtype_size(t);
    if (!f->rec || !f->rec->name)
        return;
    char path[PATH_MAX + NC_MAX_NAME + 2];
    snprintf(path, sizeof path, "%s:%s", f->rec->name, name);
    struct pario_record *r = pario_record_for_path(PARIO_PNETCDF_VAR, path);
    if (!r)
        return;
    pario_rec_lock(r);
    r->counters[PNETCDF_VAR_NDIMS] = ndims;
    r->counters[PNETCDF_VAR_NPOINTS] = npoints;
    r->counters[PNETCDF_VAR_DATATYPE_SIZE] = v->tsize;
    r->counters[PNETCDF_VAR_IS_RECORD_VAR] = v->unlim_index >= 0;
    r->counters[PNETCDF_VAR_FILE_REC_ID] = (int64_t)f->rec->id;
    pario_rec_unlock(r);
    v->rec = r;
    v->ready = 1;
}

/* The state of a variable, looked up at first sight; NULL if it has none. */
static struct pnc_var *var_of(struct pnc_file *f, int varid)
{
    if (!f || varid < 0 || varid >= VAR_CHUNK * VAR_CHUNKS)
        return NULL;
    struct pnc_var *chunk = f->chunks[varid / VAR_CHUNK];
    if (!chunk) {
        pthread_mutex_lock(&pnc_lock);
        if (!f->chunks[varid / VAR_CHUNK])
            f->chunks[varid / VAR_CHUNK] = calloc(VAR_CHUNK, sizeof(struct pnc_var));
        chunk = f->chunks[varid / VAR_CHUNK];
        pthread_mutex_unlock(&pnc_lock);
        if (!chunk)
            return NULL;
    }
    struct pnc_var *v = &chunk[varid % VAR_CHUNK];
    if (v->ready == 0)
        var_fill(f, varid, v);
    return v->ready > 0 ? v : NULL;
}

/* ---- elements of one call, by shape ----------------------------------------- */
static int64_t elems_count(const struct pnc_var *v, const MPI_Offset *count)
{
    if (!count)
        return v->ndims == 0 ? 1 : 0;
    int64_t n = 1;
    for (int i = 0; i < v->ndims; i++)
        n *= count[i];
    return n;
}

static int64_t elems_varn(const struct pnc_var *v, int num, MPI_Offset *const *counts)
{
    int64_t n = 0;
    for (int i = 0; i < num; i++)
        n += counts && counts[i] ? elems_count(v, counts[i]) : 1;
    return n;
}

/* The whole variable: all its records for a record variable. */
static int64_t elems_whole(int ncid, const struct pnc_var *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndims; i++) {
        MPI_Offset len = 0;
        SELF(fn.dimlen(ncid, v->dimids[i], &len));
        n *= len;
    }
    return n;
}

/* ---- time and records --------------------------------------------------------- */
struct pnc_call {
    struct pario_thread *th;
    uint64_t t0, t1;
};

static inline void pnc_enter(struct pnc_call *c)
{
    c->th = pario_thread();
    c->th->depth++;
    pnc_nest++;
    c->t0 = pario_now();
}

static inline void pnc_leave(struct pnc_call *c)
{
    c->t1 = pario_now();
    pnc_nest--;
    c->th->depth--;
}

/* `real`: the library's NAME, found on the first call (NC_EINTERNAL without it). */
#define PNC_REAL(NAME)                                                                             \
    static __typeof__(&NAME) real;                                                                 \
    if (__builtin_expect(real == NULL, 0) && !(real = (__typeof__(&NAME))pnc_real(#NAME)))         \
        return NC_EINTERNAL

/* The start of a wrapper: a plain call while the layer is off, else the call timed into c, its
 * result in rc. */
#define PNC_TIMED(NAME, ARGS)                                                                      \
    PNC_REAL(NAME);                                                                                \
    if (!pnc_on())                                                                                 \
        return real ARGS;                                                                          \
    struct pnc_call c;                                                                             \
    pnc_enter(&c);                                                                                 \
    int rc = real ARGS;                                                                            \
    pnc_leave(&c)

enum { KIND_put, KIND_get, KIND_iput, KIND_iget, KIND_bput };
enum { SHAPE_var, SHAPE_var1, SHAPE_vara, SHAPE_vars, SHAPE_varm, SHAPE_varn };
_Static_assert(PNETCDF_FILE_VAR_ALIGN == PNETCDF_FILE_HEADER_ALIGN + 1 &&
                   PNETCDF_FILE_RECORD_ALIGN == PNETCDF_FILE_HEADER_ALIGN + 2,
               "PnetCDF alignment counters out of order");
_Static_assert(PNETCDF_VAR_PUT_VARN - PNETCDF_VAR_PUT_VAR == SHAPE_varn &&
                   PNETCDF_VAR_GET_VAR - PNETCDF_VAR_PUT_VAR == 6 * KIND_get &&
                   PNETCDF_VAR_IPUT_VAR - PNETCDF_VAR_PUT_VAR == 6 * KIND_iput &&
                   PNETCDF_VAR_IGET_VAR - PNETCDF_VAR_PUT_VAR == 6 * KIND_iget &&
                   PNETCDF_VAR_BPUT_VAR - PNETCDF_VAR_PUT_VAR == 6 * KIND_bput,
               "PnetCDF API counters out of order");

/* aux: the request id of a nonblocking call, else -1 (PnetCDF calls have no file offset). */
static void trace_pnc(struct pario_thread *th, int kind, int layer, const struct pario_record *r, int coll_ci,
                      int nonblocking, int64_t bytes, int64_t aux, uint64_t t0, uint64_t t1)
{
    int flags = (coll_ci != INT32_MIN ? PT_COLLECTIVE : 0) | (nonblocking ? PT_NONBLOCKING : 0);
    pario_trace_io_event(th, t0, t1, kind, layer, r ? r->id : 0, aux, bytes, flags,
                         coll_ci != INT32_MIN ? coll_ci : -1, aux);
}

/* A nonblocking request posted: kept until its wait. */
static void req_add(struct pnc_file *f, int id, int varid, int is_write, int64_t bytes)
{
    if (!f->reqs)
        f->reqs = calloc(PNC_REQS, sizeof *f->reqs);
    struct pnc_req *q = f->reqs && id >= 0 ? &f->reqs[id % PNC_REQS] : NULL;
    if (!q || q->id) {
        f->untracked[is_write]++;
        return;
    }
    *q = (struct pnc_req){.id = id + 1, .varid = varid, .is_write = is_write, .bytes = bytes};
}

/* One data call done: rank time, variable and file records, trace, request. */
static void pnc_data(const struct pnc_call *c, int ncid, int varid, int kind, int shape, int coll, int64_t elems,
                     const int *req, int rc)
{
    int is_write = kind == KIND_put || kind == KIND_iput || kind == KIND_bput;
    int nb = kind >= KIND_iput;
    pario_charge(c->th, is_write ? pnetcdf_write : pnetcdf_read, c->t0, c->t1);
    struct pnc_file *f = file_of(ncid);
    struct pnc_var *v = var_of(f, varid);
    int64_t bytes = rc == NC_NOERR && v ? elems * v->tsize : 0;
    if (__builtin_expect(pario_tracing, 0))
        trace_pnc(c->th, is_write ? PT_IO_WRITE : PT_IO_READ, PARIO_PNETCDF_VAR, v ? v->rec : NULL,
                  coll && f ? f->ci : INT32_MIN, nb, bytes, nb && req && rc == NC_NOERR ? *req : -1, c->t0, c->t1);
    if (v && v->rec) {
        struct pario_record *r = v->rec;
        pario_rec_lock(r);
        r->counters[PNETCDF_VAR_PUT_VAR + 6 * kind + shape]++;
        r->counters[nb ? (is_write ? PNETCDF_VAR_NB_WRITES : PNETCDF_VAR_NB_READS)
                : coll ? (is_write ? PNETCDF_VAR_COLL_WRITES : PNETCDF_VAR_COLL_READS)
                       : (is_write ? PNETCDF_VAR_INDEP_WRITES : PNETCDF_VAR_INDEP_READS)]++;
        pario_rec_access(r, is_write, -1, bytes, c->t0, c->t1);
        pario_rec_unlock(r);
    }
    if (f && f->rec) {
        pario_rec_lock(f->rec);
        f->rec->counters[is_write ? PNETCDF_FILE_BYTES_WRITTEN : PNETCDF_FILE_BYTES_READ] += bytes;
        f->rec->fcounters[is_write ? PNETCDF_FILE_F_WRITE_TIME : PNETCDF_FILE_F_READ_TIME] += (double)(c->t1 - c->t0);
        pario_rec_unlock(f->rec);
    }
    if (nb && f && req && rc == NC_NOERR)
        req_add(f, *req, varid, is_write, bytes);
}

/* ---- the data calls: one body, generated for every name --------------------
 * SP_/SA_: the shape's parameters and arguments; SN_: its elements. */
#define SP_var
#define SP_var1 , const MPI_Offset *start
#define SP_vara , const MPI_Offset *start, const MPI_Offset *count
#define SP_vars , const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride
#define SP_varm , const MPI_Offset *start, const MPI_Offset *count, const MPI_Offset *stride, const MPI_Offset *imap
#define SP_varn , int num, MPI_Offset *const *starts, MPI_Offset *const *counts
#define SA_var
#define SA_var1 , start
#define SA_vara , start, count
#define SA_vars , start, count, stride
#define SA_varm , start, count, stride, imap
#define SA_varn , num, starts, counts
#define SN_var(v) elems_whole(ncid, v)
#define SN_var1(v) 1
#define SN_vara(v) elems_count(v, count)
#define SN_vars(v) elems_count(v, count)
#define SN_varm(v) elems_count(v, count)
#define SN_varn(v) elems_varn(v, num, counts)
/* the buffer's const-ness and the request argument, by kind */
#define CONST_put const
#define CONST_get
#define CONST_iput const
#define CONST_iget
#define CONST_bput const
#define REQP_put
#define REQP_get
#define REQP_iput , int *req
#define REQP_iget , int *req
#define REQP_bput , int *req
#define REQA_put
#define REQA_get
#define REQA_iput , req
#define REQA_iget , req
#define REQA_bput , req
#define REQV_put NULL
#define REQV_get NULL
#define REQV_iput req
#define REQV_iget req
#define REQV_bput req

#define WRAP(NAME, K, S, COLL, PARAMS, ARGS)                                                       \
    int NAME PARAMS                                                                                \
    {                                                                                              \
        PNC_TIMED(NAME, ARGS);                                                                     \
        struct pnc_var *v = var_of(file_of(ncid), varid);                                          \
        pnc_data(&c, ncid, varid, KIND_##K, SHAPE_##S, COLL, v ? SN_##S(v) : 0, REQV_##K, rc);     \
        return rc;                                                                                 \
    }

#define TYPED(NAME, K, S, COLL, T)                                                                 \
    WRAP(NAME, K, S, COLL, (int ncid, int varid SP_##S, CONST_##K T *buf REQP_##K),               \
         (ncid, varid SA_##S, buf REQA_##K))
#define FLEX(NAME, K, S, COLL)                                                                     \
    WRAP(NAME, K, S, COLL,                                                                         \
         (int ncid, int varid SP_##S, CONST_##K void *buf, MPI_Offset bufcount, MPI_Datatype buftype REQP_##K), \
         (ncid, varid SA_##S, buf, bufcount, buftype REQA_##K))

#define TYPES(K, S, SFX, COLL)                                                                     \
    FLEX(ncmpi_##K##_##S##SFX, K, S, COLL)                                                         \
    TYPED(ncmpi_##K##_##S##_text##SFX, K, S, COLL, char)                                           \
    TYPED(ncmpi_##K##_##S##_schar##SFX, K, S, COLL, signed char)                                   \
    TYPED(ncmpi_##K##_##S##_uchar##SFX, K, S, COLL, unsigned char)                                 \
    TYPED(ncmpi_##K##_##S##_short##SFX, K, S, COLL, short)                                         \
    TYPED(ncmpi_##K##_##S##_ushort##SFX, K, S, COLL, unsigned short)                               \
    TYPED(ncmpi_##K##_##S##_int##SFX, K, S, COLL, int)                                             \
    TYPED(ncmpi_##K##_##S##_uint##SFX, K, S, COLL, unsigned int)                                   \
    TYPED(ncmpi_##K##_##S##_long##SFX, K, S, COLL, long)                                           \
    TYPED(ncmpi_##K##_##S##_float##SFX, K, S, COLL, float)                                         \
    TYPED(ncmpi_##K##_##S##_double##SFX, K, S, COLL, double)                                       \
    TYPED(ncmpi_##K##_##S##_longlong##SFX, K, S, COLL, long long)                                  \
    TYPED(ncmpi_##K##_##S##_ulonglong##SFX, K, S, COLL, unsigned long long)

#define SHAPES(K, SFX, COLL)                                                                       \
    TYPES(K, var, SFX, COLL)                                                                       \
    TYPES(K, var1, SFX, COLL)                                                                      \
    TYPES(K, vara, SFX, COLL)                                                                      \
    TYPES(K, vars, SFX, COLL)                                                                      \
    TYPES(K, varm, SFX, COLL)                                                                      \
    TYPES(K, varn, SFX, COLL)

SHAPES(put, , 0)
SHAPES(put, _all, 1)
SHAPES(get, , 0)
SHAPES(get, _all, 1)
SHAPES(iput, , 0)
SHAPES(iget, , 0)
SHAPES(bput, , 0)

/* ---- waits -----------------------------------------------------------------------
 * The requests' records are looked up before the call (the library sets the
 * ids to NC_REQ_NULL); the wait's time is the file's WAIT_TIME and, split over
 * the completed requests by their bytes, their variables' and the file's
 * read/write time and the rank's pnetcdf_read/write. */
#define WAIT_MAX 4096

static int pnc_wait(int (*real)(int, int, int *, int *), int ncid, int count, int *reqs, int *statuses, int coll)
{
    if (!pnc_on())
        return real(ncid, count, reqs, statuses);
    struct pnc_file *f = file_of(ncid);
    struct pnc_req *done = NULL;
    int ndone = 0;
    if (f && f->reqs && (done = malloc(sizeof *done * (count > 0 && count < WAIT_MAX ? count : WAIT_MAX)))) {
        if (count >= 0 && reqs) {
            for (int i = 0; i < count && ndone < WAIT_MAX; i++) {
                if (reqs[i] < 0)
                    continue;
                struct pnc_req *q = &f->reqs[reqs[i] % PNC_REQS];
                if (q->id == reqs[i] + 1) {
                    done[ndone++] = *q;
                    q->id = 0;
                }
            }
        } else if (count == NC_REQ_ALL || count == NC_GET_REQ_ALL || count == NC_PUT_REQ_ALL) {
            for (int i = 0; i < PNC_REQS && ndone < WAIT_MAX; i++) {
                struct pnc_req *q = &f->reqs[i];
                if (q->id && (count == NC_REQ_ALL || q->is_write == (count == NC_PUT_REQ_ALL))) {
                    done[ndone++] = *q;
                    q->id = 0;
                }
            }
        }
    }
    struct pnc_call c;
    pnc_enter(&c);
    int rc = real(ncid, count, reqs, statuses);
    pnc_leave(&c);
    uint64_t dt = c.t1 - c.t0;
    int64_t total = 0, put_bytes = 0, failed = 0;
    for (int i = 0; i < ndone; i++) {
        total += done[i].bytes;
        put_bytes += done[i].is_write ? done[i].bytes : 0;
    }
    if (statuses && count > 0)
        for (int i = 0; i < count; i++)
            failed += statuses[i] != NC_NOERR;
    /* the time of requests pario could not follow: by the kinds left untracked */
    int untracked_write = !f || f->untracked[1] > 0 || f->untracked[0] == 0;
    uint64_t given = 0;
    for (int i = 0; i < ndone; i++) {
        uint64_t share = total > 0 ? (uint64_t)((double)dt * (double)done[i].bytes / (double)total)
                                   : dt / (uint64_t)ndone;
        if (i == ndone - 1)
            share = dt - given;
        given += share;
        pario_charge(c.th, done[i].is_write ? pnetcdf_write : pnetcdf_read, 0, share);
        struct pnc_var *v = var_of(f, done[i].varid);
        if (v && v->rec) {
            pario_rec_lock(v->rec);
            v->rec->fcounters[done[i].is_write ? PNETCDF_VAR_F_WRITE_TIME : PNETCDF_VAR_F_READ_TIME] += (double)share;
            pario_rec_unlock(v->rec);
        }
        if (f && f->rec) {
            pario_rec_lock(f->rec);
            f->rec->fcounters[done[i].is_write ? PNETCDF_FILE_F_WRITE_TIME : PNETCDF_FILE_F_READ_TIME] += (double)share;
            pario_rec_unlock(f->rec);
        }
    }
    if (ndone == 0)
        pario_charge(c.th, untracked_write ? pnetcdf_write : pnetcdf_read, c.t0, c.t1);
    if (f && f->rec) {
        pario_rec_lock(f->rec);
        f->rec->counters[coll ? PNETCDF_FILE_COLL_WAITS : PNETCDF_FILE_INDEP_WAITS]++;
        f->rec->counters[PNETCDF_FILE_WAIT_FAILURES] += failed;
        f->rec->fcounters[PNETCDF_FILE_F_WAIT_TIME] += (double)dt;
        if (ndone == 0)
            f->rec->fcounters[untracked_write ? PNETCDF_FILE_F_WRITE_TIME : PNETCDF_FILE_F_READ_TIME] += (double)dt;
        pario_rec_unlock(f->rec);
        if (ndone == 0) /* requests the table had no room for: done now */
            f->untracked[0] = f->untracked[1] = 0;
    }
    if (__builtin_expect(pario_tracing, 0))
        trace_pnc(c.th, (ndone ? put_bytes > 0 : untracked_write) ? PT_IO_WRITE : PT_IO_READ, PARIO_PNETCDF_FILE,
                  f ? f->rec : NULL, coll && f ? f->ci : INT32_MIN, 0, 0, -1, c.t0, c.t1);
    free(done);
    return rc;
}

int ncmpi_wait(int ncid, int count, int array_of_requests[], int array_of_statuses[])
{
    PNC_REAL(ncmpi_wait);
    return pnc_wait(real, ncid, count, array_of_requests, array_of_statuses, 0);
}

int ncmpi_wait_all(int ncid, int count, int array_of_requests[], int array_of_statuses[])
{
    PNC_REAL(ncmpi_wait_all);
    return pnc_wait(real, ncid, count, array_of_requests, array_of_statuses, 1);
}

/* ---- file calls ------------------------------------------------------------------- */

/* Header size and extent, and the alignments in effect. */
static void file_layout(struct pnc_file *f)
{
    if (!f || !f->rec)
        return;
    MPI_Offset size = 0, extent = 0;
    int64_t align[3] = {0, 0, 0};
    static const char *const keys[3] = {"nc_header_align_size", "nc_var_align_size", "nc_record_align_size"};
    if (SELF(fn.header_size(f->ncid, &size)) != NC_NOERR)
        size = 0;
    if (SELF(fn.header_extent(f->ncid, &extent)) != NC_NOERR)
        extent = 0;
    MPI_Info info = MPI_INFO_NULL;
    if (SELF(fn.file_info(f->ncid, &info)) == NC_NOERR && info != MPI_INFO_NULL) {
        for (int i = 0; i < 3; i++) {
            char val[64];
            int flag = 0;
            if (NEXT(PMPI_Info_get)(info, keys[i], (int)sizeof val - 1, val, &flag) == MPI_SUCCESS && flag)
                align[i] = strtoll(val, NULL, 10);
        }
        NEXT(PMPI_Info_free)(&info);
    }
    pario_rec_lock(f->rec);
    f->rec->counters[PNETCDF_FILE_HEADER_SIZE] = size;
    f->rec->counters[PNETCDF_FILE_HEADER_EXTENT] = extent;
    /* an opened file reports 0 (the alignments act when a header is written): keep
     * those in effect when the file was defined, if this rank saw that */
    for (int i = 0; i < 3; i++)
        if (align[i] > 0)
            f->rec->counters[PNETCDF_FILE_HEADER_ALIGN + i] = align[i];
    pario_rec_unlock(f->rec);
}

/* A file-level call done: rank meta time, the file's counter, meta time and the timestamp of
 * an open or a close (kind), trace. */
static void pnc_meta(const struct pnc_call *c, struct pnc_file *f, int counter, enum pario_meta_kind kind, int coll)
{
    pario_charge(c->th, pnetcdf_meta, c->t0, c->t1);
    if (__builtin_expect(pario_tracing, 0))
        trace_pnc(c->th, PT_IO_META, PARIO_PNETCDF_FILE, f ? f->rec : NULL, coll && f ? f->ci : INT32_MIN, 0, 0, -1,
                  c->t0, c->t1);
    if (f && f->rec)
        pario_rec_meta(f->rec, counter, kind, c->t0, c->t1);
}

/* "ufs:/path" -> "/path" (ROMIO's file-system prefixes, which PnetCDF passes on). */
static const char *strip_prefix(const char *name)
{
    const char *colon = strchr(name, ':');
    const char *slash = strchr(name, '/');
    if (colon && (!slash || colon < slash) && colon - name > 1)
        return colon + 1;
    return name;
}

/* create (is_create) or open, with the PARIO_HINTS hints for the file. */
static int pnc_open(int (*real)(MPI_Comm, const char *, int, MPI_Info, int *), int is_create, MPI_Comm comm,
                    const char *path, int mode, MPI_Info info, int *ncidp)
{
    if (!pnc_on())
        return real(comm, path, mode, info, ncidp);
    const char *kv[2 * PARIO_MAX_HINTS];
    int nkv = path ? pario_file_hints(path, kv) : 0;
    MPI_Info mine = MPI_INFO_NULL;
    if (nkv > 0) {
        if ((info == MPI_INFO_NULL ? NEXT(PMPI_Info_create)(&mine) : NEXT(PMPI_Info_dup)(info, &mine)) != MPI_SUCCESS)
            mine = MPI_INFO_NULL;
        for (int i = 0; mine != MPI_INFO_NULL && i < nkv; i++)
            NEXT(PMPI_Info_set)(mine, kv[2 * i], kv[2 * i + 1]);
    }
    struct pnc_call c;
    pnc_enter(&c);
    int rc = real(comm, path, mode, mine != MPI_INFO_NULL ? mine : info, ncidp);
    int injected = mine != MPI_INFO_NULL && rc == NC_NOERR;
    if (mine != MPI_INFO_NULL) {
        NEXT(PMPI_Info_free)(&mine);
        /* failed with the hints on every rank: again without them */
        int failed = rc != NC_NOERR, all = 0;
        if (NEXT(PMPI_Allreduce)(&failed, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all) {
            rc = real(comm, path, mode, info, ncidp);
            if (rc == NC_NOERR && atomic_fetch_add(&pario_hints_fallback_opens, 1) == 0 && pario_mpi_rank() == 0)
                pario_warn("%s of %s failed with the PARIO_HINTS hints and was retried without them",
                           is_create ? "ncmpi_create" : "ncmpi_open", path);
        }
    }
    pnc_leave(&c);
    struct pnc_file *f = NULL;
    if (rc == NC_NOERR && ncidp && *ncidp >= 0) {
        f = &files[*ncidp % PNC_FILES];
        pthread_mutex_lock(&pnc_lock);
        for (int i = 0; i < VAR_CHUNKS; i++)
            free(f->chunks[i]);
        free(f->reqs);
        *f = (struct pnc_file){.used = 1, .ncid = *ncidp, .ci = -1};
        pthread_mutex_unlock(&pnc_lock);
        f->rec = pario_record_for_path(PARIO_PNETCDF_FILE, strip_prefix(path));
        if (pario_tracing && pario_trace_mine(c.th) && c.th->depth == 0)
            f->ci = pario_trace_comm(comm);
    }
    if (f && f->rec) {
        char text[8192];
        size_t len = 0;
        for (int i = 0; injected && i < nkv; i++) {
            int w = snprintf(text + len, sizeof text - len, "%s=%s\n", kv[2 * i], kv[2 * i + 1]);
            if (w < 0 || (size_t)w >= sizeof text - len)
                break;
            len += (size_t)w;
        }
        text[len] = '\0';
        char *copy = len ? pario_arena_strdup(text, sizeof text) : NULL;
        pario_rec_lock(f->rec);
        if (copy || !injected)
            f->rec->injected = copy;
        pario_rec_unlock(f->rec);
        if (!is_create) {
            c.th->depth++;
            file_layout(f);
            c.th->depth--;
        }
    }
    pnc_meta(&c, f, is_create ? PNETCDF_FILE_CREATES : PNETCDF_FILE_OPENS, PARIO_META_OPEN, 1);
    return rc;
}

int ncmpi_create(MPI_Comm comm, const char *path, int cmode, MPI_Info info, int *ncidp)
{
    PNC_REAL(ncmpi_create);
    return pnc_open(real, 1, comm, path, cmode, info, ncidp);
}

int ncmpi_open(MPI_Comm comm, const char *path, int omode, MPI_Info info, int *ncidp)
{
    PNC_REAL(ncmpi_open);
    return pnc_open(real, 0, comm, path, omode, info, ncidp);
}

/* A file call: counter (-1 none); layout: read the header and alignments after it. */
#define FILE_CALL(NAME, PARAMS, ARGS, counter, layout)                                             \
    int NAME PARAMS                                                                                \
    {                                                                                              \
        PNC_TIMED(NAME, ARGS);                                                                     \
        struct pnc_file *f = file_of(ncid);                                                        \
        if ((layout) && rc == NC_NOERR) {                                                          \
            c.th->depth++;                                                                         \
            file_layout(f);                                                                        \
            c.th->depth--;                                                                         \
        }                                                                                          \
        pnc_meta(&c, f, counter, PARIO_META, 1);                                                   \
        return rc;                                                                                 \
    }

FILE_CALL(ncmpi_enddef, (int ncid), (ncid), PNETCDF_FILE_ENDDEFS, 1)
FILE_CALL(ncmpi__enddef, (int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree, MPI_Offset r_align),
          (ncid, h_minfree, v_align, v_minfree, r_align), PNETCDF_FILE_ENDDEFS, 1)
FILE_CALL(ncmpi_redef, (int ncid), (ncid), PNETCDF_FILE_REDEFS, 0)
FILE_CALL(ncmpi_sync, (int ncid), (ncid), PNETCDF_FILE_SYNCS, 0)
FILE_CALL(ncmpi_begin_indep_data, (int ncid), (ncid), -1, 0)
FILE_CALL(ncmpi_end_indep_data, (int ncid), (ncid), -1, 0)

int ncmpi_close(int ncid)
{
    PNC_TIMED(ncmpi_close, (ncid));
    struct pnc_file *f = file_of(ncid);
    pnc_meta(&c, f, -1, PARIO_META_CLOSE, 1);
    if (!f)
        return rc;
    pthread_mutex_lock(&pnc_lock);
    for (int i = 0; i < VAR_CHUNKS; i++) {
        for (int j = 0; f->chunks[i] && j < VAR_CHUNK; j++) {
            struct pario_record *r = f->chunks[i][j].rec;
            if (r) {
                pario_rec_lock(r);
                r->fcounters[PNETCDF_VAR_F_CLOSE_END_TIMESTAMP] = (double)c.t1;
                pario_rec_unlock(r);
            }
        }
        free(f->chunks[i]);
        f->chunks[i] = NULL;
    }
    free(f->reqs);
    f->reqs = NULL;
    f->used = 0;
    pthread_mutex_unlock(&pnc_lock);
    return rc;
}

/* ---- variable definition and look-up ------------------------------------------- */
static void pnc_var_meta(const struct pnc_call *c, int ncid, int varid, int rc)
{
    pario_charge(c->th, pnetcdf_meta, c->t0, c->t1);
    struct pnc_file *f = file_of(ncid);
    struct pnc_var *v = rc == NC_NOERR ? var_of(f, varid) : NULL;
    if (__builtin_expect(pario_tracing, 0))
        trace_pnc(c->th, PT_IO_META, PARIO_PNETCDF_VAR, v ? v->rec : NULL, INT32_MIN, 0, 0, -1, c->t0, c->t1);
    if (v && v->rec)
        pario_rec_meta(v->rec, PNETCDF_VAR_OPENS, PARIO_META_OPEN, c->t0, c->t1);
    if (f && f->rec)
        pario_rec_meta(f->rec, -1, PARIO_META, c->t0, c->t1);
}

int ncmpi_def_var(int ncid, const char *name, nc_type xtype, int ndims, const int *dimidsp, int *varidp)
{
    PNC_TIMED(ncmpi_def_var, (ncid, name, xtype, ndims, dimidsp, varidp));
    pnc_var_meta(&c, ncid, varidp ? *varidp : -1, rc);
    return rc;
}

int ncmpi_inq_varid(int ncid, const char *name, int *varidp)
{
    PNC_TIMED(ncmpi_inq_varid, (ncid, name, varidp));
    pnc_var_meta(&c, ncid, varidp ? *varidp : -1, rc);
    return rc;
}
#endif /* PARIO_HAVE_PNETCDF */
