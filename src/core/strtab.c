/* strtab.c — string interning: one copy of each string in an arena, found
 * through an open-addressing hash table, with dense ids from 0.  Traces
 * intern every op name, kernel name and argument text however many million
 * events repeat them; GEMM validation interns hardware names and its
 * (hardware, source tag) calibration groups. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define OPM_ARENA_BLOCK (256u * 1024u)

static uint64_t hash_bytes(const char *s, size_t len)
{
    /* FNV-1a: short keys, no need for anything heavier. */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static char *arena_alloc(opm_strtab *st, size_t len)
{
    if (st->block == NULL || st->block_cap - st->block_used < len) {
        size_t cap = len > OPM_ARENA_BLOCK ? len : OPM_ARENA_BLOCK;
        char *b = malloc(cap);
        if (!b) return NULL;
        if (opm_array_grow((void **)&st->blocks, &st->blocks_cap, st->nblocks + 1, sizeof *st->blocks)) {
            free(b);
            return NULL;
        }
        st->blocks[st->nblocks++] = b;
        st->block = b;
        st->block_used = 0;
        st->block_cap = cap;
    }
    char *p = st->block + st->block_used;
    st->block_used += len;
    return p;
}

static int rehash(opm_strtab *st, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots) return -1;
    for (size_t id = 0; id < st->count; id++) {
        size_t i = (size_t)hash_bytes(st->strs[id], st->lens[id]) & (nslots - 1);
        while (slots[i]) i = (i + 1) & (nslots - 1);
        slots[i] = (uint32_t)id + 1;
    }
    free(st->slots);
    st->slots = slots;
    st->nslots = nslots;
    return 0;
}

uint32_t opm_strtab_intern(opm_strtab *st, const char *s, size_t len)
{
    if (len > UINT32_MAX - 1 || st->count >= UINT32_MAX - 1) return UINT32_MAX;
    if ((st->count + 1) * 2 > st->nslots && rehash(st, st->nslots ? st->nslots * 2 : 1024)) return UINT32_MAX;
    size_t i = (size_t)hash_bytes(s, len) & (st->nslots - 1);
    while (st->slots[i]) {
        uint32_t id = st->slots[i] - 1;
        if (st->lens[id] == len && memcmp(st->strs[id], s, len) == 0) return id;
        i = (i + 1) & (st->nslots - 1);
    }
    if (st->count + 1 > st->cap) {
        /* lens shares strs' capacity: grow both to the same size. */
        size_t cap = st->cap;
        if (opm_array_grow((void **)&st->strs, &cap, st->count + 1, sizeof *st->strs)) return UINT32_MAX;
        uint32_t *lens = realloc(st->lens, cap * sizeof *lens);
        if (!lens) return UINT32_MAX;
        st->lens = lens;
        st->cap = cap;
    }
    char *copy = arena_alloc(st, len + 1);
    if (!copy) return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = '\0';
    uint32_t id = (uint32_t)st->count++;
    st->strs[id] = copy;
    st->lens[id] = (uint32_t)len;
    st->slots[i] = id + 1;
    return id;
}

void opm_strtab_free(opm_strtab *st)
{
    for (size_t i = 0; i < st->nblocks; i++) free(st->blocks[i]);
    free(st->blocks);
    free(st->strs);
    free(st->lens);
    free(st->slots);
    memset(st, 0, sizeof *st);
}
