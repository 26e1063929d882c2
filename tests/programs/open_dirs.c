/* Opens directories every way a program or an MPI library does (open without and with
 * O_DIRECTORY, opendir, stat, fsync of a directory) and writes one file of 1000 bytes:
 * only that file must be recorded.  Usage: open_dirs DIR */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char sub[4096], file[4096];
    snprintf(sub, sizeof sub, "%s/sub", argv[1]);
    snprintf(file, sizeof file, "%s/sub/data.bin", argv[1]);
    mkdir(sub, 0755);
    int d = open(sub, O_RDONLY);
    if (d < 0 || fsync(d) != 0)
        return 1;
    close(d);
    d = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (d < 0)
        return 1;
    close(d);
    DIR *dir = opendir(sub);
    if (!dir)
        return 1;
    closedir(dir);
    struct stat st;
    if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
        return 1;
    char buf[1000];
    memset(buf, 'x', sizeof buf);
    int fd = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        return 1;
    close(fd);
    d = open(sub, O_RDONLY); /* a later open of the directory, after the file's */
    if (d < 0)
        return 1;
    close(d);
    return 0;
}
