/* Writing output files: never replacing what is not a regular file, never through a symlink to
 * anything else, "-" for standard output, the umask's mode for new files (safe_io.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safe_io.h"

bool sr_output_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

/* The folder of file must exist and be writable: the temporary file is made there. */
static sagerun_status folder_writable(const char *file, sagerun_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return sr_error_set(err, SAGERUN_IO, "%s: the folder %s: %s", file, dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sr_error_set(err, SAGERUN_IO, "%s: %s is not a folder", file, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return sr_error_set(err, SAGERUN_IO, "%s: cannot write in the folder %s: %s", file, dir,
                            strerror(errno));
    return SAGERUN_OK;
}

/* The standard descriptor (1 or 2) that is already open on the file path leads to, or -1:
 * /dev/stdout, /proc/self/fd/1, or the file stdout was redirected to. Such an output is written
 * in place through that descriptor: a new file renamed over it replaced the file the shell had
 * opened (the table written before it lost), and a pipe or a terminal cannot be renamed over. */
int sr_output_standard_fd(const char *path)
{
    struct stat sb, fd_sb;
    if (!path || sr_output_is_stdout(path) || stat(path, &sb) != 0)
        return sr_output_is_stdout(path) ? STDOUT_FILENO : -1;
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        if (fstat(fd, &fd_sb) == 0 && fd_sb.st_dev == sb.st_dev && fd_sb.st_ino == sb.st_ino)
            return fd;
    return -1;
}

/* What an output replaces: path itself, or the regular file a symlink leads to. *mode: the
 * existing file's permission bits, or (mode_t)-1 for a new file. */
static sagerun_status output_target(const char *path, char **target, mode_t *mode,
                                    sagerun_error *err)
{
    struct stat lsb, sb;
    *target = NULL;
    *mode = (mode_t)-1;
    if (!path || !*path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "empty output path");
    if (lstat(path, &lsb) != 0) {
        if (errno != ENOENT)
            return sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
        *target = strdup(path);
    } else if (S_ISLNK(lsb.st_mode)) {
        if (stat(path, &sb) != 0)
            return sr_error_set(err, SAGERUN_IO, "%s: a symlink to a missing file (%s): not "
                                "written through", path, strerror(errno));
        if (!S_ISREG(sb.st_mode))
            return sr_error_set(err, SAGERUN_IO, "%s: a symlink to %s: refusing to write to it",
                                path, sr_file_kind(sb.st_mode));
        *target = realpath(path, NULL);
        *mode = sb.st_mode & 07777;
    } else if (!S_ISREG(lsb.st_mode)) {
        return sr_error_set(err, SAGERUN_IO, "%s: %s, not a regular file: refusing to replace it",
                            path, sr_file_kind(lsb.st_mode));
    } else {
        *target = strdup(path);
        *mode = lsb.st_mode & 07777;
    }
    if (!*target)
        return sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
    sagerun_status st = folder_writable(*target, err);
    if (st != SAGERUN_OK) {
        free(*target);
        *target = NULL;
    }
    return st;
}

sagerun_status sagerun_output_check(const char *path, sagerun_error *err)
{
    if (!path || !*path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "output_check: no path");
    if (sr_output_standard_fd(path) >= 0)
        return SAGERUN_OK;
    char *target;
    mode_t mode;
    sagerun_status st = output_target(path, &target, &mode, err);
    free(target);
    return st;
}

/* A new file beside target, created with mode 0666 so that the umask applies. Its name is the
 * target's, cut to 200 bytes, and ".tmp.PID.N": a target's name near NAME_MAX (255) made one too
 * long, and the report of a whole measurement was lost at the write. */
static int create_temporary(const char *target, char **tmp)
{
    static unsigned counter;
    const char *slash = strrchr(target, '/');
    int dir_len = slash ? (int)(slash - target + 1) : 0;
    size_t base_len = strlen(target + dir_len);
    int keep = base_len > 200 ? 200 : (int)base_len;
    for (int tries = 0; tries < 100; tries++) {
        if (asprintf(tmp, "%.*s%.*s.tmp.%ld.%u", dir_len, target, keep, target + dir_len,
                     (long)getpid(), counter++) < 0) {
            *tmp = NULL;
            return -1;
        }
        int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        free(*tmp);
    }
    *tmp = NULL;
    errno = EEXIST;
    return -1;
}

sagerun_status sr_output_open(const char *path, sr_output *o, sagerun_error *err)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    int standard = sr_output_standard_fd(path);
    if (standard >= 0) {
        fflush(standard == STDOUT_FILENO ? stdout : stderr); /* what was printed comes first */
        o->fd = standard;
        return SAGERUN_OK;
    }
    mode_t mode;
    sagerun_status st = output_target(path, &o->target, &mode, err);
    if (st != SAGERUN_OK)
        return st;
    o->fd = create_temporary(o->target, &o->tmp);
    if (o->fd < 0 || (mode != (mode_t)-1 && fchmod(o->fd, mode) != 0)) {
        st = sr_error_set(err, SAGERUN_IO, "%s: cannot create a temporary file: %s", path,
                          strerror(errno));
        sr_output_abort(o);
    }
    return st;
}

sagerun_status sr_output_commit(sr_output *o, const char *path, sagerun_error *err)
{
    if (!o->tmp)
        return SAGERUN_OK; /* stdout or stderr: written with write(), nothing buffered */
    int fd = o->fd;
    o->fd = -1;
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        close(fd);
        sr_output_abort(o);
        return sr_error_set(err, SAGERUN_IO, "%s: cannot write: %s", path, strerror(e));
    }
    /* The target may have been swapped for something else while we wrote: look again. */
    char *again;
    mode_t mode;
    sagerun_status st = output_target(path, &again, &mode, err);
    bool moved = st == SAGERUN_OK && strcmp(again, o->target) != 0;
    free(again);
    if (st == SAGERUN_OK && moved)
        st = sr_error_set(err, SAGERUN_IO, "%s: changed while being written: not replaced", path);
    if (st == SAGERUN_OK && rename(o->tmp, o->target) != 0)
        st = sr_error_set(err, SAGERUN_IO, "%s: rename from %s: %s", path, o->tmp,
                          strerror(errno));
    if (st != SAGERUN_OK) {
        sr_output_abort(o);
        return st;
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    return SAGERUN_OK;
}

void sr_output_abort(sr_output *o)
{
    if (o->tmp) {
        if (o->fd >= 0)
            close(o->fd);
        unlink(o->tmp);
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->fd = -1;
}

static sagerun_status write_standard(FILE *out, bool (*write)(FILE *f, const void *user),
                                     const void *user, sagerun_error *err)
{
    fflush(out == stdout ? stderr : stdout); /* one file on both: in the order written */
    bool ok = write(out, user);
    if (fflush(out) != 0 || ferror(out) || !ok)
        return sr_error_set(err, SAGERUN_IO, "standard %s: cannot write: %s",
                            out == stdout ? "output" : "error", errno ? strerror(errno)
                                                                      : "write failed");
    return SAGERUN_OK;
}

sagerun_status sr_write_file_atomic(const char *path, bool (*write)(FILE *f, const void *user),
                                    const void *user, sagerun_error *err)
{
    int standard = sr_output_standard_fd(path);
    if (standard >= 0)
        return write_standard(standard == STDOUT_FILENO ? stdout : stderr, write, user, err);
    sr_output o;
    sagerun_status st = sr_output_open(path, &o, err);
    if (st != SAGERUN_OK)
        return st;
    FILE *f = fdopen(o.fd, "w");
    if (!f) {
        sr_output_abort(&o);
        return sr_error_set(err, SAGERUN_IO, "%s: %s", path, strerror(errno));
    }
    errno = 0;
    bool ok = write(f, user);
    ok = fflush(f) == 0 && !ferror(f) && ok;
    int saved = errno;
    o.fd = dup(fileno(f)); /* commit fsyncs and closes its own descriptor */
    fclose(f);
    if (!ok || o.fd < 0) {
        sr_output_abort(&o);
        return sr_error_set(err, SAGERUN_IO, "%s: cannot write: %s", path,
                            saved ? strerror(saved) : "write failed");
    }
    return sr_output_commit(&o, path, err);
}

typedef struct bytes {
    const void *data;
    size_t size;
} bytes;

static bool write_bytes(FILE *f, const void *user)
{
    const bytes *b = user;
    return b->size == 0 || fwrite(b->data, 1, b->size, f) == b->size; /* data may be NULL then */
}

sagerun_status sagerun_file_write(const char *path, const void *data, size_t size,
                                  sagerun_error *err)
{
    if (!path || (!data && size))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "file_write: NULL argument");
    bytes b = {data, size};
    return sr_write_file_atomic(path, write_bytes, &b, err);
}

int sr_stdout_divert(void)
{
    fflush(stdout);
    int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        close(saved);
        return -1;
    }
    return saved;
}

void sr_stdout_restore(int saved)
{
    if (saved < 0)
        return;
    fflush(stdout); /* what the plugin printf'ed: to stderr, before the switch back */
    dup2(saved, STDOUT_FILENO);
    close(saved);
}
