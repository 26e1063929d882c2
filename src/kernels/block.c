/* pario-kernel-block: an IOR-like block pattern.
 *
 * Each rank writes `segments` blocks of `block-size` bytes, each block in
 * requests of `transfer-size` bytes, into one shared file laid out
 *   strided:     segment-major, as IOR: offset = (s*P + r)*B + t*T
 *   contiguous:  rank-major, each rank owns one region: offset = (r*S + s)*B + t*T
 * or into one file per process (path.00000003): offset = s*B + t*T,
 * through MPI-IO (explicit offsets, *_at or *_at_all) or POSIX pwrite/pread.
 * Time steps append: step k starts at k * (bytes of one step in the file).
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>

enum { LAYOUT_STRIDED, LAYOUT_CONTIGUOUS, LAYOUT_FPP };
enum { API_MPIIO, API_POSIX };

static long long block_size = 1 << 20;
static long long transfer_size = 256 << 10;
static long long segments = 1;
static int layout = LAYOUT_STRIDED;
static int api = API_MPIIO;
static long long per_block;

static kc_opt opts[] = {
    {"block-size", KC_SIZE, &block_size, NULL, "bytes per rank per segment (IOR -b; default 1m)", 0},
    {"transfer-size", KC_SIZE, &transfer_size, NULL, "bytes per I/O request, divides --block-size (IOR -t; default 256k)",
     0},
    {"segments", KC_INT, &segments, NULL, "blocks per rank (IOR -s; default 1)", 0},
    {"layout", KC_CHOICE, &layout, "strided|contiguous|fpp",
     "shared file segment-major (IOR's layout), shared file rank-major, or one file per process (IOR -F)", 0},
    {"api", KC_CHOICE, &api, "mpiio|posix", "MPI-IO (default) or POSIX pwrite/pread (IOR -a)", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static const char *layout_names[] = {"strided", "contiguous", "fpp"};

static int setup(kc_ctx *ctx)
{
    if (block_size <= 0)
        kc_fail(ctx, "--block-size must be positive");
    else if (transfer_size <= 0)
        kc_fail(ctx, "--transfer-size must be positive");
    else if (transfer_size > INT_MAX)
        kc_fail(ctx, "--transfer-size must be below 2 GiB (MPI counts are int)");
    else if (block_size % transfer_size != 0)
        kc_fail(ctx, "--transfer-size %lld does not divide --block-size %lld", transfer_size, block_size);
    else if (segments < 1)
        kc_fail(ctx, "--segments must be at least 1");
    else if ((unsigned long long)segments * (unsigned long long)block_size * (unsigned long long)ctx->nprocs *
                 (unsigned long long)ctx->steps >
             (1ULL << 62))
        kc_fail(ctx, "the file would be larger than 2^62 bytes");
    else if (api == API_POSIX && ctx->mode_given && ctx->collective)
        kc_fail(ctx, "--collective needs --api mpiio (POSIX I/O is independent)");
    if (ctx->failed)
        return -1;
    per_block = block_size / transfer_size;
    ctx->posix = api == API_POSIX;
    ctx->fpp = layout == LAYOUT_FPP;
    ctx->layout = layout_names[layout];
    ctx->nreq = segments * per_block;
    ctx->max_req_bytes = (size_t)transfer_size;
    ctx->step_bytes = (uint64_t)segments * (uint64_t)block_size * (ctx->fpp ? 1u : (uint64_t)ctx->nprocs);
    return 0;
}

static void request(kc_ctx *ctx, int step, long long idx, kc_req *r)
{
    uint64_t s = (uint64_t)(idx / per_block), t = (uint64_t)(idx % per_block);
    uint64_t B = (uint64_t)block_size, T = (uint64_t)transfer_size, P = (uint64_t)ctx->nprocs,
             rk = (uint64_t)ctx->rank, S = (uint64_t)segments;
    uint64_t off;
    switch (layout) {
    case LAYOUT_CONTIGUOUS: off = (rk * S + s) * B + t * T; break;
    case LAYOUT_FPP: off = s * B + t * T; break;
    default: off = (s * P + rk) * B + t * T; break;
    }
    off += (uint64_t)step * ctx->step_bytes;
    kc_req_contig(r, off, (size_t)T);
}

static void params(kc_ctx *ctx, kc_json *j)
{
    (void)ctx;
    kc_json_int(j, "block_size", block_size);
    kc_json_int(j, "transfer_size", transfer_size);
    kc_json_int(j, "segments", segments);
}

static const kc_kernel kernel = {
    "block",
    "IOR-like block pattern: segments x block-size bytes per rank in transfer-size requests; "
    "shared file (strided or contiguous) or file per process; MPI-IO or POSIX",
    opts, setup, request, params, NULL,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
