/* pario-kernel-bt: a model of the NAS BT-IO pattern (full MPI-IO subtype).
 *
 * P = q*q processes.  The N x N x N grid is cut into q cells per dimension
 * (q^3 cells; as in NPB, the first N mod q cells of a dimension get one extra
 * point).  Diagonal multi-partitioning, as NPB BT's make_set: the process at
 * (row, col) = (rank / q, rank mod q) owns the q cells
 *     c = 0..q-1:  (x, y, z) = ((col + c) mod q, (row - c) mod q, c)
 * i.e. one cell in every z slab, every x column and every y row.
 * The solution u has 5 doubles per grid point; the file holds u(5, N, N, N)
 * in Fortran order (component fastest, then x, y, z) for every time step,
 * steps appended.  Each rank writes all its cells in one collective call
 * through a file view that is the struct of one 4-D subarray per cell.
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static long long size_n = 0;
static int klass = -1;

static kc_opt opts[] = {
    {"size", KC_INT, &size_n, NULL, "grid points per dimension N (default 24 = class W)", 0},
    {"class", KC_CHOICE, &klass, "S|W|A|B|C|D", "NPB problem class: N = 12, 24, 64, 102, 162, 408", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static const long long class_size[] = {12, 24, 64, 102, 162, 408};
static long long q, cells_local;
static MPI_Datatype ftype = MPI_DATATYPE_NULL;
static kc_run *runs;
static size_t nruns;
static long long ndoubles;

static void cell_range(long long N, long long coord, long long *low, long long *len)
{
    long long base = N / q, excess = N % q;
    if (coord < excess) {
        *len = base + 1;
        *low = coord * (base + 1);
    } else {
        *len = base;
        *low = excess * (base + 1) + (coord - excess) * base;
    }
}

static int setup(kc_ctx *ctx)
{
    if (opts[0].given && size_n < 1) {
        kc_fail(ctx, "--size must be positive (got %lld)", size_n);
        return -1;
    }
    if (size_n && klass >= 0 && size_n != class_size[klass]) {
        kc_fail(ctx, "--size %lld contradicts --class (N = %lld)", size_n, class_size[klass]);
        return -1;
    }
    if (!size_n)
        size_n = klass >= 0 ? class_size[klass] : 24;
    q = kc_isqrt(ctx->nprocs);
    if (q * q != ctx->nprocs) {
        kc_fail(ctx, "%d processes is not a square number; bt needs 1, 4, 9, 16, ... processes", ctx->nprocs);
        return -1;
    }
    if (size_n < q) {
        kc_fail(ctx, "--size %lld is smaller than sqrt(processes) = %lld", size_n, q);
        return -1;
    }
    long long N = size_n;
    if ((uint64_t)N * N * N * 5 > (1ULL << 50)) {
        kc_fail(ctx, "--size %lld is too large", N);
        return -1;
    }
    long long row = ctx->rank / q, col = ctx->rank % q;
    cells_local = q;
    MPI_Datatype *cell_t = malloc((size_t)q * sizeof(MPI_Datatype));
    int *blens = malloc((size_t)q * sizeof(int));
    MPI_Aint *displs = malloc((size_t)q * sizeof(MPI_Aint));
    if (!cell_t || !blens || !displs) {
        kc_fail(ctx, "out of memory");
        free(cell_t), free(blens), free(displs);
        return -1;
    }
    /* count runs and doubles first */
    nruns = 0;
    ndoubles = 0;
    long long lo[3], ln[3];
    for (long long c = 0; c < q; c++) {
        long long cx = (col + c) % q, cy = (row - c % q + q) % q, cz = c;
        cell_range(N, cx, &lo[0], &ln[0]);
        cell_range(N, cy, &lo[1], &ln[1]);
        cell_range(N, cz, &lo[2], &ln[2]);
        nruns += (size_t)(ln[1] * ln[2]);
        ndoubles += 5 * ln[0] * ln[1] * ln[2];
    }
    if (ndoubles > INT_MAX) {
        kc_fail(ctx, "--size %lld is too large for %d processes (local data must be below 2^31 doubles)", N,
                ctx->nprocs);
        free(cell_t), free(blens), free(displs);
        return -1;
    }
    runs = malloc(nruns * sizeof(kc_run));
    if (!runs) {
        kc_fail(ctx, "out of memory");
        free(cell_t), free(blens), free(displs);
        return -1;
    }
    size_t n = 0;
    for (long long c = 0; c < q; c++) {
        long long cx = (col + c) % q, cy = (row - c % q + q) % q, cz = c;
        cell_range(N, cx, &lo[0], &ln[0]);
        cell_range(N, cy, &lo[1], &ln[1]);
        cell_range(N, cz, &lo[2], &ln[2]);
        int sizes[4] = {(int)N, (int)N, (int)N, 5};
        int subs[4] = {(int)ln[2], (int)ln[1], (int)ln[0], 5};
        int starts[4] = {(int)lo[2], (int)lo[1], (int)lo[0], 0};
        MPI_Type_create_subarray(4, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &cell_t[c]);
        blens[c] = 1;
        displs[c] = 0;
        for (long long z = 0; z < ln[2]; z++)
            for (long long y = 0; y < ln[1]; y++) {
                uint64_t e = (((uint64_t)(lo[2] + z) * N + (uint64_t)(lo[1] + y)) * N + (uint64_t)lo[0]) * 5;
                runs[n].off = e * 8;
                runs[n].len = (uint64_t)ln[0] * 5 * 8;
                n++;
            }
    }
    /* cells are in increasing z slabs: the struct's typemap is monotonic, as
     * a file type must be */
    MPI_Type_create_struct((int)q, blens, displs, cell_t, &ftype);
    kc_commit(ctx, &ftype);
    for (long long c = 0; c < q; c++)
        MPI_Type_free(&cell_t[c]);
    free(cell_t), free(blens), free(displs);
    ctx->nreq = 1;
    ctx->max_req_bytes = (size_t)ndoubles * 8;
    ctx->step_bytes = (uint64_t)N * N * N * 5 * 8;
    return ctx->failed ? -1 : 0;
}

static void request(kc_ctx *ctx, int step, long long idx, kc_req *r)
{
    (void)idx;
    uint64_t base = (uint64_t)step * ctx->step_bytes;
    r->view_id = 0;
    r->disp = (MPI_Offset)base;
    r->etype = MPI_DOUBLE;
    r->ftype = ftype;
    r->offset = 0;
    r->memtype = MPI_DOUBLE;
    r->count = (int)ndoubles;
    r->nbytes = (size_t)ndoubles * 8;
    r->runs = runs;
    r->nruns = nruns;
    r->run_base = base;
}

static void params(kc_ctx *ctx, kc_json *j)
{
    (void)ctx;
    long long g[3] = {size_n, size_n, size_n};
    kc_json_int_array(j, "grid", g, 3);
    kc_json_int(j, "cells_per_dim", q);
    kc_json_int(j, "cells_per_rank", cells_local);
    kc_json_int(j, "components", 5);
    kc_json_int(j, "element_size", 8);
    if (klass >= 0) {
        char k[2] = {"SWABCD"[klass], '\0'};
        kc_json_str(j, "class", k);
    } else {
        kc_json_null(j, "class");
    }
}

static void cleanup(kc_ctx *ctx)
{
    (void)ctx;
    if (ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&ftype);
    free(runs);
    runs = NULL;
}

static const kc_kernel kernel = {
    "bt",
    "NAS BT-IO pattern (model): diagonal multi-partitioning of an N^3 grid, 5 doubles per point, "
    "square process counts, steps appended, one view of q cells per rank",
    opts, setup, request, params, cleanup,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
