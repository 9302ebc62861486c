/* Whether a plugin file is safe to load, as ssh's StrictModes judges authorized_keys: a file, or
 * any folder above it, that another user can write (or rename entries in) could be swapped for
 * hostile code that then runs with this user's rights. Symlinks are resolved first, so a link in
 * a safe folder to a file in an unsafe one is judged by where the file really is. */
#include <errno.h>
#include <grp.h>
#include <linux/limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_load.h"

/* A group-writable file is as safe as its owner when the group is the owner's own: the owner's
 * primary group, with no other members listed. */
static bool group_is_owners_own(const struct stat *sb)
{
    struct passwd *pw = getpwuid(sb->st_uid);
    struct group *gr = getgrgid(sb->st_gid);
    if (!pw || !gr || pw->pw_gid != sb->st_gid)
        return false;
    for (char **m = gr->gr_mem; m && *m; m++)
        if (strcmp(*m, pw->pw_name) != 0)
            return false;
    return true;
}

/* One path component: its reason to be unsafe, or NULL. */
static const char *component_problem(const char *what, const char *path, char *buf, size_t len)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(buf, len, "cannot stat the %s %s: %s", what, path, strerror(errno));
        return buf;
    }
    if (sb.st_uid != 0 && sb.st_uid != geteuid()) {
        snprintf(buf, len, "unsafe owner: the %s %s belongs to uid %u, neither you nor root; pass "
                 "--allow-unsafe-plugins to load it anyway", what, path, (unsigned)sb.st_uid);
        return buf;
    }
    bool sticky = S_ISDIR(sb.st_mode) && (sb.st_mode & S_ISVTX);
    bool others = (sb.st_mode & S_IWOTH) && !sticky;
    bool group = (sb.st_mode & S_IWGRP) && !sticky && !group_is_owners_own(&sb);
    if (others || group) {
        snprintf(buf, len, "unsafe permissions: the %s %s is writable by %s (mode %04o); fix "
                 "with chmod go-w, or pass --allow-unsafe-plugins", what, path,
                 others ? "everyone" : "its group", (unsigned)(sb.st_mode & 07777));
        return buf;
    }
    return NULL;
}

/* The real path and every folder above it, up to /. */
static const char *chain_problem(const char *what, const char *real, char *buf, size_t len)
{
    const char *why = component_problem(what, real, buf, len);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    while (!why) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        if (slash == dir) {
            why = component_problem("folder", "/", buf, len);
            break;
        }
        *slash = '\0';
        why = component_problem("folder", dir, buf, len);
    }
    return why;
}

const char *sr_plugin_unsafe_reason(const char *path, char *buf, size_t len)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        snprintf(buf, len, "cannot resolve %s: %s", path, strerror(errno));
        return buf;
    }
    const char *why = chain_problem("file", real, buf, len);
    struct stat lsb;
    if (why || lstat(path, &lsb) != 0 || !S_ISLNK(lsb.st_mode))
        return why;
    /* A symlink: whoever can write its folder can point it elsewhere. */
    char link_dir[PATH_MAX];
    snprintf(link_dir, sizeof link_dir, "%s", path);
    char *slash = strrchr(link_dir, '/');
    if (slash)
        *slash = '\0';
    char real_dir[PATH_MAX];
    if (!realpath(slash ? (link_dir[0] ? link_dir : "/") : ".", real_dir)) {
        snprintf(buf, len, "cannot resolve the folder of %s: %s", path, strerror(errno));
        return buf;
    }
    why = chain_problem("folder", real_dir, buf, len);
    if (why) /* name the symlink too: the message is about where it lives */
        snprintf(buf + strlen(buf), len - strlen(buf), " (it holds the symlink %s)", path);
    return why;
}
