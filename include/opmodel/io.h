/* opmodel/io.h — text in and out: operation descriptions (YAML or JSON,
 * full or short form, contract §1) and predictions as JSON (contract §3).
 *
 * Ownership: parsers return objects owned by the caller (opm_op_free);
 * emitters return malloc'ed strings released with opm_free() (or free()),
 * or write into a caller buffer.  Nothing here keeps state between calls. */
#ifndef OPMODEL_IO_H
#define OPMODEL_IO_H

#include <stddef.h>
#include "error.h"
#include "model.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest document read: an op or hardware file, one --batch line, a
 * string given to the parsers.  A larger one is an error (OPM_EINVAL), so an
 * endless input such as /dev/zero ends instead of exhausting memory. */
#define OPM_DOCUMENT_MAX_BYTES ((size_t)64 << 20)

typedef enum opm_format { OPM_FORMAT_AUTO, OPM_FORMAT_YAML, OPM_FORMAT_JSON } opm_format;

/* Parses one operation from a file ("-" reads stdin).  YAML and JSON both. */
OPM_API opm_op *opm_op_parse_file(const char *path, opm_error *err);
/* Parses one operation from text.  `source` names it in errors; `first_line`
 * is the line number of the text's first line in that source (1 normally, N
 * for line N of a JSONL stream). */
OPM_API opm_op *opm_op_parse_string(const char *text, size_t len, opm_format format,
                                    const char *source, int first_line, opm_error *err);

/* The full form of an op (contract §1), as YAML or JSON text. */
OPM_API char *opm_op_to_text(const opm_op *op, opm_format format, opm_error *err);

/* A prediction as one line of JSON (no newline), contract §3. */
OPM_API char *opm_profile_to_json(const opm_profile *p, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
