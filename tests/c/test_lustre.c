/* Unit tests of the "lustre.lov" parser (src/runtime/lustre.c).  There is
 * no Lustre here, so the attributes are built byte by byte following the
 * structs of Lustre's lustre_user.h (offsets listed at the top of
 * lustre.c), in little-endian order as an x86 client returns them. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "lustre.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MiB (1024u * 1024u)
#define V1 0x0BD10BD0u
#define V3 0x0BD30BD0u
#define COMP_V1 0x0BD60BD0u
#define RAID0 0x1u
#define RELEASED 0x80000000u
#define LCME_FL_INIT 0x10u

static unsigned char blob[4096];

static void put(size_t off, uint64_t v, int width)
{
    for (int i = 0; i < width; i++)
        blob[off + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* A lov_user_md_v1 (or _v3 with 'pool') at 'at', with 'nobj' objects on the
 * OSTs first_ost, first_ost + 1, ...; returns its size. */
static size_t plain(size_t at, uint32_t pattern, uint32_t stripe_size, uint16_t count, size_t nobj,
                    uint32_t first_ost, const char *pool)
{
    size_t header = pool ? 48 : 32;
    memset(blob + at, 0, header + 24 * nobj);
    put(at + 0, pool ? V3 : V1, 4);
    put(at + 4, pattern, 4);
    put(at + 8, 0x200000401ull, 8); /* lmm_oi: an object id and sequence */
    put(at + 16, 0x2, 8);
    put(at + 24, stripe_size, 4);
    put(at + 28, count, 2);
    put(at + 30, 0, 2); /* lmm_layout_gen: cleared by getxattr */
    if (pool)
        memcpy(blob + at + 32, pool, strlen(pool)); /* char lmm_pool_name[16], NUL-padded */
    for (size_t i = 0; i < nobj; i++) {
        size_t o = at + header + 24 * i;
        put(o + 0, 0x1000 + i, 8); /* l_ost_oi */
        put(o + 8, 0x100000000ull, 8);
        put(o + 16, 0, 4);                 /* l_ost_gen */
        put(o + 20, first_ost + i, 4);     /* l_ost_idx */
    }
    return header + 24 * nobj;
}

/* Entry i of a composite layout of n entries. */
static void entry(size_t i, uint32_t flags, uint64_t start, uint64_t end, size_t off, size_t size)
{
    size_t e = 32 + 48 * i;
    memset(blob + e, 0, 48);
    put(e + 0, i + 1, 4);  /* lcme_id */
    put(e + 4, flags, 4);  /* lcme_flags */
    put(e + 8, start, 8);  /* lcme_extent.e_start */
    put(e + 16, end, 8);   /* lcme_extent.e_end */
    put(e + 24, off, 4);   /* lcme_offset, from the start of the attribute */
    put(e + 28, size, 4);  /* lcme_size */
    put(e + 32, 1, 4);     /* lcme_layout_gen */
}

static void comp_header(size_t total, uint16_t n)
{
    memset(blob, 0, 32);
    put(0, COMP_V1, 4);
    put(4, total, 4);  /* lcm_size */
    put(8, 3, 4);      /* lcm_layout_gen */
    put(14, n, 2);     /* lcm_entry_count */
}

/* Parse the first 'len' bytes from an exact-size copy, so that a sanitizer
 * or valgrind would see a read past the end. */
static int parse(size_t len, struct pario_lustre_layout *out)
{
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, blob, len);
    int rc = pario_lustre_parse(copy, len, out);
    free(copy);
    return rc;
}

static int is_zero(const struct pario_lustre_layout *l)
{
    return l->stripe_size == 0 && l->stripe_count == 0 && l->stripe_offset == 0 && l->components == 0;
}

/* Every shorter prefix of a valid attribute is refused. */
static void check_prefixes(size_t len)
{
    struct pario_lustre_layout l;
    int refused = 0;
    for (size_t n = 0; n < len; n++)
        refused += parse(n, &l) != 0 && is_zero(&l);
    CHECK(refused == (int)len);
}

static void test_v1(void)
{
    struct pario_lustre_layout l;
    size_t n = plain(0, RAID0, MiB, 4, 4, 7, NULL);
    CHECK(n == 32 + 4 * 24);
    CHECK(parse(n, &l) == 0);
    CHECK(l.stripe_size == MiB && l.stripe_count == 4 && l.stripe_offset == 7 && l.components == 1);
    check_prefixes(n);
    /* more bytes than the objects need are fine */
    CHECK(parse(n + 10, &l) == 0 && l.stripe_count == 4);
}

static void test_v3(void)
{
    struct pario_lustre_layout l;
    size_t n = plain(0, RAID0, 4 * MiB, 2, 2, 12, "flash");
    CHECK(n == 48 + 2 * 24);
    CHECK(parse(n, &l) == 0);
    CHECK(l.stripe_size == 4 * MiB && l.stripe_count == 2 && l.stripe_offset == 12 && l.components == 1);
    check_prefixes(n);
}

static void test_released_and_templates(void)
{
    struct pario_lustre_layout l;
    /* an HSM-released file keeps its striping but has no objects */
    size_t n = plain(0, RAID0 | RELEASED, MiB, 2, 0, 0, NULL);
    CHECK(parse(n, &l) == 0 && l.stripe_count == 2 && l.stripe_offset == -1);
    /* stripe count -1 ("all OSTs") is a template, not a file's layout */
    n = plain(0, RAID0, MiB, 0xFFFF, 0, 0, NULL);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
}

/* Three PFL components: [0, 64 MiB) 1 stripe and [64 MiB, 1 GiB) 4 stripes,
 * both instantiated, then [1 GiB, EOF) 16 stripes, not yet instantiated
 * (its blob has no objects).  Returns the attribute's size. */
static size_t pfl3(uint32_t flags0, uint32_t flags1)
{
    size_t off0 = 32 + 3 * 48;
    size_t n0 = plain(off0, RAID0, MiB, 1, 1, 5, NULL);
    size_t off1 = off0 + n0;
    size_t n1 = plain(off1, RAID0, 4 * MiB, 4, 4, 20, "flash");
    size_t off2 = off1 + n1;
    size_t n2 = plain(off2, RAID0, 16 * MiB, 16, 0, 0, NULL);
    size_t total = off2 + n2;
    comp_header(total, 3);
    entry(0, flags0, 0, 64ull * MiB, off0, n0);
    entry(1, flags1, 64ull * MiB, 1024ull * MiB, off1, n1);
    entry(2, 0, 1024ull * MiB, ~0ull, off2, n2);
    return total;
}

static void test_composite(void)
{
    struct pario_lustre_layout l;
    size_t n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    CHECK(n == 32 + 3 * 48 + (32 + 24) + (48 + 4 * 24) + 32);
    CHECK(parse(n, &l) == 0);
    /* the last instantiated component wins; the count is of all components */
    CHECK(l.stripe_size == 4 * MiB && l.stripe_count == 4 && l.stripe_offset == 20 && l.components == 3);
    check_prefixes(n);

    n = pfl3(LCME_FL_INIT, 0);
    CHECK(parse(n, &l) == 0);
    CHECK(l.stripe_size == MiB && l.stripe_count == 1 && l.stripe_offset == 5 && l.components == 3);

    /* nothing instantiated yet: the components are known, the striping is not */
    n = pfl3(0, 0);
    CHECK(parse(n, &l) == 0);
    CHECK(l.stripe_size == 0 && l.stripe_count == 0 && l.stripe_offset == -1 && l.components == 3);
}

static void test_rejections(void)
{
    struct pario_lustre_layout l;
    /* truncated header: a V1 attribute cut before lmm_stripe_count */
    size_t n = plain(0, RAID0, MiB, 4, 4, 7, NULL);
    CHECK(parse(20, &l) != 0 && is_zero(&l));
    /* truncated object list: 4 stripes, 3 objects */
    CHECK(parse(n - 24, &l) != 0 && is_zero(&l));
    /* bad magic (LOV_MAGIC_MIGRATE's value, then garbage) */
    put(0, 0x0BD40BD0u, 4);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    put(0, 0xdeadbeefu, 4);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    CHECK(pario_lustre_parse(NULL, 64, &l) != 0 && is_zero(&l));

    /* a composite entry pointing past the attribute */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(32 + 2 * 48 + 24, n - 16, 4); /* entry 2's blob: 32 bytes from 16 before the end */
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(32 + 1 * 48 + 28, 0xFFFFFFF0u, 4); /* entry 1's size: wraps around if added carelessly */
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    /* lcm_size larger than the attribute */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(4, n + 1, 4);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    /* the entry table longer than lcm_size */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(14, 9, 2);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    /* zero components */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(14, 0, 2);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    /* the instantiated component's blob is itself damaged (truncated objects) */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(32 + 1 * 48 + 28, 48 + 3 * 24, 4);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
    /* a composite layout nested in a component is not a plain layout */
    n = pfl3(LCME_FL_INIT, LCME_FL_INIT);
    put(32 + 1 * 48 + 24, 0, 4); /* entry 1 points at the attribute's own header */
    put(32 + 1 * 48 + 28, n, 4);
    CHECK(parse(n, &l) != 0 && is_zero(&l));
}

/* Off Lustre there is no "lustre.lov" attribute: nothing is read. */
static void test_read_fd_off_lustre(void)
{
    char path[] = "/tmp/pario_test_lustre_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    struct pario_lustre_layout l = {1, 2, 3, 4};
    CHECK(pario_lustre_read_fd(fd, &l) != 0 && is_zero(&l));
    close(fd);
    unlink(path);
    CHECK(pario_lustre_read_fd(-1, &l) != 0 && is_zero(&l));
}

int main(void)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    printf("skipped: the attributes are built little-endian\n");
    return 77;
#endif
    test_v1();
    test_v3();
    test_released_and_templates();
    test_composite();
    test_rejections();
    test_read_fd_off_lustre();
    return CHECK_SUMMARY();
}
