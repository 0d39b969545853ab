/* golden.h — reading the reference reports (CSV) that the golden tests
 * compare against, and small parsers for the Python-literal cells they hold
 * ("[[512], [141, 512]]", "('c10::BFloat16', 'c10::BFloat16')", "True"). */
#ifndef OPM_GOLDEN_H
#define OPM_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

typedef struct csv csv;

/* Reads a whole CSV file (RFC 4180 quoting, first row = header).  NULL and a
 * Criterion failure when the file is missing or malformed. */
csv *csv_load(const char *path);
void csv_free(csv *c);
size_t csv_rows(const csv *c);
/* Cell of data row `row` (0-based, header excluded) in column `name`;
 * NULL when the column does not exist, "" for an empty cell. */
const char *csv_get(const csv *c, size_t row, const char *name);
int csv_has(const csv *c, const char *name);
/* Numeric cell; fails the test when absent or not a number. */
double csv_num(const csv *c, size_t row, const char *name);
/* "True"/"False" (also "1"/"0", "true"/"false") → 1/0; -1 otherwise. */
int csv_bool(const csv *c, size_t row, const char *name);

/* Parses a Python list of int lists ("[[1, 2], [], [3]]"): fills up to
 * max_lists lists of up to 8 dims each, lens[i] = rank (0 for "[]").
 * Returns the number of lists, -1 on a parse error. */
int py_int_lists(const char *s, int64_t dims[][8], int *lens, int max_lists);
/* Parses a Python list/tuple of strings ("['a', 'b']"); returns the count
 * (items copied into out[i], each at most 63 chars), -1 on error. */
int py_strings(const char *s, char out[][64], int max_items);
/* "c10::BFloat16" / "float" / "c10::Half" ... → opmodel dtype name ("bf16"),
 * NULL if unknown. */
const char *torch_dtype(const char *t);

/* Path of a file under tests/data/tracelens/ (copied from the shared data
 * so the tests do not need ../shared). */
const char *tracelens_path(const char *rel, char *buf, size_t cap);

#endif
