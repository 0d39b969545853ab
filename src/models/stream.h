/* stream.h — the kernel models of memory-streaming kinds (stream.c) and of
 * attention (attention.c), shared by extended_roofline and
 * effective_roofline. */
#ifndef OPM_STREAM_H
#define OPM_STREAM_H

#include "opmodel/opmodel.h"

/* Fill p for a memory-streaming kind; -1 when the kind has no streaming
 * model (the caller falls back), else 0 or an error code. */
int opm_stream_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                       opm_error *err);

/* Fill p for attention, attention_prefill, attention_decode; -1 when the
 * hardware has no kernel model for it (systolic arrays, matrix engines). */
int opm_attention_kernel_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                                 opm_error *err);

#endif
