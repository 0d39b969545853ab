/* stream.c — memory-streaming kernels as kernels, for extended_roofline and
 * effective_roofline: elementwise (gated activations too), copy, cast and
 * quantise, softmax, layer/RMS norm (fused residual add too), RoPE,
 * embedding gather and reductions.
 *
 * A kernel is a grid of CTAs, each with `threads` threads that keep one
 * vector load of `vec_bytes` in flight per thread and input stream (one
 * per input of a flat elementwise op, and two for a gated activation,
 * whose loop loads x and its gate before it uses either; the other row
 * kernels' loops issue one load at a time: RoPE's x and y pair measured
 * no faster than one on Vidur's A100 and H100 rows).  Two shapes cover the
 * kernels frameworks launch for these kinds:
 *   flat — one output element per thread per vector, FLAT_THREADS threads
 *          and FLAT_VEC elements per thread per CTA (PyTorch's vectorized
 *          elementwise launcher: 128 threads × 4 elements), for
 *          elementwise, copy, embedding backward and reductions;
 *   gather — F.embedding's forward is index_select: a grid of at most
 *          GATHER_CTAS_PER_SM CTAs of GATHER_THREADS per SM walks the output
 *          one scalar element per thread per step, each step an index load
 *          (L2) then a table load (DRAM) that the next step cannot pass;
 *   row  — one CTA per row (softmax, norms, RoPE, quantising copies and
 *          gated activations, as PyTorch's and vLLM's kernels launch them),
 *          reading the row `passes` times (a norm reads it for its
 *          statistics, then again to normalise; PyTorch's block softmax
 *          for rows over SOFTMAX_WARP_MAX reads it for the max, the sum and
 *          the output) with a block reduction between passes; rows of at
 *          most SOFTMAX_WARP_MAX softmax elements are a warp each, the row
 *          held in registers (one pass).
 * The time is
 *   fixed + max(knee(DRAM latency + DRAM stream, chain), L2 stream,
 *               vector math, CTA launches)
 * where knee(a, b) = (a^P + b^P)^(1/P), P = STREAM_KNEE_P: near the point
 * where the loads in flight just cover the DRAM's bandwidth-latency
 * product, the latency chain and the DRAM stream each bound the kernel and
 * it runs slower than either (the queues at the DRAM lengthen every load);
 * far from it the larger one alone sets the time.  The launches are ceil(CTAs / SMs) per SM at CTA_LAUNCH_CYCLES each
 * (a grid of many small CTAs waits on the block scheduler: vLLM's quantise
 * of many short rows, PyTorch's 512-element CTAs of a 16-bit add),
 * the streams are the bytes at the reached DRAM read / write
 * bandwidths (hbm × utilization; writes at DRAM_WRITE_EFF of it) and at the
 * L2 bandwidth (at most STREAM_L2_B_PER_CLK_SM per SM), and the chain is the busiest CTA slot's rows one after the
 * other: per row, each pass costs a load latency (DRAM for the first pass
 * of a cold row; L2 after while the rows of every CTA in flight fit the
 * usable L2, DRAM for the share past it) plus its bytes at the CTA's
 * Little's-law rate
 * threads × vec_bytes / latency (capped at its share of the SM's L2 port),
 * plus REDUCE_SYNC_CYCLES per block reduction.  An L2 hit costs the mean
 * over the L2's partitions: a line sits in its home partition, near the
 * loading SM in 1 of P cases, and far_latency_cycles in the others where
 * the entry gives it (A100).  Slots are SMs × resident
 * CTAs (max CTAs and warps per SM).  Tensors the previous kernel left in L2
 * (attrs.l2_warm: input) are read from L2 in the share the usable L2 holds
 * of the op's tensors (all when they fit; usable: one partition's share
 * where the L2 level gives partitions, else L2_USABLE of it — gemm_tiled.c's
 * rule); stores stay in L2 in that same share (written back later, under
 * other kernels), the rest streams to DRAM.  A call re-run on the same
 * tensors (all) keeps them all while they fit the whole L2, none past it.
 *
 * Constants are kernel launch shapes of the libraries named, not fits:
 *   FLAT_THREADS 128, FLAT_VEC 4 — PyTorch ATen CUDALoops (num_threads 128,
 *     thread_work_size 4);
 *   ROW_THREADS_MAX 1024 — vLLM's per-token kernels (rms_norm,
 *     act_and_mul: min(width, 1024) threads);
 *   ROPE_THREADS_MAX 512 — vLLM's rotary_embedding (a block of
 *     min(heads × rot_dim / 2, 512) threads per token);
 *   QUANT_THREADS 256 — vLLM's static_scaled_fp8_quant
 *     (csrc/quantization/w8a8/fp8/common.cu: block_size 256, grid one row
 *     each, vectorize_with_alignment<16>: 16-byte loads, VEC_BYTES);
 *   LAYERNORM_THREADS 128 — PyTorch vectorized_layer_norm_kernel (32 × 4,
 *     the block the NeuSight launch records show);
 *   SOFTMAX_WARP_MAX 1024 — PyTorch's warp softmax handles rows up to 1024
 *     elements (softmax_warp_forward), longer rows the block kernel
 *     (cunn_SoftMaxForward, ILP 4: width / 4 threads, a power of two ≤
 *     1024, as the records show: 256 or 512);
 *   VEC_BYTES 16 — one 128-bit load per thread in flight;
 *   GATHER_THREADS 128, GATHER_CTAS_PER_SM 8, GATHER_SMALL_INDICES 16 —
 *     ATen Indexing.cu index_select_out_cuda_impl (blocks of 128, grid
 *     min(ceil(n / 128), SMs × 8), the small-index kernel up to 16 indices);
 *   REDUCE_SYNC_CYCLES 400 — a block reduction: warp shuffles, a
 *     __syncthreads, a shared-memory round trip and a second shuffle tree
 *     (about 5 × 30-cycle shuffle steps + 2 barriers + SMEM latency). */
#include <math.h>
#include <string.h>
#include "../core/internal.h"
#include "hw_internal.h"
#include "gemm_tiled.h"
#include "models.h"
#include "stream.h"

#define FLAT_THREADS 128.0
#define FLAT_VEC 4.0
#define ROW_THREADS_MAX 1024.0
#define ROPE_THREADS_MAX 512.0
#define LAYERNORM_THREADS 128.0
#define SOFTMAX_WARP_MAX 1024.0
#define VEC_BYTES 16.0
#define REDUCE_SYNC_CYCLES 400.0
#define GATHER_THREADS 128.0
#define GATHER_CTAS_PER_SM 8.0
#define GATHER_SMALL_INDICES 16.0
#define QUANT_THREADS 256.0
/* SM cycles the GPU takes to launch one CTA on an SM (the block scheduler's
 * rate): a grid of many small CTAs takes at least ceil(CTAs / SMs) launches
 * per SM one after the other.  Fitted, not a launch shape: the median over
 * vLLM's fp8 quantise rows of K <= 128, M >= 1024 CTAs and at most 4 MB (the
 * launch-bound ones) of H100, H200 and L40S, pooled: 220; refitted with each
 * GPU left out 199-259 (tools/refit_cta_launch.py).  Bounds [100, 400]. */
#ifndef CTA_LAUNCH_CYCLES
#define CTA_LAUNCH_CYCLES 220.0
#endif
/* Bytes per SM per clock a streaming kernel's loads and stores move to and
 * from L2 at best (L2-resident tensors).  Fitted: the best L2-resident rate
 * of vLLM's fp8 quantise re-runs (shared/data/measured/hardware_params/
 * derived_bandwidth_and_floors.csv, l2_resident_elementwise_bw_max) per SM
 * per clock is 16.3 (H100), 16.4 (H200) and 14.0 (L40S); 16 taken.  Each
 * GPU left out, the other two give 14.0-16.4.  Bounds [8, 64]. */
#ifndef STREAM_L2_B_PER_CLK_SM
#define STREAM_L2_B_PER_CLK_SM 16.0
#endif
#ifndef LOADED_LATENCY_FACTOR
#define LOADED_LATENCY_FACTOR 2.0
#endif
/* Exponent of the soft knee between the latency chain and the DRAM stream
 * (the p-norm of the two; building with -DSTREAM_KNEE_P=0 takes the
 * larger one, the model before it, for comparisons).
 * Fitted on every non-attention line of data/kernels (9 GPUs), the grid
 * {1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 4, max}: 2 gives the lowest mean MAPE
 * per GPU (12.59%; over lines 1.75 is 0.06 lower); refitted with each GPU
 * left out 1.75-2.5 (1.5-3 over lines): tools/refit_stream_knee.py, the
 * held-out figures in docs/kernel_models.md.  Bounds [1.5, 4]: 1 adds the
 * two, as if no load overlapped the stream. */
#ifndef STREAM_KNEE_P
#define STREAM_KNEE_P 2.0
#endif


typedef struct stream_shape {
    int row;                /* one CTA per row (else flat) */
    double rows, width;     /* row kernels: rows × width elements */
    double threads;         /* per CTA */
    double rows_per_cta;    /* warp softmax: rows of one CTA */
    double passes;          /* reads of each row */
    double reductions;      /* block reductions per row */
    double vec_bytes;       /* bytes of one load */
    double streams;         /* independent loads per thread per step (input streams) */
    int gather;             /* PyTorch index_select: rows = indices, width = slice */
    const char *name;
} stream_shape;

static double elems_of(const opm_tensor *t)
{
    double e = 1;
    for (int i = 0; i < t->rank; i++) e *= (double)t->shape[i];
    return e;
}

/* Threads of a one-CTA-per-row kernel giving each thread one of `units`
 * (elements or element pairs): whole warps, at least one, at most cap. */
static double row_threads(double units, double cap)
{
    return mind(cap, maxd(32, ceil(units / 32) * 32));
}

static double pow2_floor(double x)
{
    double p = 32;
    while (p * 2 <= x) p *= 2;
    return p;
}

/* Row width of a norm: the product of normalized_shape, default the last dim. */
static double norm_width(const opm_op *op, const opm_tensor *x)
{
    const int64_t *ns;
    size_t n = opm_op_get_ints(op, "normalized_shape", &ns);
    if (n) {
        double w = 1;
        for (size_t i = 0; i < n; i++) w *= (double)ns[i];
        return w;
    }
    return x->rank ? (double)x->shape[x->rank - 1] : 1;
}

/* FP32 instructions per output element of the transcendental activations
 * (SASS of libdevice's erff, tanhf, expf and the division of a sigmoid:
 * polynomial FMAs, range reduction, selects), 0 for the rest, which run
 * at their FLOP weights. */
static double instr_per_elem(const char *f)
{
    static const struct { const char *name; double n; } t[] = {
        {"gelu", 24}, {"gelu_mul", 26}, {"erf", 20}, {"gelu_tanh", 16}, {"gelu_tanh_mul", 18},
        {"tanh", 12}, {"silu", 10}, {"silu_mul", 12}, {"sigmoid", 9}, {"exp", 6}, {"log", 8},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(f, t[i].name)) return t[i].n;
    return 0;
}

/* The kernel shape of one op; 0 when the kind has no streaming model. */
static int shape_of(const opm_op *op, opm_kind kind, stream_shape *s)
{
    memset(s, 0, sizeof *s);
    const opm_tensor *x = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0);
    const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    if (!x || !y) return 0;
    double ex = elems_of(x);
    s->vec_bytes = VEC_BYTES;
    s->streams = 1;
    s->passes = 1;
    double last = x->rank ? (double)x->shape[x->rank - 1] : 1;
    switch (kind) {
    case OPM_KIND_SOFTMAX: {
        int64_t d = opm_op_get_int(op, "dim", -1);
        if (d < 0) d += x->rank;
        s->width = x->rank && d >= 0 && d < x->rank ? (double)x->shape[d] : 1;
        s->row = 1;
        if (s->width <= SOFTMAX_WARP_MAX) {
            /* A warp per row, the row in registers: all of it in flight. */
            s->threads = 128;
            s->rows_per_cta = 4;
            s->vec_bytes = maxd(s->width / 32, 1) * opm_dtype_bytes(x->dtype);
            s->name = "warp_softmax";
        } else {
            s->threads = mind(ROW_THREADS_MAX, pow2_floor(s->width / 4));
            s->passes = 3;
            s->reductions = 2;
            s->name = "block_softmax";
        }
        break;
    }
    case OPM_KIND_LAYERNORM:
    case OPM_KIND_RMSNORM:
        s->row = 1;
        s->width = norm_width(op, x);
        s->passes = 2;
        s->reductions = 1;
        s->threads = kind == OPM_KIND_LAYERNORM ? LAYERNORM_THREADS : row_threads(s->width, ROW_THREADS_MAX);
        s->name = kind == OPM_KIND_LAYERNORM ? "row_layernorm" : "row_rmsnorm";
        /* PyTorch's layer norm loads vectors of 4 elements (vec_size 4). */
        if (kind == OPM_KIND_LAYERNORM) s->vec_bytes = 4 * opm_dtype_bytes(x->dtype);
        break;
    case OPM_KIND_ROPE:
        /* One CTA per token; q is [T, H, D], [B, S, H, D] or [T, H·D]. */
        s->row = 1;
        s->width = x->rank >= 3 ? (double)x->shape[x->rank - 2] * last : last;
        s->threads = row_threads(s->width / 2, ROPE_THREADS_MAX);
        s->name = "row_rope";
        break;
    case OPM_KIND_COPY:
        /* A quantising copy (to 8 bits or fewer) computes or applies
         * per-token scales: one CTA per row. */
        if (opm_dtype_bits(y->dtype) <= 8 && opm_dtype_bits(x->dtype) > 8) {
            s->row = 1;
            s->width = last;
            s->threads = QUANT_THREADS;
            s->name = "row_quantize";
            break;
        }
        s->name = "flat_copy";
        break;
    case OPM_KIND_ELEMENTWISE:
        /* A gated activation (one input [..., 2H] -> [..., H]) is vLLM's
         * act_and_mul: one CTA per token. */
        if (opm_op_find_tensor(op, OPM_ROLE_INPUT, 1) == NULL && elems_of(y) * 2 == ex && y->rank) {
            s->row = 1;
            s->width = last;
            s->threads = row_threads(s->width / 2, ROW_THREADS_MAX);
            /* Each iteration loads x and its gate (two __ldg of independent
             * __restrict__ pointers, both issued before the first use:
             * Sarathi's and vLLM's act_and_mul compiled with nvcc -O2), so
             * two loads per thread are in flight. */
            s->streams = 2;
            s->name = "row_gated";
            break;
        }
        s->name = "flat_elementwise";
        s->streams = 0;
        for (size_t i = 0; opm_op_find_tensor(op, OPM_ROLE_INPUT, i); i++) s->streams++;
        break;
    case OPM_KIND_EMBEDDING:
        if (opm_op_phase(op) != OPM_PHASE_TRAIN_BWD && y->rank) {
            /* F.embedding is index_select: one scalar element per thread
             * per grid-stride step. */
            s->gather = 1;
            s->width = (double)y->shape[y->rank - 1];
            s->rows = s->width > 0 ? elems_of(y) / s->width : 0;
            s->threads = GATHER_THREADS;
            s->rows_per_cta = 1;
            s->vec_bytes = opm_dtype_bytes(y->dtype);
            s->name = "index_select";
            return 1;
        }
        s->name = "flat_gather";
        break;
    case OPM_KIND_REDUCTION:
        s->name = "flat_reduction";
        break;
    default:
        return 0;
    }
    if (opm_op_has(op, "vector_bytes")) s->vec_bytes = (double)opm_op_get_int(op, "vector_bytes", 16);
    if (s->row) {
        if (opm_op_has(op, "threads_per_cta")) s->threads = (double)opm_op_get_int(op, "threads_per_cta", 128);
        if (s->rows_per_cta <= 0) s->rows_per_cta = 1;
        s->rows = s->width > 0 ? ex / s->width : 0;
    } else {
        s->threads = FLAT_THREADS;
        s->rows_per_cta = 1;
        double out = elems_of(y);
        if (kind == OPM_KIND_REDUCTION) out = ex; /* the grid covers the input */
        s->width = FLAT_THREADS * FLAT_VEC;
        s->rows = ceil(out / s->width);
    }
    return 1;
}

int opm_stream_predict(const opm_op *op, const opm_hardware *hw, opm_profile *p, const char *model,
                       opm_error *err)
{
    opm_kind kind = opm_op_kind(op);
    stream_shape s;
    if (!shape_of(op, kind, &s)) return -1;
    opm_counts c;
    int rc = opm_op_count(op, &c, err);
    if (rc) return rc;
    gemm_hw h;
    /* The hardware numbers the GEMM models use (bandwidths, latencies,
     * occupancy limits); fp32 is every GPU's vector dtype. */
    if ((rc = opm_gemm_hw(hw, OPM_FP32, &h, err))) return rc;
    /* A streaming kernel's L2 hits land in whichever partition homes the
     * line: the previous kernel's stores, a re-run's lines and the lines
     * a first pass brought in from DRAM (which stay in their home
     * partition) are near the loading SM in 1 of P cases.  The entry's L2
     * latency is a pointer chase that re-walks its own lines (copied to the
     * near partition), so the far hits' latency is its own figure. */
    h.lat_l2_s = h.lat_l2_mean_s;

    double rd = (double)c.read_bytes, wr = (double)c.write_bytes;
    const char *warm = opm_op_get_string(op, "l2_warm", "none");
    /* The share of the op's tensors L2 holds.  Inputs the previous kernel
     * just wrote (input): all when they fit, else the usable size over the
     * working set (the lines written last are still there).  The same call
     * re-run on the same tensors (all) cycles through them: an LRU-like L2
     * keeps every line while the set fits the whole L2 and none once it
     * does not (each pass evicts the lines the next pass needs first), as
     * vLLM's fp8 quantise re-runs show: L2 rates up to about the whole L2
     * of H100 and L40S (past one partition's share), DRAM rates past it. */
    double ws = rd + wr;
    double held = ws > 0 ? mind(1, h.l2_share / ws) : 1;
    if (warm[0] == 'a') held = ws <= h.l2_size ? 1 : 0;
    int warm_in = warm[0] == 'i' || warm[0] == 'a';
    double f_in = warm_in ? held : 0; /* inputs read from L2 */

    /* Occupancy and slots. */
    double warps = ceil(s.threads / h.warp_size);
    double a = mind(h.max_ctas, floor(h.max_warps / warps));
    if (a < 1) a = 1;
    double ctas = ceil(s.rows / s.rows_per_cta);
    double gather_steps = 0;
    if (s.gather) {
        /* index_select's launch: few indices (at most
         * GATHER_SMALL_INDICES) loop over the indices inside each thread,
         * the grid covering one slice; more cover the whole output.  The
         * grid is capped at GATHER_CTAS_PER_SM per SM, so each thread walks
         * gather_steps elements one after the other. */
        double small = s.rows <= GATHER_SMALL_INDICES;
        double cover = small ? s.width : s.rows * s.width;
        ctas = maxd(1, mind(ceil(cover / s.threads), GATHER_CTAS_PER_SM * h.num_sms));
        gather_steps = (small ? s.rows : 1) * ceil(cover / (ctas * s.threads));
    }
    double slots = h.num_sms * a;
    double per_slot = ceil(ctas / slots);
    double busy_per_sm = mind(a, ceil(ctas / h.num_sms));
    /* One CTA's bytes per pass and its Little's-law rate. */
    double rows_elems = s.row ? s.width * s.rows_per_cta : s.width;
    double in_per_elem = s.rows > 0 && s.width > 0 ? rd / (s.rows * s.width) : 0;
    double cta_bytes = rows_elems * in_per_elem;
    /* Row kernels read each row again (passes − 1 times) soon after the
     * first pass: from L2 while the rows of every CTA in flight fit it
     * (their reuse distance is about those rows: the other CTAs stream
     * theirs in between); past the usable share (the rule of l2_warm:
     * input) the rest of each re-read comes from DRAM. */
    double in_flight_rows = mind(ctas, slots) * cta_bytes;
    double reread_miss = s.passes > 1 && in_flight_rows > h.l2_share ? 1 - h.l2_share / in_flight_rows : 0;
    double dram_rd = rd * (1 - f_in) + rd * (s.passes - 1) * reread_miss, dram_wr = wr * (1 - held);
    double l2_rd = rd * s.passes, l2_wr = wr;
    double t_dram = dram_rd / h.hbm_bw + dram_wr / h.hbm_write_bw;
    /* The loads and stores of a streaming kernel reach L2 at most at
     * STREAM_L2_B_PER_CLK_SM per SM, below what the L2 serves GEMMs' bulk
     * copies; never below the reached DRAM rate, which every streaming
     * kernel's path from L2 to the SMs carries at the description's clock
     * (a part whose SMs move more per clock than Hopper's and Ada's, such
     * as B200 with 8 TB/s, must not be held below its DRAM).  That path
     * runs on the SM clock, so at another clock the floor scales as every
     * on-chip rate does (opm_hardware_with_clock): by the run's clock over
     * the description's.  DRAM's own rate stays, so below the clock where
     * the path falls under it the L2 term binds (docs/workload.md). */
    double l2_floor = h.hbm_bw * h.onchip_clock_ratio;
    double l2_bw = mind(h.l2_bw, maxd(STREAM_L2_B_PER_CLK_SM * h.num_sms * h.clock_hz, l2_floor));
    double t_l2 = isinf(h.l2_bw) ? 0 : (l2_rd + l2_wr) / l2_bw; /* no L2 level: no L2 term */
    /* Little's law runs on the latency under load, not the idle one. */
    double lat_first = (f_in * h.lat_l2_s + (1 - f_in) * h.lat_dram_s) * LOADED_LATENCY_FACTOR;
    double inflight = s.threads * s.vec_bytes * s.streams;
    double rate_dram = inflight / lat_first;
    double lat_re = (reread_miss * h.lat_dram_s + (1 - reread_miss) * h.lat_l2_s) * LOADED_LATENCY_FACTOR;
    double rate_l2 = inflight / lat_re;
    double port = h.l2_port_sm / busy_per_sm;
    rate_dram = mind(rate_dram, port);
    rate_l2 = mind(rate_l2, port);
    double sync_s = REDUCE_SYNC_CYCLES / h.clock_hz;
    double t_cta = lat_first + cta_bytes / rate_dram +
                   (s.passes - 1) * (lat_re / LOADED_LATENCY_FACTOR + cta_bytes / rate_l2) + s.reductions * sync_s;
    double t_chain = per_slot * t_cta;
    if (s.gather)
        /* Each step loads its index (an L2 hit: every step lands on a new
         * token), then the table element it names (from DRAM unless warm);
         * the store of one step does not let the next step's loads pass it,
         * so the steps do not overlap. */
        t_chain = gather_steps * (h.lat_l2_s * LOADED_LATENCY_FACTOR + lat_first);

    double vpeak = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32) * hw->util_vector;
    double t_vec = c.vector_flops > 0 && vpeak > 0 ? (double)c.vector_flops / vpeak : 0;
    /* Transcendental activations issue more instructions than their FLOP
     * weights say (an erf is a polynomial with range reduction), each on
     * one FP32 lane; 16-bit inputs and outputs add a conversion each. */
    double ipe = kind == OPM_KIND_ELEMENTWISE ? instr_per_elem(opm_op_get_string(op, "op", "")) : 0;
    if (ipe > 0 && vpeak > 0) {
        const opm_tensor *y = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
        double outs = elems_of(y), conv = opm_dtype_bits(y->dtype) == 16 ? (s.row ? 3 : 2) : 0;
        t_vec = maxd(t_vec, outs * (ipe + conv) / (vpeak / 2));
    }
    /* A kernel that reads and writes no DRAM byte has no DRAM stream: its
     * memory side is the chain alone, not the knee with a DRAM latency. */
    double t_stream = dram_rd + dram_wr > 0 ? h.lat_dram_s + t_dram : 0;
    /* CTAs launch one after the other on each SM, whatever else they wait on. */
    double t_launch = ceil(ctas / h.num_sms) * CTA_LAUNCH_CYCLES / h.clock_hz;
    /* The chain and the DRAM stream meet at a soft knee, not a corner. */
    double t_mem = STREAM_KNEE_P > 0 ? pow(pow(t_stream, STREAM_KNEE_P) + pow(t_chain, STREAM_KNEE_P), 1.0 / STREAM_KNEE_P)
                                     : maxd(t_stream, t_chain);
    double body = maxd(maxd(maxd(t_mem, t_l2), t_vec), t_launch);

    opm_profile_head(p, op, hw, model, &c);
    p->engine = p->flops ? OPM_ENGINE_VECTOR : OPM_ENGINE_NONE;
    p->compute_time_s = t_vec;
    p->overhead_s = h.fixed_s;
    p->latency_s = body + h.fixed_s;
    opm_level_traffic hbm_t = {dram_rd, dram_wr, t_dram}, l2_t = {l2_rd, l2_wr, t_l2};
    opm_energy_in work = {0, OPM_ENGINE_VECTOR, OPM_FP32, (double)p->flops, OPM_FP32, 0};
    opm_profile_levels(p, hw, &hbm_t, &l2_t, rd, wr, &work);

    /* A launch-bound grid waits on the block scheduler: an overhead, not memory. */
    /* The knee is named after the larger of its two bounds. */
    const char *lim = t_chain > t_stream ? "latency" : "hbm";
    opm_bound bound = OPM_BOUND_MEMORY;
    double top = t_mem;
    if (t_l2 > top) { top = t_l2; lim = "l2"; }
    if (t_vec > top) { top = t_vec; lim = "compute"; bound = OPM_BOUND_COMPUTE; }
    if (t_launch > top) { top = t_launch; lim = "cta_launch"; bound = OPM_BOUND_OVERHEAD; }
    if (h.fixed_s > top) { lim = "fixed"; bound = OPM_BOUND_OVERHEAD; }
    p->bound = bound;
    if (bound == OPM_BOUND_MEMORY) opm_diag_text(p, "limiting_level", !strcmp(lim, "l2") ? "l2" : "hbm");
    opm_diag_text(p, "limiting_resource", lim);
    opm_diag_text(p, "kernel", s.name);
    opm_diag_num(p, "ctas", ctas);
    opm_diag_num(p, "threads_per_cta", s.threads);
    opm_diag_num(p, "ctas_per_sm", a);
    opm_diag_num(p, "waves", ctas / slots);
    opm_diag_num(p, "passes", s.passes);
    opm_diag_num(p, "loads_per_thread", s.streams);
    opm_diag_num(p, "dram_time_s", t_dram);
    opm_diag_num(p, "stream_time_s", t_stream);
    opm_diag_num(p, "l2_time_s", t_l2);
    opm_diag_num(p, "chain_time_s", t_chain);
    opm_diag_num(p, "memory_time_s", t_mem);
    opm_diag_num(p, "cta_launch_time_s", t_launch);
    opm_diag_num(p, "compute_time_s", t_vec);
    opm_diag_num(p, "overhead_s", h.fixed_s);
    opm_diag_num(p, "l2_input_fraction", f_in);
    opm_diag_num(p, "l2_store_fraction", held);
    opm_diag_num(p, "reread_dram_fraction", reread_miss);
    return 0;
}
