/*
 * A non-MPI program whose I/O is known exactly.
 * Usage: posix_threads OUTDIR MODE EXITCODE
 *   MODE "threads": two threads each pwrite 1000 x 100 bytes to OUTDIR/same.dat
 *        (disjoint offsets, one shared descriptor) and 500 x 10 bytes with
 *        write() to their own OUTDIR/own.<t>, at the same time;
 *   MODE "fork": the parent writes 10 x 10 bytes to OUTDIR/parent.dat, forks;
 *        the child writes 7 x 10 bytes to OUTDIR/child.dat and exits 0 (the
 *        child's I/O is not the parent's: not recorded); the parent waits;
 *   MODE "many": opens, writes 1 byte to and closes OUTDIR/many.<i> for
 *        i < 200 (to overflow a small PARIO_MEM).
 * Prints "done" on stdout and exits with EXITCODE.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;
static int shared_fd;

static void *worker(void *arg)
{
    long t = (long)arg;
    char buf[100], path[4096];
    memset(buf, 'a' + (int)t, sizeof buf);
    snprintf(path, sizeof path, "%s/own.%ld", dir, t);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < 1000; i++) {
        if (pwrite(shared_fd, buf, 100, (off_t)(t * 100000 + i * 100)) != 100)
            exit(1);
        if (i < 500 && write(fd, buf, 10) != 10)
            exit(1);
    }
    close(fd);
    return NULL;
}

static void write_n(const char *name, int n)
{
    char path[4096], buf[10] = "0123456789";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (int i = 0; i < n; i++)
        if (write(fd, buf, 10) != 10)
            exit(1);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: posix_threads OUTDIR threads|fork|many EXITCODE\n");
        return 2;
    }
    dir = argv[1];
    if (strcmp(argv[2], "threads") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/same.dat", dir);
        shared_fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        pthread_t th[2];
        for (long t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, worker, (void *)t);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        close(shared_fd);
    } else if (strcmp(argv[2], "fork") == 0) {
        write_n("parent.dat", 10);
        pid_t pid = fork();
        if (pid == 0) {
            write_n("child.dat", 7);
            exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    } else if (strcmp(argv[2], "many") == 0) {
        for (int i = 0; i < 200; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/many.%d", dir, i);
            int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (write(fd, "x", 1) != 1)
                return 1;
            close(fd);
        }
    }
    printf("done\n");
    return atoi(argv[3]);
}
