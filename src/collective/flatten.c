/*
 * Flatten MPI datatypes into (offset, length) segments (see flatten.h).
 *
 * A recursive descent over MPI_Type_get_envelope / MPI_Type_get_contents.
 * Each constructor is "copies of the inner type's segments at some
 * displacements", so everything reduces to one operation, replicate():
 * append k copies of a segment list at a stride, merging as it goes.
 *
 * Why this stays bounded: the builder refuses a segment beyond the cap, and
 * every copy that replicate() makes adds at least one new segment (the
 * inner list is already merged, so only its first segment can join the
 * previous copy's last) except when the inner list is one segment exactly
 * as long as the stride, which is handled as one long segment.  So no loop
 * runs more than about cap times, however large the counts.  Memory: each
 * level of nesting holds at most one inner list of at most cap segments
 * while it builds, so the peak is about (depth + 1) * cap * 16 bytes.
 *
 * get_contents layouts used (MPI-3.1 section 4.1.13, and the test checks
 * every one against MPI_Pack):
 *   CONTIGUOUS     i: count
 *   VECTOR         i: count, blocklength, stride (in extents)
 *   HVECTOR        i: count, blocklength        a: stride (bytes)
 *   INDEXED        i: count, bl[count], displ[count] (in extents)
 *   HINDEXED       i: count, bl[count]          a: displ[count]
 *   INDEXED_BLOCK  i: count, bl, displ[count]
 *   HINDEXED_BLOCK i: count, bl                 a: displ[count]
 *   STRUCT         i: count, bl[count]          a: displ[count]  t: types[count]
 *   SUBARRAY       i: ndims, sizes[], subsizes[], starts[], order
 *   DARRAY         i: size, rank, ndims, gsizes[], distribs[], dargs[], psizes[], order
 *   RESIZED        a: lb, extent
 * Returned datatypes that are derived are new references the caller frees;
 * predefined ones (NAMED, and the F90 ones, which MPI calls predefined) are
 * not freed.
 */
#include "flatten.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A growing segment list; 'cap' is the allocated length, 'max' the limit. */
struct builder {
    struct pario_flat f;
    int64_t cap;
    int64_t max;
};

static void builder_init(struct builder *b, int64_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max < 0 ? 0 : max;
}

static void builder_free(struct builder *b)
{
    free(b->f.off);
    free(b->f.len);
    memset(&b->f, 0, sizeof b->f);
    b->cap = 0;
}

/* Append one segment, merging with the last one when they touch. */
static int append(struct builder *b, int64_t off, int64_t len)
{
    struct pario_flat *f = &b->f;
    if (len <= 0)
        return MPI_SUCCESS;
    if (f->nseg > 0 && f->off[f->nseg - 1] + f->len[f->nseg - 1] == off) {
        if (__builtin_add_overflow(f->len[f->nseg - 1], len, &f->len[f->nseg - 1]))
            return MPI_ERR_TYPE;
        return MPI_SUCCESS;
    }
    if (f->nseg >= b->max)
        return MPI_ERR_NO_MEM;
    if (f->nseg == b->cap) {
        int64_t cap = b->cap ? b->cap * 2 : 16;
        if (cap > b->max)
            cap = b->max;
        int64_t *o = realloc(f->off, (size_t)cap * sizeof *o);
        if (!o)
            return MPI_ERR_INTERN;
        f->off = o;
        int64_t *l = realloc(f->len, (size_t)cap * sizeof *l);
        if (!l)
            return MPI_ERR_INTERN;
        f->len = l;
        b->cap = cap;
    }
    f->off[f->nseg] = off;
    f->len[f->nseg] = len;
    f->nseg++;
    return MPI_SUCCESS;
}

/* Append k copies of 'src' at base, base+stride, ... (stride may be negative). */
static int replicate(struct builder *b, const struct pario_flat *src, int64_t base, int64_t k,
                     int64_t stride)
{
    if (src->nseg == 0 || k <= 0)
        return MPI_SUCCESS;
    if (src->nseg == 1 && src->len[0] == stride) {
        /* Copies that abut: one segment, without looping k times. */
        int64_t off, len;
        if (__builtin_add_overflow(base, src->off[0], &off) ||
            __builtin_mul_overflow(k, stride, &len))
            return MPI_ERR_TYPE;
        return append(b, off, len);
    }
    int64_t pos = base;
    for (int64_t i = 0; i < k; i++) {
        for (int64_t j = 0; j < src->nseg; j++) {
            int64_t off;
            if (__builtin_add_overflow(pos, src->off[j], &off))
                return MPI_ERR_TYPE;
            int rc = append(b, off, src->len[j]);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (i + 1 < k && __builtin_add_overflow(pos, stride, &pos))
            return MPI_ERR_TYPE;
    }
    return MPI_SUCCESS;
}

static int is_predefined(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

/* The C pair types have a hole (double then int in 16 bytes); their layout
 * is the C struct's, which is how MPI defines them. */
#define PAIR(T) {sizeof(T), offsetof(struct { T v; int i; }, i)}
static int named_pair(MPI_Datatype t, int64_t *first, int64_t *second_off)
{
    static const struct { size_t first, second; } lay[] = {
        PAIR(float), PAIR(double), PAIR(long), PAIR(short), PAIR(long double),
    };
    const MPI_Datatype types[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
                                  MPI_LONG_DOUBLE_INT};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (types[i] != MPI_DATATYPE_NULL && t == types[i]) {
            *first = (int64_t)lay[i].first;
            *second_off = (int64_t)lay[i].second;
            return 1;
        }
    }
    return 0;
}

static int flatten_type(MPI_Datatype t, int64_t max, struct builder *out);

/* A predefined type: one segment from its true lb, or a pair type. */
static int flatten_predefined(MPI_Datatype t, struct builder *out)
{
    int size;
    MPI_Aint tlb, text;
    int rc = NEXT(PMPI_Type_size)(t, &size);
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Type_get_true_extent)(t, &tlb, &text);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((int64_t)size == (int64_t)text)
        return append(out, tlb, size);
    int64_t first, second;
    if (!named_pair(t, &first, &second))
        return MPI_ERR_TYPE;
    rc = append(out, 0, first);
    return rc == MPI_SUCCESS ? append(out, second, (int64_t)sizeof(int)) : rc;
}

/* Flatten an inner type into a fresh builder and read its extent. */
static int inner(MPI_Datatype t, int64_t max, struct builder *b, int64_t *extent)
{
    MPI_Aint lb, ext;
    builder_init(b, max);
    int rc = NEXT(PMPI_Type_get_extent)(t, &lb, &ext);
    if (rc != MPI_SUCCESS)
        return rc;
    *extent = ext;
    rc = flatten_type(t, max, b);
    if (rc != MPI_SUCCESS)
        builder_free(b);
    return rc;
}

/* The indices one process owns along one dimension of a darray, as ranges
 * (start, length) in increasing order.  Adjacent ranges never occur (a
 * single process along the dimension gets one range), so each range costs
 * at least one segment and 'max' bounds the list. */
static int darray_ranges(int gsize, int distrib, int darg, int psize, int coord, int64_t max,
                         int64_t **start, int64_t **len, int64_t *n)
{
    *start = *len = NULL;
    *n = 0;
    if (gsize < 0 || psize <= 0 || coord < 0 || coord >= psize)
        return MPI_ERR_TYPE;
    int64_t k, first, step;
    if (distrib == MPI_DISTRIBUTE_NONE || (distrib == MPI_DISTRIBUTE_CYCLIC && psize == 1)) {
        k = gsize, first = 0, step = gsize;
    } else if (distrib == MPI_DISTRIBUTE_BLOCK) {
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? ((int64_t)gsize + psize - 1) / psize : darg;
        first = (int64_t)coord * k, step = (int64_t)gsize + 1; /* one block only */
    } else if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        first = (int64_t)coord * k, step = k * psize;
    } else {
        return MPI_ERR_TYPE;
    }
    if (k <= 0 && gsize > 0)
        return MPI_ERR_TYPE;
    int64_t count = first < gsize ? (gsize - first + step - 1) / step : 0;
    if (count == 0)
        return MPI_SUCCESS;
    if (count > max)
        return MPI_ERR_NO_MEM;
    *start = malloc((size_t)count * sizeof **start);
    *len = malloc((size_t)count * sizeof **len);
    if (!*start || !*len) {
        free(*start);
        free(*len);
        *start = *len = NULL;
        return MPI_ERR_INTERN;
    }
    for (int64_t i = 0; i < count; i++) {
        int64_t s = first + i * step;
        (*start)[i] = s;
        (*len)[i] = gsize - s < k ? gsize - s : k;
    }
    *n = count;
    return MPI_SUCCESS;
}

/* Subarray and darray: the elements owned along each dimension form a
 * Cartesian product, laid out (and packed) in array order: the fastest
 * dimension innermost (the last for MPI_ORDER_C, the first for Fortran).
 * Build from the fastest dimension out; dimension d's stride is the
 * element extent times the sizes of the faster dimensions. */
static int flatten_array(MPI_Datatype elem, int64_t max, int ndims, const int *sizes, int order,
                         const int *range_n_src, int64_t *const *rstart, int64_t *const *rlen,
                         struct builder *out)
{
    struct builder cur;
    int64_t ext;
    int rc = inner(elem, max, &cur, &ext);
    if (rc != MPI_SUCCESS)
        return rc;
    int64_t stride = ext;
    for (int s = 0; s < ndims && rc == MPI_SUCCESS; s++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - s : s;
        struct builder next;
        builder_init(&next, max);
        for (int r = 0; r < range_n_src[d] && rc == MPI_SUCCESS; r++) {
            int64_t base;
            if (__builtin_mul_overflow(rstart[d][r], stride, &base))
                rc = MPI_ERR_TYPE;
            else
                rc = replicate(&next, &cur.f, base, rlen[d][r], stride);
        }
        builder_free(&cur);
        cur = next;
        if (rc == MPI_SUCCESS && __builtin_mul_overflow(stride, (int64_t)sizes[d], &stride))
            rc = MPI_ERR_TYPE;
    }
    if (rc == MPI_SUCCESS)
        rc = replicate(out, &cur.f, 0, 1, 0);
    builder_free(&cur);
    return rc;
}

static int flatten_subarray(const int *ints, MPI_Datatype elem, int64_t max, struct builder *out)
{
    int nd = ints[0];
    const int *sizes = ints + 1, *sub = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int order = ints[1 + 3 * nd];
    int64_t *st = malloc((size_t)nd * sizeof *st), *ln = malloc((size_t)nd * sizeof *ln);
    int64_t **pst = malloc((size_t)nd * sizeof *pst), **pln = malloc((size_t)nd * sizeof *pln);
    int *n = malloc((size_t)nd * sizeof *n);
    int rc = MPI_ERR_INTERN;
    if (st && ln && pst && pln && n) {
        for (int d = 0; d < nd; d++) {
            st[d] = starts[d], ln[d] = sub[d];
            pst[d] = &st[d], pln[d] = &ln[d];
            n[d] = 1;
        }
        rc = flatten_array(elem, max, nd, sizes, order, n, pst, pln, out);
    }
    free(st), free(ln), free(pst), free(pln), free(n);
    return rc;
}

static int flatten_darray(const int *ints, MPI_Datatype elem, int64_t max, struct builder *out)
{
    int rank = ints[1], nd = ints[2];
    const int *gsizes = ints + 3, *distribs = ints + 3 + nd, *dargs = ints + 3 + 2 * nd,
              *psizes = ints + 3 + 3 * nd;
    int order = ints[3 + 4 * nd];
    int64_t **st = calloc((size_t)nd, sizeof *st), **ln = calloc((size_t)nd, sizeof *ln);
    int *n = calloc((size_t)nd, sizeof *n);
    int rc = st && ln && n ? MPI_SUCCESS : MPI_ERR_INTERN;
    int empty = 0;
    /* Processes are numbered row-major in the grid whatever the array order. */
    int r = rank;
    for (int d = nd - 1; d >= 0 && rc == MPI_SUCCESS; d--) {
        if (psizes[d] <= 0) {
            rc = MPI_ERR_TYPE;
            break;
        }
        int coord = r % psizes[d];
        r /= psizes[d];
        int64_t cnt = 0;
        rc = darray_ranges(gsizes[d], distribs[d], dargs[d], psizes[d], coord, max, &st[d],
                           &ln[d], &cnt);
        n[d] = (int)cnt;
        if (cnt == 0)
            empty = 1;
    }
    if (rc == MPI_SUCCESS && !empty)
        rc = flatten_array(elem, max, nd, gsizes, order, n, st, ln, out);
    for (int d = 0; st && ln && d < nd; d++)
        free(st[d]), free(ln[d]);
    free(st), free(ln), free(n);
    return rc;
}

/* Flatten a derived type from its constructor's arguments. */
static int flatten_derived(int combiner, const int *ints, const MPI_Aint *addrs,
                           const MPI_Datatype *types, int64_t max, struct builder *out)
{
    struct builder in;
    int64_t ext;
    int rc;
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* same type map; lb and extent come from MPI */
        return flatten_type(types[0], max, out);
    case MPI_COMBINER_SUBARRAY:
        return flatten_subarray(ints, types[0], max, out);
    case MPI_COMBINER_DARRAY:
        return flatten_darray(ints, types[0], max, out);
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0]; i++) {
            rc = inner(types[i], max, &in, &ext);
            if (rc == MPI_SUCCESS)
                rc = replicate(out, &in.f, addrs[i], ints[1 + i], ext);
            builder_free(&in);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        return MPI_SUCCESS;
    default:
        break;
    }
    /* The rest have a single inner type. */
    rc = inner(types[0], max, &in, &ext);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = ints[0];
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        rc = replicate(out, &in.f, 0, n, ext);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t stride = combiner == MPI_COMBINER_VECTOR ? (int64_t)ints[2] * ext : addrs[0];
        struct builder block; /* one block of blocklength inner copies */
        builder_init(&block, max);
        rc = replicate(&block, &in.f, 0, ints[1], ext);
        if (rc == MPI_SUCCESS)
            rc = replicate(out, &block.f, 0, n, stride);
        builder_free(&block);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            int bl = combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED
                         ? ints[1 + i]
                         : ints[1];
            int64_t disp;
            if (combiner == MPI_COMBINER_INDEXED)
                disp = (int64_t)ints[1 + n + i] * ext;
            else if (combiner == MPI_COMBINER_INDEXED_BLOCK)
                disp = (int64_t)ints[2 + i] * ext;
            else
                disp = addrs[i];
            rc = replicate(out, &in.f, disp, bl, ext);
        }
        break;
    default:
        rc = MPI_ERR_TYPE; /* e.g. the removed *_INTEGER combiners */
        break;
    }
    builder_free(&in);
    return rc;
}

static int flatten_type(MPI_Datatype t, int64_t max, struct builder *out)
{
    int ni, na, nt, combiner;
    int rc = NEXT(PMPI_Type_get_envelope)(t, &ni, &na, &nt, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    if (is_predefined(combiner))
        return flatten_predefined(t, out);
    /* The arrays hold the constructor's own arguments, so their size is
     * bounded by what the program already allocated. */
    int *ints = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *ints);
    MPI_Aint *addrs = malloc((size_t)(na > 0 ? na : 1) * sizeof *addrs);
    MPI_Datatype *types = malloc((size_t)(nt > 0 ? nt : 1) * sizeof *types);
    if (!ints || !addrs || !types) {
        free(ints), free(addrs), free(types);
        return MPI_ERR_INTERN;
    }
    rc = NEXT(PMPI_Type_get_contents)(t, ni, na, nt, ints, addrs, types);
    if (rc == MPI_SUCCESS) {
        rc = flatten_derived(combiner, ints, addrs, types, max, out);
        for (int i = 0; i < nt; i++) {
            int a, b, c, comb;
            if (NEXT(PMPI_Type_get_envelope)(types[i], &a, &b, &c, &comb) == MPI_SUCCESS &&
                !is_predefined(comb))
                NEXT(PMPI_Type_free)(&types[i]);
        }
    }
    free(ints), free(addrs), free(types);
    return rc;
}

/* Flatten 'type' into a new heap result, with size, lb and extent. */
static int flatten_new(MPI_Datatype type, int64_t max, struct pario_flat **res)
{
    struct builder b;
    builder_init(&b, max);
    MPI_Count size;
    MPI_Aint lb, ext;
    int rc = NEXT(PMPI_Type_size_x)(type, &size);
    if (rc == MPI_SUCCESS)
        rc = NEXT(PMPI_Type_get_extent)(type, &lb, &ext);
    if (rc == MPI_SUCCESS)
        rc = flatten_type(type, max, &b);
    if (rc == MPI_SUCCESS) {
        /* A sanity check on the whole descent: the bytes must add up. */
        int64_t sum = 0;
        for (int64_t i = 0; i < b.f.nseg; i++)
            sum += b.f.len[i];
        if (sum != (int64_t)size)
            rc = MPI_ERR_TYPE;
    }
    if (rc == MPI_SUCCESS && !(*res = malloc(sizeof **res)))
        rc = MPI_ERR_INTERN;
    if (rc != MPI_SUCCESS) {
        builder_free(&b);
        return rc;
    }
    **res = b.f;
    (*res)->size = size;
    (*res)->lb = lb;
    (*res)->extent = ext;
    return MPI_SUCCESS;
}

/* ---- the cache: one attribute per datatype ---------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_keyval = MPI_KEYVAL_INVALID;

static void flat_destroy(struct pario_flat *f)
{
    if (!f)
        return;
    free(f->off);
    free(f->len);
    free(f);
}

/* MPI_Type_free runs this, so a result dies with its type. */
static int cache_delete(MPI_Datatype type, int keyval, void *val, void *extra)
{
    (void)type, (void)keyval, (void)extra;
    flat_destroy(val);
    return MPI_SUCCESS;
}

/* Predefined types are never freed and MPI need not accept attributes on
 * them, so their results live in a small list for the whole run. */
#define PREDEFINED_MAX 256
static struct {
    MPI_Datatype type;
    struct pario_flat *flat;
} predefined[PREDEFINED_MAX];
static int npredefined;

int pario_flatten(MPI_Datatype type, int64_t max_segments, const struct pario_flat **out)
{
    int ni, na, nt, combiner;
    *out = NULL;
    int rc = NEXT(PMPI_Type_get_envelope)(type, &ni, &na, &nt, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&cache_lock);
    struct pario_flat *f = NULL;
    if (is_predefined(combiner)) {
        for (int i = 0; i < npredefined && !f; i++)
            if (predefined[i].type == type)
                f = predefined[i].flat;
        if (!f) {
            if (npredefined == PREDEFINED_MAX)
                rc = MPI_ERR_NO_MEM;
            else if ((rc = flatten_new(type, max_segments, &f)) == MPI_SUCCESS)
                predefined[npredefined].type = type, predefined[npredefined++].flat = f;
        }
    } else {
        if (cache_keyval == MPI_KEYVAL_INVALID)
            rc = NEXT(PMPI_Type_create_keyval)(MPI_TYPE_NULL_COPY_FN, cache_delete, &cache_keyval,
                                         NULL);
        int flag = 0;
        if (rc == MPI_SUCCESS)
            rc = NEXT(PMPI_Type_get_attr)(type, cache_keyval, &f, &flag);
        if (rc == MPI_SUCCESS && !flag) {
            f = NULL;
            rc = flatten_new(type, max_segments, &f);
            if (rc == MPI_SUCCESS && (rc = NEXT(PMPI_Type_set_attr)(type, cache_keyval, f)) != MPI_SUCCESS) {
                flat_destroy(f);
                f = NULL;
            }
        }
    }
    pthread_mutex_unlock(&cache_lock);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A result cached under a larger cap still obeys this caller's cap. */
    if (f->nseg > max_segments)
        return MPI_ERR_NO_MEM;
    *out = f;
    return MPI_SUCCESS;
}

int pario_flat_count(const struct pario_flat *f, int64_t count, int64_t max_segments,
                     struct pario_flat *out)
{
    struct builder b;
    builder_init(&b, max_segments);
    memset(out, 0, sizeof *out);
    if (count < 0)
        return MPI_ERR_COUNT;
    int rc = replicate(&b, f, 0, count, f->extent);
    int64_t size, span;
    if (rc == MPI_SUCCESS && (__builtin_mul_overflow(f->size, count, &size) ||
                              __builtin_mul_overflow(f->extent, count > 0 ? count - 1 : 0, &span)))
        rc = MPI_ERR_TYPE;
    if (rc != MPI_SUCCESS) {
        builder_free(&b);
        return rc;
    }
    *out = b.f;
    out->size = size;
    if (count == 0) {
        out->lb = f->lb;
        out->extent = 0;
    } else {
        /* MPI's rule for contiguous: lb is the least copy's lb, ub the
         * greatest copy's ub (copies at 0, extent, ... (count-1)*extent). */
        int64_t lb = f->lb + (span < 0 ? span : 0);
        int64_t ub = f->lb + f->extent + (span > 0 ? span : 0);
        out->lb = lb;
        out->extent = ub - lb;
    }
    return MPI_SUCCESS;
}

void pario_flat_free(struct pario_flat *f)
{
    if (!f)
        return;
    free(f->off);
    free(f->len);
    memset(f, 0, sizeof *f);
}
