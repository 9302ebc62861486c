/* A host variant that appends "plugin run" to the file SAGERUN_TEST_CALL_LOG names at every call
 * of run, so that a test counts the calls a command makes (test_profile.sh: with the NVTX test
 * tool writing to the same file, which calls fall inside which range). Its one parameter does
 * nothing: it lets a test name the variant as a spec, fake-call-log[tag=3]. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sagerun/plugin.h>
static const sagerun_param_decl log_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "tag", "does nothing", 0, 0, 9},
};
#define FAKE_NAME "fake-call-log"
#define FAKE_PARAMS log_params
#define FAKE_RUN logged_run
static int logged_run(void *state, char *err, size_t errlen);
#include "fake_plugin.h"

static int logged_run(void *state, char *err, size_t errlen)
{
    const char *path = getenv("SAGERUN_TEST_CALL_LOG");
    if (path) {
        static const char line[] = "plugin run\n";
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) {
            snprintf(err, errlen, "cannot append to %s", path);
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    return fake_run(state, err, errlen);
}
