/* The RANK blocks of a pario log of format 4 (docs/log-format.md), read in bulk for
 * pario.log.rank_blocks: a log of 100 000 ranks has 100 000 of them, and one Python
 * iteration per block (its header, checksum, inflation, parse) costs more than the
 * work itself.
 *
 * Nothing here formats an error: a call that meets anything it does not expect returns
 * non-zero, and the Python reader then reads the log block by block, which names the
 * problem exactly as it always has.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

enum { HEADER_SIZE = 32 }; /* <IiQQII: kind, rank, ulen, clen, crc32, reserved */

static uint32_t u32_at(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64_at(const uint8_t *p) {
  return (uint64_t)u32_at(p) | (uint64_t)u32_at(p + 4) << 32;
}

/* Walk the block headers from `start`: the number of blocks, or -1 when a header or a
 * block's data runs past the end or a kind is outside 1..max_kind.  With `kinds` (and the
 * other arrays) not NULL, each block's kind, rank, sizes, checksum and the offset of its
 * compressed data are written (arrays of `count` entries, from a first call's result). */
int64_t pario_log_scan(const uint8_t *data, int64_t len, int64_t start, int32_t max_kind,
                       int64_t count, int32_t *kinds, int32_t *ranks, int64_t *ulens,
                       int64_t *clens, uint32_t *crcs, int64_t *offsets) {
  int64_t pos = start, n = 0;
  if (start < 0 || start > len)
    return -1;
  while (pos < len) {
    if (len - pos < HEADER_SIZE)
      return -1;
    const uint8_t *h = data + pos;
    uint32_t kind = u32_at(h);
    uint64_t ulen = u64_at(h + 8), clen = u64_at(h + 16);
    if (kind < 1 || kind > (uint32_t)max_kind)
      return -1;
    pos += HEADER_SIZE;
    if (clen > (uint64_t)(len - pos) || ulen > ((uint64_t)1 << 34))
      return -1;
    if (kinds) {
      if (n >= count)
        return -1;
      kinds[n] = (int32_t)kind;
      ranks[n] = (int32_t)u32_at(h + 4);
      ulens[n] = (int64_t)ulen;
      clens[n] = (int64_t)clen;
      crcs[n] = u32_at(h + 24);
      offsets[n] = pos;
    }
    pos += (int64_t)clen;
    n++;
  }
  return n;
}

/* Skip one hints section (u32 n, u32 layers[n], u64 ids[n], u32 lens[n], bytes) of the
 * block `b` (`size` bytes) at `*pos`; its count in `*count`.  0, or -1 past the end. */
static int skip_hints(const uint8_t *b, uint64_t size, uint64_t *pos, int64_t *count) {
  if (size - *pos < 4)
    return -1;
  uint64_t n = u32_at(b + *pos);
  *pos += 4;
  *count = (int64_t)n;
  if (!n)
    return 0;
  if ((size - *pos) / 16 < n)
    return -1;
  const uint8_t *lens = b + *pos + 12 * n;
  uint64_t text = 0;
  for (uint64_t i = 0; i < n; i++)
    text += u32_at(lens + 4 * i);
  *pos += 16 * n;
  if (size - *pos < text)
    return -1;
  *pos += text;
  return 0;
}

struct rank_blocks {
  const uint8_t *data;
  const int64_t *offsets, *clens, *ulens, *starts;
  const uint32_t *crcs;
  uint8_t *out;
  int64_t nlayers, nfields;
  const int64_t *itemsizes;
  int64_t *counts, *where, *rows, *names, *nnames, *name_bytes, *hints, *nhints, *injected,
      *ninjected;
};

/* Block i: inflated and its parts found; 0, or -1 when it fails. */
static int rank_block(const struct rank_blocks *r, z_stream *z, int64_t i) {
  const uint8_t *comp = r->data + r->offsets[i];
  uint64_t size = (uint64_t)r->ulens[i];
  int64_t at = r->starts[i];
  uint8_t *b = r->out + at;
  /* one crc32 and one inflate call per block: the runtime writes blocks of a few MB; a block
   * too large for one call is left to the Python reader */
  if ((uint64_t)r->clens[i] > 0xFFFFFFFFu || size > 0xFFFFFFFEu)
    return -1;
  if ((uint32_t)crc32(0L, comp, (uInt)r->clens[i]) != r->crcs[i] || inflateReset(z) != Z_OK)
    return -1;
  z->next_in = (Bytef *)comp;
  z->avail_in = (uInt)r->clens[i];
  z->next_out = b;
  z->avail_out = (uInt)size;
  if (inflate(z, Z_FINISH) != Z_STREAM_END || z->total_out != size)
    return -1;
  /* the parts, in the order the runtime writes them */
  uint64_t pos = 8 * (uint64_t)r->nfields;
  if (pos > size)
    return -1;
  r->rows[i] = at;
  for (int64_t l = 0; l < r->nlayers; l++) {
    if (size - pos < 4)
      return -1;
    uint64_t n = u32_at(b + pos);
    uint64_t bytes = n * (uint64_t)r->itemsizes[l];
    pos += 4;
    if (size - pos < bytes)
      return -1;
    r->counts[i * r->nlayers + l] = (int64_t)n;
    r->where[i * r->nlayers + l] = at + (int64_t)pos;
    pos += bytes;
  }
  if (size - pos < 4)
    return -1;
  uint64_t n = u32_at(b + pos);
  pos += 4;
  r->names[i] = at + (int64_t)pos;
  r->nnames[i] = (int64_t)n;
  if ((size - pos) / 12 < n)
    return -1;
  uint64_t text = 0;
  for (uint64_t k = 0; k < n; k++)
    text += u32_at(b + pos + 8 * n + 4 * k);
  pos += 12 * n;
  if (size - pos < text)
    return -1;
  pos += text;
  r->name_bytes[i] = (int64_t)text;
  r->hints[i] = at + (int64_t)pos;
  if (skip_hints(b, size, &pos, &r->nhints[i]) != 0)
    return -1;
  r->injected[i] = -1;
  r->ninjected[i] = 0;
  if (pos < size) {
    r->injected[i] = at + (int64_t)pos;
    if (skip_hints(b, size, &pos, &r->ninjected[i]) != 0)
      return -1;
  }
  return 0;
}

struct worker {
  const struct rank_blocks *r;
  int64_t first, last; /* blocks [first, last) */
  int64_t failed;      /* the first that failed, 1-based; 0: none */
  pthread_t thread;
};

static void *work(void *arg) {
  struct worker *w = arg;
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit(&z) != Z_OK) {
    w->failed = w->first + 1;
    return NULL;
  }
  for (int64_t i = w->first; i < w->last; i++)
    if (rank_block(w->r, &z, i) != 0) {
      w->failed = i + 1;
      break;
    }
  inflateEnd(&z);
  return NULL;
}

enum { MAX_THREADS = 16 };

/* Inflate `nblocks` RANK blocks (compressed at `data + offsets[i]`, `clens[i]` bytes,
 * checksum `crcs[i]`) into `out` at `starts[i]` (`ulens[i]` bytes each), and find their
 * parts: per block i and layer l, the records' count and the offset in `out` of their
 * columns (`counts`, `where`: nblocks x nlayers, row-major); the offset of the block's row
 * (`rows`, 8 * nfields bytes); of its names' ids (`names`: u64 ids[n], then u32 lens[n],
 * then the names' bytes), their count and bytes (`nnames`, `name_bytes`); of its hints in
 * effect and injected (`hints`, `injected`: the section's u32 count; -1 when the block has
 * no injected section) and their counts (`nhints`, `ninjected`).  The blocks are shared
 * out in ranges among up to `nthreads` threads.  0, or the 1-based index of the first block
 * that fails (its checksum, its size once inflated, its parts past its end). */
int64_t pario_log_rank_blocks(const uint8_t *data, int64_t nblocks, const int64_t *offsets,
                              const int64_t *clens, const int64_t *ulens, const uint32_t *crcs,
                              const int64_t *starts, uint8_t *out, int64_t nlayers,
                              const int64_t *itemsizes, int64_t nfields, int64_t *counts,
                              int64_t *where, int64_t *rows, int64_t *names, int64_t *nnames,
                              int64_t *name_bytes, int64_t *hints, int64_t *nhints,
                              int64_t *injected, int64_t *ninjected, int64_t nthreads) {
  struct rank_blocks r = {data,   offsets, clens, ulens,  starts,     crcs,  out,    nlayers,
                          nfields, itemsizes, counts, where, rows, names, nnames, name_bytes,
                          hints,  nhints,  injected, ninjected};
  struct worker workers[MAX_THREADS];
  int64_t nw = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
  if (nw > nblocks)
    nw = nblocks > 0 ? nblocks : 1;
  int64_t started = 0;
  for (int64_t t = 0; t < nw; t++) {
    workers[t] = (struct worker){&r, nblocks * t / nw, nblocks * (t + 1) / nw, 0, 0};
    /* the calling thread takes the first range; a thread that cannot start leaves its
     * range to the calling thread too */
    if (t > 0 && pthread_create(&workers[t].thread, NULL, work, &workers[t]) == 0)
      started |= (int64_t)1 << t;
  }
  work(&workers[0]);
  for (int64_t t = 1; t < nw; t++) {
    if (started & ((int64_t)1 << t))
      pthread_join(workers[t].thread, NULL);
    else
      work(&workers[t]);
  }
  for (int64_t t = 0; t < nw; t++)
    if (workers[t].failed)
      return workers[t].failed;
  return 0;
}

/* Copy `n` pieces of `src` (at `starts[i]`, `lengths[i]` bytes) one after another to `dst`. */
void pario_log_gather(const uint8_t *src, int64_t n, const int64_t *starts,
                      const int64_t *lengths, uint8_t *dst) {
  for (int64_t i = 0; i < n; i++) {
    memcpy(dst, src + starts[i], (size_t)lengths[i]);
    dst += lengths[i];
  }
}

/* Decode the records of one layer of `nblocks` blocks (`counts[i * step]` records whose
 * columns are at `buf + where[i * step]`) into the 8-byte words `out` (`nwords` rows of
 * `stride` words: row w holds word w of every record, the blocks' records side by side
 * from column 0).  A block's columns: every record's id, every rank, then for each
 * counter byte 6 of every value, byte 7 of every value, then bytes 0-5 of each value. */
void pario_log_decode(const uint8_t *buf, int64_t nblocks, const int64_t *counts,
                      const int64_t *where, int64_t step, int64_t nwords, int64_t stride,
                      uint64_t *out) {
  int64_t at = 0;
  for (int64_t i = 0; i < nblocks; i++) {
    int64_t n = counts[i * step];
    if (!n)
      continue;
    const uint8_t *src = buf + where[i * step];
    for (int64_t w = 0; w < 2; w++) {
      uint64_t *dst = out + w * stride + at;
      const uint8_t *s = src + 8 * n * w;
      for (int64_t k = 0; k < n; k++)
        dst[k] = u64_at(s + 8 * k);
    }
    for (int64_t w = 2; w < nwords; w++) {
      const uint8_t *col = src + 8 * n * w;
      const uint8_t *b6 = col, *b7 = col + n, *low = col + 2 * n;
      uint64_t *dst = out + w * stride + at;
      for (int64_t k = 0; k < n; k++) {
        const uint8_t *p = low + 6 * k;
        dst[k] = (uint64_t)u32_at(p) | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
                 (uint64_t)b6[k] << 48 | (uint64_t)b7[k] << 56;
      }
    }
    at += n;
  }
}
