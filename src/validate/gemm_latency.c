/* gemm_latency.c — loading measured GEMM latency CSVs (contract §4), the
 * contract §5 size classes, fixed-overhead calibration and held-out error
 * statistics for `opmodel validate-gemm-latency`.
 *
 * Calibration groups are (hardware, source tag), the tag being the `source`
 * column up to its first '/' ("neusight:bmm", "neusight:linear",
 * "deepbench:train").  data/README.md shows why one overhead per hardware is
 * not enough: the same GPU's measured floor is ~30 µs for NeuSight bmm,
 * ~50–90 µs for NeuSight linear (PyTorch addmm dispatch) and 5–16 µs for
 * DeepBench (400 back-to-back calls); the timing convention, not the GPU,
 * sets it.  Rows without a source form one group per hardware.
 *
 * The calibration set is deterministic and model-independent: in each
 * group, the `small` and `vector_like` rows of at most CAL_MAX_FLOPS sorted
 * by (FLOPs, m, n, k, batch, file order), of which the first CAL_PER_GROUP
 * (at most half of them) are used.  A group without such rows borrows the
 * median overhead of, in order: groups of the same source family
 * ("deepbench") on the same hardware; the same tag on other hardware; the
 * same family on other hardware; else the hardware file's value.  The
 * overhead is the median of measured − predicted over those rows (robust
 * to a stray row), bounded below by 0.  Every other row is held out and
 * scored.  The overhead does not simply add: part of a timed call's host
 * time runs while the kernel does, a fraction OPM_GEMM_HOST_OVERLAP of the
 * group's floor (the median measured time of its calibration rows), so a
 * row is predicted as overhead + max(overlap, kernel) and the overhead is
 * the median of measured − max(overlap, kernel).  A group that borrows its
 * overhead borrows its overlap from the same groups.
 *
 * A row's kernel column gives hints: a cuBLAS SIMT sgemm name its tile, a
 * Composable Kernel XDL instance (aiter's labels) its tile, waves and
 * pipeline depth, and vLLM's `cutlass` `scaled_mm` on a wgmma part the tile
 * of vLLM's sm90 fp8 dispatch.  The two constants that time fp8 activation quantisation are
 * refitted here too (opm_gemm_refit_constants): a grid over their bounds on
 * every hardware and without each one, from per-row terms, no new
 * predictions.
 *
 * The models' power cap credits a call's fixed overhead as idle time, so
 * once the overheads are known the rows a cap may limit are predicted again
 * on their hardware carrying their group's overhead
 * (opm_gemm_repredict_with_overhead); calibration rows are far below any
 * cap, so the overheads do not move.  A row's clock_mhz, when given, sets
 * the SM clock it is predicted at (opm_hardware_with_clock).  Leave-one-
 * hardware-out holds each hardware out in turn, all its rows scored with
 * overheads borrowed from the others. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"
#include "../hardware/hw_internal.h"
#include "csv.h"
#include "gemm_latency.h"
#include "../models/gemm_tiled.h"

#define CAL_PER_GROUP 8
/* Calibration rows must be overhead-dominated: 2·b·m·n·k ≤ 2^26 FLOPs is at
 * most ~12 µs of math on the slowest GPU here (P4, 5.5 TFLOPS fp32), and
 * under 4 µs on the others, against measured floors of 5–90 µs. */
#define CAL_MAX_FLOPS 67108864.0

const char *const opm_gemm_class_names[GC_COUNT] = {"vector_like", "small", "skinny", "small_k", "large", "regular"};

int opm_gemm_size_class(double batch, double m, double n, double k)
{
    double lo = m < n ? m : n, hi = m < n ? n : m;
    if (m == 1 && n > 1 && k > 1) return GC_VECTOR_LIKE;
    if (m * n <= 4096) return GC_SMALL;
    if (lo <= 64 && hi / lo >= 8) return GC_SKINNY;
    if (k <= 32) return GC_SMALL_K;
    if (m * n >= 1048576 || 2 * batch * m * n * k >= 1e12) return GC_LARGE;
    return GC_REGULAR;
}

/* ---- loading ---- */

/* Index of hardware `name` in the dataset, its description opened (NULL
 * when it cannot be) and its name kept whole (a hardware given as a long
 * file path is one entry however many rows name it); -2 when out of memory. */
static int hw_index(opm_gemm_dataset *ds, const char *name)
{
    uint32_t id = opm_strtab_intern(&ds->hw_tab, name, strlen(name));
    if (id == UINT32_MAX || id > INT32_MAX) return -2;
    ds->hw_names = ds->hw_tab.strs;
    if (id < ds->n_hw) return (int)id;
    if (opm_array_grow((void **)&ds->hw, &ds->hw_cap, ds->n_hw + 1, sizeof *ds->hw)) return -2;
    ds->hw[id] = opm_hardware_open(name, NULL);
    ds->n_hw = id + 1;
    return (int)id;
}

/* The group "hardware|tag" of hardware hw, found by the exact key (hw's
 * index, tag), so that a '|' in a name cannot merge two groups; the name is
 * built only for a new group.  -1 when out of memory. */
static int group_index(opm_gemm_dataset *ds, int hw, const char *tag)
{
    size_t tl = strlen(tag);
    char stack[128], *key = tl + sizeof hw <= sizeof stack ? stack : malloc(tl + sizeof hw);
    if (!key) return -1;
    memcpy(key, &hw, sizeof hw);
    memcpy(key + sizeof hw, tag, tl);
    uint32_t id = opm_strtab_intern(&ds->group_tab, key, tl + sizeof hw);
    if (key != stack) free(key);
    if (id == UINT32_MAX || id > INT32_MAX) return -1;
    if (id < ds->n_groups) return (int)id;
    if (opm_array_grow((void **)&ds->group_names, &ds->group_names_cap, ds->n_groups + 1, sizeof *ds->group_names) ||
        opm_array_grow((void **)&ds->group_hw, &ds->group_hw_cap, ds->n_groups + 1, sizeof *ds->group_hw))
        return -1;
    size_t hl = ds->hw_tab.lens[hw];
    char *name = malloc(hl + tl + 2);
    if (!name) return -1;
    memcpy(name, ds->hw_names[hw], hl);
    name[hl] = '|';
    memcpy(name + hl + 1, tag, tl + 1);
    ds->group_names[id] = name;
    ds->group_hw[id] = hw;
    ds->n_groups = id + 1;
    return (int)id;
}

const char *const opm_gemm_col_names[OPM_GCOL_COUNT] = {
    "hardware", "dtype", "batch", "m", "n", "k", "transpose_a", "transpose_b", "bias", "latency_us", "source", "kernel",
    "clock_mhz", "threads_per_cta", "split_k", "activation_quant", "l2_warm", "timing", "energy_j",
    "operand_copies"};

static const char *const act_quant_names[] = {"none", "static", "dynamic", "dynamic_block", "block", NULL};
static const char *const l2_warm_names[] = {"none", "input", "weight", "all", NULL};
static const char *const timing_names[] = {"", "graph", "eager", "kernel", "events", NULL};

/* Index of f in the NULL-terminated names, or -1. */
static int name_index(const char *f, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(f, names[i])) return i;
    return -1;
}

/* The warps of a kernel and the tile one warp computes.  Without a recorded
 * block size (threads = 0) a kernel is taken to use 8x8 thread tiles (64
 * outputs per thread), a sliced one 4 warps.  Sliced kernels ("sliced1x4",
 * and the old 32x32x32 ones) split the K tile four ways, each slice's warps
 * covering the whole tile.  A warp's tile is the squarest power-of-two
 * split of its outputs that fits the CTA tile. */
static void kernel_warps(opm_gemm_row *r, int sliced, long outputs_8x8_warps, long threads, long lanes)
{
    const int slices = 4;
    long warps = threads > 0 ? (threads + lanes - 1) / lanes : sliced ? slices : outputs_8x8_warps;
    if (warps < 1) warps = 1;
    long per_slice = sliced ? (warps >= slices ? warps / slices : 1) : warps;
    double outputs = (double)r->kern_tm * r->kern_tn / (double)per_slice;
    long wn = 1;
    while (wn < r->kern_tn && (double)wn * wn < outputs) wn *= 2;
    long wm = (long)(outputs / (double)wn);
    if (wm > r->kern_tm) {
        wm = r->kern_tm;
        wn = (long)(outputs / (double)wm);
    }
    r->kern_warps = (int16_t)warps;
    r->kern_wm = (int16_t)(wm < 1 ? 1 : wm);
    r->kern_wn = (int16_t)(wn < 1 ? 1 : wn);
}

/* cuBLAS SIMT sgemm names give the tile as <cuBLAS m>x<cuBLAS n>; cuBLAS is
 * column-major, so its m tiles our n (data/README.md checks this against
 * the launch grids).  `threads` is the recorded launch block (the
 * threads_per_cta column, 0 when not given): NeuSight's records show that
 * the name does not fix it (the 128x32 and 32x128 kernels run 256 threads,
 * 4x4 outputs per thread; the 64x32 and 128x32 sliced ones 8 warps). */
/* Composable Kernel's XDL GEMM instances (aiter's CK kernels: the label
 * "a8w8_blockscale:ck:256x16x64x256", "bf16:256x128x128x64") name their
 * template's leading parameters BlockSize x MPerBlock x NPerBlock x
 * KPerBlock, in CK's row-major terms (A[M,K], B[N,K]), which are ours.  XDL
 * instances run MFMA on CDNA's 64-lane wavefronts, and their pipelines
 * (v1..v3: one K tile loaded while the LDS one is computed) are two
 * stages deep.  A token of exactly four numbers whose first is a block size
 * (a multiple of 64 up to 1024); 1 when found. */
static int parse_ck_instance(const char *name, opm_gemm_row *r)
{
    for (const char *p = name; *p; p++) {
        if (*p < '0' || *p > '9' || (p > name && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == 'x'))) continue;
        long v[4];
        int n = 0;
        const char *q = p;
        char *end;
        while (n < 4) {
            v[n++] = strtol(q, &end, 10);
            if (*end != 'x' || end[1] < '0' || end[1] > '9') break;
            q = end + 1;
        }
        if (n != 4 || *end == 'x' || (*end >= '0' && *end <= '9')) continue;
        if (v[0] < 64 || v[0] > 1024 || v[0] % 64) continue;
        if (v[1] < 1 || v[1] > 1024 || v[2] < 1 || v[2] > 1024 || v[3] < 1 || v[3] > 1024) continue;
        r->kern_tm = (int16_t)v[1];
        r->kern_tn = (int16_t)v[2];
        r->kern_tk = (int16_t)v[3];
        kernel_warps(r, 0, 0, v[0], 64);
        r->kern_stages = 2;
        return 1;
    }
    return 0;
}

int opm_gemm_parse_kernel(const char *name, long threads, opm_gemm_row *r)
{
    r->kern_tm = 0;
    r->kern_stages = 0;
    /* vLLM's CUTLASS fp8 scaled_mm dispatches fixed tile configurations by
     * M and never splits K: the catalog at split_k 1. */
    r->no_split = strstr(name, "cutlass") && strstr(name, "scaled_mm");
    const char *p = strstr(name, "sgemm_");
    if (!p) return parse_ck_instance(name, r);
    p += 6;
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || *end != 'x') return 0;
    long b = strtol(end + 1, &end, 10), c = 0;
    if (*end == 'x') c = strtol(end + 1, &end, 10);
    if (a < 8 || b < 8 || a > 512 || b > 512 || c < 0 || c > 256) return 0;
    if (threads < 0 || threads > 1024) threads = 0;
    int sliced = strstr(name, "sliced") != NULL || c >= 32;
    r->kern_tm = (int16_t)b;
    r->kern_tn = (int16_t)a;
    r->kern_tk = (int16_t)(c ? c : sliced ? 32 : 8);
    kernel_warps(r, sliced, a * b / 2048, threads, 32);
    r->kern_splitk = strstr(name, "splitk") != NULL;
    return 1;
}

/* An integer in [lo, hi], the whole field; 0, or -1 when it is not one. */
static int parse_count(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) return -1;
    *v = x;
    return 0;
}

/* The field of column c when the row has it and it is not empty. */
static const char *opt_field(char *const *fld, int nf, const int *col, int c)
{
    return col[c] >= 0 && col[c] < nf && fld[col[c]][0] ? fld[col[c]] : NULL;
}

int opm_gemm_row_read(char *const *fld, int nf, const int *col, opm_gemm_row *r, const char **want)
{
    memset(r, 0, sizeof *r);
    *want = "a value in every column";
    for (int c = 0; c < OPM_GCOL_REQUIRED; c++)
        if (col[c] >= nf) return c;
    int64_t v[7];
    for (int c = OPM_GCOL_BATCH; c <= OPM_GCOL_BIAS; c++) {
        int flag = c >= OPM_GCOL_TA;
        if (parse_count(fld[col[c]], flag ? 0 : 1, flag ? 1 : INT64_C(1) << 40, &v[c - OPM_GCOL_BATCH])) {
            *want = flag ? "0 or 1" : "a positive integer";
            return c;
        }
    }
    if (opm_dtype_parse(fld[col[OPM_GCOL_DTYPE]], &r->dtype)) {
        *want = "a dtype name (fp32, fp16, bf16, int8, ...)";
        return OPM_GCOL_DTYPE;
    }
    char *end;
    const char *f = fld[col[OPM_GCOL_LAT]];
    double lat = strtod(f, &end);
    if (end == f || *end || !(lat > 0) || !isfinite(lat)) {
        *want = "a positive number of microseconds";
        return OPM_GCOL_LAT;
    }
    if ((f = opt_field(fld, nf, col, OPM_GCOL_CLOCK))) {
        double mhz = strtod(f, &end);
        if (end == f || *end || !(mhz >= OPM_GEMM_MIN_CLOCK_MHZ && mhz <= OPM_GEMM_MAX_CLOCK_MHZ)) {
            *want = "a clock from 1 to 100000 MHz, or nothing";
            return OPM_GCOL_CLOCK;
        }
        r->clock_hz = mhz * 1e6;
    }
    int64_t threads = 0, split = 0;
    if ((f = opt_field(fld, nf, col, OPM_GCOL_THREADS)) && parse_count(f, 1, 1024, &threads)) {
        *want = "a thread count from 1 to 1024, or nothing";
        return OPM_GCOL_THREADS;
    }
    if ((f = opt_field(fld, nf, col, OPM_GCOL_SPLIT)) && parse_count(f, 1, 1024, &split)) {
        *want = "a K-slice count from 1 to 1024, or nothing";
        return OPM_GCOL_SPLIT;
    }
    int64_t copies = 0;
    if ((f = opt_field(fld, nf, col, OPM_GCOL_COPIES)) && parse_count(f, 1, 1024, &copies)) {
        *want = "an operand copy count from 1 to 1024, or nothing";
        return OPM_GCOL_COPIES;
    }
    r->copies = (int16_t)copies;
    static const struct { int col; const char *const *names; const char *want; } harness[3] = {
        {OPM_GCOL_ACT_QUANT, act_quant_names, "none, static, dynamic, dynamic_block or block, or nothing"},
        {OPM_GCOL_L2_WARM, l2_warm_names, "none, input, weight or all, or nothing"},
        {OPM_GCOL_TIMING, timing_names, "graph, eager, kernel or events, or nothing"},
    };
    unsigned char *dst[3] = {&r->act_quant, &r->l2_warm, &r->timing};
    for (int h = 0; h < 3; h++) {
        if (!(f = opt_field(fld, nf, col, harness[h].col))) continue;
        int idx = name_index(f, harness[h].names);
        if (idx < 0) {
            *want = harness[h].want;
            return harness[h].col;
        }
        *dst[h] = (unsigned char)idx;
    }
    if ((f = opt_field(fld, nf, col, OPM_GCOL_ENERGY))) {
        char *stop;
        r->energy_j = strtod(f, &stop);
        if (*stop || !(r->energy_j > 0) || !isfinite(r->energy_j)) {
            *want = "a positive energy in joules, or nothing";
            return OPM_GCOL_ENERGY;
        }
    }
    r->batch = v[0], r->m = v[1], r->n = v[2], r->k = v[3];
    r->ta = (int)v[4], r->tb = (int)v[5], r->bias = (int)v[6];
    r->latency_s = lat * 1e-6;
    r->split_k = (int16_t)split;
    r->cls = opm_gemm_size_class((double)r->batch, (double)r->m, (double)r->n, (double)r->k);
    if (col[OPM_GCOL_KERNEL] >= 0 && col[OPM_GCOL_KERNEL] < nf)
        opm_gemm_parse_kernel(fld[col[OPM_GCOL_KERNEL]], (long)threads, r);
    return -1;
}

/* A copy cut at a fixed size may end inside a UTF-8 character: drop that
 * incomplete tail, so a valid source column gives valid group names in the
 * table and CSV outputs too (the JSON ones mend any bad bytes anyway). */
static void utf8_drop_cut_tail(char *s)
{
    size_t n = strlen(s), i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (n - (i - 1) < want) s[i - 1] = '\0';
}

static int load_file(const char *path, opm_gemm_dataset *ds, opm_error *err)
{
    opm_csv in;
    int rc = opm_csv_open(&in, path, "--data-dir", err);
    if (!rc) rc = opm_csv_read(&in, err);
    if (rc || in.nf == 0) {
        opm_csv_close(&in);
        return rc; /* an empty file holds no rows */
    }
    int col[OPM_GCOL_COUNT];
    opm_csv_columns(&in, opm_gemm_col_names, OPM_GCOL_COUNT, col);
    for (int c = 0; c < OPM_GCOL_REQUIRED; c++)
        if (col[c] < 0) {
            rc = opm_err(err, OPM_EINVAL, "--data-dir", "%s:%zu: expected a '%s' column (contract §4 header)", path,
                         in.line, opm_gemm_col_names[c]);
            opm_csv_close(&in);
            return rc;
        }
    while (!(rc = opm_csv_read(&in, err)) && in.nf) {
        char **fld = in.fld;
        int nf = in.nf;
        opm_gemm_row r;
        const char *want;
        /* A field that cannot be read makes the row a bad one; the first
         * bad row of the run is kept to be reported. */
        int bad = opm_gemm_row_read(fld, nf, col, &r, &want);
        if (bad >= 0) {
            if (!ds->rows_bad++)
                snprintf(ds->first_bad, sizeof ds->first_bad, "%s:%zu: %s: expected %s, got '%.40s'", path, in.line,
                         opm_gemm_col_names[bad], want, col[bad] < nf ? fld[col[bad]] : "");
            continue;
        }
        r.hw = hw_index(ds, fld[col[OPM_GCOL_HW]]);
        if (r.hw == -2) { rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory"); break; }
        if (!ds->hw[r.hw]) { ds->rows_unknown_hw++; continue; }
        char tag[64] = "";
        if (col[OPM_GCOL_SOURCE] >= 0 && col[OPM_GCOL_SOURCE] < nf) {
            opm_strlcpy(tag, fld[col[OPM_GCOL_SOURCE]], sizeof tag);
            if (strlen(fld[col[OPM_GCOL_SOURCE]]) >= sizeof tag) utf8_drop_cut_tail(tag);
            char *slash = strchr(tag, '/');
            if (slash) *slash = '\0';
        }
        r.group = group_index(ds, r.hw, tag);
        if (r.group < 0) { rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory"); break; }
        if (opm_array_grow((void **)&ds->rows, &ds->cap, ds->n_rows + 1, sizeof *ds->rows)) {
            rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
            break;
        }
        ds->rows[ds->n_rows++] = r;
    }
    opm_csv_close(&in);
    return rc;
}

int opm_gemm_dataset_load(const char *dir, opm_gemm_dataset *ds, opm_error *err)
{
    memset(ds, 0, sizeof *ds);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = opm_csv_list_dir(dir, "--data-dir", &paths, &n, &cap, err);
    for (size_t i = 0; i < n; i++) {
        if (!rc) {
            rc = load_file(paths[i], ds, err);
            ds->files++;
        }
        free(paths[i]);
    }
    free(paths);
    if (!rc && ds->files == 0)
        rc = opm_err(err, OPM_EINVAL, "--data-dir", "no *.csv files under '%s'", dir);
    if (rc) opm_gemm_dataset_free(ds);
    return rc;
}

void opm_gemm_dataset_free(opm_gemm_dataset *ds)
{
    for (size_t i = 0; i < ds->n_hw; i++) opm_hardware_free(ds->hw[i]);
    free(ds->hw);
    free(ds->rows);
    for (size_t g = 0; g < ds->n_groups; g++) free(ds->group_names[g]);
    free(ds->group_names);
    free(ds->group_hw);
    opm_strtab_free(&ds->hw_tab);
    opm_strtab_free(&ds->group_tab);
    memset(ds, 0, sizeof *ds);
}

/* ---- predictions ---- */

/* What a row's activation_quant says the timed op did: quantisation
 * kernels before the GEMM (static, dynamic, dynamic_block), and block
 * scales of the fp8 operands (block, dynamic_block: 1x128 activation
 * groups, 128x128 weight blocks). */
static int harness_attrs(opm_op *op, const opm_gemm_row *r, opm_error *err)
{
    int blocks = r->act_quant == OPM_GAQ_BLOCK || r->act_quant == OPM_GAQ_DYNAMIC_BLOCK;
    int64_t ab[2] = {1, 128}, bb[2] = {128, 128};
    if (r->act_quant != OPM_GAQ_BLOCK &&
        opm_op_set_string(op, "activation_quant", act_quant_names[r->act_quant], err))
        return -1;
    if (blocks && (opm_op_set_string(op, "scale_a", "block", err) || opm_op_set_string(op, "scale_b", "block", err) ||
                   opm_op_set_ints(op, "scale_block_a", ab, 2, err) || opm_op_set_ints(op, "scale_block_b", bb, 2, err)))
        return -1;
    return 0;
}

/* The CUTLASS kernel vLLM's fp8 `cutlass_scaled_mm` runs on Hopper (wgmma)
 * for a row: its public sm90 dispatch (csrc/.../c3x/
 * scaled_mm_sm90_fp8_dispatch.cuh) picks a fixed configuration by M (and N,
 * K), never splits K and runs its tiles data-parallel.  For M <= 64 it
 * swaps A and B so that the weight's N fills wgmma's 64-row side and M is
 * the instruction's N: a tile of 16 (or 64) rows of M by 64 of N, K depth
 * 256, one producer and one consumer warpgroup.  Above, 64x128 (M <= 128),
 * 256x128 (M >= 8192 with K >= 6144, cooperative) or 128x128 ping-pong
 * tiles, K depth 128, one producer and two consumer warpgroups.  t[] gets
 * the CTA tile M, N, K, the warps and the warp tile M, N (the warp tile
 * only sizes the accumulators, as in the wgmma catalog). */
static void vllm_sm90_fp8_kernel(const opm_gemm_row *r, int t[6])
{
    static const int cfg[5][6] = {
        {16, 64, 256, 8, 16, 16},    /* M <= 16, or (16, 64] with N <= 1280: swapped */
        {64, 64, 256, 8, 32, 32},    /* (16, 64], N > 1280: swapped */
        {64, 128, 128, 12, 32, 64},  /* (64, 128] */
        {256, 128, 128, 12, 64, 64}, /* M >= 8192, K >= 6144: cooperative */
        {128, 128, 128, 12, 32, 64}, /* the rest: ping-pong */
    };
    int c = r->m <= 16 || (r->m <= 64 && r->n <= 1280) ? 0 : r->m <= 64 ? 1 : r->m <= 128 ? 2
          : r->m >= 8192 && r->k >= 6144 ? 3 : 4;
    memcpy(t, cfg[c], sizeof cfg[c]);
}

/* The smallest power of two >= v (v >= 1), as vLLM's next_pow_2. */
static int64_t next_pow2(int64_t v)
{
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

/* The CUTLASS 2.x kernel vLLM's fp8 `cutlass_scaled_mm` runs on Ada (sm89,
 * mma.sync) for a row: its public dispatch (csrc/.../cutlass_w8a8/c2x/
 * scaled_mm_c2x_sm89_fp8_dispatch.cuh) buckets M by max(16, next power of
 * two) — 16, 32, 64, 128, 256, above — and each bucket picks a tile by the
 * next power of two of N (np2), never by searching and never splitting K.
 * Warp tiles are 64 deep in K, so a 128-deep CTA tile has its K sliced
 * between two warp sets: CUTLASS 2.x counts warps as CTA tile / warp tile
 * in M, N and K.  Every configuration fits the 99 KiB a CTA may opt into on
 * sm89, so vLLM's 64x128x64 fallback never runs there.  t[] gets the CTA
 * tile M, N, K, the warps, the warp tile M, N and the pipeline stages. */
static void vllm_sm89_fp8_kernel(const opm_gemm_row *r, int t[7])
{
    /* {tm, tn, tk, wm, wn, stages} */
    static const int cfg[][6] = {
        {16, 64, 128, 16, 64, 5},   /* 0: M16, np2 <= 8192 */
        {16, 128, 64, 16, 64, 5},   /* 1: M16, np2 <= 24576 */
        {32, 64, 128, 16, 64, 5},   /* 2: M16 above; M32 np2 <= 8192 or > 16384 */
        {32, 128, 128, 32, 64, 4},  /* 3: M32, np2 <= 16384 */
        {64, 64, 128, 32, 64, 5},   /* 4: M64, np2 <= 8196 (sic) or > 16384 */
        {64, 128, 128, 64, 64, 3},  /* 5: M64 np2 <= 16384; M128 <= 8192; M256 <= 4096 */
        {128, 128, 64, 64, 64, 5},  /* 6: M128 np2 <= 16384; M256 above; default <= 4096 or > 8192 */
        {128, 64, 128, 64, 64, 3},  /* 7: M128, np2 > 16384 */
        {256, 128, 64, 64, 64, 3},  /* 8: default, np2 <= 8192 */
    };
    int64_t mp2 = next_pow2(r->m < 16 ? 16 : r->m), np2 = next_pow2(r->n);
    int c;
    if (mp2 <= 16) c = np2 <= 8192 ? 0 : np2 <= 24576 ? 1 : 2;
    else if (mp2 <= 32) c = np2 <= 8192 ? 2 : np2 <= 16384 ? 3 : 2;
    else if (mp2 <= 64) c = np2 <= 8196 ? 4 : np2 <= 16384 ? 5 : 4;
    else if (mp2 <= 128) c = np2 <= 8192 ? 5 : np2 <= 16384 ? 6 : 7;
    else if (mp2 <= 256) c = np2 <= 4096 ? 5 : 6;
    else c = np2 <= 4096 ? 6 : np2 <= 8192 ? 8 : 6;
    const int *k = cfg[c];
    t[0] = k[0];
    t[1] = k[1];
    t[2] = k[2];
    t[3] = (k[0] / k[3]) * (k[1] / k[4]) * (k[2] / 64);
    t[4] = k[3];
    t[5] = k[4];
    t[6] = k[5];
}

/* Kernel hints for vLLM's fp8 CUTLASS kernels: sm90 on wgmma parts, sm89
 * on mma.sync parts (the stages only there: wgmma kernels fill the shared
 * memory). */
static int vllm_hints(opm_op *op, const opm_gemm_row *r, int sm89, opm_error *err)
{
    static const char *const keys[7] = {"cta_tile_m", "cta_tile_n", "cta_tile_k", "warps_per_cta", "warp_tile_m",
                                        "warp_tile_n", "pipeline_stages"};
    int t[7];
    if (sm89)
        vllm_sm89_fp8_kernel(r, t);
    else
        vllm_sm90_fp8_kernel(r, t);
    for (int i = 0; i < (sm89 ? 7 : 6); i++)
        if (opm_op_set_int(op, keys[i], t[i], err)) return -1;
    return 0;
}

static opm_op *row_op(const opm_gemm_row *r, const opm_hardware *hw, int hints, opm_error *err)
{
    int batched = r->batch > 1;
    opm_op *op = opm_op_new("gemm", batched ? OPM_KIND_BATCHED_GEMM : OPM_KIND_GEMM, OPM_PHASE_INFERENCE, err);
    if (!op) return NULL;
    int64_t a[3], b[3], c[3];
    int rk = batched ? 3 : 2, o = batched ? 1 : 0;
    a[0] = b[0] = c[0] = r->batch;
    a[o] = r->ta ? r->k : r->m;
    a[o + 1] = r->ta ? r->m : r->k;
    b[o] = r->tb ? r->n : r->k;
    b[o + 1] = r->tb ? r->k : r->n;
    c[o] = r->m;
    c[o + 1] = r->n;
    /* vLLM's fp8 CUTLASS kernels on a part whose entry names wgmma (sm90) or
     * mma_sync (sm89): their tiles as hints.  matrix_instruction is the index
     * in opm_hw_matrix_names (GEMM_MI_* order) plus one, 0 when not given. */
    int mi = hw ? gemm_hw_named_family(hw) : -1;
    int vllm_sm90 = mi == GEMM_MI_WGMMA && (r->dtype == OPM_FP8_E4M3 || r->dtype == OPM_FP8_E5M2);
    /* sm89's dispatch takes e4m3 only. */
    int vllm_sm89 = mi == GEMM_MI_MMA_SYNC && r->dtype == OPM_FP8_E4M3;
    /* fp8 GEMMs, and the int8 ones of the tensor-core sets, write bf16 (every
     * such source does); DeepBench's int8 GEMMs write int32 as given. */
    int wide_out = r->dtype == OPM_FP8_E4M3 || r->dtype == OPM_FP8_E5M2 || (r->dtype == OPM_INT8 && r->timing);
    if (opm_op_add_tensor(op, OPM_ROLE_INPUT, a, rk, r->dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_WEIGHT, b, rk, r->dtype, NULL, err) ||
        opm_op_add_tensor(op, OPM_ROLE_OUTPUT, c, rk, wide_out ? OPM_BF16 : r->dtype, NULL, err) ||
        (r->ta && opm_op_set_bool(op, "transpose_a", 1, err)) ||
        (r->tb && opm_op_set_bool(op, "transpose_b", 1, err)) ||
        (r->bias && opm_op_set_bool(op, "bias", 1, err)) ||
        (r->act_quant && harness_attrs(op, r, err)) ||
        (r->l2_warm && opm_op_set_string(op, "l2_warm", l2_warm_names[r->l2_warm], err)) ||
        (r->copies && opm_op_set_int(op, "operand_copies", r->copies, err)) ||
        (hints && r->no_split && !r->kern_tm && opm_op_set_int(op, "split_k", 1, err)) ||
        (hints && r->no_split && !r->kern_tm && (vllm_sm90 || vllm_sm89) && vllm_hints(op, r, vllm_sm89, err)) ||
        (hints && r->kern_tm &&
         (opm_op_set_int(op, "cta_tile_m", r->kern_tm, err) || opm_op_set_int(op, "cta_tile_n", r->kern_tn, err) ||
          opm_op_set_int(op, "cta_tile_k", r->kern_tk, err) || opm_op_set_int(op, "warps_per_cta", r->kern_warps, err) ||
          opm_op_set_int(op, "warp_tile_m", r->kern_wm, err) || opm_op_set_int(op, "warp_tile_n", r->kern_wn, err) ||
          (r->kern_stages > 0 && opm_op_set_int(op, "pipeline_stages", r->kern_stages, err)) ||
          (r->split_k > 0 && opm_op_set_int(op, "split_k", r->split_k, err))))) {
        opm_op_free(op);
        return NULL;
    }
    return op;
}

/* The hardware a row is predicted on: its hardware at the row's clock
 * and, when the caller gives per-group overheads, with its group's
 * overhead as device_fixed_overhead_cycles.  A copy is made once per
 * (hardware, clock) and kept in a small list; the group's overhead is set
 * on it for each row (the rows are predicted one after another), so many
 * groups cost no memory. */
typedef struct row_hw {
    int hw;
    double clock_hz;             /* 0: the hardware's clock */
    opm_hardware *h;             /* NULL: that clock is not valid for it */
} row_hw;

static int hw_for_row(const opm_gemm_dataset *ds, const opm_gemm_row *r, const double *group_overhead_s,
                      row_hw **cache, size_t *n, const opm_hardware **out)
{
    int group = group_overhead_s ? r->group : -1;
    *out = ds->hw[r->hw];
    if (group < 0 && !(r->clock_hz > 0)) return 0;
    opm_hardware *h = NULL;
    size_t i = 0;
    while (i < *n && !((*cache)[i].hw == r->hw && (*cache)[i].clock_hz == r->clock_hz)) i++;
    if (i < *n) {
        h = (*cache)[i].h;
    } else {
        row_hw *t = realloc(*cache, (*n + 1) * sizeof *t);
        if (!t) return -1;
        *cache = t;
        opm_error e;
        opm_error_clear(&e);
        h = r->clock_hz > 0 ? opm_hardware_with_clock(ds->hw[r->hw], r->clock_hz, &e)
                            : opm_hardware_clone(ds->hw[r->hw], &e);
        t[(*n)++] = (row_hw){r->hw, r->clock_hz, h};
        /* An invalid clock fails the rows that ask for it; no memory fails all. */
        if (!h && e.code == OPM_ENOMEM) return -1;
    }
    if (h && group >= 0) {
        h->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES] = group_overhead_s[group] * h->cparam[CP_CLOCK_HZ];
        h->cparam_set |= 1u << CP_DEVICE_FIXED_OVERHEAD_CYCLES;
    }
    *out = h;
    return 0;
}

/* Whether the power cap may bind for a row: its hardware has a power
 * budget and an energy per FLOP for the row's matrix path. */
static int may_cap(const opm_hardware *hw, opm_dtype dt)
{
    if (!(opm_hardware_tdp_w(hw) > opm_hardware_static_power_w(hw))) return 0;
    return opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_TENSOR, dt) > 0 ||
           opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_VECTOR, dt) > 0 ||
           opm_hardware_energy_j_per_flop(hw, OPM_ENGINE_VECTOR, OPM_FP32) > 0;
}

/* What the prediction p says it chose (kernel, limiting resource), into
 * l, truncated to fit. */
static void label_row(const opm_profile *p, opm_gemm_row_label *l)
{
    const opm_gemm_details *g = opm_profile_gemm(p);
    const opm_diag *d = opm_profile_diag(p, "limiting_resource");
    opm_strlcpy(l->kernel, g ? g->kernel : "", sizeof l->kernel);
    opm_strlcpy(l->limit, d && d->is_text ? d->text : "", sizeof l->limit);
}

/* Predicts the rows of hardware only_hw (-1: all); with group_overhead_s,
 * only those the power cap may limit, on hardware carrying the overhead. */
static int predict_rows(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                        const double *group_overhead_s, int only_hw, double *base, opm_gemm_row_label *labels,
                        opm_error *err)
{
    const opm_model *m = opm_model_find(model);
    if (!m) return opm_err(err, OPM_ENOTFOUND, "--model", "no model named '%s' (see `opmodel models`)", model);
    opm_profile p;
    row_hw *cache = NULL;
    size_t n_cache = 0;
    int rc = 0;
    for (size_t i = 0; i < ds->n_rows; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        if (only_hw >= 0 && r->hw != only_hw) continue;
        if (group_overhead_s && !may_cap(ds->hw[r->hw], r->dtype)) continue;
        base[i] = NAN;
        if (labels) labels[i].kernel[0] = labels[i].limit[0] = '\0';
        const opm_hardware *hw;
        if (hw_for_row(ds, r, group_overhead_s, &cache, &n_cache, &hw)) {
            rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
            break;
        }
        if (!hw) continue;
        opm_op *op = row_op(r, hw, use_kernel_column, NULL);
        if (!op) continue;
        if (m->predict(op, hw, &p, NULL) == 0) {
            base[i] = p.latency_s - p.overhead_s;
            if (labels) label_row(&p, &labels[i]);
        }
        opm_op_free(op);
    }
    for (size_t i = 0; i < n_cache; i++) opm_hardware_free(cache[i].h);
    free(cache);
    return rc;
}

int opm_gemm_base_predictions(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, double *base,
                              opm_error *err)
{
    return predict_rows(ds, model, use_kernel_column, NULL, -1, base, NULL, err);
}

int opm_gemm_base_predictions_labelled(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                       double *base, opm_gemm_row_label *labels, opm_error *err)
{
    return predict_rows(ds, model, use_kernel_column, NULL, -1, base, labels, err);
}

int opm_gemm_repredict_with_overhead(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                     const double *group_overhead_s, int only_hw, double *base, opm_error *err)
{
    return opm_gemm_repredict_with_overhead_labelled(ds, model, use_kernel_column, group_overhead_s, only_hw, base,
                                                     NULL, err);
}

int opm_gemm_repredict_with_overhead_labelled(const opm_gemm_dataset *ds, const char *model, int use_kernel_column,
                                              const double *group_overhead_s, int only_hw, double *base,
                                              opm_gemm_row_label *labels, opm_error *err)
{
    return predict_rows(ds, model, use_kernel_column, group_overhead_s, only_hw, base, labels, err);
}

/* ---- calibration split ---- */

/* Sort key of a calibration candidate: (group, FLOPs, m, n, k, batch, row). */
typedef struct cal_key {
    int group;
    double flops;
    int64_t m, n, k, batch;
    size_t row;
} cal_key;

static int cmp_cal(const void *pa, const void *pb)
{
    const cal_key *a = pa, *b = pb;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->flops != b->flops) return a->flops < b->flops ? -1 : 1;
    if (a->m != b->m) return a->m < b->m ? -1 : 1;
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    if (a->k != b->k) return a->k < b->k ? -1 : 1;
    if (a->batch != b->batch) return a->batch < b->batch ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

int opm_gemm_calibration_split(const opm_gemm_dataset *ds, unsigned char *is_cal, opm_error *err)
{
    memset(is_cal, 0, ds->n_rows);
    cal_key *keys = malloc((ds->n_rows + 1) * sizeof *keys);
    if (!keys) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    /* Every group's candidates in one sort, then group by group: linear in
     * the rows however many groups there are. */
    size_t n = 0;
    for (size_t i = 0; i < ds->n_rows; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        double flops = 2.0 * (double)r->batch * (double)r->m * (double)r->n * (double)r->k;
        if ((r->cls == GC_SMALL || r->cls == GC_VECTOR_LIKE) && flops <= CAL_MAX_FLOPS)
            keys[n++] = (cal_key){r->group, flops, r->m, r->n, r->k, r->batch, i};
    }
    if (n) qsort(keys, n, sizeof *keys, cmp_cal);
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && keys[b].group == keys[a].group) b++;
        size_t cnt = b - a, take = cnt < 2 * CAL_PER_GROUP ? (cnt + 1) / 2 : CAL_PER_GROUP;
        for (size_t j = 0; j < take; j++) is_cal[keys[a + j].row] = 1;
        a = b;
    }
    free(keys);
    return 0;
}

/* ---- statistics ---- */

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Stats over the rows with sel[i]: ape sorted in scratch. */
static void stats_of(const opm_gemm_dataset *ds, const double *pred, const unsigned char *sel, double *scratch,
                     int energy, opm_err_stats *s)
{
    memset(s, 0, sizeof *s);
    double sum_ape = 0, sum_log = 0, sum_signed = 0;
    size_t n = 0;
    for (size_t i = 0; i < ds->n_rows; i++) {
        if (!sel[i]) continue;
        double meas = energy ? ds->rows[i].energy_j : ds->rows[i].latency_s, e = (pred[i] - meas) / meas;
        scratch[n++] = fabs(e) * 100;
        sum_ape += fabs(e) * 100;
        sum_signed += e * 100;
        sum_log += log(pred[i] / meas);
    }
    s->n = n;
    if (!n) return;
    s->mape = sum_ape / (double)n;
    s->signed_mean_error = sum_signed / (double)n;
    s->geomean_ratio = exp(sum_log / (double)n);
    s->median_ape = median_of(scratch, n);   /* sorts scratch, which the p90 below reads */
    size_t p90 = (size_t)ceil(0.9 * (double)n);
    s->p90_ape = scratch[p90 ? p90 - 1 : 0];
}

static void stats(const opm_gemm_dataset *ds, const double *pred, const unsigned char *sel, double *scratch,
                  opm_err_stats *s)
{
    stats_of(ds, pred, sel, scratch, 0, s);
}

/* Energy error of the selected rows that carry energy_j: each predicted
 * with the model on its hardware with its group's calibrated overhead.
 * Rows are predicted only when some row has an energy, so GEMM-latency
 * data without one costs nothing.  sel is overwritten. */
static int energy_stats(const opm_gemm_dataset *ds, const opm_gemm_validate_opts *o, opm_gemm_validation *v,
                        unsigned char *sel, double *scratch)
{
    size_t n = ds->n_rows, any = 0;
    for (size_t i = 0; i < n; i++) any += sel[i] && ds->rows[i].energy_j > 0;
    if (!any) return 0;
    const opm_model *m = opm_model_find(o->model);
    double *pred = malloc((n + 1) * sizeof *pred);
    if (!m || !pred) {
        free(pred);
        return !m ? 0 : -1;
    }
    row_hw *cache = NULL;
    size_t n_cache = 0;
    int rc = 0;
    opm_profile p;
    for (size_t i = 0; i < n && !rc; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        pred[i] = NAN;
        if (!sel[i] || !(r->energy_j > 0)) {
            sel[i] = 0;
            continue;
        }
        sel[i] = 0;
        const opm_hardware *hw;
        if (hw_for_row(ds, r, v->group_overhead_s, &cache, &n_cache, &hw)) {
            rc = -1;
            break;
        }
        if (!hw) continue;
        opm_op *op = row_op(r, hw, !o->ignore_kernel_column, NULL);
        if (!op) continue;
        if (m->predict(op, hw, &p, NULL) == 0 && p.energy_j > 0) {
            pred[i] = p.energy_j;
            sel[i] = 1;
        }
        opm_op_free(op);
    }
    for (size_t i = 0; i < n_cache; i++) opm_hardware_free(cache[i].h);
    free(cache);
    if (!rc) {
        stats_of(ds, pred, sel, scratch, 1, &v->energy);
        unsigned char *sub = malloc(n + 1);
        if (!sub) rc = -1;
        for (size_t h = 0; sub && h < ds->n_hw; h++) {
            for (size_t i = 0; i < n; i++) sub[i] = sel[i] && ds->rows[i].hw == (int)h;
            stats_of(ds, pred, sub, scratch, 1, &v->energy_by_hw[h]);
        }
        free(sub);
    }
    free(pred);
    return rc;
}

/* Error statistics of the selected rows, one size class at a time; `sub`
 * is scratch of one byte per row. */
static void class_stats(const opm_gemm_dataset *ds, opm_gemm_validation *v, const unsigned char *sel,
                        unsigned char *sub, double *scratch)
{
    for (int c = 0; c < GC_COUNT; c++) {
        for (size_t i = 0; i < ds->n_rows; i++) sub[i] = sel[i] && ds->rows[i].cls == c;
        stats(ds, v->pred_s, sub, scratch, &v->by_class[c]);
    }
}

/* The tag of group g: its name past "hardware|" (by the hardware name's
 * length, so a '|' in that name does not cut it short). */
static const char *group_tag(const opm_gemm_dataset *ds, size_t g)
{
    return ds->group_names[g] + strlen(ds->hw_names[ds->group_hw[g]]) + 1;
}

/* A zeroed result for `model` with its per-hardware, per-group and per-row
 * arrays allocated; 0 when out of memory (free it with
 * opm_gemm_validation_free either way). */
static int validation_alloc(const opm_gemm_dataset *ds, const char *model, opm_gemm_validation *v)
{
    memset(v, 0, sizeof *v);
    v->model = model;
    size_t n = ds->n_rows;
    v->by_hw = calloc(ds->n_hw + 1, sizeof *v->by_hw);
    v->group_overhead_s = calloc(ds->n_groups + 1, sizeof *v->group_overhead_s);
    v->group_cal_rows = calloc(ds->n_groups + 1, sizeof *v->group_cal_rows);
    v->group_overlap_s = calloc(ds->n_groups + 1, sizeof *v->group_overlap_s);
    v->pred_s = malloc((n + 1) * sizeof *v->pred_s);
    v->is_cal = calloc(n + 1, 1);
    v->energy_by_hw = calloc(ds->n_hw + 1, sizeof *v->energy_by_hw);
    return v->by_hw && v->energy_by_hw && v->group_overhead_s && v->group_cal_rows && v->group_overlap_s && v->pred_s && v->is_cal;
}

/* The median over the groups group g borrows from (the file comment's
 * order: same family on the same hardware, same tag elsewhere, same
 * family elsewhere) of vals; NaN when there is none. */
static double borrow(const opm_gemm_dataset *ds, const opm_gemm_validation *v, int holdout_hw, size_t g,
                     const double *vals, double *scratch)
{
    size_t m = 0;
    const char *tg = group_tag(ds, g);
    size_t fam = strcspn(tg, ":");
    for (int pass = 0; pass < 3 && m == 0; pass++)
        for (size_t h = 0; h < ds->n_groups; h++) {
            if (!v->group_cal_rows[h]) continue;
            const char *th = group_tag(ds, h);
            int same_hw = ds->group_hw[h] == ds->group_hw[g];
            int same_fam = strcspn(th, ":") == fam && strncmp(th, tg, fam) == 0;
            int ok = pass == 0 ? same_hw && same_fam && ds->group_hw[g] != holdout_hw
                   : pass == 1 ? !same_hw && strcmp(th, tg) == 0
                               : !same_hw && same_fam;
            if (ok) scratch[m++] = vals[h];
        }
    return m ? median_of(scratch, m) : NAN;
}

/* A kernel's share of a timed call: the part of the call's host time
 * that overlaps it hides the first overlap_s of the kernel. */
static double overlapped(double base_s, double overlap_s)
{
    return base_s > overlap_s ? base_s : overlap_s;
}

/* Per group: the floor (median measured time of its calibration rows,
 * v->is_cal) sets the overlap; the overhead is the median of measured −
 * max(overlap, predicted) over the same rows.  Groups without rows of
 * their own (or on the held-out hardware) borrow both.  Fills
 * v->host_overlap and the group_* arrays; scratch holds n_rows doubles. */
static int calibrate_groups(const opm_gemm_dataset *ds, const opm_gemm_validate_opts *o, const double *base,
                            opm_gemm_validation *v, double *scratch)
{
    size_t n = ds->n_rows;
    v->host_overlap = o->calibrate ? o->host_overlap : 0;
    /* Each group's first CAL_PER_GROUP usable calibration rows, in row
     * order, from one pass over the rows. */
    size_t *cal_all = malloc((ds->n_groups * CAL_PER_GROUP + 1) * sizeof *cal_all);
    unsigned char *cal_n = calloc(ds->n_groups + 1, 1);
    if (!cal_all || !cal_n) {
        free(cal_all);
        free(cal_n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int g = ds->rows[i].group;
        if (v->is_cal[i] && !isnan(base[i]) && ds->group_hw[g] != o->holdout_hw && cal_n[g] < CAL_PER_GROUP)
            cal_all[(size_t)g * CAL_PER_GROUP + cal_n[g]++] = i;
    }
    for (size_t g = 0; g < ds->n_groups; g++) {
        const size_t *cal = cal_all + g * CAL_PER_GROUP;
        size_t m = cal_n[g];
        int hw = ds->group_hw[g];
        for (size_t j = 0; j < m; j++) scratch[j] = ds->rows[cal[j]].latency_s;
        double ov = v->host_overlap * median_of(scratch, m);
        for (size_t j = 0; j < m; j++) scratch[j] = ds->rows[cal[j]].latency_s - overlapped(base[cal[j]], ov);
        double med = median_of(scratch, m);
        v->group_cal_rows[g] = m;
        opm_hardware *h = ds->hw[hw];
        v->group_overlap_s[g] = m ? ov : 0;
        v->group_overhead_s[g] = o->calibrate && m ? (med > 0 ? med : 0)
                                                   : opm_hardware_fixed_overhead_cycles(h) / opm_hardware_clock_hz(h);
    }
    if (o->calibrate)
        for (size_t g = 0; g < ds->n_groups; g++) {
            if (v->group_cal_rows[g]) continue;
            /* No calibration rows of its own (or its hardware held out):
             * borrow both, in the order given in the file comment. */
            double oh = borrow(ds, v, o->holdout_hw, g, v->group_overhead_s, scratch);
            double ov = borrow(ds, v, o->holdout_hw, g, v->group_overlap_s, scratch);
            if (!isnan(oh)) v->group_overhead_s[g] = oh;
            if (!isnan(ov)) v->group_overlap_s[g] = ov;
        }
    free(cal_all);
    free(cal_n);
    return 0;
}

int opm_gemm_validate(const opm_gemm_dataset *ds, const opm_gemm_validate_opts *o, const double *base,
                      opm_gemm_validation *v, opm_error *err)
{
    size_t n = ds->n_rows;
    int allocated = validation_alloc(ds, o->model, v);
    double *scratch = malloc((n + 1) * sizeof *scratch);
    unsigned char *sel = malloc(n + 1);
    if (!allocated || !scratch || !sel) {
        free(scratch);
        free(sel);
        opm_gemm_validation_free(v);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    int rc = o->calibrate ? opm_gemm_calibration_split(ds, v->is_cal, err) : 0;
    if (!rc && calibrate_groups(ds, o, base, v, scratch)) rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    if (rc) {
        free(scratch);
        free(sel);
        opm_gemm_validation_free(v);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        if (r->hw == o->holdout_hw) v->is_cal[i] = 0;
        int held = !v->is_cal[i] && (o->holdout_hw < 0 || r->hw == o->holdout_hw);
        /* An eagerly timed row is host-launch bound below ~100 µs: without a
         * calibrated overhead of its own hardware (uncalibrated, or that
         * hardware held out and its host floor borrowed from another GPU's
         * library) there is nothing to score it against. */
        if (held && (!o->calibrate || r->hw == o->holdout_hw) && r->timing == OPM_GTIME_EAGER) {
            v->rows_eager_skipped++;
            held = 0;
        }
        v->pred_s[i] = isnan(base[i]) ? NAN
                                      : overlapped(base[i], v->group_overlap_s[r->group]) + v->group_overhead_s[r->group];
        v->calibration_rows += v->is_cal[i] && !isnan(base[i]);
        if (held && isnan(base[i])) v->rows_failed++;
        sel[i] = (unsigned char)(held && !isnan(base[i]));
    }
    stats(ds, v->pred_s, sel, scratch, &v->overall);
    v->rows = v->overall.n;
    unsigned char *sub = malloc(n + 1);
    if (!sub) {
        free(scratch);
        free(sel);
        opm_gemm_validation_free(v);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    for (size_t h = 0; h < ds->n_hw; h++) {
        if (!ds->hw[h]) continue; /* unknown hardware: no rows (and thousands of names cost no pass) */
        for (size_t i = 0; i < n; i++) sub[i] = sel[i] && ds->rows[i].hw == (int)h;
        stats(ds, v->pred_s, sub, scratch, &v->by_hw[h]);
    }
    class_stats(ds, v, sel, sub, scratch);
    free(sub);
    rc = energy_stats(ds, o, v, sel, scratch);
    free(scratch);
    free(sel);
    if (rc) {
        opm_gemm_validation_free(v);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    return 0;
}

void opm_gemm_validation_free(opm_gemm_validation *v)
{
    free(v->by_hw);
    free(v->energy_by_hw);
    free(v->group_overhead_s);
    free(v->group_cal_rows);
    free(v->group_overlap_s);
    free(v->pred_s);
    free(v->is_cal);
    memset(v, 0, sizeof *v);
}

/* ---- leave one hardware out ---- */

/* Holds hardware h out: its groups calibrated on the other hardware only
 * (cal holds the calibration split; its group arrays are overwritten),
 * its rows re-predicted with the overheads they borrow (the power cap
 * credits the overhead's idle time), scored into v->pred_s and
 * v->by_hw[h]; sel marks its scored rows. */
static int hold_out(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, const double *base, int h,
                    double host_overlap, opm_gemm_validation *cal, opm_gemm_validation *v, double *work,
                    double *scratch, unsigned char *sel, opm_error *err)
{
    size_t n = ds->n_rows;
    opm_gemm_validate_opts o = {model, 1, h, host_overlap, !use_kernel_column};
    if (calibrate_groups(ds, &o, base, cal, scratch)) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    memcpy(work, base, n * sizeof *work);
    int rc = opm_gemm_repredict_with_overhead(ds, model, use_kernel_column, cal->group_overhead_s, h, work, err);
    if (rc) return rc;
    for (size_t g = 0; g < ds->n_groups; g++)
        if (ds->group_hw[g] == h) {
            v->group_overhead_s[g] = cal->group_overhead_s[g];
            v->group_overlap_s[g] = cal->group_overlap_s[g];
        }
    unsigned char *mine = calloc(n + 1, 1);
    if (!mine) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (ds->rows[i].hw != h) continue;
        int g = ds->rows[i].group;
        v->pred_s[i] = overlapped(work[i], cal->group_overlap_s[g]) + cal->group_overhead_s[g];
        /* An eager row's host floor borrowed from another GPU's library is no
         * prediction of this one's (see opm_gemm_validate). */
        if (ds->rows[i].timing == OPM_GTIME_EAGER) {
            v->rows_eager_skipped++;
            continue;
        }
        sel[i] = mine[i] = !isnan(work[i]);
        v->rows_failed += isnan(work[i]);
    }
    stats(ds, v->pred_s, mine, scratch, &v->by_hw[h]);
    free(mine);
    return 0;
}

int opm_gemm_leave_one_out(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, const double *base,
                           double host_overlap, opm_gemm_validation *v, opm_error *err)
{
    size_t n = ds->n_rows;
    opm_gemm_validation cal;
    int allocated = validation_alloc(ds, model, v);
    allocated &= validation_alloc(ds, model, &cal); /* both zeroed, so both can be freed */
    double *scratch = malloc((n + 1) * sizeof *scratch);
    double *work = malloc((n + 1) * sizeof *work);
    unsigned char *sel = calloc(n + 1, 1), *sub = malloc(n + 1);
    int rc = 0;
    if (!allocated || !scratch || !work || !sel || !sub)
        rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    /* The split does not depend on which hardware is held out. */
    if (!rc) rc = opm_gemm_calibration_split(ds, cal.is_cal, err);
    for (size_t i = 0; !rc && i < n; i++) v->pred_s[i] = NAN;
    for (size_t h = 0; !rc && h < ds->n_hw; h++)
        if (ds->hw[h])
            rc = hold_out(ds, model, use_kernel_column, base, (int)h, host_overlap, &cal, v, work, scratch, sel,
                          err);
    v->host_overlap = host_overlap;
    if (!rc) {
        stats(ds, v->pred_s, sel, scratch, &v->overall);
        v->rows = v->overall.n;
        class_stats(ds, v, sel, sub, scratch);
    }
    opm_gemm_validation_free(&cal);
    free(scratch);
    free(work);
    free(sel);
    free(sub);
    if (rc) opm_gemm_validation_free(v);
    return rc;
}

/* ---- refitting the fitted global constants ---- */

/* The grid the refit searches: SAME_ADDRESS_ATOMIC_CYCLES over its
 * documented bounds [2, 64] in half cycles, BACK_TO_BACK_KERNEL_FRACTION
 * over [0.25, 1] in steps of 0.05. */
#define REFIT_ATOMIC_LO 2.0
#define REFIT_ATOMIC_STEP 0.5
#define REFIT_ATOMIC_N 125
#define REFIT_B2B_LO 0.25
#define REFIT_B2B_STEP 0.05
#define REFIT_B2B_N 16

/* Mean APE (%) over the hardware whose rows the mask keeps, from per-
 * hardware sums and counts; -1 when no row. */
static double masked_mape(const double *sum, const size_t *cnt, size_t n_hw, int skip)
{
    double s = 0;
    size_t n = 0;
    for (size_t h = 0; h < n_hw; h++)
        if ((int)h != skip) {
            s += sum[h];
            n += cnt[h];
        }
    return n ? s / (double)n : -1;
}

int opm_gemm_refit_constants(const opm_gemm_dataset *ds, const char *model, int use_kernel_column, const double *base,
                             opm_gemm_refit *out, opm_error *err)
{
    memset(out, 0, sizeof *out);
    /* Only the tile models time the quantisation kernels. */
    if (strcmp(model, "extended_roofline") && strcmp(model, "effective_roofline")) return 0;
    size_t n = 0;
    for (size_t i = 0; i < ds->n_rows; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        n += (r->act_quant == OPM_GAQ_STATIC || r->act_quant == OPM_GAQ_DYNAMIC) && r->timing != OPM_GTIME_EAGER &&
             !(r->clock_hz > 0) && isfinite(base[i]);
    }
    if (!n) return 0;
    typedef struct { size_t row; gemm_quant_terms qt; double pred0, meas; } fit_row;
    fit_row *fr = malloc(n * sizeof *fr);
    size_t grid = (size_t)REFIT_ATOMIC_N * REFIT_B2B_N;
    double *sum = calloc(grid * ds->n_hw + 1, sizeof *sum);
    size_t *cnt = calloc(ds->n_hw + 1, sizeof *cnt);
    out->folds = calloc(ds->n_hw + 1, sizeof *out->folds);
    if (!fr || !sum || !cnt || !out->folds) {
        free(fr);
        free(sum);
        free(cnt);
        free(out->folds);
        out->folds = NULL;
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < ds->n_rows && m < n; i++) {
        const opm_gemm_row *r = &ds->rows[i];
        if (!((r->act_quant == OPM_GAQ_STATIC || r->act_quant == OPM_GAQ_DYNAMIC) && r->timing != OPM_GTIME_EAGER &&
              !(r->clock_hz > 0) && isfinite(base[i])))
            continue;
        opm_op *op = row_op(r, ds->hw[r->hw], use_kernel_column, NULL);
        if (!op) continue;
        fit_row *f = &fr[m];
        int rc = opm_gemm_quant_terms_of(op, ds->hw[r->hw], &f->qt, NULL);
        opm_op_free(op);
        if (rc || !(f->qt.kernels > 0)) continue;
        f->row = i;
        f->meas = r->latency_s;
        /* Uncalibrated: the kernel body, the hardware's own fixed time, and
         * the quantisation at the shipped constants taken out. */
        f->pred0 = base[i] + f->qt.fixed_s -
                   opm_gemm_quant_terms_time(&f->qt, SAME_ADDRESS_ATOMIC_CYCLES, BACK_TO_BACK_KERNEL_FRACTION);
        cnt[r->hw]++;
        m++;
    }
    /* APE sums per (grid point, hardware): every fold then costs a sum. */
    for (size_t g = 0; g < grid; g++) {
        double ac = REFIT_ATOMIC_LO + (double)(g / REFIT_B2B_N) * REFIT_ATOMIC_STEP;
        double bb = REFIT_B2B_LO + (double)(g % REFIT_B2B_N) * REFIT_B2B_STEP;
        double *s = sum + g * ds->n_hw;
        for (size_t j = 0; j < m; j++) {
            double p = fr[j].pred0 + opm_gemm_quant_terms_time(&fr[j].qt, ac, bb);
            s[ds->rows[fr[j].row].hw] += fabs(p / fr[j].meas - 1) * 100;
        }
    }
    /* The shipped constants' errors, per hardware. */
    double *ship = calloc(ds->n_hw + 1, sizeof *ship);
    if (!ship) {
        free(fr);
        free(sum);
        free(cnt);
        opm_gemm_refit_free(out);
        return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    }
    for (size_t j = 0; j < m; j++) {
        double p = fr[j].pred0 + opm_gemm_quant_terms_time(&fr[j].qt, SAME_ADDRESS_ATOMIC_CYCLES,
                                                           BACK_TO_BACK_KERNEL_FRACTION);
        ship[ds->rows[fr[j].row].hw] += fabs(p / fr[j].meas - 1) * 100;
    }
    /* Fold -1 fits on every hardware; fold h on all but h and scores h. */
    double held_sum = 0, held_ship = 0;
    size_t held_n = 0;
    for (int h = -1; h < (int)ds->n_hw; h++) {
        if (h >= 0 && !cnt[h]) continue;
        if (h >= 0 && masked_mape(ship, cnt, ds->n_hw, h) < 0) continue; /* nothing left to fit on */
        size_t best = 0;
        double best_m = HUGE_VAL;
        for (size_t g = 0; g < grid; g++) {
            double v = masked_mape(sum + g * ds->n_hw, cnt, ds->n_hw, h);
            if (v >= 0 && v < best_m) {
                best_m = v;
                best = g;
            }
        }
        opm_gemm_refit_fold *fo = &out->folds[out->n_folds++];
        fo->hw = h;
        fo->atomic_cycles = REFIT_ATOMIC_LO + (double)(best / REFIT_B2B_N) * REFIT_ATOMIC_STEP;
        fo->back_to_back = REFIT_B2B_LO + (double)(best % REFIT_B2B_N) * REFIT_B2B_STEP;
        fo->fit_mape = best_m;
        for (size_t k = 0; k < ds->n_hw; k++) fo->fit_rows += (int)k != h ? cnt[k] : 0;
        if (h >= 0) {
            fo->held_rows = cnt[h];
            fo->held_mape_shipped = ship[h] / (double)cnt[h];
            fo->held_mape_refit = sum[best * ds->n_hw + (size_t)h] / (double)cnt[h];
            held_sum += sum[best * ds->n_hw + (size_t)h];
            held_ship += ship[h];
            held_n += cnt[h];
        }
    }
    out->pooled_rows = held_n;
    out->pooled_shipped = held_n ? held_ship / (double)held_n : 0;
    out->pooled_refit = held_n ? held_sum / (double)held_n : 0;
    free(ship);
    free(fr);
    free(sum);
    free(cnt);
    return 0;
}

void opm_gemm_refit_free(opm_gemm_refit *r)
{
    free(r->folds);
    memset(r, 0, sizeof *r);
}
