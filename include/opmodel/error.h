/* opmodel/error.h — the error value every fallible call fills.
 *
 * Errors are values, never printed by the library.  A caller declares an
 * `opm_error err;` on its stack and passes `&err` (or NULL when it does not
 * care).  On failure the function returns NULL or a non-zero status and fills
 * `err` with a code and a one-line message of the form
 *
 *     FILE:LINE:COL: FIELD: what was expected, got what
 *
 * (the location part is present when the error comes from parsed text).
 * No allocation is involved, so errors are safe to produce from any thread. */
#ifndef OPMODEL_ERROR_H
#define OPMODEL_ERROR_H

#include "api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opm_status {
    OPM_OK = 0,
    OPM_EINVAL = 1,      /* malformed or inconsistent input */
    OPM_EIO = 2,         /* file could not be read or written */
    OPM_ENOMEM = 3,      /* allocation failed */
    OPM_EUNSUPPORTED = 4,/* valid input the chosen model/hardware cannot handle */
    OPM_EOVERFLOW = 5,   /* an exact 64-bit count would overflow */
    OPM_ENOTFOUND = 6    /* unknown name (hardware, model, kind) */
} opm_status;

#define OPM_ERROR_MESSAGE_MAX 512
#define OPM_ERROR_FIELD_MAX 96

typedef struct opm_error {
    opm_status code;
    /* Dotted path of the offending field ("tensors[1].shape"), empty if none. */
    char field[OPM_ERROR_FIELD_MAX];
    /* Complete one-line message, location and field included. */
    char message[OPM_ERROR_MESSAGE_MAX];
} opm_error;

/* Resets `err` to OPM_OK with empty strings.  NULL is accepted.  Every
 * public function that takes an opm_error clears it when it succeeds. */
OPM_API void opm_error_clear(opm_error *err);

/* Fills err (NULL accepted) as the library does: code, field and the
 * message "FIELD: <printf of fmt>" on one line (control characters
 * escaped); returns code.  For user models and kinds (registry.h, kind.h)
 * reporting their own errors. */
OPM_API int opm_error_set(opm_error *err, opm_status code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A static one-phrase description of a status ("out of memory"); never NULL,
 * "unknown status" for a value outside opm_status. */
OPM_API const char *opm_errstr(int status);

/* Releases memory the library returned (emitted text, opm_*_to_json and
 * friends), with the allocator the library used.  NULL is accepted. */
OPM_API void opm_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
