/* opmodel/api.h — OPM_API, the marker on every public function.
 *
 * The library is built with hidden visibility: only functions declared with
 * OPM_API in these headers are exported from libopmodel.so, so internal
 * helpers can never collide with an application's own symbols.  A static
 * link is unaffected. */
#ifndef OPMODEL_API_H
#define OPMODEL_API_H

#ifndef OPM_API
#if defined(__GNUC__) || defined(__clang__)
#define OPM_API __attribute__((visibility("default")))
#else
#define OPM_API
#endif
#endif

#endif
