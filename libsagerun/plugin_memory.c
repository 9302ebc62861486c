/* The memory a variant may free or fill through its services (plugin.h section 3): what it
 * allocated with mem_alloc (or sage2_quantize) and the outputs of instances. Anything else —
 * Q, K, V, the shared sage2 tensors, another variant's scratch — is sagerun's: a variant freeing
 * q crashed the input guard (SIGSEGV, no report), and one filling K changed what the others
 * compute on. A lock: instances of one context may run on several threads (plugin.h section 5). */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

typedef struct sr_owned_block {
    uint64_t addr, bytes;
} sr_owned_block;

struct sr_plugin_memory {
    pthread_mutex_t lock;
    sr_owned_block *blocks;
    size_t count, cap;
};

sr_plugin_memory *sr_plugin_memory_create(void)
{
    sr_plugin_memory *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->lock, NULL);
    return m;
}

void sr_plugin_memory_destroy(sr_plugin_memory *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->blocks);
    free(m);
}

bool sr_plugin_memory_add(sr_plugin_memory *m, uint64_t addr, uint64_t bytes)
{
    if (!m)
        return false;
    pthread_mutex_lock(&m->lock);
    bool ok = true;
    if (m->count == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        sr_owned_block *b = realloc(m->blocks, cap * sizeof *b);
        if (b) {
            m->blocks = b;
            m->cap = cap;
        }
        ok = b != NULL;
    }
    if (ok)
        m->blocks[m->count++] = (sr_owned_block){addr, bytes};
    pthread_mutex_unlock(&m->lock);
    return ok;
}

bool sr_plugin_memory_remove(sr_plugin_memory *m, uint64_t addr)
{
    if (!m)
        return false;
    pthread_mutex_lock(&m->lock);
    bool found = false;
    for (size_t i = 0; i < m->count && !found; i++)
        if (m->blocks[i].addr == addr) {
            m->blocks[i] = m->blocks[--m->count];
            found = true;
        }
    pthread_mutex_unlock(&m->lock);
    return found;
}

bool sr_plugin_memory_holds(sr_plugin_memory *m, uint64_t addr, uint64_t bytes)
{
    if (!m)
        return false;
    pthread_mutex_lock(&m->lock);
    bool inside = false;
    for (size_t i = 0; i < m->count && !inside; i++) {
        const sr_owned_block *b = &m->blocks[i];
        inside = addr >= b->addr && addr - b->addr <= b->bytes && bytes <= b->bytes - (addr - b->addr);
    }
    pthread_mutex_unlock(&m->lock);
    return inside;
}
