/* Optional clock, temperature and throttle readings through NVML, loaded lazily with dlopen: a
 * machine without libnvidia-ml.so.1 simply has no clock readings in its reports. */
#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The few NVML declarations used (nvml.h, stable since NVML 5). */
typedef int nvml_return;
typedef struct nvml_device_opaque *nvml_device;
enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };
enum { NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1 };
typedef struct nvml_violation_time {
    unsigned long long reference_time, violation_time; /* ns */
} nvml_violation_time;

/* nvmlClocksThrottleReasons bits (nvml.h), with the names the report uses. */
static const struct {
    uint64_t bit;
    const char *name;
    bool slows; /* lowers clocks below what the workload would get: worth a warning */
} reasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

struct sr_nvml {
    void *lib;
    nvml_device dev;
    nvml_return (*shutdown)(void);
    nvml_return (*clock_info)(nvml_device, int, unsigned *);
    nvml_return (*max_clock_info)(nvml_device, int, unsigned *);
    nvml_return (*temperature)(nvml_device, int, unsigned *);
    nvml_return (*throttle_reasons)(nvml_device, unsigned long long *);
    nvml_return (*energy)(nvml_device, unsigned long long *);
    nvml_return (*violation)(nvml_device, int, nvml_violation_time *);
};

/* CUDA ordinals count the devices CUDA_VISIBLE_DEVICES lets through; NVML indexes all of them.
 * The entry for `ordinal` in that list is an NVML index or a UUID. (CUDA_DEVICE_ORDER other than
 * PCI_BUS_ID can still reorder devices on mixed machines; then the readings may be another GPU's.) */
static bool visible_device_entry(int ordinal, char *entry, size_t len)
{
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (!list || !*list)
        return false;
    int i = 0;
    for (const char *p = list; *p; i++) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (i == ordinal) {
            if (n >= len)
                return false;
            memcpy(entry, p, n);
            entry[n] = '\0';
            return true;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

sr_nvml *sr_nvml_open(int ordinal, char *why, size_t why_len)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, why_len, "NVML not loaded (%s)", e ? e : "libnvidia-ml.so.1");
        return NULL;
    }
    sr_nvml *n = calloc(1, sizeof(*n));
    if (!n) {
        dlclose(lib);
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    n->lib = lib;
    nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
    nvml_return (*by_index)(unsigned, nvml_device *) =
        (nvml_return(*)(unsigned, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    nvml_return (*by_uuid)(const char *, nvml_device *) =
        (nvml_return(*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByUUID");
    const char *(*error_string)(nvml_return) =
        (const char *(*)(nvml_return))dlsym(lib, "nvmlErrorString");
    n->shutdown = (nvml_return(*)(void))dlsym(lib, "nvmlShutdown");
    n->clock_info = (nvml_return(*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    n->max_clock_info =
        (nvml_return(*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetMaxClockInfo");
    n->temperature =
        (nvml_return(*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetTemperature");
    /* Renamed "ClocksEventReasons" in CUDA 12.2; the old name is still exported. */
    n->throttle_reasons = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->throttle_reasons)
        n->throttle_reasons = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
            lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    n->energy = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(
        lib, "nvmlDeviceGetTotalEnergyConsumption");
    n->violation = (nvml_return(*)(nvml_device, int, nvml_violation_time *))dlsym(
        lib, "nvmlDeviceGetViolationStatus");
    if (!init || !by_index || !n->shutdown) {
        snprintf(why, why_len, "NVML lacks nvmlInit_v2/nvmlDeviceGetHandleByIndex_v2");
        dlclose(lib);
        free(n);
        return NULL;
    }
    nvml_return rc = init();
    if (rc != NVML_OK) {
        snprintf(why, why_len, "nvmlInit_v2 failed: %s", error_string ? error_string(rc) : "?");
        dlclose(lib);
        free(n);
        return NULL;
    }
    char entry[128];
    if (visible_device_entry(ordinal, entry, sizeof(entry)) && !all_digits(entry))
        rc = by_uuid ? by_uuid(entry, &n->dev) : -1;
    else
        rc = by_index(visible_device_entry(ordinal, entry, sizeof(entry))
                          ? (unsigned)strtoul(entry, NULL, 10)
                          : (unsigned)ordinal,
                      &n->dev);
    if (rc != NVML_OK) {
        snprintf(why, why_len, "NVML has no handle for CUDA device %d: %s", ordinal,
                 error_string ? error_string(rc) : "?");
        sr_nvml_close(n);
        return NULL;
    }
    return n;
}

void sr_nvml_close(sr_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}

void sr_nvml_sample(sr_nvml *n, sr_clock_sample *out)
{
    out->sm_clock_mhz = -1;
    out->temperature_c = -1;
    out->has_throttle = false;
    out->throttle_reasons = 0;
    if (!n)
        return;
    unsigned v;
    if (n->clock_info && n->clock_info(n->dev, NVML_CLOCK_SM, &v) == NVML_OK)
        out->sm_clock_mhz = (int)v;
    if (n->temperature && n->temperature(n->dev, NVML_TEMPERATURE_GPU, &v) == NVML_OK)
        out->temperature_c = (int)v;
    unsigned long long r;
    if (n->throttle_reasons && n->throttle_reasons(n->dev, &r) == NVML_OK) {
        out->has_throttle = true;
        out->throttle_reasons = r;
    }
}

int sr_nvml_max_sm_clock(sr_nvml *n)
{
    unsigned v;
    if (n && n->max_clock_info && n->max_clock_info(n->dev, NVML_CLOCK_SM, &v) == NVML_OK)
        return (int)v;
    return -1;
}

uint64_t sr_nvml_slowdown_mask(void)
{
    uint64_t mask = 0;
    for (size_t i = 0; i < SR_ARRAY_LEN(reasons); i++)
        if (reasons[i].slows)
            mask |= reasons[i].bit;
    return mask;
}

void sr_nvml_reason_names(uint64_t bits, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < SR_ARRAY_LEN(reasons); i++) {
        if (!(bits & reasons[i].bit))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", reasons[i].name);
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
        bits &= ~reasons[i].bit;
    }
    if (bits)
        snprintf(buf + used, len - used, "%s0x%llx", used ? "," : "", (unsigned long long)bits);
}

double sr_nvml_energy_j(sr_nvml *n)
{
    unsigned long long mj;
    if (n && n->energy && n->energy(n->dev, &mj) == NVML_OK)
        return (double)mj * 1e-3;
    return NAN;
}

double sr_nvml_violation_s(sr_nvml *n)
{
    double total = 0;
    bool any = false;
    static const int policies[] = {NVML_PERF_POLICY_POWER, NVML_PERF_POLICY_THERMAL};
    for (size_t i = 0; n && n->violation && i < SR_ARRAY_LEN(policies); i++) {
        nvml_violation_time v;
        if (n->violation(n->dev, policies[i], &v) == NVML_OK) {
            total += (double)v.violation_time * 1e-9;
            any = true;
        }
    }
    return any ? total : NAN;
}

bool sr_nvidia_proc_version_parse(const char *text, char *buf, size_t len)
{
    /* the first word after "Kernel Module" made of digits and dots, with a dot ("for x86_64" of
     * the open module's line is skipped) */
    const char *p = text ? strstr(text, "Kernel Module") : NULL;
    if (!p || len == 0)
        return false;
    for (p += strlen("Kernel Module"); *p && *p != '\n';) {
        p += strspn(p, " \t");
        size_t word = strcspn(p, " \t\n"), n = strspn(p, "0123456789.");
        if (word && n == word && isdigit((unsigned char)p[0]) && memchr(p, '.', n)) {
            if (n >= len)
                return false;
            memcpy(buf, p, n);
            buf[n] = '\0';
            return true;
        }
        p += word;
    }
    return false;
}

static bool driver_release_from_nvml(char *buf, size_t len)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
    nvml_return (*shutdown)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlShutdown");
    nvml_return (*version)(char *, unsigned) =
        (nvml_return(*)(char *, unsigned))dlsym(lib, "nvmlSystemGetDriverVersion");
    bool ok = false;
    if (init && shutdown && version && init() == NVML_OK) {
        ok = version(buf, (unsigned)len) == NVML_OK && buf[0];
        shutdown();
    }
    dlclose(lib);
    return ok;
}

bool sr_nvml_driver_release(char *buf, size_t len)
{
    if (len == 0)
        return false;
    buf[0] = '\0';
    if (driver_release_from_nvml(buf, len))
        return true;
    char text[512] = "";
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    if (sr_nvidia_proc_version_parse(text, buf, len))
        return true;
    buf[0] = '\0';
    return false;
}

bool sr_nvml_uuid_by_pci(const char *pci, char *buf, size_t len)
{
    if (len == 0)
        return false;
    buf[0] = '\0';
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlInit_v2");
    nvml_return (*shutdown)(void) = (nvml_return(*)(void))dlsym(lib, "nvmlShutdown");
    nvml_return (*by_pci)(const char *, nvml_device *) =
        (nvml_return(*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    nvml_return (*uuid)(nvml_device, char *, unsigned) =
        (nvml_return(*)(nvml_device, char *, unsigned))dlsym(lib, "nvmlDeviceGetUUID");
    bool ok = false;
    if (init && shutdown && by_pci && uuid && init() == NVML_OK) {
        nvml_device dev;
        ok = by_pci(pci, &dev) == NVML_OK && uuid(dev, buf, (unsigned)len) == NVML_OK && buf[0];
        shutdown();
    }
    dlclose(lib);
    if (!ok)
        buf[0] = '\0';
    return ok;
}
