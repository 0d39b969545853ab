/* kernel_names.c — what a GEMM kernel's name says about the kernel: CTA
 * tile, K depth, pipeline stages, split-K and instruction family, for the
 * naming schemes of cuBLAS (sm90_xmma_*, ampere_*gemm_*), cuBLASLt (nvjet_*),
 * CUTLASS (cutlass_NN_*, cutlass3x_*), hipBLASLt/Tensile (Cijk_*_MT*) and
 * Triton (matmul_ogs).  The schemes and the examples each rule was checked
 * on are in docs/trace.md, "Kernel names as hints".
 *
 * Names are split into tokens at '_', '<', '>', '(', ')', ':' and ','; a
 * dimension token is an optional lower/upper-case prefix followed by
 * integers joined by 'x' ("tilesize128x128x64", "MT256x128x64", "64x6"). */
#include <string.h>
#include "trace_internal.h"
#include "opmodel/trace_analysis.h"

#define MAX_DIMS 4
#define TILE_MAX 4096     /* the models' own hint bounds (gemm_tiled.c) */
#define STAGES_MAX 32
#define SPLIT_MAX 1024

typedef struct tok {
    const char *p;
    size_t n;
} tok;

static int is_sep(char c)
{
    return c == '_' || c == '<' || c == '>' || c == '(' || c == ')' || c == ':' || c == ',' || c == ' ';
}

/* The next token at or after *s; 0 at the end. */
static int next_tok(const char **s, tok *t)
{
    const char *p = *s;
    while (*p && is_sep(*p)) p++;
    if (!*p) return 0;
    const char *q = p;
    while (*q && !is_sep(*q)) q++;
    t->p = p;
    t->n = (size_t)(q - p);
    *s = q;
    return 1;
}

/* When the token is `prefix` (exact case) followed by 1..MAX_DIMS integers
 * joined by 'x', their count (values in v); else 0.  Each integer is
 * 1..TILE_MAX. */
static int tok_dims(const tok *t, const char *prefix, int *v)
{
    size_t pl = strlen(prefix);
    if (t->n <= pl || memcmp(t->p, prefix, pl)) return 0;
    size_t i = pl;
    int n = 0;
    for (;;) {
        if (i >= t->n || t->p[i] < '0' || t->p[i] > '9') return 0;
        long x = 0;
        while (i < t->n && t->p[i] >= '0' && t->p[i] <= '9') {
            x = x * 10 + (t->p[i] - '0');
            if (x > TILE_MAX) return 0;
            i++;
        }
        if (x < 1 || n == MAX_DIMS) return 0;
        v[n++] = (int)x;
        if (i == t->n) return n;
        if (t->p[i] != 'x') return 0;
        i++;
    }
}

/* Token text starts with s. */
static int tok_starts(const tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->n >= n && !memcmp(t->p, s, n);
}

static void set_tile(opm_trace_kernel_hint *h, int first, int second, int col_major)
{
    h->column_major = col_major;
    /* Column-major libraries compute C^T = B^T A^T for a row-major C: their
     * m runs along the op's N. */
    h->tile_m = col_major ? second : first;
    h->tile_n = col_major ? first : second;
}

/* The digits right after `key` in the name ("stage4", "GSU4"), 0 when absent. */
static int int_after(const char *name, const char *key, int max)
{
    for (const char *p = strstr(name, key); p; p = strstr(p + 1, key)) {
        const char *q = p + strlen(key);
        long x = 0;
        int digits = 0;
        while (*q >= '0' && *q <= '9' && x <= max) x = x * 10 + (*q++ - '0'), digits++;
        if (digits && x >= 1 && x <= max && (is_sep(*q) || !*q)) return (int)x;
    }
    return 0;
}

/* cuBLAS xmma: sm90_xmma_gemm_<types>_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_...
 * (sm80: ..._tilesize160x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel). */
static int parse_xmma(const char *name, opm_trace_kernel_hint *h)
{
    int arch = (name[0] == 's' && name[1] == 'm') ? int_after(name, "sm", 1000) : 0;
    const char *s = name;
    tok t;
    int v[MAX_DIMS];
    while (next_tok(&s, &t))
        if (tok_dims(&t, "tilesize", v) == 3) {
            h->library = "cublas";
            set_tile(h, v[0], v[1], 1);
            h->tile_k = v[2];
            h->stages = int_after(name, "_stage", STAGES_MAX);
            /* warpgroupsize AxBxC: the consumer warpgroups, 4 warps each;
             * sm80's warpsize AxBxC: the warps themselves. */
            const char *s2 = name;
            tok u;
            int w[MAX_DIMS];
            while (next_tok(&s2, &u)) {
                int nw = tok_dims(&u, "warpgroupsize", w), mul = 4;
                if (!nw) nw = tok_dims(&u, "warpsize", w), mul = 1;
                if (nw == 3 && w[0] * w[1] * w[2] * mul <= 32) {
                    h->warps = w[0] * w[1] * w[2] * mul;
                    break;
                }
            }
            if (strstr(name, "segment_k_off")) h->split_k = 1;
            h->instruction = arch >= 100 ? "tcgen05" : arch >= 90 ? "wgmma" : arch >= 70 ? "mma_sync" : NULL;
            return 1;
        }
    return 0;
}

/* cuBLASLt nvjet (Hopper and later): nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT:
 * tile 128x256, K depth 64, 4 stages, a 2x1 cluster.  The instruction
 * family is not in the name. */
static int parse_nvjet(const char *name, opm_trace_kernel_hint *h)
{
    const char *s = name;
    tok t;
    int v[MAX_DIMS], w[MAX_DIMS];
    while (next_tok(&s, &t))
        if (tok_dims(&t, "", v) == 2) {
            h->library = "cublaslt";
            set_tile(h, v[0], v[1], 1);
            tok u;
            if (next_tok(&s, &u) && tok_dims(&u, "", w) == 2 && w[1] <= STAGES_MAX) {
                h->tile_k = w[0];
                h->stages = w[1];
            }
            return 1;
        }
    return 0;
}

/* CUTLASS 2.x, as cuBLAS ships it (column-major):
 * cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8 —
 * tile 128x64, K depth 64, 6 stages; cutlass_80_wmma_tensorop_...,
 * cutlass_80_simt_sgemm_128x32_8x5_nn_align1.  CUTLASS 3.x
 * (cutlass3x_sm90_tensorop_gemm_..._128x256x64_1x2x1_0_tnn_...), used
 * directly by row-major callers (vLLM, PyTorch's rowwise scaled_mm): the
 * three-dim token is the tile, the next the cluster. */
static int parse_cutlass(const char *name, opm_trace_kernel_hint *h)
{
    const char *c = strstr(name, "cutlass3x_");
    int v3 = c != NULL;
    if (!c) c = strstr(name, "cutlass");
    if (!strstr(c, "gemm")) return 0;   /* fprop/dgrad/wgrad: convolutions */
    const char *s = strstr(c, "gemm");
    tok t;
    int v[MAX_DIMS], w[MAX_DIMS];
    while (next_tok(&s, &t)) {
        int n = tok_dims(&t, "", v);
        if (v3 && n == 3) {
            h->library = "cutlass";
            set_tile(h, v[0], v[1], 0);
            h->tile_k = v[2];
            int arch = int_after(c, "_sm", 1000);
            h->instruction = strstr(c, "simt") ? "simt" : arch >= 100 ? "tcgen05" : arch >= 90 ? "wgmma" : "mma_sync";
            return 1;
        }
        if (!v3 && n == 2) {
            tok u;
            const char *s2 = s;
            if (!next_tok(&s2, &u) || tok_dims(&u, "", w) != 2 || w[1] > STAGES_MAX) continue;
            h->library = "cutlass";
            set_tile(h, v[0], v[1], 1);
            h->tile_k = w[0];
            h->stages = w[1];
            h->instruction = strstr(c, "wmma") ? "wmma" : strstr(c, "tensorop") ? "mma_sync"
                           : strstr(c, "simt") ? "simt" : NULL;
            return 1;
        }
    }
    return 0;
}

/* hipBLASLt/Tensile: Cijk_Alik_Bljk_..._MT256x128x64_MI16x16x1_..._GSU4_...:
 * macro tile 256x128, depth 64; MI = MFMA (none: a SIMT kernel); GSU<n>
 * = global split-U, the split-K (GSUAMB / GSUAMBSK choose it at run time:
 * not said); WG<x>_<y>_<z> the workgroup's threads and WS<n> the wave
 * size, so WG16_16_1 with WS64 is 4 waves ("warps"). */
static int parse_tensile(const char *name, opm_trace_kernel_hint *h)
{
    const char *s = name;
    tok t;
    int v[MAX_DIMS + 3], have = 0, mfma = 0, wave = 64;
    long threads = 0;
    while (next_tok(&s, &t)) {
        if (!have && tok_dims(&t, "MT", v) == 3) {
            set_tile(h, v[0], v[1], 1);
            h->tile_k = v[2];
            have = 1;
        } else if (tok_starts(&t, "MI") && t.n > 2 && t.p[2] >= '0' && t.p[2] <= '9') {
            mfma = 1;
        } else if (tok_dims(&t, "WG", v + 3) == 1) {
            /* WG<x>_<y>_<z>: the workgroup's threads, split over tokens. */
            int y[MAX_DIMS], z[MAX_DIMS];
            tok u, w;
            const char *s2 = s;
            if (next_tok(&s2, &u) && tok_dims(&u, "", y) == 1 && next_tok(&s2, &w) && tok_dims(&w, "", z) == 1)
                threads = (long)v[3] * y[0] * z[0];
        } else if (tok_dims(&t, "WS", v + 3) == 1) {
            wave = v[3];
        } else if (tok_starts(&t, "GSU") && t.n > 3 && t.p[3] >= '0' && t.p[3] <= '9') {
            int g[MAX_DIMS];
            if (tok_dims(&t, "GSU", g) == 1 && g[0] <= SPLIT_MAX) h->split_k = g[0];
        }
    }
    if (!have) return 0;
    if (threads > 0 && wave > 0 && threads % wave == 0 && threads / wave <= 32) h->warps = (int)(threads / wave);
    h->library = "tensile";
    h->instruction = mfma ? "mfma" : "simt";
    return 1;
}

/* Triton matmul_ogs (triton_kernels, vLLM's MoE):
 * _matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu — BLOCK_M 16,
 * BLOCK_N 128, BLOCK_K 256, split-K 1; row-major. */
static int parse_triton(const char *name, opm_trace_kernel_hint *h)
{
    const char *s = strstr(name, "matmul_ogs");
    tok t;
    int v[MAX_DIMS];
    while (next_tok(&s, &t))
        if (tok_dims(&t, "", v) == 4) {
            if (v[3] > SPLIT_MAX) return 0;
            h->library = "triton";
            set_tile(h, v[0], v[1], 0);
            h->tile_k = v[2];
            h->split_k = v[3];
            return 1;
        }
    return 0;
}

/* cuBLAS's own kernels by architecture prefix: ampere_sgemm_128x64_nn
 * (SIMT), volta_sgemm_32x32_sliced1x4_nn,
 * ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn (K depth 64,
 * 3 stages), turing_h1688gemm_..., sm80_xmma is parse_xmma's. */
static int parse_cublas_arch(const char *name, opm_trace_kernel_hint *h)
{
    static const char *const archs[] = {"maxwell_", "pascal_", "volta_", "turing_", "ampere_", "ada_", "hopper_"};
    const char *rest = NULL;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0] && !rest; i++) {
        const char *p = strstr(name, archs[i]);
        if (p && (p == name || is_sep(p[-1]))) rest = p + strlen(archs[i]);
    }
    if (!rest) return 0;
    const char *g = strstr(rest, "gemm");
    if (!g) return 0;
    const char *s = g;
    tok t;
    int v[MAX_DIMS], w[MAX_DIMS];
    while (next_tok(&s, &t)) {
        int n = tok_dims(&t, "", v);
        if (n < 2) continue;
        h->library = "cublas";
        set_tile(h, v[0], v[1], 1);
        if (n == 3) h->tile_k = v[2];
        const char *st = strstr(s, "stages_");
        if (st) {
            const char *s2 = st + 7;
            tok u;
            if (next_tok(&s2, &u) && tok_dims(&u, "", w) == 2 && w[1] <= STAGES_MAX) {
                h->tile_k = w[0];
                h->stages = w[1];
            }
        }
        h->instruction = strstr(rest, "sgemm") || strstr(rest, "dgemm") ? "simt" : "mma_sync";
        return 1;
    }
    return 0;
}

int opm_trace_parse_kernel_name(const char *name, opm_trace_kernel_hint *out)
{
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    if (!name) return 0;
    opm_trace_kernel_hint h = {0};
    int ok = strstr(name, "nvjet_") ? parse_nvjet(strstr(name, "nvjet_") + 6, &h)
           : strstr(name, "xmma_gemm") ? parse_xmma(strstr(name, "sm") ? strstr(name, "sm") : name, &h)
           : strstr(name, "cutlass") ? parse_cutlass(name, &h)
           : strstr(name, "Cijk_") ? parse_tensile(strstr(name, "Cijk_"), &h)
           : strstr(name, "matmul_ogs") ? parse_triton(name, &h)
           : parse_cublas_arch(name, &h);
    if (!ok) return 0;
    *out = h;
    return 1;
}
