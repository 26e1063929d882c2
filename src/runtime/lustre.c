/*
 * Lustre layouts from the "lustre.lov" extended attribute (see lustre.h).
 *
 * The byte layouts below are those of the user-space structs in Lustre's
 * lustre/include/uapi/linux/lustre/lustre_user.h (lustre-release), all
 * declared __attribute__((packed)) there, so there is no padding between
 * fields.  The attribute comes back in the client's byte order (the header
 * calls these structs "host-endian"); fields are read with memcpy, never
 * through casts of unaligned pointers.
 *
 * struct lov_user_md_v1 (32 bytes, then the objects):
 *   0 u32 lmm_magic (LOV_USER_MAGIC_V1)   4 u32 lmm_pattern
 *   8 struct ost_id lmm_oi (16 bytes)     24 u32 lmm_stripe_size
 *  28 u16 lmm_stripe_count                30 u16 lmm_stripe_offset / lmm_layout_gen
 *  32 struct lov_user_ost_data_v1 lmm_objects[lmm_stripe_count]
 * struct lov_user_md_v3: the same, then char lmm_pool_name[16] at 32 and
 *   the objects at 48.
 * struct lov_user_ost_data_v1 (24 bytes):
 *   0 struct ost_id l_ost_oi (16)   16 u32 l_ost_gen   20 u32 l_ost_idx
 * struct lov_comp_md_v1 (32 bytes, then the entries):
 *   0 u32 lcm_magic (LOV_USER_MAGIC_COMP_V1)   4 u32 lcm_size (whole attribute)
 *   8 u32 lcm_layout_gen   12 u16 lcm_flags   14 u16 lcm_entry_count
 *  16 u16 lcm_mirror_count, then padding to 32
 * struct lov_comp_md_entry_v1 (48 bytes):
 *   0 u32 lcme_id   4 u32 lcme_flags   8 struct lu_extent (u64 start, u64 end)
 *  24 u32 lcme_offset (of the component's blob, from the start of lov_comp_md_v1)
 *  28 u32 lcme_size   32 u32 lcme_layout_gen   36 u64 lcme_timestamp   44 u32 padding
 * Each component's blob is itself a lov_user_md_v1 or _v3.
 */
#include "lustre.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>

#define LOV_USER_MAGIC_V1 0x0BD10BD0u
#define LOV_USER_MAGIC_V3 0x0BD30BD0u
#define LOV_USER_MAGIC_COMP_V1 0x0BD60BD0u
#define LOV_PATTERN_F_RELEASED 0x80000000u /* HSM-released file: no objects */
#define LCME_FL_INIT 0x00000010u           /* component instantiated (objects exist) */

enum {
    LMM_PATTERN = 4,
    LMM_STRIPE_SIZE = 24,
    LMM_STRIPE_COUNT = 28,
    LMM_V1_SIZE = 32,
    LMM_V3_SIZE = 48,
    OST_DATA_SIZE = 24,
    OST_DATA_IDX = 20,
    LCM_SIZE = 4,
    LCM_ENTRY_COUNT = 14,
    LCM_HEADER_SIZE = 32,
    LCME_FLAGS = 4,
    LCME_OFFSET = 24,
    LCME_SIZE = 28,
    LCME_ENTRY_SIZE = 48,
};

/* Callers check that [off, off + width) lies inside the buffer. */
static uint16_t get_u16(const unsigned char *p, size_t off)
{
    uint16_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

static uint32_t get_u32(const unsigned char *p, size_t off)
{
    uint32_t v;
    memcpy(&v, p + off, sizeof v);
    return v;
}

/* A plain layout (V1 or V3): stripe size and count, the OST of the first
 * object.  The object list must be complete, except for a released file,
 * which has none. */
static int parse_plain(const unsigned char *p, size_t len, struct pario_lustre_layout *out)
{
    if (len < 4)
        return -1;
    uint32_t magic = get_u32(p, 0);
    size_t header = magic == LOV_USER_MAGIC_V1 ? LMM_V1_SIZE : magic == LOV_USER_MAGIC_V3 ? LMM_V3_SIZE : 0;
    if (header == 0 || len < header)
        return -1;
    uint16_t count = get_u16(p, LMM_STRIPE_COUNT);
    if (count == 0xFFFF) /* "all OSTs": a template, not the layout of a file */
        return -1;
    size_t objects = (get_u32(p, LMM_PATTERN) & LOV_PATTERN_F_RELEASED) ? 0 : count;
    if ((len - header) / OST_DATA_SIZE < objects)
        return -1;
    out->stripe_size = get_u32(p, LMM_STRIPE_SIZE);
    out->stripe_count = count;
    /* NOTE: not lmm_stripe_offset: when the layout is read, that field holds
     * the layout generation (or 0, as getxattr clears it for tar's sake). */
    out->stripe_offset = objects > 0 ? (int64_t)get_u32(p, header + OST_DATA_IDX) : -1;
    out->components = 1;
    return 0;
}

/* A composite (PFL) layout: the number of components and the striping of
 * the last instantiated one.
 *
 * RATIONALE: a PFL layout maps consecutive extents of the file to
 * components; a component is instantiated (its objects created) when the
 * file's data first reaches its extent.  The last instantiated component
 * therefore holds the end of the data written so far, and for a large file
 * most of its bytes: its striping is the one the bulk of the I/O meets.  The
 * first component (what Darshan's LUSTRE module reports first) is usually
 * a small, narrow one for small files and would call a wide file narrow.
 * With no instantiated component the stripe fields stay 0 (unknown). */
static int parse_composite(const unsigned char *p, size_t len, struct pario_lustre_layout *out)
{
    if (len < LCM_HEADER_SIZE)
        return -1;
    size_t total = get_u32(p, LCM_SIZE);
    if (total < LCM_HEADER_SIZE || total > len)
        return -1;
    size_t n = get_u16(p, LCM_ENTRY_COUNT);
    if (n == 0 || (total - LCM_HEADER_SIZE) / LCME_ENTRY_SIZE < n)
        return -1;
    size_t last = 0, blob_size = 0;
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        size_t e = LCM_HEADER_SIZE + i * LCME_ENTRY_SIZE;
        size_t off = get_u32(p, e + LCME_OFFSET), size = get_u32(p, e + LCME_SIZE);
        if (off > total || size > total - off)
            return -1;
        if (get_u32(p, e + LCME_FLAGS) & LCME_FL_INIT) {
            last = off;
            blob_size = size;
            found = 1;
        }
    }
    if (found && parse_plain(p + last, blob_size, out) != 0)
        return -1;
    if (!found)
        out->stripe_offset = -1;
    out->components = (int64_t)n;
    return 0;
}

int pario_lustre_parse(const void *buf, size_t len, struct pario_lustre_layout *out)
{
    const unsigned char *p = buf;
    memset(out, 0, sizeof *out);
    int rc = -1;
    if (p && len >= 4)
        rc = get_u32(p, 0) == LOV_USER_MAGIC_COMP_V1 ? parse_composite(p, len, out) : parse_plain(p, len, out);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

int pario_lustre_read_fd(int fd, struct pario_lustre_layout *out)
{
    static const char name[] = "lustre.lov";
    memset(out, 0, sizeof *out);
    /* fgetxattr is not intercepted by pario: this is the C library's. */
    ssize_t size = fgetxattr(fd, name, NULL, 0);
    if (size <= 0 || size > PARIO_LUSTRE_XATTR_MAX)
        return -1;
    unsigned char *buf = malloc((size_t)size);
    if (!buf)
        return -1;
    /* the layout can grow between the two calls (ERANGE): then give up */
    ssize_t got = fgetxattr(fd, name, buf, (size_t)size);
    int rc = got > 0 ? pario_lustre_parse(buf, (size_t)got, out) : -1;
    free(buf);
    return rc;
}
