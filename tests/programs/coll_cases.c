/*
 * coll_cases: runs a batch of collective-write cases read from a spec file,
 * each on its own file, so that one mpirun checks hundreds of them
 * (tests/test_collective_random.py draws the cases with tests/coll_cases.py,
 * which also computes the bytes every file must hold).
 *
 *   coll_cases SPEC OUTDIR          run the cases; OUTDIR/c<ID>.dat per case,
 *                                   OUTDIR/results.<world rank>.jsonl
 *   coll_cases --types SPEC OUTDIR  (one rank) describe the 'type' lines:
 *                                   OUTDIR/types.jsonl
 *
 * Spec: one item per line, tokens separated by blanks, '#' starts a comment.
 *
 *   case ID                   a new case; its file is OUTDIR/cID.dat
 *   members W0 W1 ...         world ranks taking part, in the order of their
 *                             rank in the case's communicator (MPI_Comm_split,
 *                             the other ranks sit the case out)
 *   prefill N SEED            (optional) before the open, case rank 0 writes
 *                             N bytes with POSIX: byte j = pat(SEED, 0x7fffffff, 7, j)
 *                             (without it, rank 0 removes any old file)
 *   amode rdwr|wronly         (optional, rdwr by default) with MPI_MODE_CREATE
 *   hint KEY VALUE            (0 or more) MPI_Info for MPI_File_open
 *   rank R                    the lines up to the next 'rank' or 'end' are for
 *                             case rank R (every rank of the case has them):
 *   view DISP ETYPE TYPE...   MPI_File_set_view(DISP, ETYPE (a named type), TYPE, "native")
 *   mem TYPE...               the memory datatype of the calls
 *   call KIND OFFSET COUNT    1 or 2 calls, in order, on the same open file;
 *                             KIND write_all, write_at_all, write_all_begin
 *                             (with write_all_end), write_at_all_begin (with
 *                             write_at_all_end), iwrite_all, iwrite_at_all
 *                             (each with MPI_Wait); OFFSET in etypes ('-' when
 *                             the call has none); COUNT of the memory type (0 allowed)
 *   end                       the case is complete
 *
 *   type ID TYPE...           (--types only)
 *
 * A TYPE is written in prefix form; N, C, B... are integers, displacements
 * of the h* forms, LB and EXTENT in bytes:
 *   byte char short int float double long_double 2int short_int double_int long_int
 *   contig N T                 vector C B STRIDE T         hvector C B STRIDE T
 *   indexed N B1 D1 .. BN DN T hindexed N B1 D1 .. BN DN T
 *   iblock N B D1 .. DN T      hiblock N B D1 .. DN T
 *   struct N B1 D1 T1 .. BN DN TN
 *   subarray ND c|f SIZES.. SUBSIZES.. STARTS.. T
 *   darray SIZE RANK ND c|f GSIZES.. DISTRIBS(b|c|n).. DARGS(-1 default).. PSIZES.. T
 *   resized LB EXTENT T        dup T
 *
 * The memory buffer of a call covers the true extent of COUNT memory types
 * (negative lower bounds included); the byte at displacement d from the
 * buffer's address is pat(ID, R, call + 1, d) (call 0 or 1, d as uint32).
 * pat is a 32-bit mix (below), reproduced by tests/coll_cases.py.
 *
 * Output, per case and rank, one JSON line:
 *   {"case":ID,"rank":R,"world":W,"ft":[size,lb,extent,true_lb,true_extent],
 *    "mt":[...],"open":ERR,"calls":[{"err":ERR,"count":C,"pos":P},...]}
 * count is MPI_Get_count of the status against the memory type (-1 after an
 * error), pos the individual file pointer (MPI_File_get_position, etypes)
 * after the call.  The exit status is 1 when any MPI-IO call failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CALLS 2
#define MAX_HINTS 8

static unsigned char pat(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t x = a * 0x9E3779B1u + b * 0x85EBCA77u + c * 0xC2B2AE3Du + d * 0x27D4EB2Fu;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    x *= 0x297A2D39u;
    x ^= x >> 15;
    return (unsigned char)(x >> 8);
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "coll_cases: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* ---- tokens ------------------------------------------------------------ */

struct toks {
    char *buf; /* the line's copy the tokens point into */
    char **v;
    int n, i, line;
};

static void split(char *s, struct toks *t, int line)
{
    int cap = 16;
    t->buf = s;
    t->v = malloc(sizeof(char *) * (size_t)cap);
    t->n = 0;
    t->i = 0;
    t->line = line;
    char *hash = strchr(s, '#');
    if (hash)
        *hash = '\0';
    char *save = NULL;
    for (char *w = strtok_r(s, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
        if (t->n == cap) {
            cap *= 2;
            t->v = realloc(t->v, sizeof(char *) * (size_t)cap);
        }
        t->v[t->n++] = w;
    }
}

static const char *next(struct toks *t)
{
    if (t->i >= t->n)
        die("spec line %d: expression ends early", t->line);
    return t->v[t->i++];
}

static long long num(struct toks *t)
{
    const char *s = next(t);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s)
        die("spec line %d: '%s' is not an integer", t->line, s);
    return v;
}

static int inum(struct toks *t)
{
    long long v = num(t);
    if (v < -2147483647LL || v > 2147483647LL)
        die("spec line %d: %lld does not fit an int", t->line, v);
    return (int)v;
}

/* ---- datatypes --------------------------------------------------------- */

static MPI_Datatype named(const char *s)
{
    static const struct {
        const char *name;
        MPI_Datatype type;
    } names[] = {
        {"byte", MPI_BYTE},           {"char", MPI_CHAR},           {"short", MPI_SHORT},
        {"int", MPI_INT},             {"float", MPI_FLOAT},         {"double", MPI_DOUBLE},
        {"long_double", MPI_LONG_DOUBLE}, {"2int", MPI_2INT},       {"short_int", MPI_SHORT_INT},
        {"double_int", MPI_DOUBLE_INT}, {"long_int", MPI_LONG_INT},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0)
            return names[i].type;
    return MPI_DATATYPE_NULL;
}

static int order_of(struct toks *t)
{
    const char *s = next(t);
    if (strcmp(s, "c") == 0)
        return MPI_ORDER_C;
    if (strcmp(s, "f") == 0)
        return MPI_ORDER_FORTRAN;
    die("spec line %d: order '%s' is not c or f", t->line, s);
    return 0;
}

static void free_derived(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

/* A datatype (not committed) from its prefix form; the caller frees it. */
static MPI_Datatype parse_type(struct toks *t)
{
    const char *w = next(t);
    MPI_Datatype n = named(w), old, out = MPI_DATATYPE_NULL;
    if (n != MPI_DATATYPE_NULL)
        return n;
    if (strcmp(w, "contig") == 0) {
        int c = inum(t);
        old = parse_type(t);
        MPI_Type_contiguous(c, old, &out);
    } else if (strcmp(w, "vector") == 0 || strcmp(w, "hvector") == 0) {
        int c = inum(t), b = inum(t);
        long long s = num(t);
        old = parse_type(t);
        if (w[0] == 'v')
            MPI_Type_vector(c, b, (int)s, old, &out);
        else
            MPI_Type_create_hvector(c, b, (MPI_Aint)s, old, &out);
    } else if (strcmp(w, "indexed") == 0 || strcmp(w, "hindexed") == 0) {
        int c = inum(t);
        int *bl = malloc(sizeof(int) * (size_t)(c + 1));
        int *d = malloc(sizeof(int) * (size_t)(c + 1));
        MPI_Aint *hd = malloc(sizeof(MPI_Aint) * (size_t)(c + 1));
        for (int i = 0; i < c; i++) {
            bl[i] = inum(t);
            hd[i] = (MPI_Aint)num(t);
            d[i] = (int)hd[i];
        }
        old = parse_type(t);
        if (w[0] == 'i')
            MPI_Type_indexed(c, bl, d, old, &out);
        else
            MPI_Type_create_hindexed(c, bl, hd, old, &out);
        free(bl);
        free(d);
        free(hd);
    } else if (strcmp(w, "iblock") == 0 || strcmp(w, "hiblock") == 0) {
        int c = inum(t), b = inum(t);
        int *d = malloc(sizeof(int) * (size_t)(c + 1));
        MPI_Aint *hd = malloc(sizeof(MPI_Aint) * (size_t)(c + 1));
        for (int i = 0; i < c; i++) {
            hd[i] = (MPI_Aint)num(t);
            d[i] = (int)hd[i];
        }
        old = parse_type(t);
        if (w[0] == 'i')
            MPI_Type_create_indexed_block(c, b, d, old, &out);
        else
            MPI_Type_create_hindexed_block(c, b, hd, old, &out);
        free(d);
        free(hd);
    } else if (strcmp(w, "struct") == 0) {
        int c = inum(t);
        int *bl = malloc(sizeof(int) * (size_t)(c + 1));
        MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)(c + 1));
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(c + 1));
        for (int i = 0; i < c; i++) {
            bl[i] = inum(t);
            d[i] = (MPI_Aint)num(t);
            ty[i] = parse_type(t);
        }
        MPI_Type_create_struct(c, bl, d, ty, &out);
        for (int i = 0; i < c; i++)
            free_derived(&ty[i]);
        free(bl);
        free(d);
        free(ty);
        return out;
    } else if (strcmp(w, "subarray") == 0) {
        int nd = inum(t), order = order_of(t);
        int sz[8], sub[8], st[8];
        if (nd < 1 || nd > 8)
            die("spec line %d: subarray of %d dimensions", t->line, nd);
        for (int i = 0; i < nd; i++)
            sz[i] = inum(t);
        for (int i = 0; i < nd; i++)
            sub[i] = inum(t);
        for (int i = 0; i < nd; i++)
            st[i] = inum(t);
        old = parse_type(t);
        MPI_Type_create_subarray(nd, sz, sub, st, order, old, &out);
    } else if (strcmp(w, "darray") == 0) {
        int size = inum(t), rank = inum(t), nd = inum(t), order = order_of(t);
        int gs[8], di[8], da[8], ps[8];
        if (nd < 1 || nd > 8)
            die("spec line %d: darray of %d dimensions", t->line, nd);
        for (int i = 0; i < nd; i++)
            gs[i] = inum(t);
        for (int i = 0; i < nd; i++) {
            const char *s = next(t);
            di[i] = s[0] == 'b' ? MPI_DISTRIBUTE_BLOCK
                    : s[0] == 'c' ? MPI_DISTRIBUTE_CYCLIC
                    : s[0] == 'n' ? MPI_DISTRIBUTE_NONE
                                  : (die("spec line %d: distribution '%s'", t->line, s), 0);
        }
        for (int i = 0; i < nd; i++) {
            da[i] = inum(t);
            if (da[i] < 0)
                da[i] = MPI_DISTRIBUTE_DFLT_DARG;
        }
        for (int i = 0; i < nd; i++)
            ps[i] = inum(t);
        old = parse_type(t);
        MPI_Type_create_darray(size, rank, nd, gs, di, da, ps, order, old, &out);
    } else if (strcmp(w, "resized") == 0) {
        long long lb = num(t), ext = num(t);
        old = parse_type(t);
        MPI_Type_create_resized(old, (MPI_Aint)lb, (MPI_Aint)ext, &out);
    } else if (strcmp(w, "dup") == 0) {
        old = parse_type(t);
        MPI_Type_dup(old, &out);
    } else {
        die("spec line %d: unknown type '%s'", t->line, w);
        return MPI_DATATYPE_NULL;
    }
    free_derived(&old);
    return out;
}

/* A committed datatype from the tokens left on a line (all of them). */
static MPI_Datatype type_of(struct toks *t)
{
    MPI_Datatype d = parse_type(t);
    if (t->i != t->n)
        die("spec line %d: '%s' after the type", t->line, t->v[t->i]);
    MPI_Type_commit(&d);
    return d;
}

static void describe(MPI_Datatype d, char *out, size_t len)
{
    int size;
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_size(d, &size);
    MPI_Type_get_extent(d, &lb, &ext);
    MPI_Type_get_true_extent(d, &tlb, &text);
    snprintf(out, len, "[%d,%ld,%ld,%ld,%ld]", size, (long)lb, (long)ext, (long)tlb, (long)text);
}

/* A buffer for 'count' of 'd' (true extent, negative bounds included) filled
 * with pat(a, b, c, displacement); returns the address to pass to MPI. */
static char *fill_buffer(MPI_Datatype d, int count, uint32_t a, uint32_t b, uint32_t c, char **base)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(d, &lb, &ext);
    MPI_Type_get_true_extent(d, &tlb, &text);
    if (count == 0) {
        *base = malloc(1);
        return *base;
    }
    MPI_Aint span = (MPI_Aint)(count - 1) * ext;
    MPI_Aint lo = tlb + (span < 0 ? span : 0), hi = tlb + text + (span > 0 ? span : 0);
    *base = malloc((size_t)(hi - lo) + 1);
    for (MPI_Aint j = 0; j < hi - lo; j++)
        (*base)[j] = (char)pat(a, b, c, (uint32_t)(lo + j));
    return *base - lo;
}

/* ---- the spec ---------------------------------------------------------- */

struct call {
    int kind; /* 0 write_all, 1 write_at_all, 2 write_all_begin, 3 write_at_all_begin, 4 iwrite_all,
               * 5 iwrite_at_all */
    long long offset;
    int count;
};

struct rankspec {
    long long disp;
    int view_line, mem_line; /* line numbers of 'view' and 'mem' */
    int ncalls;
    struct call calls[MAX_CALLS];
};

struct casespec {
    int id, k, wronly, nhints;
    int *members;
    long long prefill;
    unsigned prefill_seed;
    char *hkey[MAX_HINTS], *hval[MAX_HINTS];
    struct rankspec *ranks;
};

static char **lines;
static int nlines;

static void read_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    int cap = 1024;
    lines = malloc(sizeof(char *) * (size_t)cap);
    char *buf = NULL;
    size_t len = 0;
    while (getline(&buf, &len, f) >= 0) {
        if (nlines == cap) {
            cap *= 2;
            lines = realloc(lines, sizeof(char *) * (size_t)cap);
        }
        lines[nlines++] = strdup(buf);
    }
    free(buf);
    fclose(f);
}

/* Tokens of line i (0-based), on a copy the caller frees with free_toks. */
static void line_toks(int i, struct toks *t)
{
    split(strdup(lines[i]), t, i + 1);
}

static void free_toks(struct toks *t)
{
    free(t->buf);
    free(t->v);
}

static int kind_of(const char *s, int line)
{
    static const char *kinds[] = {"write_all",          "write_at_all", "write_all_begin",
                                  "write_at_all_begin", "iwrite_all",   "iwrite_at_all"};
    for (int i = 0; i < 6; i++)
        if (strcmp(s, kinds[i]) == 0)
            return i;
    die("spec line %d: unknown call '%s'", line, s);
    return -1;
}

/* Parses the case starting at line *pos ('case ID'); *pos moves past 'end'. */
static int parse_case(int *pos, struct casespec *c)
{
    memset(c, 0, sizeof *c);
    int cur = -1, started = 0;
    for (; *pos < nlines; (*pos)++) {
        struct toks t;
        line_toks(*pos, &t);
        if (t.n == 0) {
            free_toks(&t);
            continue;
        }
        const char *w = t.v[0];
        t.i = 1;
        int done = 0;
        if (strcmp(w, "case") == 0) {
            c->id = inum(&t);
            started = 1;
        } else if (!started) {
            die("spec line %d: '%s' outside a case", *pos + 1, w);
        } else if (strcmp(w, "members") == 0) {
            c->k = t.n - 1;
            c->members = malloc(sizeof(int) * (size_t)c->k);
            c->ranks = calloc((size_t)c->k, sizeof(struct rankspec));
            for (int i = 0; i < c->k; i++) {
                c->members[i] = inum(&t);
                c->ranks[i].view_line = c->ranks[i].mem_line = -1;
            }
        } else if (strcmp(w, "prefill") == 0) {
            c->prefill = num(&t);
            c->prefill_seed = (unsigned)num(&t);
        } else if (strcmp(w, "amode") == 0) {
            c->wronly = strcmp(next(&t), "wronly") == 0;
        } else if (strcmp(w, "hint") == 0) {
            if (c->nhints == MAX_HINTS)
                die("spec line %d: over %d hints", *pos + 1, MAX_HINTS);
            c->hkey[c->nhints] = strdup(next(&t));
            c->hval[c->nhints++] = strdup(next(&t));
        } else if (strcmp(w, "rank") == 0) {
            cur = inum(&t);
            if (cur < 0 || cur >= c->k)
                die("spec line %d: rank %d of a case of %d ranks", *pos + 1, cur, c->k);
        } else if (strcmp(w, "view") == 0 || strcmp(w, "mem") == 0 || strcmp(w, "call") == 0) {
            if (cur < 0)
                die("spec line %d: '%s' before 'rank'", *pos + 1, w);
            struct rankspec *r = &c->ranks[cur];
            if (w[0] == 'v') {
                r->disp = num(&t);
                r->view_line = *pos;
            } else if (w[0] == 'm') {
                r->mem_line = *pos;
            } else {
                if (r->ncalls == MAX_CALLS)
                    die("spec line %d: over %d calls", *pos + 1, MAX_CALLS);
                struct call *cl = &r->calls[r->ncalls++];
                cl->kind = kind_of(next(&t), *pos + 1);
                const char *o = next(&t);
                cl->offset = strcmp(o, "-") == 0 ? 0 : strtoll(o, NULL, 10);
                cl->count = inum(&t);
            }
        } else if (strcmp(w, "end") == 0) {
            done = 1;
        } else {
            die("spec line %d: unknown item '%s'", *pos + 1, w);
        }
        free_toks(&t);
        if (done) {
            (*pos)++;
            for (int i = 0; i < c->k; i++)
                if (c->ranks[i].view_line < 0 || c->ranks[i].mem_line < 0 || c->ranks[i].ncalls == 0)
                    die("case %d: rank %d lacks a view, a mem or a call", c->id, i);
            return 1;
        }
    }
    if (started)
        die("case %d: no 'end'", c->id);
    return 0;
}

static void free_case(struct casespec *c)
{
    for (int i = 0; i < c->nhints; i++) {
        free(c->hkey[i]);
        free(c->hval[i]);
    }
    free(c->members);
    free(c->ranks);
}

/* ---- running a case ---------------------------------------------------- */

static int failures;

static void prefill_file(const char *path, const struct casespec *c)
{
    if (c->prefill <= 0) {
        if (unlink(path) != 0 && errno != ENOENT)
            die("unlink %s: %s", path, strerror(errno));
        return;
    }
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    unsigned char *b = malloc((size_t)c->prefill);
    for (long long j = 0; j < c->prefill; j++)
        b[j] = pat(c->prefill_seed, 0x7fffffffu, 7, (uint32_t)j);
    if (write(fd, b, (size_t)c->prefill) != (ssize_t)c->prefill)
        die("write %s: %s", path, strerror(errno));
    free(b);
    close(fd);
}

static void run_case(const struct casespec *c, const char *outdir, FILE *results, int world_rank)
{
    int me = -1, world_size;
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 0; i < c->k; i++) {
        if (c->members[i] < 0 || c->members[i] >= world_size)
            die("case %d: member %d of a world of %d ranks", c->id, c->members[i], world_size);
        if (c->members[i] == world_rank)
            me = i;
    }
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, me >= 0 ? 0 : MPI_UNDEFINED, me, &comm);
    if (me < 0)
        return;

    char path[4096];
    snprintf(path, sizeof path, "%s/c%d.dat", outdir, c->id);
    if (me == 0)
        prefill_file(path, c);
    MPI_Barrier(comm);

    const struct rankspec *r = &c->ranks[me];
    struct toks tv, tm;
    line_toks(r->view_line, &tv);
    line_toks(r->mem_line, &tm);
    tv.i = 2; /* 'view' DISP */
    MPI_Datatype etype = named(next(&tv));
    if (etype == MPI_DATATYPE_NULL)
        die("spec line %d: etype '%s' is not a named type", tv.line, tv.v[2]);
    MPI_Datatype ftype = type_of(&tv);
    tm.i = 1;
    MPI_Datatype mtype = type_of(&tm);
    char fdesc[160], mdesc[160];
    describe(ftype, fdesc, sizeof fdesc);
    describe(mtype, mdesc, sizeof mdesc);

    MPI_Info info = MPI_INFO_NULL;
    if (c->nhints) {
        MPI_Info_create(&info);
        for (int i = 0; i < c->nhints; i++)
            MPI_Info_set(info, c->hkey[i], c->hval[i]);
    }
    MPI_File fh;
    int amode = MPI_MODE_CREATE | (c->wronly ? MPI_MODE_WRONLY : MPI_MODE_RDWR);
    int err = MPI_File_open(comm, path, amode, info, &fh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    fprintf(results, "{\"case\":%d,\"rank\":%d,\"world\":%d,\"ft\":%s,\"mt\":%s,\"open\":%d,\"calls\":[", c->id, me,
            world_rank, fdesc, mdesc, err);
    if (err == MPI_SUCCESS) {
        err = MPI_File_set_view(fh, (MPI_Offset)r->disp, etype, ftype, "native", MPI_INFO_NULL);
        for (int i = 0; i < r->ncalls; i++) {
            const struct call *cl = &r->calls[i];
            char *base;
            char *buf = fill_buffer(mtype, cl->count, (uint32_t)c->id, (uint32_t)me, (uint32_t)(i + 1), &base);
            /* ROMIO leaves the status of a call with count 0 as it was: 0 elements then */
            MPI_Status st;
            MPI_Request rq;
            MPI_Status_set_elements(&st, MPI_BYTE, 0);
            int e = err;
            if (e == MPI_SUCCESS) {
                switch (cl->kind) {
                case 0:
                    e = MPI_File_write_all(fh, buf, cl->count, mtype, &st);
                    break;
                case 1:
                    e = MPI_File_write_at_all(fh, (MPI_Offset)cl->offset, buf, cl->count, mtype, &st);
                    break;
                case 2:
                    e = MPI_File_write_all_begin(fh, buf, cl->count, mtype);
                    if (e == MPI_SUCCESS)
                        e = MPI_File_write_all_end(fh, buf, &st);
                    break;
                case 3:
                    e = MPI_File_write_at_all_begin(fh, (MPI_Offset)cl->offset, buf, cl->count, mtype);
                    if (e == MPI_SUCCESS)
                        e = MPI_File_write_at_all_end(fh, buf, &st);
                    break;
                case 4:
                    e = MPI_File_iwrite_all(fh, buf, cl->count, mtype, &rq);
                    if (e == MPI_SUCCESS)
                        e = MPI_Wait(&rq, &st);
                    break;
                default:
                    e = MPI_File_iwrite_at_all(fh, (MPI_Offset)cl->offset, buf, cl->count, mtype, &rq);
                    if (e == MPI_SUCCESS)
                        e = MPI_Wait(&rq, &st);
                    break;
                }
            }
            int count = -1;
            MPI_Offset pos = -1;
            if (e == MPI_SUCCESS) {
                MPI_Get_count(&st, mtype, &count);
                MPI_File_get_position(fh, &pos);
            } else {
                failures++;
            }
            free(base);
            fprintf(results, "%s{\"err\":%d,\"count\":%d,\"pos\":%lld}", i ? "," : "", e, count, (long long)pos);
        }
        MPI_File_close(&fh);
    } else {
        failures++;
    }
    fprintf(results, "]}\n");
    fflush(results); /* a crash in a later case leaves this one's line whole */
    free_derived(&ftype);
    free_derived(&mtype);
    free_toks(&tv);
    free_toks(&tm);
    MPI_Comm_free(&comm);
}

/* --types: size, bounds and MPI_Pack of each 'type' line (buffer pattern pat(ID, 0, 0, d)). */
static void describe_types(const char *outdir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/types.jsonl", outdir);
    FILE *out = fopen(path, "w");
    if (!out)
        die("cannot write %s: %s", path, strerror(errno));
    for (int i = 0; i < nlines; i++) {
        struct toks t;
        line_toks(i, &t);
        if (t.n == 0 || strcmp(t.v[0], "type") != 0) {
            free_toks(&t);
            continue;
        }
        t.i = 1;
        int id = inum(&t);
        MPI_Datatype d = type_of(&t);
        char desc[160];
        describe(d, desc, sizeof desc);
        int size, psize, position = 0;
        MPI_Type_size(d, &size);
        MPI_Pack_size(1, d, MPI_COMM_SELF, &psize);
        char *base;
        char *buf = fill_buffer(d, 1, (uint32_t)id, 0, 0, &base);
        unsigned char *packed = malloc((size_t)psize + 1);
        MPI_Pack(buf, 1, d, packed, psize, &position, MPI_COMM_SELF);
        fprintf(out, "{\"type\":%d,\"desc\":%s,\"packed\":\"", id, desc);
        for (int j = 0; j < position; j++)
            fprintf(out, "%02x", packed[j]);
        fprintf(out, "\"}\n");
        free(packed);
        free(base);
        free_derived(&d);
        free_toks(&t);
    }
    fclose(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int world_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int types = argc == 4 && strcmp(argv[1], "--types") == 0;
    if (argc != 3 && !types)
        die("usage: coll_cases [--types] SPEC OUTDIR");
    const char *spec = argv[1 + types], *outdir = argv[2 + types];
    read_lines(spec);
    if (types) {
        if (world_rank == 0)
            describe_types(outdir);
        MPI_Finalize();
        return 0;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/results.%d.jsonl", outdir, world_rank);
    FILE *results = fopen(path, "w");
    if (!results)
        die("cannot write %s: %s", path, strerror(errno));
    int pos = 0;
    struct casespec c;
    while (parse_case(&pos, &c)) {
        run_case(&c, outdir, results, world_rank);
        free_case(&c);
    }
    fclose(results);
    int any;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
