/* The name records of a Darshan log (formats 3.10 on), walked in bulk for
 * pario.log.darshan_reader and pario.log.darshan_lib: a log names every file of its
 * records, and one Python iteration per name costs more than finding where it ends.
 *
 * A record is a uint64 id (in the log's byte order) and a NUL-terminated name; a reader
 * takes records while at least 9 bytes are left, as libdarshan-util does.
 */
#include <stdint.h>
#include <string.h>

/* Walk the records of data[0..len): their number, and in *end where the last one ends
 * (len for a sound region).  With `ids` not NULL (arrays of `cap` entries), each
 * record's id (as stored, native order), and where its name starts and ends, are
 * written for the first `cap` records. */
int64_t pario_darshan_names(const uint8_t *data, int64_t len, int64_t cap, uint64_t *ids,
                            int64_t *starts, int64_t *ends, int64_t *end) {
  int64_t pos = 0, n = 0;
  while (len - pos >= 9) {
    const uint8_t *nul = memchr(data + pos + 8, 0, (size_t)(len - pos - 8));
    if (!nul)
      break;
    int64_t stop = nul - data;
    if (ids && n < cap) {
      memcpy(&ids[n], data + pos, 8);
      starts[n] = pos + 8;
      ends[n] = stop;
    }
    n++;
    pos = stop + 1;
  }
  *end = pos;
  return n;
}
