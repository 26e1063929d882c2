/* Datatype flattening (src/collective/flatten.c) against MPI itself: for
 * each datatype, the bytes MPI_Pack takes from a patterned buffer must be
 * the bytes at the flattened segments, in order; sizes, lb and extent must
 * be MPI's; segments must be merged; the cap and the cache must hold.
 * Runs as an MPI singleton (no mpirun needed). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flatten.h"

#define MAXSEG 100000

static uint8_t pattern(int64_t i)
{
    /* Bytes that differ along any short run, so a wrong order shows. */
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    return (uint8_t)(x >> 56);
}

/* Check 'f' (count copies of 'type') against MPI_Pack and MPI's extents. */
static void check_flat(const char *name, MPI_Datatype type, int count, const struct pario_flat *f)
{
    int before = failures;
    int64_t sum = 0, lo = 0, hi = 0;
    int merged = 1;
    for (int64_t i = 0; i < f->nseg; i++) {
        CHECK(f->len[i] > 0);
        sum += f->len[i];
        if (i == 0 || f->off[i] < lo)
            lo = f->off[i];
        if (i == 0 || f->off[i] + f->len[i] > hi)
            hi = f->off[i] + f->len[i];
        if (i > 0 && f->off[i - 1] + f->len[i - 1] == f->off[i])
            merged = 0;
    }
    CHECK(merged);
    int tsize;
    MPI_Type_size(type, &tsize);
    CHECK(sum == f->size);
    CHECK(f->size == (int64_t)tsize * count);

    /* lb and extent: MPI's, for count copies as a contiguous type. */
    MPI_Datatype cont;
    MPI_Aint lb, ext;
    MPI_Type_contiguous(count, type, &cont);
    MPI_Type_get_extent(count == 1 ? type : cont, &lb, &ext);
    MPI_Type_free(&cont);
    CHECK(f->lb == lb);
    CHECK(f->extent == ext);

    /* The source buffer spans every segment; 'origin' may lie outside it
     * when offsets are negative, and is only ever offset into it. */
    int64_t span = hi - lo;
    uint8_t *src = malloc((size_t)(span > 0 ? span : 1));
    for (int64_t i = 0; i < span; i++)
        src[i] = pattern(i);
    int psize;
    MPI_Type_commit(&type); /* Open MPI's MPI_Pack_size needs it */
    MPI_Pack_size(count, type, MPI_COMM_WORLD, &psize);
    uint8_t *packed = malloc((size_t)psize + 1), *expect = malloc((size_t)f->size + 1);
    int pos = 0;
    MPI_Pack((char *)src - lo, count, type, packed, psize, &pos, MPI_COMM_WORLD);
    int64_t e = 0;
    for (int64_t i = 0; i < f->nseg; i++) {
        memcpy(expect + e, src + (f->off[i] - lo), (size_t)f->len[i]);
        e += f->len[i];
    }
    CHECK(pos == f->size);
    CHECK(memcmp(packed, expect, (size_t)(pos < e ? pos : e)) == 0);
    free(src), free(packed), free(expect);
    if (failures != before)
        fprintf(stderr, "  ... in %s (count %d, %lld segments)\n", name, count,
                (long long)f->nseg);
}

/* Flatten, check, and for count > 1 also check pario_flat_count.  Frees
 * 'type' unless it is predefined.  Returns the number of segments. */
static int64_t check_type(const char *name, MPI_Datatype type, int count)
{
    const struct pario_flat *f = NULL;
    int rc = pario_flatten(type, MAXSEG, &f);
    CHECK(rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "  ... pario_flatten(%s) = %d\n", name, rc);
        return -1;
    }
    int64_t nseg = f->nseg;
    check_flat(name, type, 1, f);
    if (count > 1) {
        struct pario_flat fc;
        CHECK(pario_flat_count(f, count, MAXSEG, &fc) == MPI_SUCCESS);
        check_flat(name, type, count, &fc);
        nseg = fc.nseg;
        pario_flat_free(&fc);
    }
    int ni, na, nt, comb;
    MPI_Type_get_envelope(type, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&type);
    return nseg;
}

static MPI_Datatype vec(int count, int bl, int stride, MPI_Datatype old)
{
    MPI_Datatype t;
    MPI_Type_vector(count, bl, stride, old, &t);
    return t;
}

static MPI_Datatype resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint ext)
{
    MPI_Datatype t;
    MPI_Type_create_resized(old, lb, ext, &t);
    return t;
}

static void test_combiners(void)
{
    MPI_Datatype t, u, v;

    check_type("int", MPI_INT, 1);
    check_type("int x5", MPI_INT, 5);
    CHECK(check_type("double_int (no inner hole)", MPI_DOUBLE_INT, 1) == 1);
    CHECK(check_type("short_int (pair with a hole)", MPI_SHORT_INT, 1) == 2);
    check_type("short_int x3", MPI_SHORT_INT, 3);

    MPI_Type_contiguous(5, MPI_SHORT, &t);
    CHECK(check_type("contiguous", t, 1) == 1);

    check_type("vector", vec(4, 2, 3, MPI_INT), 1);
    /* Contiguous in memory: merged into one segment, across copies too. */
    CHECK(check_type("vector contiguous", vec(3, 2, 2, MPI_INT), 1) == 1);
    CHECK(check_type("vector contiguous x4", vec(3, 2, 2, MPI_INT), 4) == 1);
    check_type("vector x3", vec(4, 1, 3, MPI_DOUBLE), 3);
    check_type("vector negative stride", vec(3, 2, -5, MPI_INT), 1);

    MPI_Type_create_hvector(3, 2, -40, MPI_DOUBLE, &t);
    check_type("hvector negative stride", t, 2);

    {
        int bl[] = {2, 0, 3, 1}, d[] = {5, 1, -2, 9};
        MPI_Type_indexed(4, bl, d, MPI_INT, &t);
        check_type("indexed (zero block, negative, non-monotonic)", t, 2);
    }
    {
        int bl[] = {1, 2, 0, 1};
        MPI_Aint d[] = {40, -16, 4, 0};
        MPI_Type_create_hindexed(4, bl, d, MPI_DOUBLE, &t);
        check_type("hindexed", t, 1);
    }
    {
        int d[] = {4, 0, -3};
        MPI_Type_create_indexed_block(3, 2, d, MPI_SHORT, &t);
        check_type("indexed_block", t, 2);
    }
    {
        MPI_Aint d[] = {24, 8, -64};
        u = vec(2, 1, 2, MPI_INT);
        MPI_Type_create_hindexed_block(3, 2, d, u, &t);
        MPI_Type_free(&u);
        check_type("hindexed_block of vector", t, 1);
    }
    {
        int bl[] = {1, 1, 3};
        MPI_Aint d[] = {0, 8, 20};
        MPI_Datatype ty[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(3, bl, d, ty, &t);
        check_type("struct", t, 3);
    }
    {
        int bl[] = {1, 1, 2, 0};
        MPI_Aint d[] = {16, -8, 4, 100};
        MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_INT};
        MPI_Type_create_struct(4, bl, d, ty, &t);
        check_type("struct non-monotonic, negative", t, 2);
    }
    u = vec(3, 1, 2, MPI_INT);
    MPI_Type_dup(u, &t);
    MPI_Type_free(&u);
    check_type("dup of vector", t, 1);

    check_type("resized int (lb -4, extent 12) x3", resized(MPI_INT, -4, 12), 3);
    {
        /* A vector of structs whose extent was resized to leave a gap. */
        int bl[] = {1, 1};
        MPI_Aint d[] = {0, 6};
        MPI_Datatype ty[] = {MPI_INT, MPI_SHORT};
        MPI_Type_create_struct(2, bl, d, ty, &u);
        v = resized(u, 0, 10);
        t = vec(3, 2, 3, v);
        MPI_Type_free(&u);
        MPI_Type_free(&v);
        check_type("vector of resized structs", t, 2);
    }
    {
        int sizes[] = {4, 5, 6}, sub[] = {2, 3, 2}, st[] = {1, 1, 3};
        MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t);
        check_type("subarray 3-D C", t, 1);
        MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t);
        check_type("subarray 3-D Fortran", t, 2);
    }
    {
        int sizes[] = {3, 4}, sub[] = {2, 2}, st[] = {1, 1};
        MPI_Type_create_hvector(2, 1, 12, MPI_INT, &u);
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, u, &t);
        check_type("subarray C of hvector", t, 1);
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, u, &t);
        check_type("subarray Fortran of hvector", t, 2);
        MPI_Type_free(&u);
    }
    MPI_Type_contiguous(0, MPI_INT, &t);
    CHECK(check_type("empty contiguous", t, 3) == 0);
    {
        /* Nested: struct of a subarray and an hindexed of resized ints. */
        int sizes[] = {6}, sub[] = {2}, st[] = {3};
        MPI_Datatype a, b, r = resized(MPI_INT, 0, 8);
        int hbl[] = {2, 1};
        MPI_Aint hd[] = {-32, 64};
        MPI_Type_create_subarray(1, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &a);
        MPI_Type_create_hindexed(2, hbl, hd, r, &b);
        int bl[] = {1, 2};
        MPI_Aint d[] = {200, 0};
        MPI_Datatype ty[] = {a, b};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        MPI_Type_free(&a), MPI_Type_free(&b), MPI_Type_free(&r);
        check_type("struct of subarray and hindexed of resized", t, 2);
    }
}

static void test_darray(void)
{
    char name[96];
    /* cyclic(2) in 2-D, Fortran order, on a 2x3 process grid: every rank. */
    for (int rank = 0; rank < 6; rank++) {
        int gs[] = {7, 10}, di[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, da[] = {2, 2},
            ps[] = {2, 3};
        MPI_Datatype t;
        MPI_Type_create_darray(6, rank, 2, gs, di, da, ps, MPI_ORDER_FORTRAN, MPI_INT, &t);
        snprintf(name, sizeof name, "darray cyclic(2) Fortran 2x3 rank %d", rank);
        check_type(name, t, rank == 4 ? 2 : 1);
        MPI_Type_create_darray(6, rank, 2, gs, di, da, ps, MPI_ORDER_C, MPI_DOUBLE, &t);
        snprintf(name, sizeof name, "darray cyclic(2) C 2x3 rank %d", rank);
        check_type(name, t, 1);
    }
    /* block (default and explicit), none, cyclic (default): C and Fortran. */
    for (int rank = 0; rank < 6; rank++) {
        int gs[] = {5, 4, 8},
            di[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC},
            da[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
            ps[] = {2, 1, 3};
        MPI_Datatype t;
        MPI_Type_create_darray(6, rank, 3, gs, di, da, ps, MPI_ORDER_C, MPI_SHORT, &t);
        snprintf(name, sizeof name, "darray block/none/cyclic C rank %d", rank);
        check_type(name, t, 1);
        da[0] = 4; /* explicit block size: the second process gets one row */
        MPI_Type_create_darray(6, rank, 3, gs, di, da, ps, MPI_ORDER_FORTRAN, MPI_INT, &t);
        snprintf(name, sizeof name, "darray block(4)/none/cyclic Fortran rank %d", rank);
        check_type(name, t, 1);
    }
    /* A rank that owns nothing: 2 elements in blocks over 3 processes. */
    {
        int gs[] = {2}, di[] = {MPI_DISTRIBUTE_BLOCK}, da[] = {MPI_DISTRIBUTE_DFLT_DARG},
            ps[] = {3};
        MPI_Datatype t;
        MPI_Type_create_darray(3, 2, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t);
        CHECK(check_type("darray empty rank", t, 1) == 0);
    }
}

static void test_cap(void)
{
    const struct pario_flat *f;
    struct pario_flat fc;
    MPI_Datatype t = vec(1 << 30, 1, 2, MPI_CHAR);
    CHECK(pario_flatten(t, 1000, &f) == MPI_ERR_NO_MEM);
    MPI_Type_free(&t);

    /* Huge but contiguous: one segment, computed without a loop per element. */
    t = vec(1 << 30, 4, 4, MPI_CHAR);
    CHECK(pario_flatten(t, 1, &f) == MPI_SUCCESS && f->nseg == 1 && f->len[0] == 4LL << 30);
    MPI_Type_free(&t);

    int gs[] = {1 << 30}, di[] = {MPI_DISTRIBUTE_CYCLIC}, da[] = {1}, ps[] = {4};
    MPI_Type_create_darray(4, 1, 1, gs, di, da, ps, MPI_ORDER_C, MPI_CHAR, &t);
    CHECK(pario_flatten(t, 1000, &f) == MPI_ERR_NO_MEM);
    MPI_Type_free(&t);

    /* Within the cap, then copies beyond it; a cached result and a smaller cap. */
    t = vec(10, 1, 2, MPI_INT);
    CHECK(pario_flatten(t, 10, &f) == MPI_SUCCESS && f->nseg == 10);
    CHECK(pario_flat_count(f, 1000000, 100, &fc) == MPI_ERR_NO_MEM && fc.nseg == 0);
    CHECK(pario_flatten(t, 9, &f) == MPI_ERR_NO_MEM);
    MPI_Type_free(&t);
}

static void test_cache(void)
{
    const struct pario_flat *a, *b;
    MPI_Datatype t = vec(4, 1, 3, MPI_INT);
    CHECK(pario_flatten(t, MAXSEG, &a) == MPI_SUCCESS);
    CHECK(pario_flatten(t, MAXSEG, &b) == MPI_SUCCESS);
    CHECK(a == b && a->nseg == 4);
    CHECK(pario_flatten(MPI_DOUBLE, MAXSEG, &a) == MPI_SUCCESS);
    CHECK(pario_flatten(MPI_DOUBLE, MAXSEG, &b) == MPI_SUCCESS && a == b);

    /* Free and build another type, likely on the same handle: its result
     * must be its own (valgrind sees any use of the freed one). */
    MPI_Type_free(&t);
    for (int i = 0; i < 3; i++) {
        t = vec(2 + i, 1, 2, MPI_SHORT);
        CHECK(pario_flatten(t, MAXSEG, &a) == MPI_SUCCESS);
        CHECK(a->nseg == 2 + i && a->len[0] == 2 && a->off[1] == 4);
        check_type("recreated vector", t, 1);
    }
    /* A duplicate does not inherit the cached result (its own attribute). */
    MPI_Datatype d;
    t = vec(3, 1, 2, MPI_INT);
    CHECK(pario_flatten(t, MAXSEG, &a) == MPI_SUCCESS);
    MPI_Type_dup(t, &d);
    CHECK(pario_flatten(d, MAXSEG, &b) == MPI_SUCCESS && b != a && b->nseg == 3);
    MPI_Type_free(&t);
    MPI_Type_free(&d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_combiners();
    test_darray();
    test_cap();
    test_cache();
    MPI_Finalize();
    return CHECK_SUMMARY();
}
