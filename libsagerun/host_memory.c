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
 * pages cost address space, not memory.
 *
 * The live blocks are listed, so that the memory calls of the API can refuse an address that is
 * no block's, or a span past a block's end (sagerun_mem_upload to a stale or made-up address
 * was a SIGSEGV in the caller's process, where CUDA answers an error). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define HOST_BLOCK_MAGIC 0x73727062u /* "srpb" */

typedef struct host_block_header {
    uint32_t magic;
    void *base;
    size_t length;
} host_block_header;

typedef struct live_block {
    uintptr_t start;
    size_t bytes;
} live_block;

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static live_block *live;
static size_t live_count, live_cap;

static bool live_add(uintptr_t start, size_t bytes)
{
    pthread_mutex_lock(&live_lock);
    if (live_count == live_cap) {
        size_t cap = live_cap ? 2 * live_cap : 64;
        live_block *grown = realloc(live, cap * sizeof *live);
        if (!grown) {
            pthread_mutex_unlock(&live_lock);
            return false;
        }
        live = grown;
        live_cap = cap;
    }
    live[live_count++] = (live_block){start, bytes};
    pthread_mutex_unlock(&live_lock);
    return true;
}

/* Takes start off the list; false when it is no live block's start. */
static bool live_remove(uintptr_t start)
{
    bool found = false;
    pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < live_count && !found; i++)
        if (live[i].start == start) {
            live[i] = live[--live_count];
            found = true;
        }
    pthread_mutex_unlock(&live_lock);
    return found;
}

bool sr_host_block_holds(uint64_t addr, uint64_t bytes)
{
    bool held = false;
    pthread_mutex_lock(&live_lock);
    for (size_t i = 0; i < live_count && !held; i++)
        held = addr >= live[i].start && addr - live[i].start <= live[i].bytes &&
               bytes <= live[i].bytes - (addr - live[i].start);
    pthread_mutex_unlock(&live_lock);
    return held;
}

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
    char *block = pages + data - used;
    if (mprotect(base, page, PROT_READ) != 0 || !live_add((uintptr_t)block, bytes ? bytes : 1)) {
        munmap(base, length);
        return NULL;
    }
    return block;
}

/* The first page of a block's pages (the block starts in it: it is less than a page from it). */
static char *first_page(const void *block)
{
    return (char *)((uintptr_t)block & ~(uintptr_t)(page_size() - 1));
}

void sr_host_block_free(void *block)
{
    if (!block || !live_remove((uintptr_t)block)) /* no block's: nothing to read a header from */
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
