/* Opening input files without blocking on FIFOs or devices, refusing what is not a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_io.h"

const char *sr_file_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symlink";
    return "not a regular file";
}

int sr_open_input(const char *path, sagerun_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        sr_error_set(err, errno == ENOENT ? SAGERUN_NOT_FOUND : SAGERUN_IO, "%s: %s", path,
                     strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        sr_error_set(err, SAGERUN_IO, "%s: not a regular file (%s)", path,
                     sr_file_kind(sb.st_mode));
        close(fd);
        return -1;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

FILE *sr_fopen_input(const char *path, sagerun_error *err)
{
    int fd = sr_open_input(path, err);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

bool sr_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

json_t *sr_json_load_input(const char *path, size_t flags, json_error_t *jerr)
{
    sagerun_error err = {0};
    FILE *f = sr_fopen_input(path, &err);
    if (!f) {
        memset(jerr, 0, sizeof *jerr);
        jerr->line = jerr->column = -1;
        snprintf(jerr->text, sizeof jerr->text, "%s", err.message);
        snprintf(jerr->source, sizeof jerr->source, "%s", path);
        return NULL;
    }
    json_t *root = json_loadf(f, flags, jerr);
    fclose(f);
    return root;
}
