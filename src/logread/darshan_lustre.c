/* The LUSTRE records of a Darshan log, read in bulk for pario.log.darshan_lib: a log of a
 * job on Lustre has a record per file (and per rank of a file-per-process job), and one
 * Python iteration per record (the library call and a dozen cffi accesses, 5 us) costs
 * more than the library's work itself.
 *
 * libdarshan-util still reads every record (its version 1 records up-converted, its
 * unused components dropped): pario does not link it, so its darshan_log_get_record and
 * darshan_free come in as pointers from the copy PyDarshan loaded.  The record is the
 * library's public struct darshan_lustre_record (darshan-lustre-log-format.h), its
 * components and OST ids after it; the components are copied whole, `comp_size` bytes
 * each (the caller's sizeof of the library's struct darshan_lustre_component).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lustre_record { /* struct darshan_lustre_record */
  uint64_t id;         /* base_rec.id */
  int64_t rank;        /* base_rec.rank */
  int64_t num_comps;
  int64_t num_stripes;
  void *comps;
  int64_t *ost_ids;
};

typedef int (*get_record_fn)(void *fd, int mod_idx, void **buf);
typedef void (*free_fn)(void *ptr);

/* What a call read; the arrays are malloc'd here and freed by pario_lustre_free. */
struct pario_lustre {
  int64_t records, comps, osts;
  uint64_t *ids;    /* per record */
  int64_t *ranks;   /* per record */
  int64_t *ncomps;  /* per record: its components */
  uint8_t *counts;  /* per component: comp_size bytes, in record order */
  int64_t *ost_ids; /* per record: its num_stripes OST ids, back to back */
};

/* Make room for `need` items of `size` bytes in *p (capacity *cap, doubled as needed);
 * -1 past `limit` bytes or when memory runs out (*p is then as it was). */
static int grow(void **p, int64_t *cap, int64_t need, int64_t size, int64_t limit) {
  if (need <= *cap)
    return 0;
  int64_t n = *cap ? *cap : 64;
  while (n < need)
    n *= 2;
  if (n > limit / size)
    return -1;
  void *q = realloc(*p, (size_t)(n * size));
  if (!q)
    return -1;
  *p = q;
  *cap = n;
  return 0;
}

/* Room for one more record in the three per-record arrays. */
static int grow_records(struct pario_lustre *out, int64_t *cap, int64_t limit) {
  int64_t ids = *cap, ranks = *cap, ncomps = *cap, need = out->records + 1;
  if (grow((void **)&out->ids, &ids, need, 8, limit) || grow((void **)&out->ranks, &ranks, need, 8, limit) ||
      grow((void **)&out->ncomps, &ncomps, need, 8, limit))
    return -1;
  *cap = ids;
  return 0;
}

void pario_lustre_free(struct pario_lustre *out) {
  free(out->ids);
  free(out->ranks);
  free(out->ncomps);
  free(out->counts);
  free(out->ost_ids);
  memset(out, 0, sizeof *out);
}

/* Read the records of module slot `idx` until the library says there are no more (as a
 * reader that stops at a result below 1 does), a record without components left out (the
 * library hands none over for it).  0 when done; -1 when a record has a
 * negative count or the arrays would pass `limit` bytes each (nothing is kept: the
 * caller reads the records one by one instead). */
int pario_lustre_read(get_record_fn get, free_fn release, void *fd, int idx, int64_t comp_size,
                      int64_t limit, struct pario_lustre *out) {
  int64_t cap_rec = 0, cap_comp = 0, cap_ost = 0;
  memset(out, 0, sizeof *out);
  for (;;) {
    void *buf = NULL; /* a record's size varies: the library allocates each one */
    if (get(fd, idx, &buf) < 1)
      return 0;
    if (!buf) /* a record of no component: the library frees it, says it read it */
      continue;
    const struct lustre_record *rec = buf;
    int64_t nc = rec->num_comps, ns = nc > 0 ? rec->num_stripes : 0;
    int bad = nc < 0 || ns < 0 || grow_records(out, &cap_rec, limit);
    int64_t have_comp = out->comps * comp_size;
    bad = bad || grow((void **)&out->counts, &cap_comp, have_comp + nc * comp_size, 1, limit) ||
          grow((void **)&out->ost_ids, &cap_ost, out->osts + ns, 8, limit);
    if (bad) {
      release(buf);
      pario_lustre_free(out);
      return -1;
    }
    out->ids[out->records] = rec->id;
    out->ranks[out->records] = rec->rank;
    out->ncomps[out->records] = nc;
    out->records++;
    if (nc > 0) {
      /* the components follow the record, the OST ids follow them: where the library puts
       * them, and where its comps and ost_ids point unless it dropped unused components and
       * its realloc moved the record (the pointers then still point into the freed one) */
      const uint8_t *comps = (const uint8_t *)buf + sizeof *rec;
      memcpy(out->counts + have_comp, comps, (size_t)(nc * comp_size));
      memcpy(out->ost_ids + out->osts, comps + nc * comp_size, (size_t)(ns * 8));
      out->comps += nc;
      out->osts += ns;
    }
    release(buf);
  }
}
