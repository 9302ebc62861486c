/* A stand-in for nsys/ncu in the tests: an NVTX tool (loaded by NVTX through
 * NVTX_INJECTION64_PATH) that appends one line per range event to the file named by
 * SAGERUN_NVTX_LOG:
 *   nvtx push NAME            a range pushed with an ASCII name
 *   nvtx push NAME (registered)
 *   nvtx pop
 * The file is opened for appending at every line, so that other writers (a test plugin counting
 * its calls) interleave with it in order. Only the default domain's push/pop and registered
 * strings are taken; the rest of NVTX stays a no-op. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static void log_line(const char *fmt, const char *name, const char *tag)
{
    const char *path = getenv("SAGERUN_NVTX_LOG");
    if (!path)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, fmt, name, tag);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
        n = 0;
    close(fd);
}

/* Registered strings live as long as the process: a table of its own (no allocation). */
static char registered[64][160];
static unsigned n_registered;

static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t domain, const char *s)
{
    (void)domain;
    for (unsigned i = 0; i < n_registered; i++)
        if (strcmp(registered[i], s) == 0)
            return (nvtxStringHandle_t)registered[i];
    if (n_registered == sizeof registered / sizeof registered[0])
        return (nvtxStringHandle_t) "(too many registered strings)";
    snprintf(registered[n_registered], sizeof registered[0], "%s", s);
    return (nvtxStringHandle_t)registered[n_registered++];
}

static int NVTX_API domain_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a)
{
    if (domain)
        return 0;
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        log_line("nvtx push %s%s\n", (const char *)a->message.registered, " (registered)");
    else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        log_line("nvtx push %s%s\n", a->message.ascii, "");
    else
        log_line("nvtx push %s%s\n", "?", " (unexpected message type)");
    return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t domain)
{
    if (!domain)
        log_line("nvtx pop%s%s\n", "", "");
    return 0;
}

static void set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer f)
{
    if (id < size && table[id])
        *table[id] = f;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table)
        return 0;
    set_slot(table, size, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push);
    set_slot(table, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
    set_slot(table, size, NVTX_CBID_CORE2_DomainRegisterStringA,
             (NvtxFunctionPointer)register_string);
    log_line("nvtx tool loaded%s%s\n", "", "");
    return 1;
}
