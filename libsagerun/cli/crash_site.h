/* In compare's measuring child: which plugin's code a fatal signal came from (crash_site.c).
 * A crash in a thread a plugin started runs beside whatever call is open, often another
 * variant's: the open call alone would blame that one, and a crash between calls nobody. */
#ifndef SAGERUN_CLI_CRASH_SITE_H
#define SAGERUN_CLI_CRASH_SITE_H

#include "sagerun/sagerun.h"

/* Notes where every loaded plugin file's code lies and takes SIGSEGV, SIGBUS, SIGILL and SIGFPE:
 * when one is raised by code of a plugin file other than the open call's, a line
 * "X\tLABEL\tFILE\n" goes to fd before the process dies of it as it would have (LABEL: the
 * first variant of that file that a call has entered, empty when none has). Nothing in a build
 * with a sanitizer, which handles these signals itself. */
void sr_crash_site_map(const sagerun_registry *reg, int fd);
/* A call into the variant labelled label begins (NULL: the open call has ended). */
void sr_crash_site_call(const char *label);

#endif
