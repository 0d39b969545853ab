/* doc.h — a small positioned document tree: what YAML and JSON text turn
 * into before it becomes ops or hardware.  Every node remembers its line and
 * column so that errors found later can point at the text. */
#ifndef OPM_DOC_H
#define OPM_DOC_H

#include <stddef.h>
#include <stdint.h>
#include "opmodel/error.h"

typedef enum doc_type { DOC_SCALAR, DOC_SEQ, DOC_MAP } doc_type;

typedef struct doc_node {
    doc_type type;
    int line, col;               /* 1-based; col 0 when unknown */
    const char *text;            /* scalar text, NUL-terminated */
    int quoted;                  /* scalar was quoted: always a string */
    size_t n;                    /* seq: items; map: pairs */
    struct doc_node **kids;      /* seq: n items; map: key0, value0, key1, ... */
} doc_node;

typedef struct doc doc;

/* Parses YAML (JSON is accepted as YAML).  first_line offsets line numbers. */
doc *doc_parse_yaml(const char *text, size_t len, const char *source, int first_line, opm_error *err);
/* Parses one JSON value (yajl); nodes carry first_line and column 0. */
doc *doc_parse_json(const char *text, size_t len, const char *source, int first_line, opm_error *err);
void doc_free(doc *d);
const doc_node *doc_root(const doc *d);
const char *doc_source(const doc *d);

/* Map lookup; NULL when absent or `map` is not a map. */
const doc_node *doc_get(const doc_node *map, const char *key);
/* Node at a dotted path ("tensors[1].shape", "attrs.causal"), or NULL. */
const doc_node *doc_find(const doc_node *root, const char *path);
/* Prefixes "source:line:col" of the node that best matches err->field (the
 * root when nothing matches) to err->message. */
void doc_locate_error(const doc *d, opm_error *err);
/* Prefixes the position of a given node. */
void doc_error_at(const doc *d, const doc_node *node, opm_error *err);

/* Scalar readers: 0 on success. */
int doc_int(const doc_node *n, int64_t *out);
int doc_double(const doc_node *n, double *out);
int doc_bool(const doc_node *n, int *out);
int doc_is_null(const doc_node *n);
/* Short description of a node for messages ("a list", "'abc'"). */
void doc_describe(const doc_node *n, char *buf, size_t cap);


/* ---- building trees for output ---- */
doc *doc_new_empty(const char *source);
void doc_set_root(doc *d, doc_node *root);
doc_node *doc_new_scalar(doc *d, const char *text, int quoted);
doc_node *doc_new_collection(doc *d, doc_type type);
/* Appends to a seq (key NULL) or a map.  Returns 0, or -1 when out of memory. */
int doc_append(doc *d, doc_node *coll, const char *key, doc_node *value);
#endif
