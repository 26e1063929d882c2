/*
 * Lustre file layouts: what the POSIX layer records about a file's striping
 * at its first open (and, for a composite layout, at each close).  lustre.c
 * needs nothing from the rest of the runtime, so its parser is unit-tested on
 * its own (tests/c/test_lustre.c).
 */
#ifndef PARIO_LUSTRE_H
#define PARIO_LUSTRE_H

#include <stddef.h>
#include <stdint.h>

/* statfs(2) f_type of a Lustre client mount (LL_SUPER_MAGIC in Lustre's headers). */
#define PARIO_LUSTRE_SUPER_MAGIC 0x0BD00BD0

/* Largest "lustre.lov" attribute read: 24 bytes per OST object, so this
 * covers plain layouts of more than 2700 stripes and any usual PFL layout. */
#define PARIO_LUSTRE_XATTR_MAX (64 * 1024)

/* A file's layout summarised for the log.  For a composite (PFL) layout
 * the stripe fields are those of the last instantiated component. */
struct pario_lustre_layout {
    int64_t stripe_size;         /* bytes; 0 if unknown */
    int64_t stripe_count;        /* OSTs (0 for a Data-on-MDT component) */
    int64_t stripe_offset;       /* index of the first object's OST; -1 if there is no object */
    int64_t components;          /* 1 for a plain layout, lcm_entry_count for a composite one */
};

/* Parse the value of the "lustre.lov" extended attribute ('buf', 'len'
 * bytes, host byte order as the client returns it) into 'out'.  Plain V1
 * and V3 layouts and composite V1 layouts are understood.  Returns 0 on
 * success; -1 (and 'out' zeroed) for an unknown magic, a buffer too short
 * for what its headers announce, a component outside the buffer, or a
 * composite layout without components.  Never reads outside 'buf'. */
int pario_lustre_parse(const void *buf, size_t len, struct pario_lustre_layout *out);

/* Read and parse the layout of the open file 'fd' (fgetxattr "lustre.lov",
 * into a heap buffer of at most PARIO_LUSTRE_XATTR_MAX bytes, freed before
 * returning).  Returns 0 on success, -1 if the attribute is missing, too
 * large or not understood.  The caller checks the file system type first
 * and keeps errno. */
int pario_lustre_read_fd(int fd, struct pario_lustre_layout *out);

#endif
