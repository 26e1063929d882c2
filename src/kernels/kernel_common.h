/* Shared machinery of the pario I/O kernels (pario-kernel-<name>).
 *
 * A kernel describes, for one time step, the sequence of I/O requests a rank
 * makes (each with its file view, memory datatype and the list of file byte
 * ranges its buffer maps to).  This file runs everything else the same way
 * for every kernel: option parsing, validation on every rank with a single
 * agreed exit code, MPI-IO hints from the environment, the write / read /
 * verify phases, timing, and the one JSON line printed by rank 0.
 *
 * Data pattern: the byte stored at file offset o of a file with seed s is
 *     byte (o mod 8) of mix64(o div 8, s)       (little-endian byte order)
 * where mix64 is the splitmix64 finaliser (see kc_pattern_word).  Every byte
 * of every file is therefore a function of its offset alone: any correct
 * writer (collective or independent, ompio or romio) produces the same file.
 */
#ifndef PARIO_KERNEL_COMMON_H
#define PARIO_KERNEL_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- options --------------------------------------------------------------- */

enum kc_opt_type {
    KC_INT,    /* long long, decimal */
    KC_SIZE,   /* long long, with optional k/m/g/t suffix (binary, as IOR) */
    KC_STR,    /* const char * */
    KC_FLAG,   /* int, set to 1 */
    KC_CHOICE  /* int: index into the '|'-separated choices */
};

typedef struct kc_opt {
    const char *name;    /* long name without the leading "--" */
    int type;            /* enum kc_opt_type */
    void *dest;
    const char *choices; /* KC_CHOICE: "a|b|c" */
    const char *help;
    int given;           /* set by the parser */
} kc_opt;

/* ---- requests ---------------------------------------------------------------- */

typedef struct kc_run {
    uint64_t off; /* file offset, relative to kc_req.run_base */
    uint64_t len; /* bytes */
} kc_run;

typedef struct kc_req {
    /* File view.  view_id < 0: the default view (displacement 0, bytes) and
     * explicit byte offsets.  Otherwise the view (disp, etype, ftype) is set
     * whenever view_id or disp differs from the previous request; view_id must
     * be the same on every rank for the same request. */
    int view_id;
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    MPI_Offset offset;      /* offset argument of MPI_File_{write,read}_at[_all] */
    MPI_Datatype memtype;   /* memory buffer: count elements of memtype */
    int count;
    size_t nbytes;          /* bytes in the buffer */
    /* Where the buffer's bytes go, in buffer order: file offsets run_base+off. */
    const kc_run *runs;
    size_t nruns;
    uint64_t run_base;
    kc_run one;             /* storage for single-run requests */
} kc_req;

/* Set r up as one contiguous request of nbytes at byte offset off in the
 * default view (memory datatype MPI_BYTE). */
void kc_req_contig(kc_req *r, uint64_t off, size_t nbytes);

struct kc_ctx;
struct kc_json;

/* ---- library modes (vpic --hdf5, s3d --pnetcdf) --------------------------------------
 * A kernel that writes through an I/O library instead of MPI-IO sets ctx->lib in
 * setup().  kc_main then runs lib->phase for the write and the read phase instead
 * of the request loop (hints, file checks, agreement on errors, timing summary
 * and the JSON line stay the same).  The library's data carry a value pattern of
 * the kernel's own (docs/kernels.md), not the byte pattern of the raw modes. */
typedef struct kc_lib_result {
    double open, io, close; /* this rank's seconds inside the library's calls */
    uint64_t bytes;         /* data bytes this rank passed to the library's write / read calls */
    uint64_t bad;           /* --verify: values read that differ from the pattern */
    char first_bad[256];    /* the first of them, described (the variable, index, values) */
    MPI_Info used;          /* the MPI-IO hints the library reports after the open, or MPI_INFO_NULL */
} kc_lib_result;

typedef struct kc_lib {
    const char *api; /* "hdf5", "pnetcdf": the JSON's "api" and the key of the properties object */
    /* One phase: open (create when writing), every step, close.  Reports
     * problems with kc_fail(); may call kc_agree() (collectively). */
    void (*phase)(struct kc_ctx *, int writing, MPI_Info info, kc_lib_result *res);
    /* The library's properties in effect, inside the JSON object named api. */
    void (*json)(struct kc_ctx *, struct kc_json *);
} kc_lib;

typedef struct kc_kernel {
    const char *name;        /* "block" */
    const char *pattern;     /* one line: what is modelled */
    kc_opt *opts;            /* kernel options, terminated by {NULL} */
    /* Validate the options and set up the requests: set ctx->nreq,
     * ctx->max_req_bytes, ctx->step_bytes and (optionally) ctx->fpp,
     * ctx->posix.  Report problems with kc_fail() and return -1. Must not
     * communicate except through ctx helpers, and must be deterministic. */
    int (*setup)(struct kc_ctx *);
    /* Fill *r for request idx (0..nreq-1) of time step `step`. */
    void (*request)(struct kc_ctx *, int step, long long idx, kc_req *r);
    /* Add the kernel's parameters to the "params" JSON object. */
    void (*params)(struct kc_ctx *, struct kc_json *);
    void (*cleanup)(struct kc_ctx *);
} kc_kernel;

typedef struct kc_ctx {
    const kc_kernel *k;
    int rank, nprocs;

    /* common options */
    const char *path;
    int collective;          /* 1 collective (default), 0 independent */
    int mode_given;          /* --collective or --independent given */
    long long steps;
    int do_read, read_only, verify, delete_after;
    long long seed;
    const char *hints_cli;

    /* set by the kernel's setup() */
    int fpp;                 /* one file per process (path.<rank 8 digits>) */
    int posix;               /* POSIX pread/pwrite instead of MPI-IO */
    long long nreq;          /* requests per step, the same on every rank */
    size_t max_req_bytes;    /* largest request of this rank */
    uint64_t step_bytes;     /* bytes of one step in the file (each file if fpp) */
    const char *layout;      /* optional: short description for the JSON */
    const kc_lib *lib;       /* optional: write through a library (see kc_lib) */
    void *kdata;             /* kernel's own state */

    /* problems (first one wins) */
    int failed;
    int reported;            /* the failure has been printed */
    char err[512];
} kc_ctx;

/* Record a problem (validation or I/O) on this rank.  printf format. */
void kc_fail(kc_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Progress of a long run, on rank 0's stderr: "<kernel>: <what> <done>/<total>
 * (<s> s)", at most every 10 s (PARIO_KERNEL_PROGRESS seconds) and only once the
 * run has lasted that long, so short runs print nothing.  Call it after each
 * unit of work (a step, a variable). */
void kc_progress(kc_ctx *ctx, const char *what, long long done, long long total);

/* Collective: every rank learns whether any rank failed (kc_fail); rank 0
 * prints the first message once.  Returns 1 if some rank failed. */
int kc_agree(kc_ctx *ctx);

/* Run a kernel: returns the process exit code (0 ok, 1 I/O or verify error,
 * 2 bad parameters).  MPI_Init/MPI_Finalize are done here. */
int kc_main(const kc_kernel *k, int argc, char **argv);

/* ---- data pattern ------------------------------------------------------------- */

uint64_t kc_pattern_word(uint64_t word_index, uint64_t seed);
void kc_pattern_fill(unsigned char *dst, uint64_t off, size_t len, uint64_t seed);

/* ---- small helpers for kernels -------------------------------------------------- */

/* Largest integer r with r*r <= n. */
long long kc_isqrt(long long n);
/* MPI_Dims_create wrapper (dims[i] == 0 means free). */
void kc_dims(int nprocs, int ndims, int *dims);
/* Commit a datatype; record an MPI error in ctx. */
void kc_commit(kc_ctx *ctx, MPI_Datatype *t);

/* ---- JSON output ------------------------------------------------------------------ */

typedef struct kc_json {
    char *buf;
    size_t len, cap;
    int need_comma;
} kc_json;

void kc_json_key(kc_json *j, const char *key);
void kc_json_str(kc_json *j, const char *key, const char *value);
void kc_json_int(kc_json *j, const char *key, long long value);
void kc_json_u64(kc_json *j, const char *key, uint64_t value);
void kc_json_dbl(kc_json *j, const char *key, double value); /* null if not finite */
void kc_json_bool(kc_json *j, const char *key, int value);
void kc_json_null(kc_json *j, const char *key);
void kc_json_open(kc_json *j, const char *key);  /* key may be NULL: top level */
void kc_json_close(kc_json *j);
void kc_json_int_array(kc_json *j, const char *key, const long long *v, int n);
/* Append raw JSON text as the value of the key just written with kc_json_key(). */
void kc_json_raw(kc_json *j, const char *text);
void kc_json_put(kc_json *j, const char *s, size_t n); /* n raw bytes */
void kc_json_info(kc_json *j, const char *key, MPI_Info info); /* an object of the info's keys */

#endif
