/* Shared by the test_api_* programs (the public API as a client sees it): a temporary folder for
 * the files a test writes, made before the tests and removed after them. */
#ifndef SAGERUN_API_TEST_H
#define SAGERUN_API_TEST_H

#include <stdio.h>
#include <stdlib.h>

static char api_test_dir[] = "/tmp/sagerun-api-test.XXXXXX";

static inline int api_test_make_dir(void **state)
{
    (void)state;
    return mkdtemp(api_test_dir) ? 0 : -1;
}

static inline int api_test_remove_dir(void **state)
{
    (void)state;
    char cmd[sizeof api_test_dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", api_test_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* DIR/name in one of 8 rotating buffers (several may be used in one call). */
static inline const char *path_of(const char *name)
{
    static char buf[8][256];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", api_test_dir, name);
    return p;
}

#endif
