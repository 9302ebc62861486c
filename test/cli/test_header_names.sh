#!/usr/bin/env bash
# The library builds with -Ilibsagerun, which puts its internal headers ahead of the system's for
# <...> includes too: an internal header named like a standard one takes its place in every system
# header that includes it (libsagerun/limits.h did: fontconfig.h lost INT_MAX). No internal header
# may share a name with a C11 or POSIX header, and <limits.h> must be the real one.
set -u
source "$(dirname "$0")/lib.sh"

std="assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign
stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar
wctype aio cpio dirent dlfcn fcntl fnmatch glob grp iconv langinfo libgen monetary mqueue netdb nl_types
poll pthread pwd regex sched search semaphore spawn strings stropts syslog tar termios trace ulimit
unistd utime utmpx wordexp cairo sodium jansson cmocka"
bad=""
for h in $std; do
    for dir in libsagerun libsagerun/cli include/sagerun; do
        [ -e "$ROOT/$dir/$h.h" ] && bad="$bad $dir/$h.h"
    done
done
[ -z "$bad" ] && echo "ok   no internal header is named like a standard one" \
    || fail "no internal header is named like a standard one" "$bad"

printf '#include <limits.h>\nint probe = INT_MAX;\n' > "$TMP/probe.c"
out=$(cc -std=c11 -fsyntax-only -I"$ROOT/include" -I"$ROOT/libsagerun" "$TMP/probe.c" 2>&1) \
    && echo "ok   <limits.h> with the library's include path is the system's" \
    || fail "<limits.h> with the library's include path is the system's" "$out"
finish
