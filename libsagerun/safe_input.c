/* Opening input files without blocking on FIFOs or devices, refusing what is not a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

sagerun_status sagerun_file_read(const char *path, size_t max_bytes, char **data, size_t *size,
                                 sagerun_error *err)
{
    if (!path || !data || !size)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "file_read: NULL argument");
    *data = NULL;
    *size = 0;
    int fd = sr_open_input(path, err);
    if (fd < 0)
        return err ? (sagerun_status)err->status : SAGERUN_IO;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    sagerun_status st = SAGERUN_OK;
    for (;;) {
        if (len == cap) {
            size_t grown = cap ? 2 * cap : 8192;
            char *b = len > max_bytes ? NULL : realloc(buf, grown + 1);
            if (!b) {
                st = len > max_bytes ? sr_error_set(err, SAGERUN_FORMAT,
                                                    "%s: too large (more than %zu bytes)", path,
                                                    max_bytes)
                                     : sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory",
                                                    path);
                break;
            }
            buf = b;
            cap = grown;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = sr_error_set(err, SAGERUN_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    if (st == SAGERUN_OK && len > max_bytes)
        st = sr_error_set(err, SAGERUN_FORMAT, "%s: too large (more than %zu bytes)", path,
                          max_bytes);
    if (st != SAGERUN_OK) {
        free(buf);
        return st;
    }
    if (!buf && !(buf = malloc(1)))
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "%s: out of memory", path);
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return SAGERUN_OK;
}
