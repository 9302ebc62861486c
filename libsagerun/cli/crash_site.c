/* Which plugin's code a fatal signal came from, in compare's measuring child (crash_site.h).
 *
 * After the plugins are loaded the child notes the address ranges of every plugin file's
 * executable segments (dl_iterate_phdr) and which variant names each file gives. The handler of
 * SIGSEGV, SIGBUS, SIGILL and SIGFPE looks the faulting instruction's address up in those ranges:
 * when it lies in a plugin file other than the open call's (a thread the plugin started, crashing
 * while another variant is measured or between calls), it writes one prepared line naming that
 * file's variant to the parent, which blames it instead of the open call. Then the signal takes
 * the action it had before (the default, or a plugin's handler), as it would have without ours.
 * Everything the handler touches is written before it can run, or is a single sig_atomic_t. */
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "crash_site.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SR_CRASH_SITE_ON 0 /* the sanitizer's own handler reports the crash */
#elif defined(__x86_64__) || defined(__aarch64__)
#define SR_CRASH_SITE_ON 1
#else
#define SR_CRASH_SITE_ON 0
#endif

#define SR_CRASH_FILES 64
#define SR_CRASH_RANGES 256
#define SR_CRASH_NAMES 256
#define SR_CRASH_PATH 1024

typedef struct crash_file {
    char path[SR_CRASH_PATH];      /* real path */
    char line[SR_CRASH_PATH + 512]; /* "X\tLABEL\tPATH\n" once a call entered one of its variants */
    size_t line_len;
    volatile sig_atomic_t labelled;
} crash_file;

static crash_file files[SR_CRASH_FILES];
static int n_files;
static struct {
    uintptr_t lo, hi;
    int file;
} ranges[SR_CRASH_RANGES];
static int n_ranges;
static struct {
    char name[256];
    int file;
} names[SR_CRASH_NAMES];
static int n_names;
static int site_fd = -1;
static volatile sig_atomic_t open_file = -1;

static int file_index(const char *real)
{
    for (int i = 0; i < n_files; i++)
        if (strcmp(files[i].path, real) == 0)
            return i;
    if (n_files == SR_CRASH_FILES)
        return -1;
    snprintf(files[n_files].path, sizeof files[n_files].path, "%s", real);
    return n_files++;
}

static void note_variant(const sagerun_variant_info *info)
{
    char real[PATH_MAX];
    if (!info->path || !realpath(info->path, real) || n_names == SR_CRASH_NAMES)
        return;
    int f = file_index(real);
    if (f < 0)
        return;
    const char *name = info->base_name ? info->base_name : info->name;
    snprintf(names[n_names].name, sizeof names[n_names].name, "%s", name);
    names[n_names++].file = f;
}

static int note_object(struct dl_phdr_info *o, size_t size, void *user)
{
    (void)size, (void)user;
    char real[PATH_MAX];
    if (!o->dlpi_name || !o->dlpi_name[0] || !realpath(o->dlpi_name, real))
        return 0;
    int f = -1;
    for (int i = 0; i < n_files && f < 0; i++)
        if (strcmp(files[i].path, real) == 0)
            f = i;
    for (int k = 0; f >= 0 && k < o->dlpi_phnum && n_ranges < SR_CRASH_RANGES; k++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[k];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        ranges[n_ranges].lo = (uintptr_t)(o->dlpi_addr + ph->p_vaddr);
        ranges[n_ranges].hi = ranges[n_ranges].lo + ph->p_memsz;
        ranges[n_ranges++].file = f;
    }
    return 0;
}

#if SR_CRASH_SITE_ON
#define SR_CRASH_SIGNALS 4
static const int crash_signals[SR_CRASH_SIGNALS] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
static struct sigaction before[SR_CRASH_SIGNALS];

static uintptr_t fault_pc(const void *ucv)
{
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#else
    return (uintptr_t)uc->uc_mcontext.pc;
#endif
}

static void on_crash(int sig, siginfo_t *si, void *ucv)
{
    uintptr_t pc = fault_pc(ucv);
    int f = -1;
    for (int i = 0; i < n_ranges && f < 0; i++)
        if (pc >= ranges[i].lo && pc < ranges[i].hi)
            f = ranges[i].file;
    if (f >= 0 && f != open_file && files[f].labelled && site_fd >= 0 &&
        write(site_fd, files[f].line, files[f].line_len) < 0) {
        /* nothing to do: the parent still sees the signal */
    }
    /* the action there was before ours (the default, or a handler a plugin installed) */
    for (int i = 0; i < SR_CRASH_SIGNALS; i++)
        if (crash_signals[i] == sig)
            sigaction(sig, &before[i], NULL);
    if (si->si_code <= 0) /* sent, not raised by an instruction: returning would not repeat it */
        raise(sig);
}
#endif

void sr_crash_site_map(const sagerun_registry *reg, int fd)
{
    if (!SR_CRASH_SITE_ON || fd < 0)
        return;
    site_fd = fd;
    for (size_t i = 0; i < sagerun_registry_variant_count(reg); i++) {
        sagerun_variant_info info = {.struct_size = sizeof info};
        if (sagerun_registry_variant_info(reg, i, &info, NULL) == SAGERUN_OK)
            note_variant(&info);
    }
    dl_iterate_phdr(note_object, NULL);
#if SR_CRASH_SITE_ON
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < SR_CRASH_SIGNALS; i++)
        sigaction(crash_signals[i], &sa, &before[i]);
#endif
}

/* text at line[n], its tabs and line breaks as spaces (they separate fields and lines), leaving
 * two bytes of line free; returns the new length */
static size_t append_text(char *line, size_t cap, size_t n, const char *text)
{
    for (; *text && n + 2 < cap; text++)
        line[n++] = (*text == '\t' || *text == '\n' || *text == '\r') ? ' ' : *text;
    return n;
}

void sr_crash_site_call(const char *label)
{
    if (site_fd < 0)
        return;
    if (!label) {
        open_file = -1;
        return;
    }
    size_t base = strcspn(label, "[#"); /* name[key=value,...]#2: the plugin's name */
    int f = -1;
    for (int i = 0; i < n_names && f < 0; i++)
        if (strlen(names[i].name) == base && strncmp(names[i].name, label, base) == 0)
            f = names[i].file;
    if (f >= 0 && !files[f].labelled) {
        crash_file *cf = &files[f];
        char shown[256]; /* with the path, shorter than the line: the separators always fit */
        snprintf(shown, sizeof shown, "%s", label);
        size_t n = append_text(cf->line, sizeof cf->line, 0, "X");
        cf->line[n++] = '\t';
        n = append_text(cf->line, sizeof cf->line, n, shown);
        cf->line[n++] = '\t';
        n = append_text(cf->line, sizeof cf->line, n, cf->path);
        cf->line[n++] = '\n';
        cf->line_len = n;
        __atomic_thread_fence(__ATOMIC_RELEASE); /* the line whole before a handler may read it */
        cf->labelled = 1;
    }
    open_file = f;
}
