/*
 * HDF5 layer: files (H5F) and datasets (H5D) of programs that call libhdf5
 * (docs/libraries.md).  The wrappers (H5Fcreate/open/flush/close,
 * H5Dcreate/open/read/write/flush/close, and the group, attribute and
 * H5Oopen/H5Oclose calls as metadata of their file) are built against the HDF5 headers
 * found at build time (PARIO_HAVE_HDF5), but libpario.so does not link
 * libhdf5: every HDF5 function pario calls itself is looked up with dlsym at
 * the first intercepted call, and only when the library's major.minor version
 * is the one of the headers; otherwise the layer passes calls through and
 * META's library_layers says why.  An HDF5 call is outermost I/O: the thread's
 * depth is raised while it runs, so the MPI-IO and POSIX calls beneath update
 * their records but not the rank's time classes (as MPI-IO over POSIX).
 *
 * PARIO_HINTS keys hdf5.* (the global ones and those of the sections matching
 * the file's name) are applied to a copy of the file access property list at
 * H5Fcreate/H5Fopen and, for hdf5.transfer, to a copy of the transfer list of
 * each H5Dread/H5Dwrite on a file opened with the MPI-IO driver.
 */
#include "core.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What every rank sees alike, and per-rank maxima: reduced by max. */
static const unsigned char h5f_max_reduced[H5F_NUM_COUNTERS] = {
    [H5F_USE_MPIIO] = 1,          [H5F_ALIGN_THRESHOLD] = 1,      [H5F_ALIGNMENT] = 1,
    [H5F_META_BLOCK_SIZE] = 1,    [H5F_SIEVE_BUF_SIZE] = 1,       [H5F_COLL_METADATA_READS] = 1,
    [H5F_COLL_METADATA_WRITES] = 1,
};
static const unsigned char h5d_max_reduced[H5D_NUM_COUNTERS] = {
    [H5D_MAX_READ_SIZE] = 1,   [H5D_MAX_WRITE_SIZE] = 1,  [H5D_DATASPACE_NDIMS] = 1,
    [H5D_DATASPACE_NPOINTS] = 1, [H5D_DATATYPE_SIZE] = 1, [H5D_LAYOUT] = 1,
    [H5D_CHUNK_SIZE_D1] = 1,   [H5D_CHUNK_SIZE_D2] = 1,   [H5D_CHUNK_SIZE_D3] = 1,
    [H5D_CHUNK_SIZE_D4] = 1,   [H5D_CHUNK_SIZE_D5] = 1,   [H5D_USE_MPIIO_COLLECTIVE] = 1,
    [H5D_FILE_REC_ID] = 1,
};

const struct pario_layer_desc pario_h5f_desc = {
    PARIO_LAYER_DESC_COMMON(H5F, h5f),
    PARIO_LAYER_DESC_NO_REQUESTS,
    .c_max_reduced = h5f_max_reduced,
};

const struct pario_layer_desc pario_h5d_desc = {
    PARIO_LAYER_DESC_COMMON(H5D, h5d),
    PARIO_LAYER_DESC_AGGREGATE(H5D),
    .c_max_reduced = h5d_max_reduced,
};

/* ---- without the HDF5 headers: empty layers --------------------------------*/
#ifndef PARIO_HAVE_HDF5

struct pario_library_status pario_hdf5_status = {
    .name = "hdf5",
    .built = "",
    .why = "libpario was built without the HDF5 headers (hdf5.h not found): no HDF5 wrappers",
};

#else /* PARIO_HAVE_HDF5 */

#include <mpi.h>
#include <hdf5.h>

#include "trace.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define BUILT_VERSION STR(H5_VERS_MAJOR) "." STR(H5_VERS_MINOR) "." STR(H5_VERS_RELEASE)

/* ---- the library's own functions, resolved once ---------------------------
 * The parallel ones (dxpl/fapl MPI-IO, collective metadata) may be absent (a
 * serial libhdf5): the layer then sees no MPI-IO driver. */
#define H5FN(f) __typeof__(&f) f
static struct {
    H5FN(H5get_libversion);
    H5FN(H5Dget_space);
    H5FN(H5Dget_type);
    H5FN(H5Dget_create_plist);
    H5FN(H5Sget_select_npoints);
    H5FN(H5Sget_select_type);
    H5FN(H5Sis_regular_hyperslab);
    H5FN(H5Sget_simple_extent_ndims);
    H5FN(H5Sget_simple_extent_npoints);
    H5FN(H5Sclose);
    H5FN(H5Tget_size);
    H5FN(H5Tclose);
    H5FN(H5Pget_layout);
    H5FN(H5Pget_chunk);
    H5FN(H5Fget_access_plist);
    H5FN(H5Fget_name);
    H5FN(H5Iget_name);
    H5FN(H5Iget_file_id);
    H5FN(H5Pget_driver);
    H5FN(H5Pget_alignment);
    H5FN(H5Pget_meta_block_size);
    H5FN(H5Pget_sieve_buf_size);
    H5FN(H5Pcopy);
    H5FN(H5Pclose);
    H5FN(H5Pset_alignment);
    H5FN(H5Pset_meta_block_size);
    H5FN(H5Pset_sieve_buf_size);
    H5FN(H5Eget_auto2);
    H5FN(H5Eset_auto2);
    /* parallel HDF5 only */
    H5FN(H5FD_mpio_init);
    H5FN(H5Pget_dxpl_mpio);
    H5FN(H5Pset_dxpl_mpio);
    H5FN(H5Pget_fapl_mpio);
    H5FN(H5Pget_all_coll_metadata_ops);
    H5FN(H5Pget_coll_metadata_write);
    H5FN(H5Pset_all_coll_metadata_ops);
    H5FN(H5Pset_coll_metadata_write);
    hid_t *fapl_default, *dxpl_default; /* H5P_LST_FILE_ACCESS_ID_g, H5P_LST_DATASET_XFER_ID_g */
} h5;

enum { H5_UNSEEN = 0, H5_ACTIVE = 1, H5_SILENT = 2 };
static atomic_int h5_state = H5_UNSEEN;
/* META's library_layers.hdf5 (log.c) */
struct pario_library_status pario_hdf5_status = {.name = "hdf5", .built = BUILT_VERSION};
#define h5_found pario_hdf5_status.found
#define h5_why pario_hdf5_status.why
static hid_t h5_mpio_driver = -1;   /* H5FD_MPIO's id, -1 without parallel HDF5 */

static void h5_resolve(void)
{
    unsigned maj = 0, min = 0, rel = 0;
    h5.H5get_libversion = (__typeof__(h5.H5get_libversion))dlsym(RTLD_DEFAULT, "H5get_libversion");
    if (!h5.H5get_libversion || h5.H5get_libversion(&maj, &min, &rel) < 0) {
        snprintf(h5_why, sizeof h5_why, "H5get_libversion not found: the layer passes HDF5 calls through");
        atomic_store(&h5_state, H5_SILENT);
        return;
    }
    snprintf(h5_found, sizeof h5_found, "%u.%u.%u", maj, min, rel);
    if (maj != H5_VERS_MAJOR || min != H5_VERS_MINOR) {
        snprintf(h5_why, sizeof h5_why,
                 "libhdf5 %s is not the %d.%d pario was built against: the layer passes HDF5 calls through",
                 h5_found, H5_VERS_MAJOR, H5_VERS_MINOR);
        atomic_store(&h5_state, H5_SILENT);
        return;
    }
#define NEED(f)                                                                                    \
    if (!(h5.f = (__typeof__(h5.f))dlsym(RTLD_DEFAULT, #f))) {                                     \
        snprintf(h5_why, sizeof h5_why, "libhdf5 %s has no " #f ": the layer passes HDF5 calls through", h5_found); \
        atomic_store(&h5_state, H5_SILENT);                                                        \
        return;                                                                                    \
    }
    NEED(H5Dget_space) NEED(H5Dget_type) NEED(H5Dget_create_plist) NEED(H5Sget_select_npoints)
    NEED(H5Sget_select_type) NEED(H5Sis_regular_hyperslab) NEED(H5Sget_simple_extent_ndims)
    NEED(H5Sget_simple_extent_npoints) NEED(H5Sclose) NEED(H5Tget_size) NEED(H5Tclose) NEED(H5Pget_layout)
    NEED(H5Pget_chunk) NEED(H5Fget_access_plist) NEED(H5Fget_name) NEED(H5Iget_name) NEED(H5Iget_file_id)
    NEED(H5Pget_driver)
    NEED(H5Pget_alignment) NEED(H5Pget_meta_block_size) NEED(H5Pget_sieve_buf_size) NEED(H5Pcopy)
    NEED(H5Pclose) NEED(H5Pset_alignment) NEED(H5Pset_meta_block_size) NEED(H5Pset_sieve_buf_size)
    NEED(H5Eget_auto2) NEED(H5Eset_auto2)
#undef NEED
    h5.fapl_default = (hid_t *)dlsym(RTLD_DEFAULT, "H5P_LST_FILE_ACCESS_ID_g");
    h5.dxpl_default = (hid_t *)dlsym(RTLD_DEFAULT, "H5P_LST_DATASET_XFER_ID_g");
    if (!h5.fapl_default || !h5.dxpl_default) {
        snprintf(h5_why, sizeof h5_why, "libhdf5 %s has no default property lists: the layer passes HDF5 calls through",
                 h5_found);
        atomic_store(&h5_state, H5_SILENT);
        return;
    }
#define MAYBE(f) h5.f = (__typeof__(h5.f))dlsym(RTLD_DEFAULT, #f);
    MAYBE(H5FD_mpio_init) MAYBE(H5Pget_dxpl_mpio) MAYBE(H5Pset_dxpl_mpio) MAYBE(H5Pget_fapl_mpio)
    MAYBE(H5Pget_all_coll_metadata_ops) MAYBE(H5Pget_coll_metadata_write) MAYBE(H5Pset_all_coll_metadata_ops)
    MAYBE(H5Pset_coll_metadata_write)
#undef MAYBE
    if (h5.H5FD_mpio_init && h5.H5Pget_dxpl_mpio && h5.H5Pset_dxpl_mpio && h5.H5Pget_fapl_mpio)
        h5_mpio_driver = h5.H5FD_mpio_init();
    pario_hdf5_status.active = 1;
    atomic_store(&h5_state, H5_ACTIVE);
}

/* 1 when the layer records (first call: resolve and check the version). */
static inline int h5_on(void)
{
    int s = atomic_load_explicit(&h5_state, memory_order_acquire);
    if (__builtin_expect(s == H5_UNSEEN, 0)) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, h5_resolve);
        s = atomic_load(&h5_state);
    }
    return s == H5_ACTIVE && pario_active();
}

/* HDF5's error printing off while pario asks questions whose failure is expected
 * (a name of an anonymous dataset, ...). */
struct h5_quiet {
    H5E_auto2_t func;
    void *data;
};
static void quiet_begin(struct h5_quiet *q)
{
    q->func = NULL;
    q->data = NULL;
    h5.H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    h5.H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
static void quiet_end(const struct h5_quiet *q) { h5.H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

/* ---- per-file state, by the H5F record's id ----------------------------------
 * What the open decided and the datasets need: the MPI-IO driver, the
 * hdf5.transfer override, the trace's communicator index. */
enum { XFER_AS_IS = 0, XFER_COLLECTIVE = 1, XFER_INDEPENDENT = 2 };
struct h5_file_state {
    int is_mpio, transfer, ci;
};

#define ID_SLOTS 4096
#define TOMB ((int64_t)-1)
/* open files: hid -> H5F record; datasets: hid -> dataset state.  Inserts and
 * deletes under a lock, lookups lock-free (as mpiio.c's file handles). */
struct h5_dset {
    struct pario_record *rec, *frec;
    int64_t elem_size;
    struct h5_file_state fs;
};
static _Atomic int64_t file_keys[ID_SLOTS];
static struct pario_record *_Atomic file_recs[ID_SLOTS];
static _Atomic int64_t dset_keys[ID_SLOTS];
static struct h5_dset dset_vals[ID_SLOTS];
static _Atomic uint64_t state_keys[ID_SLOTS];  /* H5F record id -> state */
static struct h5_file_state state_vals[ID_SLOTS];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(uint64_t k) { return (size_t)(k * 0x9e3779b97f4a7c15ull >> 52) % ID_SLOTS; }

static long tab_find(_Atomic int64_t *keys, int64_t k)
{
    size_t s = slot_of((uint64_t)k);
    for (int i = 0; i < ID_SLOTS; i++, s = (s + 1) % ID_SLOTS) {
        int64_t cur = atomic_load_explicit(&keys[s], memory_order_acquire);
        if (cur == k)
            return (long)s;
        if (cur == 0)
            return -1;
    }
    return -1;
}

/* A slot for k (its own, a free one or a tombstone), lock held; -1 when full. */
static long tab_slot(_Atomic int64_t *keys, int64_t k)
{
    long own = tab_find(keys, k);
    if (own >= 0)
        return own;
    size_t s = slot_of((uint64_t)k);
    for (int i = 0; i < ID_SLOTS; i++, s = (s + 1) % ID_SLOTS) {
        int64_t cur = atomic_load(&keys[s]);
        if (cur == 0 || cur == TOMB)
            return (long)s;
    }
    return -1;
}

static void tab_del(_Atomic int64_t *keys, int64_t k)
{
    pthread_mutex_lock(&tab_lock);
    long s = tab_find(keys, k);
    if (s >= 0)
        atomic_store(&keys[s], TOMB);
    pthread_mutex_unlock(&tab_lock);
}

static void file_put(hid_t id, struct pario_record *r)
{
    pthread_mutex_lock(&tab_lock);
    long s = tab_slot(file_keys, (int64_t)id);
    if (s >= 0) {
        atomic_store(&file_recs[s], r);
        atomic_store_explicit(&file_keys[s], (int64_t)id, memory_order_release);
    }
    pthread_mutex_unlock(&tab_lock);
}

static struct pario_record *file_get(hid_t id)
{
    long s = tab_find(file_keys, (int64_t)id);
    return s < 0 ? NULL : atomic_load_explicit(&file_recs[s], memory_order_relaxed);
}

static void state_put(uint64_t rid, const struct h5_file_state *st)
{
    pthread_mutex_lock(&tab_lock);
    size_t s = slot_of(rid);
    for (int i = 0; i < ID_SLOTS; i++, s = (s + 1) % ID_SLOTS) {
        uint64_t cur = atomic_load(&state_keys[s]);
        if (cur == 0 || cur == rid) {
            state_vals[s] = *st;
            atomic_store_explicit(&state_keys[s], rid, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&tab_lock);
}

static struct h5_file_state state_get(uint64_t rid)
{
    struct h5_file_state none = {.is_mpio = 0, .transfer = XFER_AS_IS, .ci = -1};
    size_t s = slot_of(rid);
    for (int i = 0; i < ID_SLOTS; i++, s = (s + 1) % ID_SLOTS) {
        uint64_t cur = atomic_load_explicit(&state_keys[s], memory_order_acquire);
        if (cur == rid)
            return state_vals[s];
        if (cur == 0)
            break;
    }
    return none;
}

/* ---- hdf5.* hints -------------------------------------------------------------*/

static int parse_u64(const char *v, uint64_t *out)
{
    if (!v || !*v)
        return -1;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || v[0] == '-')
        return -1;
    *out = x;
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    if (strcasecmp(v, "true") == 0)
        *out = 1;
    else if (strcasecmp(v, "false") == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

/* The file-access hints of a file, parsed (has_*: given and valid). */
struct fapl_hints {
    int has_thr, has_align, has_meta, has_sieve, has_cmo, has_cmw, transfer;
    uint64_t thr, align, meta, sieve;
    int cmo, cmw;
    const char *text[7][2];  /* key, value of the valid ones, for the record */
    int ntext;
};

static void read_fapl_hints(const char *name, struct fapl_hints *h)
{
    memset(h, 0, sizeof *h);
    const char *kv[2 * PARIO_MAX_HINTS];
    int n = pario_library_hints(name, PARIO_HDF5_HINT_PREFIX, kv);
    for (int i = 0; i < n; i++) {
        const char *k = kv[2 * i] + strlen(PARIO_HDF5_HINT_PREFIX), *v = kv[2 * i + 1];
        int ok = 0;
        if (strcmp(k, "alignment_threshold") == 0)
            ok = (h->has_thr = parse_u64(v, &h->thr) == 0);
        else if (strcmp(k, "alignment") == 0)
            ok = (h->has_align = parse_u64(v, &h->align) == 0 && h->align > 0);
        else if (strcmp(k, "meta_block_size") == 0)
            ok = (h->has_meta = parse_u64(v, &h->meta) == 0);
        else if (strcmp(k, "sieve_buf_size") == 0)
            ok = (h->has_sieve = parse_u64(v, &h->sieve) == 0);
        else if (strcmp(k, "coll_metadata_ops") == 0)
            ok = (h->has_cmo = parse_bool(v, &h->cmo) == 0);
        else if (strcmp(k, "coll_metadata_write") == 0)
            ok = (h->has_cmw = parse_bool(v, &h->cmw) == 0);
        else if (strcmp(k, "transfer") == 0) {
            h->transfer = strcasecmp(v, "collective") == 0    ? XFER_COLLECTIVE
                          : strcasecmp(v, "independent") == 0 ? XFER_INDEPENDENT
                                                              : XFER_AS_IS;
            ok = 0; /* recorded after the open, if the file uses the MPI-IO driver */
        }
        if (ok && h->ntext < 7) {
            h->text[h->ntext][0] = kv[2 * i];
            h->text[h->ntext][1] = v;
            h->ntext++;
        }
    }
}

/* A copy of fapl with the hints set, or -1 (nothing to set, or a copy failed);
 * *applied gets a bit per text[] entry that took. */
static hid_t hinted_fapl(hid_t fapl, const struct fapl_hints *h, unsigned *applied)
{
    *applied = 0;
    if (!(h->has_thr || h->has_align || h->has_meta || h->has_sieve || h->has_cmo || h->has_cmw))
        return -1;
    struct h5_quiet q;
    quiet_begin(&q);
    hid_t copy = h5.H5Pcopy(fapl == H5P_DEFAULT ? *h5.fapl_default : fapl);
    if (copy < 0) {
        quiet_end(&q);
        return -1;
    }
    int ok_align = 1, ok_meta = 1, ok_sieve = 1, ok_cmo = 1, ok_cmw = 1;
    if (h->has_thr || h->has_align) {
        hsize_t thr = 1, al = 1;
        h5.H5Pget_alignment(copy, &thr, &al);
        ok_align = h5.H5Pset_alignment(copy, h->has_thr ? h->thr : thr, h->has_align ? h->align : al) >= 0;
    }
    if (h->has_meta)
        ok_meta = h5.H5Pset_meta_block_size(copy, h->meta) >= 0;
    if (h->has_sieve)
        ok_sieve = h5.H5Pset_sieve_buf_size(copy, (size_t)h->sieve) >= 0;
    if (h->has_cmo)
        ok_cmo = h5.H5Pset_all_coll_metadata_ops && h5.H5Pset_all_coll_metadata_ops(copy, (hbool_t)h->cmo) >= 0;
    if (h->has_cmw)
        ok_cmw = h5.H5Pset_coll_metadata_write && h5.H5Pset_coll_metadata_write(copy, (hbool_t)h->cmw) >= 0;
    quiet_end(&q);
    for (int i = 0; i < h->ntext; i++) {
        const char *k = h->text[i][0] + strlen(PARIO_HDF5_HINT_PREFIX);
        int ok = strncmp(k, "alignment", 9) == 0 ? ok_align
                 : strcmp(k, "meta_block_size") == 0 ? ok_meta
                 : strcmp(k, "sieve_buf_size") == 0  ? ok_sieve
                 : strcmp(k, "coll_metadata_ops") == 0 ? ok_cmo
                                                       : ok_cmw;
        if (ok)
            *applied |= 1u << i;
    }
    return copy;
}

/* Keep "key=value\n..." of what was injected in the record (the RANK block's
 * injected-hints section, layer 3). */
static void record_injected(struct pario_record *r, const struct fapl_hints *h, unsigned applied,
                            const char *transfer)
{
    char text[1024];
    size_t len = 0;
    for (int i = 0; i < h->ntext; i++) {
        if (!(applied & (1u << i)))
            continue;
        int w = snprintf(text + len, sizeof text - len, "%s=%s\n", h->text[i][0], h->text[i][1]);
        if (w < 0 || (size_t)w >= sizeof text - len)
            break;
        len += (size_t)w;
    }
    if (transfer) {
        int w = snprintf(text + len, sizeof text - len, "%stransfer=%s\n", PARIO_HDF5_HINT_PREFIX, transfer);
        if (w > 0 && (size_t)w < sizeof text - len)
            len += (size_t)w;
    }
    text[len] = '\0';
    pario_rec_lock(r);
    int same = r->injected ? strcmp(r->injected, text) == 0 : len == 0;
    pario_rec_unlock(r);
    if (same)
        return;
    char *copy = pario_arena_strdup(text, sizeof text);
    if (copy) {
        pario_rec_lock(r);
        r->injected = copy;
        pario_rec_unlock(r);
    }
}

/* ---- the file's properties in effect --------------------------------------*/

static void file_properties(struct pario_record *r, hid_t fid, struct h5_file_state *st)
{
    struct h5_quiet q;
    quiet_begin(&q);
    hid_t fapl = h5.H5Fget_access_plist(fid);
    int64_t c[H5F_NUM_COUNTERS];
    int have = fapl >= 0;
    if (have) {
        hsize_t thr = 0, al = 0, meta = 0;
        size_t sieve = 0;
        hbool_t cmo = 0, cmw = 0;
        c[H5F_USE_MPIIO] = h5_mpio_driver >= 0 && h5.H5Pget_driver(fapl) == h5_mpio_driver;
        c[H5F_ALIGN_THRESHOLD] = h5.H5Pget_alignment(fapl, &thr, &al) >= 0 ? (int64_t)thr : -1;
        c[H5F_ALIGNMENT] = c[H5F_ALIGN_THRESHOLD] >= 0 ? (int64_t)al : -1;
        c[H5F_META_BLOCK_SIZE] = h5.H5Pget_meta_block_size(fapl, &meta) >= 0 ? (int64_t)meta : -1;
        c[H5F_SIEVE_BUF_SIZE] = h5.H5Pget_sieve_buf_size(fapl, &sieve) >= 0 ? (int64_t)sieve : -1;
        c[H5F_COLL_METADATA_READS] =
            h5.H5Pget_all_coll_metadata_ops && h5.H5Pget_all_coll_metadata_ops(fapl, &cmo) >= 0 ? cmo != 0 : -1;
        c[H5F_COLL_METADATA_WRITES] =
            h5.H5Pget_coll_metadata_write && h5.H5Pget_coll_metadata_write(fapl, &cmw) >= 0 ? cmw != 0 : -1;
        st->is_mpio = (int)c[H5F_USE_MPIIO];
        h5.H5Pclose(fapl);
    }
    quiet_end(&q);
    if (!have)
        return;
    pario_rec_lock(r);
    for (int i = H5F_USE_MPIIO; i <= H5F_COLL_METADATA_WRITES; i++)
        if (i != H5F_BYTES_READ && i != H5F_BYTES_WRITTEN)
            r->counters[i] = c[i];
    pario_rec_unlock(r);
}

/* The trace's index of the communicator of an MPI-IO file access list: collective
 * over it (H5Pget_fapl_mpio duplicates it), so asked on every rank alike. */
static int trace_comm_of(struct pario_thread *th, hid_t fapl)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    struct h5_quiet q;
    quiet_begin(&q);
    int got = h5.H5Pget_fapl_mpio(fapl == H5P_DEFAULT ? *h5.fapl_default : fapl, &comm, &info) >= 0;
    quiet_end(&q);
    if (!got)
        return -1;
    int ci = pario_trace_mine(th) ? pario_trace_comm(comm) : -1;
    if (comm != MPI_COMM_NULL) {
        if (ci >= 0)
            pario_trace_comm_free(comm);
        NEXT(PMPI_Comm_free)(&comm);
    }
    if (info != MPI_INFO_NULL)
        NEXT(PMPI_Info_free)(&info);
    return ci;
}

/* ---- timing -------------------------------------------------------------------*/

/* ci: the trace's index of the file's communicator (the call is collective on a
 * file opened with the MPI-IO driver), or -1. */
static void meta_done(struct pario_thread *th, int layer, struct pario_record *r, int counter,
                      enum pario_meta_kind kind, uint64_t t0, uint64_t t1, int ci)
{
    pario_charge(th, hdf5_meta, t0, t1);
    if (__builtin_expect(pario_tracing, 0))
        pario_trace_io_event(th, t0, t1, PT_IO_META, layer, r ? r->id : 0, -1, 0, ci >= 0 ? PT_COLLECTIVE : 0, ci,
                             -1);
    if (r)
        pario_rec_meta(r, counter, kind, t0, t1);
}

#define TIMED(T, call)                                                                             \
    struct pario_thread *th = pario_thread();                                                     \
    th->depth++;                                                                                   \
    uint64_t t0 = pario_now();                                                                     \
    T rc = call;                                                                                   \
    uint64_t t1 = pario_now();                                                                     \
    th->depth--

#define REAL_OR_FAIL(f, fail)                                                                      \
    MAP(f);                                                                                        \
    if (__builtin_expect(!real_##f, 0))                                                            \
        return fail

/* ---- files ----------------------------------------------------------------------*/

REAL(H5Fcreate);
REAL(H5Fopen);
REAL(H5Fflush);
REAL(H5Fclose);

static hid_t file_open(const char *name, unsigned flags, hid_t fcpl, hid_t fapl, int create)
{
    struct fapl_hints h;
    read_fapl_hints(name, &h);
    unsigned applied = 0;
    hid_t mine = hinted_fapl(fapl, &h, &applied);
    hid_t use = mine >= 0 ? mine : fapl;
    TIMED(hid_t, create ? real_H5Fcreate(name, flags, fcpl, use) : real_H5Fopen(name, flags, use));
    struct h5_file_state st = {.is_mpio = 0, .transfer = XFER_AS_IS, .ci = -1};
    struct pario_record *r = rc >= 0 ? pario_record_for_path(PARIO_H5F, name) : NULL;
    if (r) {
        th->depth++;
        file_properties(r, rc, &st);
        if (st.is_mpio && pario_tracing)
            st.ci = trace_comm_of(th, use);
        th->depth--;
        if (st.is_mpio)
            st.transfer = h.transfer;
        record_injected(r, &h, applied,
                        st.transfer == XFER_COLLECTIVE    ? "collective"
                        : st.transfer == XFER_INDEPENDENT ? "independent"
                                                          : NULL);
        state_put(r->id, &st);
        file_put(rc, r);
    }
    if (mine >= 0)
        h5.H5Pclose(mine);
    meta_done(th, PARIO_H5F, r, create ? H5F_CREATES : H5F_OPENS, PARIO_META_OPEN, t0, t1, st.ci);
    return rc;
}

hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
    REAL_OR_FAIL(H5Fcreate, -1);
    if (!h5_on() || !name)
        return real_H5Fcreate(name, flags, fcpl, fapl);
    return file_open(name, flags, fcpl, fapl, 1);
}

hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl)
{
    REAL_OR_FAIL(H5Fopen, -1);
    if (!h5_on() || !name)
        return real_H5Fopen(name, flags, fapl);
    return file_open(name, flags, H5P_DEFAULT, fapl, 0);
}

/* The H5F record of any object of a file (a file id, a group, a dataset). */
static struct pario_record *file_record_of(hid_t obj)
{
    struct pario_record *r = file_get(obj);
    if (r)
        return r;
    char name[4096];
    struct h5_quiet q;
    quiet_begin(&q);
    ssize_t n = h5.H5Fget_name(obj, name, sizeof name);
    quiet_end(&q);
    return n > 0 && (size_t)n < sizeof name ? pario_record_for_path(PARIO_H5F, name) : NULL;
}

herr_t H5Fflush(hid_t obj, H5F_scope_t scope)
{
    REAL_OR_FAIL(H5Fflush, -1);
    if (!h5_on())
        return real_H5Fflush(obj, scope);
    TIMED(herr_t, real_H5Fflush(obj, scope));
    th->depth++;
    struct pario_record *r = file_record_of(obj);
    th->depth--;
    int ci = r && scope == H5F_SCOPE_GLOBAL && pario_tracing ? state_get(r->id).ci : -1;
    meta_done(th, PARIO_H5F, r, H5F_FLUSHES, PARIO_META, t0, t1, ci);
    return rc;
}

herr_t H5Fclose(hid_t fid)
{
    REAL_OR_FAIL(H5Fclose, -1);
    if (!h5_on())
        return real_H5Fclose(fid);
    struct pario_record *r = file_get(fid);
    TIMED(herr_t, real_H5Fclose(fid));
    if (rc >= 0 && r)
        tab_del(file_keys, (int64_t)fid);
    meta_done(th, PARIO_H5F, r, -1, PARIO_META_CLOSE, t0, t1, r && pario_tracing ? state_get(r->id).ci : -1);
    return rc;
}

/* ---- datasets ------------------------------------------------------------------*/

/* Register a dataset id (created or opened, or first seen in a transfer):
 * its record "<file>:<dataset path>", file, element size, dataspace, layout. */
static int dset_register(hid_t did, struct h5_dset *out)
{
    struct pario_record *frec = file_record_of(did);
    if (!frec || frec->is_overflow || !frec->name)
        return 0;
    char dname[2048] = "";
    struct h5_quiet q;
    quiet_begin(&q);
    ssize_t n = h5.H5Iget_name(did, dname, sizeof dname);
    if (n <= 0 || (size_t)n >= sizeof dname)
        snprintf(dname, sizeof dname, "(anonymous)");
    char full[4096 + 2048 + 2];
    snprintf(full, sizeof full, "%s:%s", frec->name, dname);
    int64_t elem = 0, ndims = -1, npoints = -1, layout = -1, chunk[5] = {0, 0, 0, 0, 0};
    hid_t t = h5.H5Dget_type(did);
    if (t >= 0) {
        elem = (int64_t)h5.H5Tget_size(t);
        h5.H5Tclose(t);
    }
    hid_t sp = h5.H5Dget_space(did);
    if (sp >= 0) {
        ndims = h5.H5Sget_simple_extent_ndims(sp);
        npoints = (int64_t)h5.H5Sget_simple_extent_npoints(sp);
        h5.H5Sclose(sp);
    }
    hid_t dcpl = h5.H5Dget_create_plist(did);
    if (dcpl >= 0) {
        layout = (int64_t)h5.H5Pget_layout(dcpl);
        if (layout == H5D_CHUNKED) {
            hsize_t dims[32] = {0};
            int nd = h5.H5Pget_chunk(dcpl, 32, dims);
            /* Darshan's order: D1 is the fastest-varying (last) dimension */
            for (int i = 0; i < nd && i < 5; i++)
                chunk[i] = (int64_t)dims[nd - 1 - i];
        }
        h5.H5Pclose(dcpl);
    }
    quiet_end(&q);
    if (layout < H5D_COMPACT || layout > H5D_VIRTUAL)
        layout = -1;
    struct pario_record *r = pario_record_for_path(PARIO_H5D, full);
    if (!r)
        return 0;
    pario_rec_lock(r);
    r->counters[H5D_DATASPACE_NDIMS] = ndims;
    r->counters[H5D_DATASPACE_NPOINTS] = npoints;
    r->counters[H5D_DATATYPE_SIZE] = elem;
    r->counters[H5D_LAYOUT] = layout;
    for (int i = 0; i < 5; i++)
        r->counters[H5D_CHUNK_SIZE_D1 + i] = chunk[i];
    int64_t fid_bits;
    memcpy(&fid_bits, &frec->id, sizeof fid_bits);
    r->counters[H5D_FILE_REC_ID] = fid_bits;
    pario_rec_unlock(r);
    struct h5_dset d = {.rec = r, .frec = frec, .elem_size = elem, .fs = state_get(frec->id)};
    pthread_mutex_lock(&tab_lock);
    long s = tab_slot(dset_keys, (int64_t)did);
    if (s >= 0) {
        dset_vals[s] = d;
        atomic_store_explicit(&dset_keys[s], (int64_t)did, memory_order_release);
    }
    pthread_mutex_unlock(&tab_lock);
    *out = d;
    return 1;
}

/* The dataset's state: from the table, or registered now; 0 if unknown. */
static int dset_get(struct pario_thread *th, hid_t did, struct h5_dset *out)
{
    long s = tab_find(dset_keys, (int64_t)did);
    if (s >= 0) {
        *out = dset_vals[s];
        return 1;
    }
    th->depth++;
    int ok = dset_register(did, out);
    th->depth--;
    return ok;
}

static void dset_opened(struct pario_thread *th, hid_t did, int counter, uint64_t t0, uint64_t t1)
{
    struct h5_dset d = {0};
    int have = 0;
    if (did >= 0) {
        th->depth++;
        have = dset_register(did, &d);
        th->depth--;
    }
    meta_done(th, PARIO_H5D, have ? d.rec : NULL, counter, PARIO_META_OPEN, t0, t1, have ? d.fs.ci : -1);
}

REAL(H5Dcreate2);
REAL(H5Dopen2);
REAL(H5Dread);
REAL(H5Dwrite);
REAL(H5Dflush);
REAL(H5Dclose);

hid_t H5Dcreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl)
{
    REAL_OR_FAIL(H5Dcreate2, -1);
    if (!h5_on())
        return real_H5Dcreate2(loc, name, type, space, lcpl, dcpl, dapl);
    TIMED(hid_t, real_H5Dcreate2(loc, name, type, space, lcpl, dcpl, dapl));
    dset_opened(th, rc, H5D_CREATES, t0, t1);
    return rc;
}

hid_t H5Dopen2(hid_t loc, const char *name, hid_t dapl)
{
    REAL_OR_FAIL(H5Dopen2, -1);
    if (!h5_on())
        return real_H5Dopen2(loc, name, dapl);
    TIMED(hid_t, real_H5Dopen2(loc, name, dapl));
    dset_opened(th, rc, H5D_OPENS, t0, t1);
    return rc;
}

#ifndef H5_NO_DEPRECATED_SYMBOLS
REAL(H5Dcreate1);
REAL(H5Dopen1);
hid_t H5Dcreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl)
{
    REAL_OR_FAIL(H5Dcreate1, -1);
    if (!h5_on())
        return real_H5Dcreate1(loc, name, type, space, dcpl);
    TIMED(hid_t, real_H5Dcreate1(loc, name, type, space, dcpl));
    dset_opened(th, rc, H5D_CREATES, t0, t1);
    return rc;
}

hid_t H5Dopen1(hid_t loc, const char *name)
{
    REAL_OR_FAIL(H5Dopen1, -1);
    if (!h5_on())
        return real_H5Dopen1(loc, name);
    TIMED(hid_t, real_H5Dopen1(loc, name));
    dset_opened(th, rc, H5D_OPENS, t0, t1);
    return rc;
}
#endif

/* The transfer list to use (a copy with hdf5.transfer's mode, *mine set to it,
 * or dxpl) and whether the transfer is collective. */
static hid_t transfer_plist(const struct h5_dset *d, hid_t dxpl, hid_t *mine, int *coll)
{
    *mine = -1;
    *coll = 0;
    if (!d->fs.is_mpio)
        return dxpl;
    if (d->fs.transfer != XFER_AS_IS) {
        hid_t copy = h5.H5Pcopy(dxpl == H5P_DEFAULT ? *h5.dxpl_default : dxpl);
        H5FD_mpio_xfer_t mode = d->fs.transfer == XFER_COLLECTIVE ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT;
        if (copy >= 0 && h5.H5Pset_dxpl_mpio(copy, mode) >= 0) {
            *mine = copy;
            *coll = mode == H5FD_MPIO_COLLECTIVE;
            return copy;
        }
        if (copy >= 0)
            h5.H5Pclose(copy);
    }
    if (dxpl != H5P_DEFAULT) {
        H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
        if (h5.H5Pget_dxpl_mpio(dxpl, &mode) >= 0)
            *coll = mode == H5FD_MPIO_COLLECTIVE;
    }
    return dxpl;
}

/* Elements selected in the file and the selection's kind (counter, or -1). */
static int64_t file_selection(hid_t did, hid_t fspace, int *kind)
{
    *kind = H5D_REGULAR_HYPERSLAB_SELECTS;
    hid_t sp = fspace;
    if (fspace == H5S_ALL && (sp = h5.H5Dget_space(did)) < 0)
        return 0;
    int64_t n = (int64_t)h5.H5Sget_select_npoints(sp);
    H5S_sel_type t = h5.H5Sget_select_type(sp);
    if (t == H5S_SEL_POINTS)
        *kind = H5D_POINT_SELECTS;
    else if (t == H5S_SEL_HYPERSLABS)
        *kind = h5.H5Sis_regular_hyperslab(sp) > 0 ? H5D_REGULAR_HYPERSLAB_SELECTS : H5D_IRREGULAR_HYPERSLAB_SELECTS;
    else if (t != H5S_SEL_ALL)
        *kind = -1; /* H5S_SEL_NONE: a rank taking part with nothing */
    if (sp != fspace)
        h5.H5Sclose(sp);
    return n > 0 ? n : 0;
}

static void transfer_done(struct pario_thread *th, hid_t did, const struct h5_dset *d, int have, int is_write,
                          hid_t fspace, int coll, herr_t rc, uint64_t t0, uint64_t t1)
{
    pario_charge(th, is_write ? hdf5_write : hdf5_read, t0, t1);
    int64_t bytes = 0;
    int kind = -1;
    if (have && rc >= 0) {
        th->depth++;
        bytes = file_selection(did, fspace, &kind) * d->elem_size;
        th->depth--;
    }
    if (__builtin_expect(pario_tracing, 0)) {
        int ci = coll ? d->fs.ci : -1;
        pario_trace_io_event(th, t0, t1, is_write ? PT_IO_WRITE : PT_IO_READ, PARIO_H5D, have ? d->rec->id : 0, -1,
                             bytes, ci >= 0 ? PT_COLLECTIVE : 0, ci, -1);
    }
    if (!have)
        return;
    struct pario_record *r = d->rec;
    pario_rec_lock(r);
    r->counters[is_write ? H5D_WRITES : H5D_READS]++;
    if (kind >= 0)
        r->counters[kind]++;
    if (coll) {
        r->counters[is_write ? H5D_COLL_WRITES : H5D_COLL_READS]++;
        r->counters[H5D_USE_MPIIO_COLLECTIVE] = 1;
    }
    pario_rec_access(r, is_write, -1, bytes, t0, t1);
    pario_rec_unlock(r);
    struct pario_record *f = d->frec;
    pario_rec_lock(f);
    f->counters[is_write ? H5F_BYTES_WRITTEN : H5F_BYTES_READ] += bytes;
    f->fcounters[is_write ? H5F_F_WRITE_TIME : H5F_F_READ_TIME] += (double)(t1 - t0);
    pario_rec_unlock(f);
}

herr_t H5Dwrite(hid_t did, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, const void *buf)
{
    REAL_OR_FAIL(H5Dwrite, -1);
    if (!h5_on())
        return real_H5Dwrite(did, mtype, mspace, fspace, dxpl, buf);
    struct pario_thread *th0 = pario_thread();
    struct h5_dset d;
    int have = dset_get(th0, did, &d), coll = 0;
    hid_t mine = -1, use = have ? transfer_plist(&d, dxpl, &mine, &coll) : dxpl;
    TIMED(herr_t, real_H5Dwrite(did, mtype, mspace, fspace, use, buf));
    if (mine >= 0)
        h5.H5Pclose(mine);
    transfer_done(th, did, &d, have, 1, fspace, coll, rc, t0, t1);
    return rc;
}

herr_t H5Dread(hid_t did, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, void *buf)
{
    REAL_OR_FAIL(H5Dread, -1);
    if (!h5_on())
        return real_H5Dread(did, mtype, mspace, fspace, dxpl, buf);
    struct pario_thread *th0 = pario_thread();
    struct h5_dset d;
    int have = dset_get(th0, did, &d), coll = 0;
    hid_t mine = -1, use = have ? transfer_plist(&d, dxpl, &mine, &coll) : dxpl;
    TIMED(herr_t, real_H5Dread(did, mtype, mspace, fspace, use, buf));
    if (mine >= 0)
        h5.H5Pclose(mine);
    transfer_done(th, did, &d, have, 0, fspace, coll, rc, t0, t1);
    return rc;
}

herr_t H5Dflush(hid_t did)
{
    REAL_OR_FAIL(H5Dflush, -1);
    if (!h5_on())
        return real_H5Dflush(did);
    struct h5_dset d;
    int have = dset_get(pario_thread(), did, &d);
    TIMED(herr_t, real_H5Dflush(did));
    meta_done(th, PARIO_H5D, have ? d.rec : NULL, H5D_FLUSHES, PARIO_META, t0, t1, -1);
    return rc;
}

/* Close a dataset id (H5Dclose, or H5Oclose of a dataset): H5D metadata. */
static herr_t dset_close(hid_t did, long s, herr_t (*close)(hid_t))
{
    struct pario_record *r = s >= 0 ? dset_vals[s].rec : NULL;
    int ci = s >= 0 ? dset_vals[s].fs.ci : -1;
    TIMED(herr_t, close(did));
    if (rc >= 0 && s >= 0)
        tab_del(dset_keys, (int64_t)did);
    meta_done(th, PARIO_H5D, r, -1, PARIO_META_CLOSE, t0, t1, ci);
    return rc;
}

herr_t H5Dclose(hid_t did)
{
    REAL_OR_FAIL(H5Dclose, -1);
    if (!h5_on())
        return real_H5Dclose(did);
    return dset_close(did, tab_find(dset_keys, (int64_t)did), real_H5Dclose);
}

/* ---- groups, attributes, objects: metadata of their file --------------------
 * Their time is the file's H5F_F_META_TIME and the rank's hdf5_meta (no counter
 * of their own; an attribute's bytes are counted nowhere: H5F/H5D bytes are the
 * datasets'), and each call is an IO_META event of layer 3. */

/* The H5F record of the file holding obj (any id H5Iget_file_id takes), or NULL;
 * asked with the depth raised and HDF5's error printing off (a bad id is the
 * program's error, reported by the call itself). */
static struct pario_record *object_file(struct pario_thread *th, hid_t obj)
{
    MAP(H5Fclose);
    th->depth++;
    struct h5_quiet q;
    quiet_begin(&q);
    hid_t fid = h5.H5Iget_file_id(obj);
    quiet_end(&q);
    struct pario_record *r = NULL;
    if (fid >= 0) {
        r = file_record_of(fid);
        if (real_H5Fclose)
            real_H5Fclose(fid); /* the reference H5Iget_file_id added; not the program's id */
    }
    th->depth--;
    return r;
}

/* coll: a call parallel HDF5 requires of every rank of the file's communicator
 * (H5Gcreate, H5Acreate, H5Awrite): COLLECTIVE in the trace on an MPI-IO file. */
static void object_done(struct pario_thread *th, struct pario_record *r, int coll, uint64_t t0, uint64_t t1)
{
    int ci = r && coll && pario_tracing ? state_get(r->id).ci : -1;
    meta_done(th, PARIO_H5F, r, -1, PARIO_META, t0, t1, ci);
}

/* A call on loc that leaves it open (create, open, read, write): the file is
 * looked up after the call, outside its time. */
#define OBJECT_CALL(T, f, loc, coll, ...)                                                          \
    REAL_OR_FAIL(f, -1);                                                                           \
    if (!h5_on())                                                                                  \
        return real_##f(__VA_ARGS__);                                                              \
    TIMED(T, real_##f(__VA_ARGS__));                                                               \
    object_done(th, object_file(th, loc), coll, t0, t1);                                           \
    return rc

/* A call that closes id: the file is looked up before. */
#define OBJECT_CLOSE(f, id)                                                                        \
    REAL_OR_FAIL(f, -1);                                                                           \
    if (!h5_on())                                                                                  \
        return real_##f(id);                                                                       \
    struct pario_record *fr = object_file(pario_thread(), id);                                     \
    TIMED(herr_t, real_##f(id));                                                                   \
    object_done(th, fr, 0, t0, t1);                                                                \
    return rc

REAL(H5Gcreate2);
REAL(H5Gopen2);
REAL(H5Gclose);
REAL(H5Acreate2);
REAL(H5Acreate_by_name);
REAL(H5Aopen);
REAL(H5Aopen_by_name);
REAL(H5Aopen_by_idx);
REAL(H5Awrite);
REAL(H5Aread);
REAL(H5Aclose);
REAL(H5Oopen);
REAL(H5Oclose);

hid_t H5Gcreate2(hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl)
{
    OBJECT_CALL(hid_t, H5Gcreate2, loc, 1, loc, name, lcpl, gcpl, gapl);
}

hid_t H5Gopen2(hid_t loc, const char *name, hid_t gapl) { OBJECT_CALL(hid_t, H5Gopen2, loc, 0, loc, name, gapl); }

herr_t H5Gclose(hid_t gid) { OBJECT_CLOSE(H5Gclose, gid); }

hid_t H5Acreate2(hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl, hid_t aapl)
{
    OBJECT_CALL(hid_t, H5Acreate2, loc, 1, loc, name, type, space, acpl, aapl);
}

hid_t H5Acreate_by_name(hid_t loc, const char *obj_name, const char *attr_name, hid_t type, hid_t space,
                        hid_t acpl, hid_t aapl, hid_t lapl)
{
    OBJECT_CALL(hid_t, H5Acreate_by_name, loc, 1, loc, obj_name, attr_name, type, space, acpl, aapl, lapl);
}

hid_t H5Aopen(hid_t obj, const char *name, hid_t aapl) { OBJECT_CALL(hid_t, H5Aopen, obj, 0, obj, name, aapl); }

hid_t H5Aopen_by_name(hid_t loc, const char *obj_name, const char *attr_name, hid_t aapl, hid_t lapl)
{
    OBJECT_CALL(hid_t, H5Aopen_by_name, loc, 0, loc, obj_name, attr_name, aapl, lapl);
}

hid_t H5Aopen_by_idx(hid_t loc, const char *obj_name, H5_index_t idx_type, H5_iter_order_t order, hsize_t n,
                     hid_t aapl, hid_t lapl)
{
    OBJECT_CALL(hid_t, H5Aopen_by_idx, loc, 0, loc, obj_name, idx_type, order, n, aapl, lapl);
}

herr_t H5Awrite(hid_t aid, hid_t mtype, const void *buf)
{
    OBJECT_CALL(herr_t, H5Awrite, aid, 1, aid, mtype, buf);
}

herr_t H5Aread(hid_t aid, hid_t mtype, void *buf) { OBJECT_CALL(herr_t, H5Aread, aid, 0, aid, mtype, buf); }

herr_t H5Aclose(hid_t aid) { OBJECT_CLOSE(H5Aclose, aid); }

hid_t H5Oopen(hid_t loc, const char *name, hid_t lapl) { OBJECT_CALL(hid_t, H5Oopen, loc, 0, loc, name, lapl); }

/* H5Oclose of a dataset known to the layer closes it as H5Dclose does; of
 * anything else (a group, a named datatype, a dataset opened before...) it is
 * file metadata. */
herr_t H5Oclose(hid_t obj)
{
    REAL_OR_FAIL(H5Oclose, -1);
    if (!h5_on())
        return real_H5Oclose(obj);
    long s = tab_find(dset_keys, (int64_t)obj);
    if (s >= 0)
        return dset_close(obj, s, real_H5Oclose);
    OBJECT_CLOSE(H5Oclose, obj);
}

#ifndef H5_NO_DEPRECATED_SYMBOLS
REAL(H5Gcreate1);
REAL(H5Gopen1);
REAL(H5Acreate1);
REAL(H5Aopen_name);
REAL(H5Aopen_idx);

hid_t H5Gcreate1(hid_t loc, const char *name, size_t size_hint)
{
    OBJECT_CALL(hid_t, H5Gcreate1, loc, 1, loc, name, size_hint);
}

hid_t H5Gopen1(hid_t loc, const char *name) { OBJECT_CALL(hid_t, H5Gopen1, loc, 0, loc, name); }

hid_t H5Acreate1(hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl)
{
    OBJECT_CALL(hid_t, H5Acreate1, loc, 1, loc, name, type, space, acpl);
}

hid_t H5Aopen_name(hid_t loc, const char *name) { OBJECT_CALL(hid_t, H5Aopen_name, loc, 0, loc, name); }

hid_t H5Aopen_idx(hid_t loc, unsigned idx) { OBJECT_CALL(hid_t, H5Aopen_idx, loc, 0, loc, idx); }
#endif

#endif /* PARIO_HAVE_HDF5 */
