/* pario-kernel-tile: a model of the mpi-tile-io pattern.
 *
 * A 2-D array of tiles_x x tiles_y tiles, one per rank (rank = ty*tiles_x + tx),
 * each tile tile_x x tile_y elements of element_size bytes.  Adjacent tiles
 * share overlap_x columns / overlap_y rows, so the array (row-major, x
 * fastest) is
 *     (tiles_x*tile_x - (tiles_x-1)*overlap_x) x (tiles_y*tile_y - (tiles_y-1)*overlap_y)
 * elements, and tile (tx, ty) starts at (tx*(tile_x-overlap_x), ty*(tile_y-overlap_y)).
 * Each rank writes its whole tile through a 2-D subarray view; bytes in an
 * overlap are written by several ranks with the same values.
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

static long long tiles_x, tiles_y, tile_x = 64, tile_y = 64, elsize = 8, overlap_x, overlap_y;

static kc_opt opts[] = {
    {"tiles-x", KC_INT, &tiles_x, NULL, "tiles in x (default: from MPI_Dims_create)", 0},
    {"tiles-y", KC_INT, &tiles_y, NULL, "tiles in y; tiles-x * tiles-y = processes", 0},
    {"tile-x", KC_INT, &tile_x, NULL, "elements per tile in x (default 64)", 0},
    {"tile-y", KC_INT, &tile_y, NULL, "elements per tile in y (default 64)", 0},
    {"element-size", KC_SIZE, &elsize, NULL, "bytes per element (default 8; e.g. 8 to 4k)", 0},
    {"overlap-x", KC_INT, &overlap_x, NULL, "elements shared by tiles adjacent in x (default 0)", 0},
    {"overlap-y", KC_INT, &overlap_y, NULL, "elements shared by tiles adjacent in y (default 0)", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static long long gx, gy, x0, y0_;
static MPI_Datatype etype = MPI_DATATYPE_NULL, ftype = MPI_DATATYPE_NULL;
static kc_run *runs;

static int setup(kc_ctx *ctx)
{
    if (tile_x < 1 || tile_y < 1)
        kc_fail(ctx, "--tile-x and --tile-y must be positive");
    else if (elsize < 1 || elsize > (1 << 20))
        kc_fail(ctx, "--element-size must be between 1 and 1m bytes");
    else if (overlap_x < 0 || overlap_y < 0 || overlap_x >= tile_x || overlap_y >= tile_y)
        kc_fail(ctx, "overlap %lld x %lld must be smaller than the tile %lld x %lld", overlap_x, overlap_y, tile_x,
                tile_y);
    else if (tiles_x < 0 || tiles_y < 0)
        kc_fail(ctx, "--tiles-x and --tiles-y must be positive");
    if (ctx->failed)
        return -1;
    long long fixed = (tiles_x ? tiles_x : 1) * (tiles_y ? tiles_y : 1);
    if (fixed > ctx->nprocs || ctx->nprocs % fixed) {
        kc_fail(ctx, "tile grid %lld x %lld does not match %d processes", tiles_x, tiles_y, ctx->nprocs);
        return -1;
    }
    int dims[2] = {(int)tiles_y, (int)tiles_x};
    kc_dims(ctx->nprocs, 2, dims);
    tiles_y = dims[0];
    tiles_x = dims[1];
    if (tiles_x * tiles_y != ctx->nprocs) {
        kc_fail(ctx, "tile grid %lld x %lld is not %d processes", tiles_x, tiles_y, ctx->nprocs);
        return -1;
    }
    gx = tiles_x * tile_x - (tiles_x - 1) * overlap_x;
    gy = tiles_y * tile_y - (tiles_y - 1) * overlap_y;
    if (gx > INT_MAX || gy > INT_MAX || tile_x * tile_y > INT_MAX || tile_x * tile_y * elsize > INT_MAX ||
        (uint64_t)gx * (uint64_t)gy * (uint64_t)elsize > (1ULL << 50)) {
        kc_fail(ctx, "tiles too large (a tile must be below 2 GiB)");
        return -1;
    }
    long long tx = ctx->rank % tiles_x, ty = ctx->rank / tiles_x;
    x0 = tx * (tile_x - overlap_x);
    y0_ = ty * (tile_y - overlap_y);
    MPI_Type_contiguous((int)elsize, MPI_BYTE, &etype);
    kc_commit(ctx, &etype);
    int sizes[2] = {(int)gy, (int)gx}, subs[2] = {(int)tile_y, (int)tile_x}, starts[2] = {(int)y0_, (int)x0};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, etype, &ftype);
    kc_commit(ctx, &ftype);
    runs = malloc((size_t)tile_y * sizeof(kc_run));
    if (!runs) {
        kc_fail(ctx, "out of memory");
        return -1;
    }
    for (long long y = 0; y < tile_y; y++) {
        runs[y].off = ((uint64_t)(y0_ + y) * (uint64_t)gx + (uint64_t)x0) * (uint64_t)elsize;
        runs[y].len = (uint64_t)tile_x * (uint64_t)elsize;
    }
    ctx->nreq = 1;
    ctx->max_req_bytes = (size_t)(tile_x * tile_y * elsize);
    ctx->step_bytes = (uint64_t)gx * (uint64_t)gy * (uint64_t)elsize;
    return ctx->failed ? -1 : 0;
}

static void request(kc_ctx *ctx, int step, long long idx, kc_req *r)
{
    (void)idx;
    uint64_t base = (uint64_t)step * ctx->step_bytes;
    r->view_id = 0;
    r->disp = (MPI_Offset)base;
    r->etype = etype;
    r->ftype = ftype;
    r->offset = 0;
    r->memtype = etype;
    r->count = (int)(tile_x * tile_y);
    r->nbytes = (size_t)(tile_x * tile_y * elsize);
    r->runs = runs;
    r->nruns = (size_t)tile_y;
    r->run_base = base;
}

static void params(kc_ctx *ctx, kc_json *j)
{
    (void)ctx;
    long long t[2] = {tiles_x, tiles_y}, s[2] = {tile_x, tile_y}, o[2] = {overlap_x, overlap_y}, g[2] = {gx, gy};
    kc_json_int_array(j, "tiles", t, 2);
    kc_json_int_array(j, "tile", s, 2);
    kc_json_int_array(j, "overlap", o, 2);
    kc_json_int_array(j, "array", g, 2);
    kc_json_int(j, "element_size", elsize);
}

static void cleanup(kc_ctx *ctx)
{
    (void)ctx;
    if (ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&ftype);
    if (etype != MPI_DATATYPE_NULL)
        MPI_Type_free(&etype);
    free(runs);
    runs = NULL;
}

static const kc_kernel kernel = {
    "tile",
    "mpi-tile-io pattern (model): 2-D array of tiles, one per rank, configurable element size and "
    "overlap, each tile written through a 2-D subarray view",
    opts, setup, request, params, cleanup,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
