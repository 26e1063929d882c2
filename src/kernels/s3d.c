/* pario-kernel-s3d: a model of the S3D-IO checkpoint pattern.
 *
 * A global nx x ny x nz grid is block-partitioned over a px x py x pz process
 * grid (rank = (iz*py + iy)*px + ix, x fastest).  Each checkpoint writes four
 * arrays of doubles, one after the other in the file, each through a subarray
 * file view (non-contiguous in the file as soon as px or py > 1):
 *   yspecies[species][nz][ny][nx]   4-D (default 11 species)
 *   u[3][nz][ny][nx]                4-D (velocity components)
 *   pressure[nz][ny][nx]            3-D
 *   temperature[nz][ny][nx]         3-D
 * (x fastest, as S3D's Fortran arrays and the netCDF variables of S3D-IO).
 * S3D-IO writes each checkpoint to a new file; here checkpoints are appended
 * to one file (step k at k * checkpoint size), the per-checkpoint access
 * pattern is the same.
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static long long nx = 32, ny = 32, nz = 32, px, py, pz, species = 11;

static kc_opt opts[] = {
    {"nx", KC_INT, &nx, NULL, "global grid points in x (default 32)", 0},
    {"ny", KC_INT, &ny, NULL, "global grid points in y (default 32)", 0},
    {"nz", KC_INT, &nz, NULL, "global grid points in z (default 32)", 0},
    {"px", KC_INT, &px, NULL, "processes in x (default: from MPI_Dims_create)", 0},
    {"py", KC_INT, &py, NULL, "processes in y", 0},
    {"pz", KC_INT, &pz, NULL, "processes in z; px*py*pz must equal the number of processes", 0},
    {"species", KC_INT, &species, NULL, "chemical species in yspecies (default 11)", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

#define NARR 4
static const char *arr_names[NARR] = {"yspecies", "u", "pressure", "temperature"};
static long long ncomp[NARR];
static uint64_t arr_disp[NARR];
static MPI_Datatype ftype[NARR] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
static kc_run *runs[NARR];
static size_t nruns[NARR];
static long long lx, ly, lz, x0, y0_, z0;

static int setup(kc_ctx *ctx)
{
    if (nx < 1 || ny < 1 || nz < 1) {
        kc_fail(ctx, "--nx, --ny and --nz must be positive");
        return -1;
    }
    if (species < 1 || species > 1000) {
        kc_fail(ctx, "--species must be between 1 and 1000");
        return -1;
    }
    if (px < 0 || py < 0 || pz < 0) {
        kc_fail(ctx, "--px, --py and --pz must be positive");
        return -1;
    }
    int dims[3] = {(int)pz, (int)py, (int)px}; /* MPI_Dims_create: slowest first */
    long long fixed = (px ? px : 1) * (py ? py : 1) * (pz ? pz : 1);
    if (fixed > ctx->nprocs || ctx->nprocs % fixed != 0) {
        kc_fail(ctx, "process grid %lld x %lld x %lld does not match %d processes", px, py, pz, ctx->nprocs);
        return -1;
    }
    kc_dims(ctx->nprocs, 3, dims);
    pz = dims[0];
    py = dims[1];
    px = dims[2];
    if (px * py * pz != ctx->nprocs) {
        kc_fail(ctx, "process grid %lld x %lld x %lld is not %d processes", px, py, pz, ctx->nprocs);
        return -1;
    }
    if (nx % px || ny % py || nz % pz) {
        kc_fail(ctx, "grid %lld x %lld x %lld does not divide over processes %lld x %lld x %lld", nx, ny, nz, px, py,
                pz);
        return -1;
    }
    lx = nx / px;
    ly = ny / py;
    lz = nz / pz;
    int ix = ctx->rank % (int)px, iy = (ctx->rank / (int)px) % (int)py, iz = ctx->rank / (int)(px * py);
    x0 = ix * lx;
    y0_ = iy * ly;
    z0 = iz * lz;
    uint64_t G = (uint64_t)nx * (uint64_t)ny * (uint64_t)nz;
    if (G > (1ULL << 50) || (uint64_t)species * (uint64_t)lx * (uint64_t)ly * (uint64_t)lz > INT_MAX) {
        kc_fail(ctx, "grid too large (local arrays must hold fewer than 2^31 doubles)");
        return -1;
    }
    ncomp[0] = species;
    ncomp[1] = 3;
    ncomp[2] = 1;
    ncomp[3] = 1;
    uint64_t off = 0;
    size_t maxb = 0;
    for (int a = 0; a < NARR; a++) {
        arr_disp[a] = off;
        off += (uint64_t)ncomp[a] * G * 8;
        int sizes[4] = {(int)ncomp[a], (int)nz, (int)ny, (int)nx};
        int subs[4] = {(int)ncomp[a], (int)lz, (int)ly, (int)lx};
        int starts[4] = {0, (int)z0, (int)y0_, (int)x0};
        int nd = ncomp[a] > 1 ? 4 : 3;
        int o = nd == 4 ? 0 : 1;
        if (MPI_Type_create_subarray(nd, sizes + o, subs + o, starts + o, MPI_ORDER_C, MPI_DOUBLE, &ftype[a]) !=
            MPI_SUCCESS) {
            kc_fail(ctx, "MPI_Type_create_subarray failed");
            return -1;
        }
        kc_commit(ctx, &ftype[a]);
        nruns[a] = (size_t)(ncomp[a] * lz * ly);
        runs[a] = malloc(nruns[a] * sizeof(kc_run));
        if (!runs[a]) {
            kc_fail(ctx, "out of memory");
            return -1;
        }
        size_t n = 0;
        for (long long c = 0; c < ncomp[a]; c++)
            for (long long z = 0; z < lz; z++)
                for (long long y = 0; y < ly; y++) {
                    uint64_t e = (((uint64_t)c * nz + z0 + z) * ny + y0_ + y) * nx + x0;
                    runs[a][n].off = e * 8;
                    runs[a][n].len = (uint64_t)lx * 8;
                    n++;
                }
        size_t b = (size_t)ncomp[a] * lx * ly * lz * 8;
        if (b > maxb)
            maxb = b;
    }
    ctx->nreq = NARR;
    ctx->max_req_bytes = maxb;
    ctx->step_bytes = off;
    return 0;
}

static void request(kc_ctx *ctx, int step, long long idx, kc_req *r)
{
    int a = (int)idx;
    uint64_t base = (uint64_t)step * ctx->step_bytes + arr_disp[a];
    r->view_id = a;
    r->disp = (MPI_Offset)base;
    r->etype = MPI_DOUBLE;
    r->ftype = ftype[a];
    r->offset = 0;
    r->memtype = MPI_DOUBLE;
    r->count = (int)(ncomp[a] * lx * ly * lz);
    r->nbytes = (size_t)r->count * 8;
    r->runs = runs[a];
    r->nruns = nruns[a];
    r->run_base = base;
}

static void params(kc_ctx *ctx, kc_json *j)
{
    (void)ctx;
    long long g[3] = {nx, ny, nz}, p[3] = {px, py, pz}, l[3] = {lx, ly, lz};
    kc_json_int_array(j, "grid", g, 3);
    kc_json_int_array(j, "procs", p, 3);
    kc_json_int_array(j, "local", l, 3);
    kc_json_int(j, "species", species);
    kc_json_int(j, "element_size", 8);
    /* names and components, in file order */
    kc_json_open(j, "arrays");
    for (int a = 0; a < NARR; a++)
        kc_json_int(j, arr_names[a], ncomp[a]);
    kc_json_close(j);
}

static void cleanup(kc_ctx *ctx)
{
    (void)ctx;
    for (int a = 0; a < NARR; a++) {
        if (ftype[a] != MPI_DATATYPE_NULL)
            MPI_Type_free(&ftype[a]);
        free(runs[a]);
        runs[a] = NULL;
    }
}

static const kc_kernel kernel = {
    "s3d",
    "S3D-IO checkpoint pattern (model): 3-D block partition of four 3-D/4-D double arrays "
    "(yspecies, u, pressure, temperature), each written through a subarray file view",
    opts, setup, request, params, cleanup,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
