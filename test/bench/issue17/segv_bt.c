/* A SIGSEGV/SIGBUS handler that prints a backtrace, LD_PRELOADed by run45.sh to find where `run` dies
 * under compute-sanitizer after a launch failure (run 44). A debugging aid, not part of sagerun. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
#include <string.h>
static void on_segv(int sig) {
    void *f[64]; int n = backtrace(f, 64);
    static const char m[] = "\n== segv_bt: backtrace ==\n";
    write(2, m, sizeof m - 1);
    backtrace_symbols_fd(f, n, 2);
    signal(sig, SIG_DFL); raise(sig);
}
__attribute__((constructor)) static void init(void) {
    void *f[1]; backtrace(f, 1); /* load libgcc before any fault */
    signal(SIGSEGV, on_segv); signal(SIGBUS, on_segv);
}
