/* pario-kernel-vpic: a model of the VPIC-IO particle dump pattern.
 *
 * Every rank holds N particles with 8 variables, 4 bytes each:
 *   x, y, z (float), id1, id2 (int), px, py, pz (float).
 * The file holds the 8 variables one after the other, each a 1-D array of
 * P*N values; rank r's values of a variable are the contiguous block
 * [r*N, (r+1)*N) of it (what VPIC-IO's H5Part datasets look like on disk,
 * without the HDF5 metadata).  8 requests per time step, explicit offsets;
 * steps appended.
 *
 * --hdf5 (built when HDF5's parallel build was found: PARIO_HAVE_HDF5) writes
 * the same particles through HDF5 as VPIC-IO and h5bench do: one file, a group
 * /Timestep_<k> per step holding the 8 variables as 1-D datasets of P*N
 * elements (float, or int for id1 and id2), rank r writing the hyperslab
 * [r*N, (r+1)*N) of each with H5Dwrite.  Values: see vpic_value().
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PARIO_HAVE_HDF5
#include <hdf5.h>
#endif

static long long particles = 1 << 20;
static int use_hdf5;
static long long chunk, align, align_threshold;
static int coll_meta, force;

/* More chunks than this in one run is refused without --force: HDF5 creates
 * and indexes every chunk, with metadata operations on every rank, so a run
 * of millions of small chunks takes hours (docs/kernels.md). */
#define MAX_CHUNKS 65536LL

static kc_opt opts[] = {
    {"particles", KC_SIZE, &particles, NULL, "particles per rank (default 1m = 1048576; VPIC-IO uses 8m)", 0},
    {"hdf5", KC_FLAG, &use_hdf5, NULL,
     "write through HDF5 (H5Dwrite of 1-D datasets, a group /Timestep_<k> per step) instead of raw MPI-IO", 0},
    {"chunk", KC_SIZE, &chunk, NULL, "--hdf5: chunked datasets with chunks of N elements (default contiguous)", 0},
    {"align", KC_SIZE, &align, NULL, "--hdf5: H5Pset_alignment: align file objects to BYTES (default: HDF5's, 1)", 0},
    {"align-threshold", KC_SIZE, &align_threshold, NULL,
     "--hdf5: only objects of at least BYTES are aligned (default 0: every object)", 0},
    {"coll-metadata", KC_FLAG, &coll_meta, NULL,
     "--hdf5: collective metadata reads and writes (H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write)", 0},
    {"force", KC_FLAG, &force, NULL, "--hdf5: run even with more than 65536 chunks in the file (slow: hours)", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

#define NVAR 8
static const char *var_names[NVAR] = {"x", "y", "z", "id1", "id2", "px", "py", "pz"};

#ifdef PARIO_HAVE_HDF5
static const kc_lib *hdf5_lib(void);

/* The value of variable v of global particle g at step `step` in the --hdf5
 * mode: w = (((seed + step) * 8 + v) * 1000003 + g) mod 2^24, stored as the
 * float w (x, y, z, px, py, pz) or the int w (id1, id2): exact in both. */
static uint32_t vpic_value(long long seed, long long step, int v, uint64_t g)
{
    uint64_t w = (((uint64_t)seed + (uint64_t)step) * NVAR + (uint64_t)v) * 1000003ULL + g;
    return (uint32_t)(w & 0xFFFFFFu);
}
#endif

static int setup_hdf5(kc_ctx *ctx)
{
    int given = use_hdf5 ? 0 : (opts[2].given || opts[3].given || opts[4].given || opts[5].given || opts[6].given);
    if (given) {
        kc_fail(ctx, "--chunk, --align, --align-threshold, --coll-metadata and --force need --hdf5");
        return -1;
    }
    if (!use_hdf5)
        return 0;
#ifndef PARIO_HAVE_HDF5
    kc_fail(ctx, "this pario was built without HDF5 (parallel HDF5 for its MPI, e.g. libhdf5-openmpi-dev, was not "
                 "found): --hdf5 is not available");
    return -1;
#else
    uint64_t total = (uint64_t)particles * (uint64_t)ctx->nprocs;
    if (opts[2].given && (chunk < 1 || (uint64_t)chunk > total || chunk > (1LL << 30))) {
        kc_fail(ctx, "--chunk must be between 1 and the particles of all ranks (%llu) and below 2^30",
                (unsigned long long)total);
        return -1;
    }
    long long per_dataset = (long long)((total + (uint64_t)chunk - 1) / (uint64_t)(chunk > 0 ? chunk : 1));
    long long chunks = chunk > 0 ? per_dataset * NVAR * ctx->steps : 0;
    if (chunks > MAX_CHUNKS && !force) {
        long long sane = 1;
        while ((long long)((total + (uint64_t)sane - 1) / (uint64_t)sane) * NVAR * ctx->steps > MAX_CHUNKS)
            sane *= 2;
        kc_fail(ctx, "--chunk %lld makes %lld chunks (%d datasets x %lld steps x %lld chunks), each created and "
                "indexed by HDF5 with metadata operations on every rank: hours at this size; use --chunk %lld "
                "or more, fewer --particles, or --force", chunk, chunks, NVAR, ctx->steps, per_dataset, sane);
        return -1;
    }
    if (opts[3].given && align < 1) {
        kc_fail(ctx, "--align must be at least 1 byte");
        return -1;
    }
    if (opts[4].given && !opts[3].given) {
        kc_fail(ctx, "--align-threshold needs --align");
        return -1;
    }
    if (align_threshold < 0) {
        kc_fail(ctx, "--align-threshold must not be negative");
        return -1;
    }
    ctx->lib = hdf5_lib();
    return 0;
#endif
}

static int setup(kc_ctx *ctx)
{
    if (particles < 1) {
        kc_fail(ctx, "--particles must be at least 1");
        return -1;
    }
    if (particles > INT_MAX / 4) {
        kc_fail(ctx, "--particles must be below 2^29 per rank");
        return -1;
    }
    ctx->nreq = NVAR;
    ctx->max_req_bytes = (size_t)particles * 4;
    ctx->step_bytes = (uint64_t)NVAR * (uint64_t)ctx->nprocs * (uint64_t)particles * 4;
    return setup_hdf5(ctx);
}

static void request(kc_ctx *ctx, int step, long long idx, kc_req *r)
{
    uint64_t N = (uint64_t)particles, P = (uint64_t)ctx->nprocs;
    uint64_t off = (uint64_t)step * ctx->step_bytes + ((uint64_t)idx * P + (uint64_t)ctx->rank) * N * 4;
    kc_req_contig(r, off, (size_t)N * 4);
    r->memtype = (idx == 3 || idx == 4) ? MPI_INT : MPI_FLOAT;
    r->count = (int)N;
}

static void params(kc_ctx *ctx, kc_json *j)
{
    kc_json_int(j, "particles_per_rank", particles);
    kc_json_u64(j, "particles", (uint64_t)particles * (uint64_t)ctx->nprocs);
    kc_json_int(j, "element_size", 4);
    kc_json_key(j, "variables");
    char list[128] = "";
    /* ["x","y",...] */
    size_t pos = 0;
    list[pos++] = '[';
    for (int v = 0; v < NVAR; v++) {
        const char *s = var_names[v];
        if (v)
            list[pos++] = ',';
        list[pos++] = '"';
        while (*s)
            list[pos++] = *s++;
        list[pos++] = '"';
    }
    list[pos++] = ']';
    list[pos] = '\0';
    kc_json_raw(j, list);
}

/* ==== --hdf5 ===================================================================== */

#ifdef PARIO_HAVE_HDF5

/* What the last phase used, for the JSON. */
static hsize_t used_threshold = 1, used_align = 1;

static void h5_fail(kc_ctx *ctx, const char *what, const char *name, const char *why)
{
    kc_fail(ctx, "%s %s failed in %s%s", what, name, ctx->path, why);
}

/* Check one variable read back; count the differing values, describe the first. */
static void h5_check(kc_ctx *ctx, long long step, int v, const void *buf, kc_lib_result *res)
{
    uint64_t base = (uint64_t)ctx->rank * (uint64_t)particles;
    int is_int = v == 3 || v == 4;
    for (long long i = 0; i < particles; i++) {
        uint32_t w = vpic_value(ctx->seed, step, v, base + (uint64_t)i);
        double got, exp = (double)w;
        if (is_int)
            got = (double)((const int *)buf)[i];
        else
            got = (double)((const float *)buf)[i];
        if (got != exp) {
            if (!res->bad)
                snprintf(res->first_bad, sizeof res->first_bad, "/Timestep_%lld/%s[%llu]: expected %.9g, read %.9g",
                         step, var_names[v], (unsigned long long)(base + (uint64_t)i), exp, got);
            res->bad++;
        }
    }
}

static void h5_fill(kc_ctx *ctx, long long step, int v, void *buf)
{
    uint64_t base = (uint64_t)ctx->rank * (uint64_t)particles;
    for (long long i = 0; i < particles; i++) {
        uint32_t w = vpic_value(ctx->seed, step, v, base + (uint64_t)i);
        if (v == 3 || v == 4)
            ((int *)buf)[i] = (int)w;
        else
            ((float *)buf)[i] = (float)w;
    }
}

/* The steps of one phase with the file open.  Stops at the first failure (every
 * rank fails the same way for the metadata calls, which are collective). */
static void h5_steps(kc_ctx *ctx, hid_t fid, int writing, kc_lib_result *res, void *buf)
{
    hsize_t total = (hsize_t)particles * (hsize_t)ctx->nprocs, n = (hsize_t)particles;
    hsize_t start = (hsize_t)ctx->rank * n;
    hid_t whole = H5Screate_simple(1, &total, NULL);
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t mspace = H5Screate_simple(1, &n, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (whole < 0 || fspace < 0 || mspace < 0 || dcpl < 0 || dxpl < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &n, NULL) < 0 ||
        H5Pset_dxpl_mpio(dxpl, ctx->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) < 0) {
        kc_fail(ctx, "cannot set up the HDF5 dataspaces and property lists");
    } else if (chunk > 0) {
        hsize_t c = (hsize_t)chunk;
        if (H5Pset_chunk(dcpl, 1, &c) < 0)
            kc_fail(ctx, "H5Pset_chunk(%lld) failed", chunk);
    }
    for (long long s = 0; s < ctx->steps && !ctx->failed; s++) {
        char gname[64];
        snprintf(gname, sizeof gname, "/Timestep_%lld", s);
        double t0 = MPI_Wtime();
        hid_t g = writing ? H5Gcreate2(fid, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                          : H5Gopen2(fid, gname, H5P_DEFAULT);
        res->io += MPI_Wtime() - t0;
        if (g < 0) {
            h5_fail(ctx, writing ? "H5Gcreate" : "H5Gopen", gname, writing ? "" : " (written with fewer --steps?)");
            break;
        }
        for (int v = 0; v < NVAR && !ctx->failed; v++) {
            int is_int = v == 3 || v == 4;
            hid_t mtype = is_int ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
            if (writing)
                h5_fill(ctx, s, v, buf);
            else
                memset(buf, 0xff, (size_t)particles * 4);
            char dname[96];
            snprintf(dname, sizeof dname, "%s/%s", gname, var_names[v]);
            t0 = MPI_Wtime();
            hid_t d = writing ? H5Dcreate2(g, var_names[v], is_int ? H5T_STD_I32LE : H5T_IEEE_F32LE, whole,
                                           H5P_DEFAULT, dcpl, H5P_DEFAULT)
                              : H5Dopen2(g, var_names[v], H5P_DEFAULT);
            herr_t rc = -1;
            hssize_t have = -1;
            if (d >= 0 && !writing) {
                hid_t sp = H5Dget_space(d);
                have = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
                if (sp >= 0)
                    H5Sclose(sp);
            }
            if (d >= 0 && (writing || have == (hssize_t)total))
                rc = writing ? H5Dwrite(d, mtype, mspace, fspace, dxpl, buf) : H5Dread(d, mtype, mspace, fspace, dxpl, buf);
            if (d >= 0)
                H5Dclose(d);
            res->io += MPI_Wtime() - t0;
            if (d < 0)
                h5_fail(ctx, writing ? "H5Dcreate" : "H5Dopen", dname, "");
            else if (!writing && have != (hssize_t)total)
                kc_fail(ctx, "%s has %lld elements, not %llu (written with other --particles or processes?)", dname,
                        (long long)have, (unsigned long long)total);
            else if (rc < 0)
                h5_fail(ctx, writing ? "H5Dwrite to" : "H5Dread from", dname, "");
            else {
                res->bytes += (uint64_t)particles * 4;
                if (!writing && ctx->verify)
                    h5_check(ctx, s, v, buf, res);
            }
            kc_progress(ctx, writing ? "datasets written" : "datasets read", s * NVAR + v + 1, ctx->steps * NVAR);
        }
        t0 = MPI_Wtime();
        H5Gclose(g);
        res->io += MPI_Wtime() - t0;
    }
    H5Pclose(dxpl);
    H5Pclose(dcpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Sclose(whole);
}

static void h5_phase(kc_ctx *ctx, int writing, MPI_Info info, kc_lib_result *res)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors: our one line, not HDF5's stack */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info) < 0)
        kc_fail(ctx, "cannot set up HDF5's MPI-IO file driver (H5Pset_fapl_mpio)");
    else if (align > 0 && H5Pset_alignment(fapl, (hsize_t)align_threshold, (hsize_t)align) < 0)
        kc_fail(ctx, "H5Pset_alignment(%lld, %lld) failed", align_threshold, align);
    else if (coll_meta && (H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0))
        kc_fail(ctx, "cannot set collective metadata operations");
    hid_t fid = -1;
    if (!ctx->failed) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        fid = writing ? H5Fcreate(ctx->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(ctx->path, H5F_ACC_RDONLY, fapl);
        res->open += MPI_Wtime() - t0;
        if (fid < 0)
            kc_fail(ctx, "%s %s failed (not an HDF5 file?)", writing ? "H5Fcreate" : "H5Fopen", ctx->path);
    }
    if (kc_agree(ctx)) {
        if (fid >= 0)
            H5Fclose(fid);
        if (fapl >= 0)
            H5Pclose(fapl);
        return;
    }
    hid_t fa = H5Fget_access_plist(fid);
    if (fa >= 0) {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Info i = MPI_INFO_NULL;
        if (H5Pget_fapl_mpio(fa, &c, &i) >= 0) {
            res->used = i;
            if (c != MPI_COMM_NULL)
                MPI_Comm_free(&c);
        }
        H5Pget_alignment(fa, &used_threshold, &used_align);
        H5Pclose(fa);
    }
    void *buf = malloc((size_t)particles * 4);
    if (!buf)
        kc_fail(ctx, "cannot allocate %lld bytes", particles * 4);
    if (!kc_agree(ctx)) {
        MPI_Barrier(MPI_COMM_WORLD);
        h5_steps(ctx, fid, writing, res, buf);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double t0 = MPI_Wtime();
    if (H5Fclose(fid) < 0)
        kc_fail(ctx, "H5Fclose %s failed", ctx->path);
    res->close += MPI_Wtime() - t0;
    H5Pclose(fapl);
    free(buf);
}

static void h5_json(kc_ctx *ctx, kc_json *j)
{
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    char ver[32];
    snprintf(ver, sizeof ver, "%u.%u.%u", maj, min, rel);
    kc_json_str(j, "version", ver);
    kc_json_str(j, "transfer", ctx->collective ? "collective" : "independent");
    kc_json_str(j, "layout", chunk > 0 ? "chunked" : "contiguous");
    if (chunk > 0)
        kc_json_int(j, "chunk_elements", chunk);
    else
        kc_json_null(j, "chunk_elements");
    kc_json_u64(j, "alignment", (uint64_t)used_align);
    kc_json_u64(j, "alignment_threshold", (uint64_t)used_threshold);
    kc_json_bool(j, "collective_metadata", coll_meta);
    kc_json_str(j, "groups", "/Timestep_<step>");
    kc_json_u64(j, "dataset_elements", (uint64_t)particles * (uint64_t)ctx->nprocs);
}

static const kc_lib hdf5 = {"hdf5", h5_phase, h5_json};
static const kc_lib *hdf5_lib(void) { return &hdf5; }

#endif /* PARIO_HAVE_HDF5 */

static const kc_kernel kernel = {
    "vpic",
    "VPIC-IO particle pattern (model): 8 variables (x, y, z, id1, id2, px, py, pz) of 4 bytes, "
    "each a contiguous 1-D block per rank in one shared file",
    opts, setup, request, params, NULL,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
