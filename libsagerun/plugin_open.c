/* Opening one plugin file in this process: dlopen, the entry point, the ABI negotiation and the
 * checks of the descriptor it returns (plugin_load.h). */
#include <dlfcn.h>
#include <elf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugin_load.h"
#include "safe_io.h"

#if defined(__x86_64__)
#define SR_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define SR_ELF_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define SR_ELF_MACHINE EM_PPC64
#endif

/* The size of the version-1 descriptor: everything up to and including destroy. A plugin built
 * against a later minor may send a larger struct; one sending less lacks required fields. */
#define SR_DESCRIPTOR_V1_SIZE                                                                      \
    (offsetof(sagerun_variant_descriptor, destroy) + sizeof(void (*)(void *)))

static bool valid_variant_name(const char *name)
{
    size_t n = name ? strnlen(name, 64) : 0;
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    }
    return true;
}

/* The 1.1 fields a descriptor's struct_size covers: field and everything before it. */
#define SR_COVERS(d, field)                                                                        \
    ((d)->struct_size >= offsetof(sagerun_variant_descriptor, field) + sizeof((d)->field))

static bool valid_param_key(const char *key)
{
    size_t n = key ? strnlen(key, SAGERUN_PLUGIN_MAX_KEY + 1) : 0;
    if (n == 0 || n > SAGERUN_PLUGIN_MAX_KEY)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') ||
              key[i] == '_'))
            return false;
    return true;
}

/* Why the k-th parameter declaration is unusable, or NULL. */
static const char *param_problem(const sagerun_variant_descriptor *d, uint32_t k, char *buf,
                                 size_t len)
{
    const sagerun_param_decl *p = &d->params[k];
    const char *key = p->key && valid_param_key(p->key) ? p->key : NULL;
    if (p->struct_size < sizeof(sagerun_param_decl))
        snprintf(buf, len, "variant %s: parameter %u: struct_size %u, needs %zu", d->name, k,
                 p->struct_size, sizeof(sagerun_param_decl));
    else if (!p->key)
        snprintf(buf, len, "variant %s: parameter %u: no key (key is NULL)", d->name, k);
    else if (!key)
        snprintf(buf, len, "variant %s: parameter %u: invalid key \"%.32s\" (want [a-z0-9_], 1 to "
                 "%d characters)", d->name, k, p->key, SAGERUN_PLUGIN_MAX_KEY);
    else if (p->type != SAGERUN_PARAM_INT && p->type != SAGERUN_PARAM_FLOAT &&
             p->type != SAGERUN_PARAM_BOOL)
        snprintf(buf, len, "variant %s: parameter %s: unknown type %d", d->name, key, p->type);
    else if (p->min_value > p->max_value)
        snprintf(buf, len, "variant %s: parameter %s: its range [%g, %g] is inverted (min above "
                 "max)", d->name, key, p->min_value, p->max_value);
    else if (p->type == SAGERUN_PARAM_INT &&
             (p->min_value != floor(p->min_value) || p->max_value != floor(p->max_value)))
        snprintf(buf, len, "variant %s: parameter %s: an int's range [%g, %g] needs whole bounds",
                 d->name, key, p->min_value, p->max_value);
    else if (!(p->min_value <= p->default_value && p->default_value <= p->max_value))
        snprintf(buf, len, "variant %s: parameter %s: default %g outside its range [%g, %g]",
                 d->name, key, p->default_value, p->min_value, p->max_value);
    else if (sr_param_check(p, p->default_value, NULL, 0) != 0)
        snprintf(buf, len, "variant %s: parameter %s: default %g is not a valid %s", d->name, key,
                 p->default_value, sagerun_param_type_name(p->type));
    else {
        for (uint32_t j = 0; j < k; j++)
            if (strcmp(d->params[j].key, key) == 0) {
                snprintf(buf, len, "variant %s: parameter %s declared twice", d->name, key);
                return buf;
            }
        return NULL;
    }
    return buf;
}

/* Checks the 1.1 fields (flags, parameters) a descriptor covers; NULL when usable. */
static const char *descriptor_1_1_problem(const sagerun_variant_descriptor *d, char *buf,
                                          size_t len)
{
    if (SR_COVERS(d, flags) && (d->flags & ~SAGERUN_VARIANT_GRAPH_CAPTURABLE)) {
        snprintf(buf, len, "variant %s: unknown flags 0x%x", d->name,
                 d->flags & ~SAGERUN_VARIANT_GRAPH_CAPTURABLE);
        return buf;
    }
    if (SR_COVERS(d, n_params) && !SR_COVERS(d, params) && d->n_params) {
        snprintf(buf, len, "variant %s: struct_size %u covers n_params (%u) but not params", d->name,
                 d->struct_size, d->n_params);
        return buf;
    }
    if (!SR_COVERS(d, params) || d->n_params == 0)
        return NULL;
    if (d->n_params > SAGERUN_PLUGIN_MAX_PARAMS || !d->params) {
        snprintf(buf, len, "variant %s: %u parameters %s", d->name, d->n_params,
                 d->params ? "declared, at most " SR_STR(SAGERUN_PLUGIN_MAX_PARAMS) " allowed"
                           : "declared but params is NULL");
        return buf;
    }
    for (uint32_t k = 0; k < d->n_params; k++)
        if (param_problem(d, k, buf, len))
            return buf;
    return NULL;
}

/* Checks the 1.2 fields (features, dtypes, head_dims) a descriptor covers; NULL when usable. */
static const char *descriptor_1_2_problem(const sagerun_variant_descriptor *d, char *buf,
                                          size_t len)
{
    if (!SR_COVERS(d, head_dims))
        return NULL;
    if (d->features & ~SAGERUN_FEATURE_ALL)
        snprintf(buf, len, "variant %s: features 0x%x has bits no feature of ABI 1.%d has (0x%x)",
                 d->name, d->features, SAGERUN_PLUGIN_ABI_MINOR,
                 d->features & ~SAGERUN_FEATURE_ALL);
    else if (d->dtypes & ~((1u << SAGERUN_DTYPE_F16) | (1u << SAGERUN_DTYPE_BF16)))
        snprintf(buf, len, "variant %s: dtypes 0x%x names a dtype Q, K, V cannot have (F16, BF16)",
                 d->name, d->dtypes);
    else if (d->n_head_dims > 64 || (d->n_head_dims && !d->head_dims))
        snprintf(buf, len, "variant %s: n_head_dims %u with head_dims %s (1 to 64 entries)",
                 d->name, d->n_head_dims, d->head_dims ? "set" : "NULL");
    else
        return NULL;
    return buf;
}

/* Checks a descriptor; returns NULL when it is usable, else the reason. */
const char *sr_descriptor_problem(const sagerun_variant_descriptor *d, char *buf, size_t len)
{
    if (d->struct_size < SR_DESCRIPTOR_V1_SIZE) {
        snprintf(buf, len,
                 "variant descriptor too small: struct_size %u, ABI 1 needs at least %zu bytes",
                 d->struct_size, (size_t)SR_DESCRIPTOR_V1_SIZE);
        return buf;
    }
    if (d->abi_major != SAGERUN_PLUGIN_ABI_MAJOR) {
        snprintf(buf, len, "variant descriptor says ABI %u, the answer said %u", d->abi_major,
                 SAGERUN_PLUGIN_ABI_MAJOR);
        return buf;
    }
    if (!d->name) {
        snprintf(buf, len, "variant descriptor without a name (name is NULL)");
        return buf;
    }
    if (!valid_variant_name(d->name)) {
        snprintf(buf, len, "invalid variant name \"%.64s\" (want [a-z0-9._-], 1 to 63 characters)",
                 d->name);
        return buf;
    }
    if (d->backend != SAGERUN_BACKEND_HOST && d->backend != SAGERUN_BACKEND_CUDA) {
        snprintf(buf, len, "variant %s: unknown backend %d", d->name, d->backend);
        return buf;
    }
    if (sr_input_kind_problem(d, buf, len))
        return buf;
    const char *missing = !d->geometry ? "geometry"
                          : !d->create ? "create"
                          : !d->run    ? "run"
                          : !d->destroy ? "destroy"
                                        : NULL;
    if (missing) {
        snprintf(buf, len, "variant %s: required function %s is NULL", d->name, missing);
        return buf;
    }
    const char *why = descriptor_1_1_problem(d, buf, len);
    return why ? why : descriptor_1_2_problem(d, buf, len);
}

/* The descriptors a factory gives, checked; false with the reason. */
static bool factory_descriptors(const sagerun_plugin_factory *f,
                                const sagerun_variant_descriptor **descs, size_t *n, char *buf,
                                size_t len)
{
    if (f->struct_size < sizeof *f || !f->count || !f->get) {
        snprintf(buf, len, "init failed: the plugin factory is incomplete (struct_size %u, count "
                 "%s, get %s)", f->struct_size, f->count ? "set" : "NULL",
                 f->get ? "set" : "NULL");
        return false;
    }
    uint32_t count = f->count();
    if (count == 0 || count > SR_PLUGIN_MAX_VARIANTS) {
        snprintf(buf, len, "init failed: the plugin factory counts %u variants (1 to %d allowed)",
                 count, SR_PLUGIN_MAX_VARIANTS);
        return false;
    }
    for (uint32_t i = 0; i < count; i++) {
        descs[i] = f->get(i);
        if (!descs[i]) {
            snprintf(buf, len, "init failed: the plugin factory gave no descriptor for variant %u "
                     "of %u", i, count);
            return false;
        }
        if (sr_descriptor_problem(descs[i], buf, len))
            return false;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(descs[j]->name, descs[i]->name) == 0) {
                snprintf(buf, len, "the plugin factory gives variant \"%s\" twice",
                         descs[i]->name);
                return false;
            }
    }
    *n = count;
    return true;
}

/* Calls the entry point; the descriptors (one, or a factory's), or false with the reason. */
static bool negotiate(sagerun_plugin_entry_fn entry, const sagerun_host_services *services,
                      const sagerun_variant_descriptor **descs, size_t *n, char *buf, size_t len)
{
    sagerun_plugin_query q = {.struct_size = sizeof q,
                              .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
                              .abi_minor = SAGERUN_PLUGIN_ABI_MINOR,
                              .services = services};
    sagerun_plugin_answer a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    int rc = entry(&q, &a);
    a.reason[sizeof a.reason - 1] = '\0';
    if (rc != 0)
        snprintf(buf, len, "init failed: %s (%s returned %d)",
                 a.reason[0] ? a.reason : "no reason given", SAGERUN_PLUGIN_ENTRY_NAME, rc);
    else if (a.abi_major != SAGERUN_PLUGIN_ABI_MAJOR)
        snprintf(buf, len, "ABI mismatch: [%s] answered plugin ABI %u.%u, this sagerun speaks %u.%u",
                 SAGERUN_PLUGIN_ENTRY_NAME, a.abi_major, a.abi_minor, SAGERUN_PLUGIN_ABI_MAJOR,
                 SAGERUN_PLUGIN_ABI_MINOR);
    else if (a.abi_minor > SAGERUN_PLUGIN_ABI_MINOR)
        snprintf(buf, len, "ABI mismatch: plugin needs ABI %u.%u, this sagerun speaks up to %u.%u",
                 a.abi_major, a.abi_minor, SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR);
    else if (a.abi_minor >= 1 && a.factory)
        return factory_descriptors(a.factory, descs, n, buf, len);
    else if (!a.variant)
        snprintf(buf, len, "init failed: [%s] returned no variant descriptor",
                 SAGERUN_PLUGIN_ENTRY_NAME);
    else if (!sr_descriptor_problem(a.variant, buf, len)) {
        descs[0] = a.variant;
        *n = 1;
        return true;
    }
    return false;
}

static const char *machine_name(unsigned m)
{
    static const struct { unsigned m; const char *name; } names[] = {
        {EM_X86_64, "x86_64"}, {EM_AARCH64, "aarch64"}, {EM_386, "i386"}, {EM_ARM, "arm"},
        {EM_PPC64, "ppc64"},   {EM_RISCV, "riscv"},     {EM_S390, "s390"}};
    for (size_t i = 0; i < SR_ARRAY_LEN(names); i++)
        if (names[i].m == m)
            return names[i].name;
    return "another machine";
}

/* What dlopen would say about the ELF header, in words (glibc reports a foreign machine as
 * "No such file or directory"); NULL when it is a shared object for this machine. */
static const char *elf_problem(const char *path, char *buf, size_t len)
{
    sagerun_error err = {0};
    int fd = sr_open_input(path, &err);
    if (fd < 0) {
        snprintf(buf, len, "%s", err.message);
        return buf;
    }
    Elf64_Ehdr h;
    memset(&h, 0, sizeof h);
    ssize_t got = read(fd, &h, sizeof h);
    close(fd);
    bool host64 = sizeof(void *) == 8;
    union { uint16_t u; uint8_t b[2]; } probe = {.u = 1};
    int host_data = probe.b[0] ? ELFDATA2LSB : ELFDATA2MSB;
    if (got < EI_NIDENT || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
        snprintf(buf, len, "not a loadable plugin: not an ELF file");
    else if (h.e_ident[EI_CLASS] != (host64 ? ELFCLASS64 : ELFCLASS32))
        snprintf(buf, len, "not a loadable plugin: a %s-bit ELF file, this sagerun is %s-bit",
                 h.e_ident[EI_CLASS] == ELFCLASS64 ? "64" : "32", host64 ? "64" : "32");
    else if (h.e_ident[EI_DATA] != host_data)
        snprintf(buf, len, "not a loadable plugin: ELF of the other byte order");
    else if (got < (ssize_t)sizeof(Elf32_Ehdr) || h.e_type != ET_DYN)
        snprintf(buf, len, "not a loadable plugin: not an ELF shared object (type %u)",
                 (unsigned)h.e_type);
#ifdef SR_ELF_MACHINE
    else if (h.e_machine != SR_ELF_MACHINE)
        snprintf(buf, len, "not a loadable plugin: built for %s (ELF machine %u), this sagerun "
                 "runs on %s", machine_name(h.e_machine), (unsigned)h.e_machine,
                 machine_name(SR_ELF_MACHINE));
#endif
    else
        return NULL;
    return buf;
}

bool sr_plugin_open(const char *path, const sagerun_host_services *services, void **handle,
                    const sagerun_variant_descriptor **descs, size_t *n, char *reason,
                    size_t len)
{
    if (elf_problem(path, reason, len))
        return false;
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(reason, len, "not a loadable plugin: %s", why ? why : "dlopen failed");
        return false;
    }
    dlerror();
    void *sym = dlsym(h, SAGERUN_PLUGIN_ENTRY_NAME);
    if (!sym) {
        dlclose(h);
        snprintf(reason, len, "no entry point [%s] in shared library [%s]",
                 SAGERUN_PLUGIN_ENTRY_NAME, path);
        return false;
    }
    sagerun_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    /* The handle stays open once the entry point ran: its code may be referenced (a plugin
     * loaded twice shares one handle). */
    *n = 0;
    *handle = h;
    return negotiate(entry, services, descs, n, reason, len);
}
