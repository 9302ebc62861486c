/* The host backend's memory: every block on pages of its own, between pages nobody may touch, so
 * that a variant's stray write near a block faults in the call that made it (a crash of that
 * variant, named with its phase) instead of landing in the next block: another variant's output,
 * whose guard then blamed the innocent variant, or sagerun's copy of the inputs, which the input
 * guard then "put back" over the real ones.
 *
 *   [header page, read-only][SR_HOST_GUARD_BEFORE, no access][pages: ..., the block][SR_HOST_GUARD_AFTER, no access]
 *
 * The block ends where its pages end, less what keeps its start 256-byte aligned (plugin.h), so
 * that a read or write just past it faults too (within 255 bytes). The header holds the mapping's
 * base and length for the free; being read-only, a stray write cannot change it. Inaccessible
 * pages cost address space, not memory. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define HOST_BLOCK_MAGIC 0x73727062u /* "srpb" */

typedef struct host_block_header {
    uint32_t magic;
    void *base;
    size_t length;
} host_block_header;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static size_t round_up(size_t bytes, size_t unit)
{
    return bytes > SIZE_MAX - unit ? 0 : (bytes + unit - 1) / unit * unit;
}

void *sr_host_block_alloc(size_t bytes)
{
    size_t page = page_size(), used = round_up(bytes ? bytes : 1, 256);
    size_t data = used ? round_up(used, page) : 0;
    size_t fixed = page + SR_HOST_GUARD_BEFORE + SR_HOST_GUARD_AFTER;
    if (!data || data > SIZE_MAX - fixed)
        return NULL;
    size_t length = fixed + data;
    char *base = mmap(NULL, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    char *pages = base + page + SR_HOST_GUARD_BEFORE;
    if (mprotect(base, page, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(pages, data, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, length);
        return NULL;
    }
    *(host_block_header *)base = (host_block_header){HOST_BLOCK_MAGIC, base, length};
    if (mprotect(base, page, PROT_READ) != 0) {
        munmap(base, length);
        return NULL;
    }
    return pages + data - used;
}

/* The first page of a block's pages (the block starts in it: it is less than a page from it). */
static char *first_page(const void *block)
{
    return (char *)((uintptr_t)block & ~(uintptr_t)(page_size() - 1));
}

void sr_host_block_free(void *block)
{
    if (!block)
        return;
    const host_block_header *h =
        (const host_block_header *)(first_page(block) - SR_HOST_GUARD_BEFORE - page_size());
    if (h->magic == HOST_BLOCK_MAGIC && h->base == (const void *)h)
        munmap(h->base, h->length);
}

bool sr_host_block_seal(void *block, size_t bytes)
{
    if (!block)
        return false;
    char *start = first_page(block);
    size_t span = round_up((size_t)((char *)block - start) + (bytes ? bytes : 1), page_size());
    return span && mprotect(start, span, PROT_READ) == 0;
}
