/* builtin_data.h — the shape of the generated table of built-in hardware
 * descriptions (see tools/embed.c) and of their loaded images (tools/hwgen.c). */
#ifndef OPM_BUILTIN_DATA_H
#define OPM_BUILTIN_DATA_H

#include <stddef.h>

typedef struct opm_builtin_entry {
    const char *name;
    const char *text;
    size_t len;
} opm_builtin_entry;

extern const opm_builtin_entry opm_builtin_entries[];
extern const size_t opm_builtin_count;
/* Per entry, the opm_hardware the loader builds from its text, as bytes
 * (tools/hwgen.c), or NULL where the text must be parsed (cross builds). */
extern const unsigned char *const opm_builtin_images[];

#endif
