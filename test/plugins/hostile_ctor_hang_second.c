/* A constructor that hangs on the second load only: the plugin scanner (a process of its own)
 * loads it first and approves it; the measuring process, loading it again, hangs before any call
 * into a variant. The first load leaves the file $SAGERUN_TEST_SECOND_LOAD (the gate). */
#include <fcntl.h>
#include <unistd.h>

#define FAULT_GATE "SAGERUN_TEST_SECOND_LOAD"
#define FAULT_NAME "hostile-ctor-hang-second"
#define FAULT_AT 0 /* no fault of fault_plugin.h's: the constructor below */
#define FAULT_KIND 0
#include "fault_plugin.h"

__attribute__((constructor)) static void hang_on_second_load(void)
{
    const char *marker = getenv(FAULT_GATE);
    if (!marker || !*marker)
        return;
    if (access(marker, F_OK) == 0)
        for (;;)
            pause();
    int fd = open(marker, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0)
        close(fd);
}
