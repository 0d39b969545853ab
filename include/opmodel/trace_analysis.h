/* opmodel/trace_analysis.h — what a trace report does not say by itself:
 *
 *   - the GEMM kernel each group ran, read from its name (tile, stages,
 *     split-K, instruction family), and the model's time with that kernel
 *     beside its own choice (opm_trace_kernel_checks_*);
 *   - the steady-state iterations of a run (opm_trace_iterations_*);
 *   - a distributed run, one trace per rank: collectives matched across
 *     ranks, their bytes, bus bandwidth and skew, and each rank's exposed
 *     communication (opm_trace_ranks_*).
 *
 *     opm_trace_kernel_hint h;
 *     if (opm_trace_parse_kernel_name("nvjet_tst_128x256_64x4_2x1_v_bz_TNT", &h))
 *         printf("%d x %d x %d, %d stages\n", h.tile_m, h.tile_n, h.tile_k, h.stages);
 *
 * Ownership as in trace.h: *_new returns an object released with the
 * matching *_free, immutable and readable from many threads; it borrows
 * nothing from what it was made from.  Emitters return malloc'ed text
 * released with opm_free() (or free()).  docs/trace.md, "Iterations" and
 * "Kernel names as hints", defines every field and JSON key. */
#ifndef OPMODEL_TRACE_ANALYSIS_H
#define OPMODEL_TRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "hardware.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Kernel names as hints ---- */

/* What a GEMM kernel's name says.  Tiles are in the op's orientation
 * (tile_m along the output's rows M, tile_n along N): BLAS libraries are
 * column-major, so their names give the tile as (N, M) and it is swapped
 * (column_major = 1); Triton names give (M, N).  0 = the name does not say. */
typedef struct opm_trace_kernel_hint {
    const char *library;          /* "cublas", "cublaslt", "cutlass", "tensile", "triton" */
    const char *instruction;      /* "wgmma", "mma_sync", "wmma", "mfma", "simt"; NULL when not named */
    int tile_m, tile_n, tile_k;
    int stages;
    int split_k;                  /* 1: named as not split; 0: not said */
    int warps;                    /* warps per CTA (cuBLAS xmma: 4 per warpgroup of warpgroupsize); 0: not said */
    int column_major;
} opm_trace_kernel_hint;

/* Parses a GEMM kernel name (cuBLAS sm90_xmma/sm80_xmma/ampere_*gemm,
 * cuBLASLt nvjet, CUTLASS cutlass_NN_*, hipBLASLt/Tensile Cijk_*_MT*,
 * Triton matmul_ogs).  Returns 1 and fills *out when a CTA tile was found;
 * 0 (out zeroed) otherwise.  Pure: no allocation, any input is safe. */
OPM_API int opm_trace_parse_kernel_name(const char *name, opm_trace_kernel_hint *out);

/* One GEMM group whose kernel name parsed. */
typedef struct opm_trace_kernel_check {
    size_t group;                 /* index into the report's groups */
    const char *kernel;           /* the first GEMM kernel name of the group that parsed */
    opm_trace_kernel_hint hint;
    double measured_mean_s;       /* the group's kernel_time_mean_s */
    /* The model with the hinted kernel (cta_tile_*, pipeline_stages,
     * split_k attributes) and with no hint (its own choice). */
    double hinted_time_s, auto_time_s;
    double hinted_tile_efficiency, hinted_wave_efficiency;
    double auto_tile_efficiency, auto_wave_efficiency;
    /* The depth and split the hinted prediction ran with: the name's, else
     * the model's fastest for the named tile (stages 2..8; split-K as the
     * model chooses it for a hinted tile). */
    int hinted_stages, hinted_split_k, hinted_warps;
    int auto_warps;
    const char *auto_kernel;      /* the model's choice ("128x256x64, 4 stages, split 1") */
    int instruction_differs;      /* the name's instruction family is not the hardware's */
} opm_trace_kernel_check;

typedef struct opm_trace_kernel_checks opm_trace_kernel_checks;

/* For every GEMM/batched-GEMM group of `r` with a model and a parsable
 * kernel name, predicts one instance on `hw` with `model` (NULL:
 * "extended_roofline") twice: hinted and automatic.  A group whose hinted
 * prediction the model refuses (a tile the hardware cannot hold) is left
 * out, as is a group the report could not rebuild.  Needs a hardware. */
OPM_API opm_trace_kernel_checks *opm_trace_kernel_checks_new(const opm_trace_report *r, const opm_hardware *hw,
                                                             const char *model, opm_error *err);
OPM_API void opm_trace_kernel_checks_free(opm_trace_kernel_checks *c);
OPM_API size_t opm_trace_kernel_check_count(const opm_trace_kernel_checks *c);
OPM_API const opm_trace_kernel_check *opm_trace_kernel_check_at(const opm_trace_kernel_checks *c, size_t i);
/* The model used. */
OPM_API const char *opm_trace_kernel_checks_model(const opm_trace_kernel_checks *c);
/* A JSON array (one object per check) and a terminal table. */
OPM_API char *opm_trace_kernel_checks_to_json(const opm_trace_kernel_checks *c, const opm_trace_report *r,
                                              opm_error *err);
OPM_API char *opm_trace_kernel_checks_to_table(const opm_trace_kernel_checks *c, const opm_trace_report *r,
                                               opm_error *err);

/* ---- Iterations ---- */

typedef enum opm_trace_iter_method {
    OPM_ITER_NONE,                /* fewer than two iterations found */
    OPM_ITER_PROFILER_STEP,       /* ProfilerStep#N annotations */
    OPM_ITER_KERNEL_SEQUENCE      /* the period of the GPU kernel-name sequence */
} opm_trace_iter_method;

typedef struct opm_trace_iteration {
    const char *name;             /* "ProfilerStep#15", or "iteration 3" */
    double start_s;               /* first GPU event's start, seconds from the trace's first GPU event */
    double duration_s;            /* to the next iteration's first GPU start (the last: its last GPU end) */
    double busy_s;                /* union of its GPU events */
    uint64_t gpu_events;
} opm_trace_iteration;

typedef struct opm_trace_iterations opm_trace_iterations;

/* Finds the repeated iterations of `t`: ProfilerStep#N annotations when
 * there are two or more (host ranges, each GPU event placed by its
 * launch; GPU-side ranges only when the host has none), else the smallest period of the GPU
 * kernel-name sequence that repeats (docs/trace.md, "Iterations").
 * Finding none is not an error (method OPM_ITER_NONE, count 0). */
OPM_API opm_trace_iterations *opm_trace_iterations_new(const opm_trace *t, opm_error *err);
OPM_API void opm_trace_iterations_free(opm_trace_iterations *it);
OPM_API opm_trace_iter_method opm_trace_iterations_method(const opm_trace_iterations *it);
OPM_API size_t opm_trace_iterations_count(const opm_trace_iterations *it);
OPM_API const opm_trace_iteration *opm_trace_iterations_at(const opm_trace_iterations *it, size_t i);
/* Kernel-sequence method: GPU events per iteration; 0 otherwise. */
OPM_API uint64_t opm_trace_iterations_period(const opm_trace_iterations *it);
/* Mean, median, min, max of duration_s; the iteration farthest from the
 * median (*outlier, SIZE_MAX when fewer than two) and its |d − median| /
 * median (*outlier_ratio).  Returns 0, or -1 when there is no iteration. */
OPM_API int opm_trace_iterations_stats(const opm_trace_iterations *it, double *mean_s, double *median_s,
                                       double *min_s, double *max_s, size_t *outlier, double *outlier_ratio);
OPM_API char *opm_trace_iterations_to_json(const opm_trace_iterations *it, opm_error *err);
OPM_API char *opm_trace_iterations_to_table(const opm_trace_iterations *it, opm_error *err);

/* ---- Multi-rank: one trace per rank of a distributed run ---- */

/* One collective, matched across ranks by its place in each rank's order
 * of communication kernels (the i-th on every rank). */
typedef struct opm_trace_collective {
    const char *collective;       /* record_param_comms' "Collective name" ("allreduce"), else from the kernel name */
    const char *kernel;           /* the first rank's kernel name */
    const char *algorithm;        /* "ring", "tree", "nvls", "collnet", "pat" when the kernel name says; else NULL */
    const char *dtype;            /* record_param_comms' dtype ("BFloat16"); NULL when not recorded */
    int64_t group_size;           /* ranks in the process group; -1 when not recorded */
    uint64_t message_bytes;       /* the larger of In/Out msg nelems × element size; 0 when not recorded */
    double time_s;                /* shortest kernel over the ranks: the last to arrive waits for no one */
    double max_time_s, mean_time_s;
    double algbw_bytes_per_s;     /* message_bytes / time_s (0 without bytes) */
    double busbw_bytes_per_s;     /* algbw × NCCL's factor for the collective and group size */
    double skew_s;                /* latest kernel start − earliest, over the ranks */
    size_t slowest_rank;          /* the rank whose kernel starts last (the others wait for it) */
    int names_agree;              /* every rank ran the same collective (or kernel name) here */
} opm_trace_collective;

typedef struct opm_trace_rank {
    const char *source;
    uint64_t collectives;         /* communication kernels on this rank */
    double comm_s;                /* union of its communication kernels */
    double exposed_comm_s;        /* not overlapped by its compute kernels (any stream) */
    double overlapped_comm_s;     /* comm_s − exposed_comm_s */
    double compute_s;
    double collective_wait_s;     /* summed over matched collectives: own kernel time − the collective's time_s */
} opm_trace_rank;

typedef struct opm_trace_ranks opm_trace_ranks;

/* Reads nothing: takes n ≥ 1 traces already read (rank i = traces[i]).
 * Communication kernels are those the report files under comm
 * (docs/trace.md).  A collective's bytes, dtype and group size come from
 * the record_param_comms op whose host range holds the kernel's launch. */
OPM_API opm_trace_ranks *opm_trace_ranks_new(const opm_trace *const *traces, size_t n, opm_error *err);
OPM_API void opm_trace_ranks_free(opm_trace_ranks *r);
OPM_API size_t opm_trace_ranks_rank_count(const opm_trace_ranks *r);
OPM_API const opm_trace_rank *opm_trace_ranks_rank(const opm_trace_ranks *r, size_t i);
/* Collectives matched on every rank: min over the ranks of their count. */
OPM_API size_t opm_trace_ranks_collective_count(const opm_trace_ranks *r);
OPM_API const opm_trace_collective *opm_trace_ranks_collective(const opm_trace_ranks *r, size_t i);
OPM_API char *opm_trace_ranks_to_json(const opm_trace_ranks *r, opm_error *err);
OPM_API char *opm_trace_ranks_to_table(const opm_trace_ranks *r, size_t top, opm_error *err);

#ifdef __cplusplus
}
#endif
#endif
