/* Unit tests of the runtime core: size buckets, path normalisation, path
 * hashing, and in-process accounting of POSIX and STDIO calls. */
#include "internal.h"
#include "lustre.h"

#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"

static void test_buckets(void)
{
    CHECK(pario_size_bucket(0) == 0);
    CHECK(pario_size_bucket(100) == 0);
    CHECK(pario_size_bucket(101) == 1);
    CHECK(pario_size_bucket(1024) == 1);
    CHECK(pario_size_bucket(1025) == 2);
    CHECK(pario_size_bucket(1048576) == 4);
    CHECK(pario_size_bucket(1048577) == 5);
    CHECK(pario_size_bucket(4194304) == 5);
    CHECK(pario_size_bucket(1073741824) == 8);
    CHECK(pario_size_bucket(1073741825) == 9);
}

static void test_normalize(void)
{
    char out[4096];
    CHECK(pario_normalize_path("/a//b/./c/../d", out, sizeof out) == 0 && strcmp(out, "/a/b/d") == 0);
    CHECK(pario_normalize_path("/../..", out, sizeof out) == 0 && strcmp(out, "/") == 0);
    CHECK(pario_normalize_path("/x/y/", out, sizeof out) == 0 && strcmp(out, "/x/y") == 0);
    char cwd[4096], expect[4200];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(expect, sizeof expect, "%s/f.dat", strcmp(cwd, "/") ? cwd : "");
    CHECK(pario_normalize_path("./sub/../f.dat", out, sizeof out) == 0 && strcmp(out, expect) == 0);
    CHECK(pario_normalize_path("/abc", out, 3) == -1); /* does not fit */
}

static void test_hash(void)
{
    /* FNV-1a 64 of "a": a stable id across runs, ranks and machines */
    CHECK(pario_hash_path("a") == 0xaf63dc4c8601ec8cull);
    CHECK(pario_hash_path("/x/y") != pario_hash_path("/x/z"));
}

/* The same file by every spelling of its path is one record; an excluded
 * path has none, at its first call and at later ones. */
static void test_record_lookup(void)
{
    struct pario_record *r = pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/a.dat");
    CHECK(r != NULL);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/a.dat") == r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp//lookup_test/./a.dat") == r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/sub/../a.dat") == r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/a.dat/") == r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/a.dat/.") == r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/.a.dat") != r);
    CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/lookup_test/..a.dat") != r);
    CHECK(r && strcmp(r->name, "/tmp/lookup_test/a.dat") == 0);
    CHECK(pario_record_find(PARIO_POSIX, pario_hash_path("/tmp/lookup_test/a.dat")) == r);
    for (int i = 0; i < 2; i++) {
        CHECK(pario_record_for_path(PARIO_POSIX, "/proc/self/status") == NULL);
        CHECK(pario_record_for_path(PARIO_POSIX, "/proc/./self/status") == NULL);
        CHECK(pario_record_for_path(PARIO_POSIX, "/") == NULL);
        CHECK(pario_record_for_path(PARIO_POSIX, "/tmp/ompi.host.0/seg") == NULL);
    }
}

/* One hints-file line through the runtime's parser: its result, and key=value or the reason. */
static int hint_line(const char *text, char *out, size_t outsz)
{
    char line[512], why[96], *k = NULL, *v = NULL;
    size_t len = strlen(text);
    memcpy(line, text, len + 1);
    int got = pario_parse_hint_line(line, len, &k, &v, why, sizeof why);
    if (got > 0 && snprintf(out, outsz, "%s=%s", k, v) >= (int)outsz)
        return -2; /* key=value does not fit: no check can pass */
    if (got <= 0)
        snprintf(out, outsz, "%s", got < 0 ? why : "");
    return got;
}

static void test_hint_lines(void)
{
    char out[256], key[300];
    CHECK(hint_line("cb_nodes 4", out, sizeof out) == 1 && strcmp(out, "cb_nodes=4") == 0);
    CHECK(hint_line("  cb_nodes = 4 \r", out, sizeof out) == 1 && strcmp(out, "cb_nodes=4") == 0);
    CHECK(hint_line("romio_cb_write=enable # on", out, sizeof out) == 1 &&
          strcmp(out, "romio_cb_write=enable") == 0);
    CHECK(hint_line("cb_config_list=*:1#x", out, sizeof out) == 1 && strcmp(out, "cb_config_list=*:1#x") == 0);
    CHECK(hint_line("# a comment", out, sizeof out) == 0);
    CHECK(hint_line("  \t", out, sizeof out) == 0);
    CHECK(hint_line("=bad", out, sizeof out) == -1 && strcmp(out, "empty key") == 0);
    CHECK(hint_line("cb_nodes=", out, sizeof out) == -1 && strcmp(out, "no value") == 0);
    CHECK(hint_line("cb_nodes", out, sizeof out) == -1 && strcmp(out, "no value") == 0);
    CHECK(hint_line("striping_factor 4 extra", out, sizeof out) == -1 &&
          strcmp(out, "one value expected, found 2") == 0);
    CHECK(hint_line("a\001b 1", out, sizeof out) == -1 && strcmp(out, "not a text line: byte 0x01") == 0);
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    strcpy(key + MPI_MAX_INFO_KEY - 1, " 1");
    CHECK(hint_line(key, out, sizeof out) == 1); /* the longest key MPI_Info_set takes */
    memset(key, 'k', MPI_MAX_INFO_KEY);
    strcpy(key + MPI_MAX_INFO_KEY, " 1");
    char expect[96];
    snprintf(expect, sizeof expect, "key of %d characters, at most %d allowed", MPI_MAX_INFO_KEY,
             MPI_MAX_INFO_KEY - 1);
    CHECK(hint_line(key, out, sizeof out) == -1 && strcmp(out, expect) == 0);
}

static struct pario_record *record_of(int layer, const char *path)
{
    char abs[4096];
    if (pario_normalize_path(path, abs, sizeof abs) != 0)
        return NULL;
    return pario_record_find(layer, pario_hash_path(abs));
}

static void test_accounting(const char *dir)
{
    char path[4096], buf[300];
    memset(buf, 'z', sizeof buf);
    snprintf(path, sizeof path, "%s/core_test.dat", dir);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK(fd >= 0);
    for (int i = 0; i < 3; i++)
        CHECK(write(fd, buf, 300) == 300);
    CHECK(pread(fd, buf, 50, 10) == 50);
    CHECK(lseek(fd, 0, SEEK_END) == 900);
    CHECK(write(fd, buf, 100) == 100);
    close(fd);
    struct pario_record *r = record_of(PARIO_POSIX, path);
    CHECK(r != NULL);
    if (r) {
        CHECK(r->counters[POSIX_OPENS] == 1);
        CHECK(r->counters[POSIX_WRITES] == 4 && r->counters[POSIX_BYTES_WRITTEN] == 1000);
        CHECK(r->counters[POSIX_READS] == 1 && r->counters[POSIX_BYTES_READ] == 50);
        CHECK(r->counters[POSIX_SEEKS] == 1);
        CHECK(r->counters[POSIX_CONSEC_WRITES] == 3); /* the write after the seek to the end is consecutive */
        CHECK(r->counters[POSIX_SIZE_WRITE_100_1K] == 3 && r->counters[POSIX_SIZE_WRITE_0_100] == 1);
        CHECK(r->counters[POSIX_MAX_BYTE_WRITTEN] == 999);
        CHECK(r->counters[POSIX_RW_SWITCHES] == 2);
        /* no Lustre layout off Lustre (the build tree is not on Lustre here) */
        CHECK(r->counters[POSIX_FS_TYPE] != 0);
        if (r->counters[POSIX_FS_TYPE] != PARIO_LUSTRE_SUPER_MAGIC)
            CHECK(r->counters[POSIX_LUSTRE_STRIPE_SIZE] == 0 && r->counters[POSIX_LUSTRE_STRIPE_COUNT] == 0 &&
                  r->counters[POSIX_LUSTRE_STRIPE_OFFSET] == 0 && r->counters[POSIX_LUSTRE_COMPONENTS] == 0);
    }

    /* O_APPEND on a later open (no first-open fstat): the write lands at the end, offset 1000,
     * so it is consecutive to the last write above and raises the highest byte to 1049 */
    fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK(write(fd, buf, 50) == 50);
    close(fd);
    if (r) {
        CHECK(r->counters[POSIX_OPENS] == 2 && r->counters[POSIX_BYTES_WRITTEN] == 1050);
        CHECK(r->counters[POSIX_MAX_BYTE_WRITTEN] == 1049);
        CHECK(r->counters[POSIX_CONSEC_WRITES] == 4);
    }

    snprintf(path, sizeof path, "%s/core_test.txt", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%d %s\n", 42, "abc"); /* 7 bytes */
        fputs("hello\n", f);               /* 6 bytes */
        fputc('!', f);                     /* 1 byte */
        fwrite(buf, 10, 2, f);             /* 20 bytes */
        fclose(f);
    }
    r = record_of(PARIO_STDIO, path);
    CHECK(r != NULL);
    if (r) {
        CHECK(r->counters[STDIO_OPENS] == 1);
        CHECK(r->counters[STDIO_WRITES] == 4);
        CHECK(r->counters[STDIO_BYTES_WRITTEN] == 34);
        CHECK(r->counters[STDIO_MAX_BYTE_WRITTEN] == 33);
    }
    /* reading back through STDIO: fgets, fscanf, fread, fseek, ftell */
    f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        char line[64];
        int n = 0;
        char word[16];
        CHECK(fscanf(f, "%d %15s", &n, word) == 2 && n == 42); /* consumes "42 abc" = 6 bytes */
        CHECK(fgets(line, sizeof line, f) != NULL);           /* the rest of the line: "\n" */
        CHECK(fseek(f, 7, SEEK_SET) == 0);
        CHECK(fread(line, 1, 6, f) == 6);                     /* "hello\n" */
        CHECK(ftell(f) == 13);
        fclose(f);
    }
    r = record_of(PARIO_STDIO, path);
    if (r) {
        CHECK(r->counters[STDIO_OPENS] == 2);
        CHECK(r->counters[STDIO_READS] == 3);
        CHECK(r->counters[STDIO_BYTES_READ] == 6 + 1 + 6);
        CHECK(r->counters[STDIO_SEEKS] == 2);
    }

    /* the rest of the POSIX family: creat, writev, preadv, ftruncate, stat, dup, openat, unlink */
    snprintf(path, sizeof path, "%s/core_test.vec", dir);
    fd = creat(path, 0644);
    CHECK(fd >= 0);
    struct iovec iov[2] = {{buf, 100}, {buf, 50}};
    CHECK(writev(fd, iov, 2) == 150);
    int fd2 = dup(fd);
    CHECK(write(fd2, buf, 10) == 10);
    CHECK(ftruncate(fd, 100) == 0);
    close(fd2);
    close(fd);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    fd = openat(dirfd, "core_test.vec", O_RDONLY);
    CHECK(fd >= 0);
    struct iovec riov[1] = {{buf, 40}};
    CHECK(preadv(fd, riov, 1, 20) == 40);
    close(fd);
    close(dirfd);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 100);
    CHECK(unlink(path) == 0);
    r = record_of(PARIO_POSIX, path);
    CHECK(r != NULL);
    if (r) {
        CHECK(r->counters[POSIX_OPENS] == 2); /* creat, openat (dup shares the record) */
        CHECK(r->counters[POSIX_WRITES] == 2 && r->counters[POSIX_BYTES_WRITTEN] == 160);
        CHECK(r->counters[POSIX_READS] == 1 && r->counters[POSIX_BYTES_READ] == 40);
        CHECK(r->counters[POSIX_TRUNCATES] == 1);
        CHECK(r->counters[POSIX_STATS] == 1);
        CHECK(r->counters[POSIX_UNLINKS] == 1);
        CHECK(r->counters[POSIX_SIZE_WRITE_100_1K] == 1 && r->counters[POSIX_SIZE_WRITE_0_100] == 1);
    }

    /* untracked descriptors are not recorded */
    CHECK(record_of(PARIO_POSIX, "/dev/null") == NULL);
}

int main(int argc, char **argv)
{
    test_buckets();
    test_normalize();
    test_hash();
    test_hint_lines();
    test_record_lookup();
    test_accounting(argc > 1 ? argv[1] : ".");
    return CHECK_SUMMARY();
}
