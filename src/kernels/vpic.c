/* pario-kernel-vpic: a model of the VPIC-IO particle dump pattern.
 *
 * Every rank holds N particles with 8 variables, 4 bytes each:
 *   x, y, z (float), id1, id2 (int), px, py, pz (float).
 * The file holds the 8 variables one after the other, each a 1-D array of
 * P*N values; rank r's values of a variable are the contiguous block
 * [r*N, (r+1)*N) of it (what VPIC-IO's H5Part datasets look like on disk,
 * without the HDF5 metadata).  8 requests per time step, explicit offsets;
 * steps appended.
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>

static long long particles = 1 << 20;

static kc_opt opts[] = {
    {"particles", KC_SIZE, &particles, NULL, "particles per rank (default 1m = 1048576; VPIC-IO uses 8m)", 0},
    {NULL, 0, NULL, NULL, NULL, 0},
};

#define NVAR 8
static const char *var_names[NVAR] = {"x", "y", "z", "id1", "id2", "px", "py", "pz"};

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
    return 0;
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

static const kc_kernel kernel = {
    "vpic",
    "VPIC-IO particle pattern (model): 8 variables (x, y, z, id1, id2, px, py, pz) of 4 bytes, "
    "each a contiguous 1-D block per rank in one shared file",
    opts, setup, request, params, NULL,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
