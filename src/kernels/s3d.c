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
 *
 * --pnetcdf (built when PnetCDF was found: PARIO_HAVE_PNETCDF) writes the same
 * arrays through PnetCDF as S3D-IO does: one CDF-5 file (NC_64BIT_DATA) with
 * dimensions time (the record dimension: one record per step), species,
 * component (3), z, y, x and the variables yspecies(time, species, z, y, x),
 * u(time, component, z, y, x), pressure(time, z, y, x) and
 * temperature(time, z, y, x) of doubles.  Each rank puts its 3-D block of
 * every variable (all components) per step: ncmpi_put_vara_double_all
 * (default), --nonblocking (ncmpi_iput_vara_double of the four variables and
 * one ncmpi_wait_all per step: S3D-IO's method), or --small (one put per x-row
 * of the block).  Values: see s3d_value().
 */
#include "kernel_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PARIO_HAVE_PNETCDF
#include <pnetcdf.h>
#endif

static long long nx = 32, ny = 32, nz = 32, px, py, pz, species = 11;
static int use_pnetcdf, nonblocking, small_puts;

static kc_opt opts[] = {
    {"nx", KC_INT, &nx, NULL, "global grid points in x (default 32)", 0},
    {"ny", KC_INT, &ny, NULL, "global grid points in y (default 32)", 0},
    {"nz", KC_INT, &nz, NULL, "global grid points in z (default 32)", 0},
    {"px", KC_INT, &px, NULL, "processes in x (default: from MPI_Dims_create)", 0},
    {"py", KC_INT, &py, NULL, "processes in y", 0},
    {"pz", KC_INT, &pz, NULL, "processes in z; px*py*pz must equal the number of processes", 0},
    {"species", KC_INT, &species, NULL, "chemical species in yspecies (default 11)", 0},
    {"pnetcdf", KC_FLAG, &use_pnetcdf, NULL,
     "write through PnetCDF (one CDF-5 file, a record per step) instead of raw MPI-IO", 0},
    {"nonblocking", KC_FLAG, &nonblocking, NULL,
     "--pnetcdf: ncmpi_iput_vara_double of the four variables, then ncmpi_wait_all (S3D-IO's method)", 0},
    {"small", KC_FLAG, &small_puts, NULL,
     "--pnetcdf: one blocking put per x-row of the block (many small requests)", 0},
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

#ifdef PARIO_HAVE_PNETCDF
static const kc_lib *pnetcdf_lib(void);
#endif

static int setup_pnetcdf(kc_ctx *ctx)
{
    if (!use_pnetcdf) {
        if (nonblocking || small_puts) {
            kc_fail(ctx, "--nonblocking and --small need --pnetcdf");
            return -1;
        }
        return 0;
    }
#ifndef PARIO_HAVE_PNETCDF
    kc_fail(ctx, "this pario was built without PnetCDF (libpnetcdf-dev was not found): --pnetcdf is not available");
    return -1;
#else
    if (nonblocking && small_puts) {
        kc_fail(ctx, "--nonblocking and --small exclude each other");
        return -1;
    }
    ctx->lib = pnetcdf_lib();
    return 0;
#endif
}

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
    return setup_pnetcdf(ctx);
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

/* ==== --pnetcdf =================================================================== */

#ifdef PARIO_HAVE_PNETCDF

/* The value of element e of array a at step t, e the element's index in one
 * record of the variable (((c*nz + z)*ny + y)*nx + x, x fastest):
 *     ((((seed + t) * 4 + a) * 1000000007 + e) mod 2^53, as a double (exact). */
static double s3d_value(long long seed, long long t, int a, uint64_t e)
{
    uint64_t w = (((uint64_t)seed + (uint64_t)t) * NARR + (uint64_t)a) * 1000000007ULL + e;
    return (double)(w & ((1ULL << 53) - 1));
}

static const char *method_name(void)
{
    return nonblocking ? "nonblocking" : (small_puts ? "small" : "blocking");
}

/* What the last phase saw, for the JSON. */
static MPI_Offset hdr_size = -1, hdr_extent = -1;
static long long puts_per_step;

static void nc_fail(kc_ctx *ctx, int err, const char *what, const char *name)
{
    kc_fail(ctx, "%s%s%s in %s: %s", what, name[0] ? " " : "", name, ctx->path, ncmpi_strerror(err));
}

/* Local block of array a, one record: element i of the buffer is (c, z, y, x)
 * with x fastest, at global index ((c*nz + z0+z)*ny + y0+y)*nx + x0+x. */
static uint64_t global_index(int a, long long i)
{
    (void)a;
    long long x = i % lx, y = (i / lx) % ly, z = (i / (lx * ly)) % lz, c = i / (lx * ly * lz);
    return (((uint64_t)c * (uint64_t)nz + (uint64_t)(z0 + z)) * (uint64_t)ny + (uint64_t)(y0_ + y)) * (uint64_t)nx +
           (uint64_t)(x0 + x);
}

static void nc_fill(kc_ctx *ctx, long long t, int a, double *buf)
{
    long long n = ncomp[a] * lx * ly * lz;
    for (long long i = 0; i < n; i++)
        buf[i] = s3d_value(ctx->seed, t, a, global_index(a, i));
}

static void nc_check(kc_ctx *ctx, long long t, int a, const double *buf, kc_lib_result *res)
{
    long long n = ncomp[a] * lx * ly * lz;
    for (long long i = 0; i < n; i++) {
        uint64_t e = global_index(a, i);
        double exp = s3d_value(ctx->seed, t, a, e);
        if (buf[i] != exp) {
            if (!res->bad)
                snprintf(res->first_bad, sizeof res->first_bad, "%s[%lld][%llu]: expected %.17g, read %.17g",
                         arr_names[a], t, (unsigned long long)e, exp, buf[i]);
            res->bad++;
        }
    }
}

/* start/count of array a's block at record t: (time, [component,] z, y, x). */
static int block_of(int a, long long t, MPI_Offset *start, MPI_Offset *count)
{
    int n = 0;
    start[n] = t;
    count[n++] = 1;
    if (ncomp[a] > 1) {
        start[n] = 0;
        count[n++] = ncomp[a];
    }
    start[n] = z0;
    count[n++] = lz;
    start[n] = y0_;
    count[n++] = ly;
    start[n] = x0;
    count[n++] = lx;
    return n;
}

/* Define the file (writing) or check it matches (reading): the variable ids. */
static void nc_define(kc_ctx *ctx, int ncid, int writing, int *varid)
{
    static const char *dim_names[6] = {"time", "species", "component", "z", "y", "x"};
    MPI_Offset lens[6] = {NC_UNLIMITED, species, 3, nz, ny, nx};
    int dim[6], err = NC_NOERR;
    for (int d = 0; d < 6 && !ctx->failed; d++) {
        if (writing) {
            err = ncmpi_def_dim(ncid, dim_names[d], lens[d], &dim[d]);
            if (err != NC_NOERR)
                nc_fail(ctx, err, "ncmpi_def_dim", dim_names[d]);
            continue;
        }
        MPI_Offset have = 0;
        err = ncmpi_inq_dimid(ncid, dim_names[d], &dim[d]);
        if (err == NC_NOERR)
            err = ncmpi_inq_dimlen(ncid, dim[d], &have);
        if (err != NC_NOERR)
            nc_fail(ctx, err, "dimension", dim_names[d]);
        else if (d == 0 && have < ctx->steps)
            kc_fail(ctx, "%s holds %lld records, fewer than --steps %lld", ctx->path, (long long)have, ctx->steps);
        else if (d > 0 && have != lens[d])
            kc_fail(ctx, "dimension %s of %s is %lld, not %lld (written with another grid or --species?)",
                    dim_names[d], ctx->path, (long long)have, (long long)lens[d]);
    }
    for (int a = 0; a < NARR && !ctx->failed; a++) {
        if (writing) {
            int ids[5], n = 0;
            ids[n++] = dim[0];
            if (ncomp[a] > 1)
                ids[n++] = a == 0 ? dim[1] : dim[2];
            ids[n++] = dim[3];
            ids[n++] = dim[4];
            ids[n++] = dim[5];
            err = ncmpi_def_var(ncid, arr_names[a], NC_DOUBLE, n, ids, &varid[a]);
        } else {
            err = ncmpi_inq_varid(ncid, arr_names[a], &varid[a]);
        }
        if (err != NC_NOERR)
            nc_fail(ctx, err, writing ? "ncmpi_def_var" : "ncmpi_inq_varid", arr_names[a]);
    }
    if (writing && !ctx->failed) {
        const char *title = "pario-kernel-s3d: S3D-IO checkpoint pattern (model) through PnetCDF";
        err = ncmpi_put_att_text(ncid, NC_GLOBAL, "title", (MPI_Offset)strlen(title), title);
        if (err != NC_NOERR)
            nc_fail(ctx, err, "ncmpi_put_att_text", "title");
    }
}

/* One array, one record, blocking: one call for the block or one per x-row. */
static int nc_blocking(kc_ctx *ctx, int ncid, int writing, int varid, int a, long long t, double *buf,
                       long long *calls)
{
    MPI_Offset start[5], count[5];
    int nd = block_of(a, t, start, count), err = NC_NOERR;
    if (!small_puts) {
        (*calls)++;
        if (writing)
            return ctx->collective ? ncmpi_put_vara_double_all(ncid, varid, start, count, buf)
                                   : ncmpi_put_vara_double(ncid, varid, start, count, buf);
        return ctx->collective ? ncmpi_get_vara_double_all(ncid, varid, start, count, buf)
                               : ncmpi_get_vara_double(ncid, varid, start, count, buf);
    }
    /* rows: (component,) z, y fixed, x runs */
    for (int d = 1; d < nd - 1; d++)
        count[d] = 1;
    long long rows = ncomp[a] * lz * ly;
    for (long long r = 0; r < rows && err == NC_NOERR; r++) {
        long long y = r % ly, z = (r / ly) % lz, c = r / (ly * lz);
        int d = 1;
        if (ncomp[a] > 1)
            start[d++] = c;
        start[d++] = z0 + z;
        start[d++] = y0_ + y;
        double *row = buf + r * lx;
        (*calls)++;
        if (writing)
            err = ctx->collective ? ncmpi_put_vara_double_all(ncid, varid, start, count, row)
                                  : ncmpi_put_vara_double(ncid, varid, start, count, row);
        else
            err = ctx->collective ? ncmpi_get_vara_double_all(ncid, varid, start, count, row)
                                  : ncmpi_get_vara_double(ncid, varid, start, count, row);
    }
    return err;
}

static void nc_steps(kc_ctx *ctx, int ncid, int writing, const int *varid, double **bufs, kc_lib_result *res)
{
    long long calls = 0;
    for (long long t = 0; t < ctx->steps && !ctx->failed; t++) {
        if (writing)
            for (int a = 0; a < NARR; a++)
                nc_fill(ctx, t, a, bufs[a]);
        else
            for (int a = 0; a < NARR; a++)
                memset(bufs[a], 0xff, (size_t)(ncomp[a] * lx * ly * lz) * 8);
        double t0 = MPI_Wtime();
        if (nonblocking) {
            int req[NARR], st[NARR], err = NC_NOERR;
            for (int a = 0; a < NARR && err == NC_NOERR; a++) {
                MPI_Offset start[5], count[5];
                block_of(a, t, start, count);
                err = writing ? ncmpi_iput_vara_double(ncid, varid[a], start, count, bufs[a], &req[a])
                              : ncmpi_iget_vara_double(ncid, varid[a], start, count, bufs[a], &req[a]);
                calls++;
                if (err != NC_NOERR)
                    nc_fail(ctx, err, writing ? "ncmpi_iput_vara_double" : "ncmpi_iget_vara_double", arr_names[a]);
            }
            if (!ctx->failed) {
                err = ctx->collective ? ncmpi_wait_all(ncid, NARR, req, st) : ncmpi_wait(ncid, NARR, req, st);
                for (int a = 0; a < NARR && err == NC_NOERR; a++)
                    if (st[a] != NC_NOERR) {
                        err = st[a];
                        nc_fail(ctx, err, writing ? "nonblocking write of" : "nonblocking read of", arr_names[a]);
                    }
                if (err != NC_NOERR && !ctx->failed)
                    nc_fail(ctx, err, ctx->collective ? "ncmpi_wait_all" : "ncmpi_wait", "");
            }
        } else {
            for (int a = 0; a < NARR && !ctx->failed; a++) {
                int err = nc_blocking(ctx, ncid, writing, varid[a], a, t, bufs[a], &calls);
                if (err != NC_NOERR)
                    nc_fail(ctx, err, writing ? "put of" : "get of", arr_names[a]);
            }
        }
        res->io += MPI_Wtime() - t0;
        if (ctx->failed)
            break;
        for (int a = 0; a < NARR; a++) {
            res->bytes += (uint64_t)(ncomp[a] * lx * ly * lz) * 8;
            if (!writing && ctx->verify)
                nc_check(ctx, t, a, bufs[a], res);
        }
    }
    puts_per_step = calls / (ctx->steps > 0 ? ctx->steps : 1);
}

static void nc_phase(kc_ctx *ctx, int writing, MPI_Info info, kc_lib_result *res)
{
    int ncid = -1, varid[NARR] = {0, 0, 0, 0}, err;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    err = writing ? ncmpi_create(MPI_COMM_WORLD, ctx->path, NC_CLOBBER | NC_64BIT_DATA, info, &ncid)
                  : ncmpi_open(MPI_COMM_WORLD, ctx->path, NC_NOWRITE, info, &ncid);
    if (err != NC_NOERR) {
        ncid = -1;
        nc_fail(ctx, err, writing ? "ncmpi_create" : "ncmpi_open", "");
    } else {
        nc_define(ctx, ncid, writing, varid);
        if (writing && !ctx->failed) {
            err = ncmpi_enddef(ncid);
            if (err != NC_NOERR)
                nc_fail(ctx, err, "ncmpi_enddef", "");
        }
    }
    res->open += MPI_Wtime() - t0;
    double *bufs[NARR] = {NULL, NULL, NULL, NULL};
    for (int a = 0; a < NARR && !ctx->failed; a++) {
        bufs[a] = malloc((size_t)(ncomp[a] * lx * ly * lz) * 8);
        if (!bufs[a])
            kc_fail(ctx, "out of memory");
    }
    if (!kc_agree(ctx)) {
        MPI_Info used = MPI_INFO_NULL;
        if (ncmpi_inq_file_info(ncid, &used) == NC_NOERR)
            res->used = used;
        ncmpi_inq_header_size(ncid, &hdr_size);
        ncmpi_inq_header_extent(ncid, &hdr_extent);
        if (!ctx->collective) {
            err = ncmpi_begin_indep_data(ncid);
            if (err != NC_NOERR)
                nc_fail(ctx, err, "ncmpi_begin_indep_data", "");
        }
        if (!kc_agree(ctx)) {
            MPI_Barrier(MPI_COMM_WORLD);
            nc_steps(ctx, ncid, writing, varid, bufs, res);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (!ctx->collective)
            ncmpi_end_indep_data(ncid);
    }
    if (ncid >= 0) {
        t0 = MPI_Wtime();
        err = ncmpi_close(ncid);
        res->close += MPI_Wtime() - t0;
        if (err != NC_NOERR)
            nc_fail(ctx, err, "ncmpi_close", "");
    }
    for (int a = 0; a < NARR; a++)
        free(bufs[a]);
}

static void nc_json(kc_ctx *ctx, kc_json *j)
{
    char ver[64];
    snprintf(ver, sizeof ver, "%s", ncmpi_inq_libvers());
    char *sp = strchr(ver, ' '); /* "1.12.3 of June 1, 2022" */
    if (sp)
        *sp = '\0';
    kc_json_str(j, "version", ver);
    kc_json_str(j, "format", "CDF-5");
    kc_json_str(j, "method", method_name());
    kc_json_str(j, "transfer", ctx->collective ? "collective" : "independent");
    kc_json_int(j, "calls_per_step", puts_per_step);
    kc_json_int(j, "header_size", (long long)hdr_size);
    kc_json_int(j, "header_extent", (long long)hdr_extent);
    kc_json_str(j, "record_dimension", "time");
}

static const kc_lib pnetcdf = {"pnetcdf", nc_phase, nc_json};
static const kc_lib *pnetcdf_lib(void) { return &pnetcdf; }

#endif /* PARIO_HAVE_PNETCDF */

static const kc_kernel kernel = {
    "s3d",
    "S3D-IO checkpoint pattern (model): 3-D block partition of four 3-D/4-D double arrays "
    "(yspecies, u, pressure, temperature), each written through a subarray file view",
    opts, setup, request, params, cleanup,
};

int main(int argc, char **argv) { return kc_main(&kernel, argc, argv); }
