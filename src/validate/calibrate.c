/* calibrate.c — `opmodel calibrate`'s library part: reading the measured
 * GEMM rows of one hardware (contract §4), the train / held-out split, the
 * bounded least-squares fit of the efficiency and overhead parameters, the
 * before/after scores and the annotated YAML of the result.  calibrate.h
 * describes the parameters, the objective and the method.
 *
 * The rows are read here rather than by gemm_latency.c's directory loader
 * (both read lines through csv.h, so they accept the same files):
 * calibration takes a single file too, rejects a malformed row with its
 * FILE:LINE (validation skips and counts them), and keeps rows by the
 * hardware column's text instead of opening every name as hardware, so a
 * description loaded from a file can be calibrated against rows that name
 * it.  Predictions go through opm_gemm_base_predictions, so a row is
 * predicted exactly as validate-gemm-latency predicts it. */
#include "calibrate.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../core/internal.h"
#include "../hardware/hw_internal.h"
#include "../io/io_internal.h"
#include "csv.h"
#include "gemm_latency.h"

const char *const opm_cal_param_paths[OPM_CAL_NPARAMS] = {
    "utilization.tensor", "utilization.vector", "utilization.memory.hbm", "compute.device_fixed_overhead_cycles"};
const char *const opm_cal_param_keys[OPM_CAL_NPARAMS] = {"tensor", "vector", "hbm", "overhead"};

/* Line searches: a grid of EFF_GRID points over the bounds, then golden
 * section in the best point's neighbourhood down to EFF_TOL.  The overhead
 * (in cycles) uses OVH_GRID points and stops at OVH_TOL_REL of its range
 * (0.1 ns of 100 µs, below the whole-cycle rounding).  EFF_TOL is below the
 * 4-decimal rounding of the written values. */
#define EFF_GRID 8
#define EFF_TOL 1e-5
#define OVH_GRID 41
#define OVH_TOL_REL 1e-6
#define MAX_SWEEPS 20
#define SWEEP_TOL 1e-4
#define EFF_DECIMALS 1e4
#define NAMES_SHOWN 8

static const double golden = 0.6180339887498949;

/* ---- rows ---- */

/* The selected rows, in file order, with measured latency, its log, and
 * the seconds one overhead cycle lasts at the row's clock (its clock_mhz,
 * else the hardware's clock_hz). */
typedef struct cal_set {
    opm_gemm_row *rows;
    double *meas, *logm, *s_per_cycle;
    size_t n, cap;
    double clock_hz;            /* the hardware's, for rows without a clock */
} cal_set;

static void set_free(cal_set *s)
{
    free(s->rows);
    free(s->meas);
    free(s->logm);
    free(s->s_per_cycle);
    memset(s, 0, sizeof *s);
}

static int set_push(cal_set *s, const opm_gemm_row *r, opm_error *err)
{
    if (s->n == s->cap) {
        /* Four parallel arrays on one capacity: each grows from a copy of
         * it, and the capacity is what all four reached. */
        size_t c[4] = {s->cap, s->cap, s->cap, s->cap}, need = s->n + 1;
        if (opm_array_grow((void **)&s->rows, &c[0], need, sizeof *s->rows) ||
            opm_array_grow((void **)&s->meas, &c[1], need, sizeof *s->meas) ||
            opm_array_grow((void **)&s->logm, &c[2], need, sizeof *s->logm) ||
            opm_array_grow((void **)&s->s_per_cycle, &c[3], need, sizeof *s->s_per_cycle))
            return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        s->cap = c[0];
    }
    s->rows[s->n] = *r;
    s->meas[s->n] = r->latency_s;
    s->logm[s->n] = log(r->latency_s);
    s->s_per_cycle[s->n] = 1 / (r->clock_hz > 0 ? r->clock_hz : s->clock_hz);
    s->n++;
    return 0;
}

/* What reading the data collects besides the rows. */
typedef struct reader {
    const char *want;           /* hardware column value to keep */
    cal_set *set;
    size_t files, rows_read;
    char other[NAMES_SHOWN][64]; /* other hardware names seen, first few */
    size_t n_other;
    opm_error *err;
} reader;

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* A row error: "FILE:LINE: column: what". */
static int row_error(const opm_csv *in, opm_error *err, const char *col, const char *what, const char *got)
{
    return opm_csv_error(in, err, col, "expected %s, got '%.40s'", what, got);
}

static void note_other(reader *rd, const char *name)
{
    for (size_t i = 0; i < rd->n_other && i < NAMES_SHOWN; i++)
        if (!strcmp(rd->other[i], name)) return;
    if (rd->n_other < NAMES_SHOWN) opm_strlcpy(rd->other[rd->n_other], name, sizeof rd->other[0]);
    rd->n_other++;
}

/* One data row: every row is checked, rows of this hardware are kept. */
static int read_row(reader *rd, const opm_csv *in, const int *col)
{
    opm_gemm_row r;
    const char *want;
    int bad = opm_gemm_row_read(in->fld, in->nf, col, &r, &want);
    if (bad >= 0)
        return row_error(in, rd->err, opm_gemm_col_names[bad], want, col[bad] < in->nf ? in->fld[col[bad]] : "");
    const char *hw = in->fld[col[OPM_GCOL_HW]];
    if (!*hw) return row_error(in, rd->err, "hardware", "a hardware name", hw);
    if (strcmp(hw, rd->want)) {
        note_other(rd, hw);
        return 0;
    }
    return set_push(rd->set, &r, rd->err);
}

static int read_file(reader *rd, const char *path)
{
    opm_csv in;
    int rc = opm_csv_open(&in, path, "--data", rd->err);
    if (rc) return rc;
    rd->files++;
    int col[OPM_GCOL_COUNT];
    if (!(rc = opm_csv_read(&in, rd->err)) && in.nf) {
        opm_csv_columns(&in, opm_gemm_col_names, OPM_GCOL_COUNT, col);
        for (int c = 0; !rc && c < OPM_GCOL_REQUIRED; c++)
            if (col[c] < 0)
                rc = opm_csv_error(&in, rd->err, "header",
                                   "expected a '%s' column (contract §4: hardware,dtype,batch,m,n,k,transpose_a,"
                                   "transpose_b,bias,latency_us)", opm_gemm_col_names[c]);
        while (!rc && !(rc = opm_csv_read(&in, rd->err)) && in.nf) {
            rd->rows_read++;
            rc = read_row(rd, &in, col);
        }
    }
    opm_csv_close(&in);
    return rc;
}

static int read_data(reader *rd, const char *data)
{
    struct stat st;
    if (stat(data, &st) != 0) return opm_err(rd->err, OPM_EIO, "--data", "cannot open '%s': %s", data, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return read_file(rd, data);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = opm_csv_list_dir(data, "--data", &paths, &n, &cap, rd->err);
    for (size_t i = 0; !rc && i < n; i++) rc = read_file(rd, paths[i]);
    free_list(paths, n);
    if (!rc && n == 0) rc = opm_err(rd->err, OPM_EINVAL, "--data", "no *.csv files under '%s'", data);
    return rc;
}

static int no_rows_error(const reader *rd, const char *data, opm_error *err)
{
    if (rd->n_other == 0)
        return opm_err(err, OPM_EINVAL, "--data", "no data rows in '%s' (expected contract §4 GEMM latency rows)", data);
    char names[NAMES_SHOWN * 66] = "";
    size_t pos = 0;
    for (size_t i = 0; i < rd->n_other && i < NAMES_SHOWN; i++)
        pos += (size_t)snprintf(names + pos, sizeof names - pos, "%s%s", i ? ", " : "", rd->other[i]);
    return opm_err(err, OPM_EINVAL, "--rows-for",
                   "no rows for hardware '%s' in '%s'; its hardware column has %s%s (pick one with --rows-for)",
                   rd->want, data, names, rd->n_other > NAMES_SHOWN ? ", ..." : "");
}

/* ---- predictions ---- */

/* Latencies without the fixed overhead ("bodies") of every row of s on hw,
 * NaN where the model fails: a one-hardware view of the rows handed to the
 * validation's predictor. */
static int bodies(const cal_set *s, opm_hardware *hw, const char *model, int hints, double *out, opm_error *err)
{
    char empty[1] = "", *name[1] = {empty};
    opm_gemm_dataset view;
    memset(&view, 0, sizeof view);
    view.rows = s->rows;
    view.n_rows = view.cap = s->n;
    view.n_hw = 1;
    view.hw_names = name;
    view.hw = &hw;
    return opm_gemm_base_predictions(&view, model, hints, out, err);
}

/* Mean of log(predicted / measured)² over the rows of s with a body b,
 * the overhead being `cycles` at each row's clock. */
static double msle(const cal_set *s, const double *b, double cycles)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (isnan(b[i])) continue;
        double p = b[i] + cycles * s->s_per_cycle[i];
        double r = log(p > 1e-15 ? p : 1e-15) - s->logm[i];
        sum += r * r;
        k++;
    }
    return k ? sum / (double)k : HUGE_VAL;
}

/* Minimises g over [lo, hi]: the best of a grid of `grid` points, then
 * golden section between its neighbours down to tol.  Returns the argmin
 * and its value in *fbest.  Deterministic; never worse than the grid. */
typedef double (*line_fn)(void *ctx, double x);

static double line_search(line_fn g, void *ctx, double lo, double hi, int grid, double tol, double x0,
                          double f0, double *fbest)
{
    double bx = x0, bf = f0;
    int bj = -1;
    for (int j = 0; j < grid; j++) {
        double x = lo + (hi - lo) * j / (grid - 1);
        double f = g(ctx, x);
        if (f < bf) bf = f, bx = x, bj = j;
    }
    double step = (hi - lo) / (grid - 1);
    double a = bj >= 0 ? bx - step : x0 - step, b = bj >= 0 ? bx + step : x0 + step;
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    double c = b - golden * (b - a), d = a + golden * (b - a);
    double fc = g(ctx, c), fd = g(ctx, d);
    while (b - a > tol) {
        if (fc <= fd) {
            b = d, d = c, fd = fc;
            c = b - golden * (b - a);
            fc = g(ctx, c);
        } else {
            a = c, c = d, fc = fd;
            d = a + golden * (b - a);
            fd = g(ctx, d);
        }
    }
    if (fc < bf) bf = fc, bx = c;
    if (fd < bf) bf = fd, bx = d;
    *fbest = bf;
    return bx;
}

/* ---- the fit ---- */

typedef struct fit {
    const char *model;
    int hints;
    opm_hardware *hw;           /* scratch description the candidates are written into */
    const cal_set *train;
    double *body;               /* train bodies of the last evaluation */
    double omax;                /* overhead bound, cycles */
    double x[OPM_CAL_NPARAMS];  /* current point in schema units (fractions, cycles) */
    int active[OPM_CAL_NPARAMS];
    int coord;                  /* coordinate a line search moves */
    size_t evals;
    int failed;                 /* a prediction call returned an error */
    opm_error *err;
} fit;

/* Writes the active efficiencies into hw (setting a utilization marks it
 * as given, so the emitter writes it; inactive ones stay as they were). */
static void apply_efficiencies(opm_hardware *hw, const double *x, const int *active)
{
    if (active[OPM_CAL_TENSOR]) hw->util_tensor = x[OPM_CAL_TENSOR], hw->has_util_tensor = 1;
    if (active[OPM_CAL_VECTOR]) hw->util_vector = x[OPM_CAL_VECTOR], hw->has_util_vector = 1;
    if (active[OPM_CAL_HBM])
        for (size_t i = 0; i < hw->n_levels; i++)
            if (!strcmp(hw->levels[i].name, "hbm")) hw->levels[i].utilization = x[OPM_CAL_HBM];
}

static void apply_overhead_cycles(opm_hardware *hw, double cycles)
{
    hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES] = cycles;
    hw->cparam_set |= 1u << CP_DEVICE_FIXED_OVERHEAD_CYCLES;
}

static double ovh_objective(void *ctx, double cycles)
{
    const fit *ft = ctx;
    return msle(ft->train, ft->body, cycles);
}

/* The best overhead for the bodies in ft->body (or the current one when
 * the overhead is not fitted); returns the objective there. */
static double solve_overhead(fit *ft)
{
    if (!ft->active[OPM_CAL_OVERHEAD]) return ovh_objective(ft, ft->x[OPM_CAL_OVERHEAD]);
    double f0 = ovh_objective(ft, ft->x[OPM_CAL_OVERHEAD]), f;
    ft->x[OPM_CAL_OVERHEAD] = line_search(ovh_objective, ft, 0, ft->omax, OVH_GRID, ft->omax * OVH_TOL_REL,
                                          ft->x[OPM_CAL_OVERHEAD], f0, &f);
    return f;
}

/* Objective at the current efficiencies with the overhead solved; the
 * overhead found is left in ft->x. */
static double evaluate(fit *ft)
{
    apply_efficiencies(ft->hw, ft->x, ft->active);
    ft->evals++;
    if (bodies(ft->train, ft->hw, ft->model, ft->hints, ft->body, ft->err)) {
        ft->failed = 1;
        return HUGE_VAL;
    }
    return solve_overhead(ft);
}

static double eff_objective(void *ctx, double v)
{
    fit *ft = ctx;
    if (ft->failed) return HUGE_VAL;
    double keep_x = ft->x[ft->coord], keep_o = ft->x[OPM_CAL_OVERHEAD];
    ft->x[ft->coord] = v;
    double f = evaluate(ft);
    ft->x[ft->coord] = keep_x;
    ft->x[OPM_CAL_OVERHEAD] = keep_o;
    return f;
}

/* Cyclic coordinate descent over the active efficiencies; each step keeps
 * the best point seen, so the objective never increases. */
static int descend(fit *ft, int *sweeps)
{
    double f = evaluate(ft);
    if (ft->failed) return OPM_EINVAL;
    for (*sweeps = 0; *sweeps < MAX_SWEEPS;) {
        double moved = 0;
        ++*sweeps;
        for (int p = OPM_CAL_TENSOR; p <= OPM_CAL_HBM; p++) {
            if (!ft->active[p]) continue;
            ft->coord = p;
            double fn, x = line_search(eff_objective, ft, OPM_CAL_EFF_MIN, OPM_CAL_EFF_MAX, EFF_GRID, EFF_TOL,
                                       ft->x[p], f, &fn);
            if (ft->failed) return OPM_EINVAL;
            if (fn < f) {
                moved = fmax(moved, fabs(x - ft->x[p]));
                ft->x[p] = x;
                f = fn;
            }
        }
        if (moved < SWEEP_TOL) break;
    }
    /* Leave the overhead that belongs to the final efficiencies. */
    evaluate(ft);
    return ft->failed ? OPM_EINVAL : 0;
}

/* ---- scores ---- */

static void score(const cal_set *s, const double *body, double cycles, const unsigned char *held, int want_held,
                  opm_cal_score *out)
{
    double ape = 0, sl = 0;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (isnan(body[i]) || held[i] != want_held) continue;
        double p = body[i] + cycles * s->s_per_cycle[i], r = log(p > 1e-15 ? p : 1e-15) - s->logm[i];
        ape += fabs(p - s->meas[i]) / s->meas[i];
        sl += r * r;
        n++;
    }
    out->n = n;
    out->mape = n ? 100 * ape / (double)n : 0;
    out->msle = n ? sl / (double)n : 0;
}

/* Scores the description on every row (train and held-out). */
static int score_all(const cal_set *all, const unsigned char *held, opm_hardware *hw, const opm_cal_options *o,
                     const char *model, double *body, opm_cal_score *train, opm_cal_score *heldout, opm_error *err)
{
    int rc = bodies(all, hw, model, !o->ignore_kernel_column, body, err);
    if (rc) return rc;
    score(all, body, hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES], held, 0, train);
    score(all, body, hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES], held, 1, heldout);
    return 0;
}

/* ---- the whole calibration ---- */

static double param_value(const opm_hardware *hw, int p)
{
    switch (p) {
    case OPM_CAL_TENSOR: return hw->util_tensor;
    case OPM_CAL_VECTOR: return hw->util_vector;
    case OPM_CAL_HBM: return opm_hardware_find_level(hw, "hbm")->utilization;
    default: return hw->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES];
    }
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Which parameters the training rows exercise: an engine only when some
 * row's dtype runs on it. */
static void decide_active(const opm_hardware *hw, const cal_set *train, unsigned fit_mask, opm_calibration *c,
                          int *active)
{
    int uses[2] = {0, 0};
    for (size_t i = 0; i < train->n; i++)
        uses[opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, train->rows[i].dtype) > 0 ? 0 : 1] = 1;
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) {
        int asked = fit_mask == 0 || (fit_mask & (1u << p));
        int exercised = p == OPM_CAL_TENSOR ? uses[0] : p == OPM_CAL_VECTOR ? uses[1] : 1;
        active[p] = asked && exercised;
        c->param[p].status = !asked ? OPM_CAL_NOT_ASKED : !exercised ? OPM_CAL_NO_ROWS : OPM_CAL_FITTED;
    }
}

/* Splits the usable rows (a body with the starting description) into the
 * training set and the held-out flags. */
static int split(const cal_set *all, const double *body, cal_set *train, unsigned char *held, size_t *failed,
                 opm_error *err)
{
    *failed = 0;
    for (size_t i = 0; i < all->n; i++) {
        held[i] = i % OPM_CAL_HOLDOUT_EVERY == OPM_CAL_HOLDOUT_EVERY - 1;
        if (isnan(body[i])) {
            ++*failed;
            continue;
        }
        if (!held[i] && set_push(train, &all->rows[i], err)) return OPM_ENOMEM;
    }
    return 0;
}

static int run_fit(const opm_hardware *start, const opm_cal_options *o, const cal_set *all, opm_calibration *c,
                   opm_error *err)
{
    const char *model = c->model;
    int hints = !o->ignore_kernel_column;
    cal_set train = {.clock_hz = all->clock_hz};
    double *body = malloc((all->n + 1) * sizeof *body);
    unsigned char *held = malloc(all->n + 1);
    opm_hardware *scratch = opm_hardware_clone(start, err);
    int rc = 0;
    if (!body || !held || !scratch) {
        rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        goto out;
    }
    if ((rc = bodies(all, scratch, model, hints, body, err))) goto out;
    if ((rc = split(all, body, &train, held, &c->rows_failed, err))) goto out;
    if (train.n == 0) {
        rc = opm_err(err, OPM_EUNSUPPORTED, "--model",
                     "%s cannot predict any training row of %s (%zu rows, %zu failed)", model, c->hardware, all->n,
                     c->rows_failed);
        goto out;
    }
    score(all, body, start->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES], held, 0, &c->train_before);
    score(all, body, start->cparam[CP_DEVICE_FIXED_OVERHEAD_CYCLES], held, 1, &c->heldout_before);

    fit ft;
    memset(&ft, 0, sizeof ft);
    ft.model = model;
    ft.hints = hints;
    ft.hw = scratch;
    ft.train = &train;
    ft.body = body; /* the first train.n entries serve as the training bodies */
    ft.err = err;
    double clock = start->cparam[CP_CLOCK_HZ];
    decide_active(start, &train, o->fit, c, ft.active);
    int any = 0;
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) {
        opm_cal_param *pp = &c->param[p];
        int ovh = p == OPM_CAL_OVERHEAD;
        pp->before = param_value(start, p);
        pp->lo = ovh ? 0 : OPM_CAL_EFF_MIN;
        pp->hi = ovh ? floor(OPM_CAL_OVERHEAD_MAX_S * clock) : OPM_CAL_EFF_MAX;
        /* A fit starts inside the bounds; a kept value stays as given. */
        ft.x[p] = ft.active[p] ? clampd(pp->before, pp->lo, pp->hi) : pp->before;
        any |= ft.active[p];
    }
    ft.omax = c->param[OPM_CAL_OVERHEAD].hi;
    int n_active = 0;
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) n_active += ft.active[p] != 0;
    if (any && train.n <= (size_t)n_active) {
        /* As many rows as parameters fit any rows exactly: a train error
         * of 0 that says nothing.  Rows needed: the fewest whose training
         * share (every OPM_CAL_HOLDOUT_EVERY-th row held out) exceeds the
         * parameters. */
        int need = n_active + 1;
        while (need - need / OPM_CAL_HOLDOUT_EVERY <= n_active) need++;
        rc = opm_err(err, OPM_EINVAL, "--data",
                     "%zu training rows of %s for %d fitted parameters: give at least %d rows the model can "
                     "predict (every %dth row is held out), or fewer parameters with --fit",
                     train.n, c->hardware, n_active, need, OPM_CAL_HOLDOUT_EVERY);
        goto out;
    }
    if (!any) {
        rc = opm_err(err, OPM_EINVAL, "--fit",
                     "no requested parameter is exercised by the rows (tensor needs rows whose dtype runs on the "
                     "tensor engine, vector rows that run on the vector units)");
        goto out;
    }
    if ((rc = descend(&ft, &c->sweeps))) goto out;

    /* Round to what the file will say (4 decimals, whole cycles), with
     * the overhead re-solved for the rounded efficiencies. */
    for (int p = OPM_CAL_TENSOR; p <= OPM_CAL_HBM; p++)
        if (ft.active[p]) ft.x[p] = clampd(round(ft.x[p] * EFF_DECIMALS) / EFF_DECIMALS, OPM_CAL_EFF_MIN, OPM_CAL_EFF_MAX);
    evaluate(&ft);
    if (ft.failed) { rc = OPM_EINVAL; goto out; }
    c->evaluations = ft.evals;
    double cycles = clampd(round(ft.x[OPM_CAL_OVERHEAD]), 0, c->param[OPM_CAL_OVERHEAD].hi);
    apply_efficiencies(scratch, ft.x, ft.active);
    if (ft.active[OPM_CAL_OVERHEAD]) apply_overhead_cycles(scratch, cycles);
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) {
        opm_cal_param *pp = &c->param[p];
        pp->after = param_value(scratch, p);
        pp->at_bound = ft.active[p] && (pp->after <= pp->lo || pp->after >= pp->hi);
    }
    if ((rc = score_all(all, held, scratch, o, model, body, &c->train_after, &c->heldout_after, err))) goto out;
    c->hw = scratch;
    scratch = NULL;
out:
    opm_hardware_free(scratch);
    set_free(&train);
    free(body);
    free(held);
    return rc;
}

int opm_calibrate(const opm_hardware *start, const opm_cal_options *o, opm_calibration *c, opm_error *err)
{
    memset(c, 0, sizeof *c);
    if (!o->data) return opm_err(err, OPM_EINVAL, "--data", "expected a CSV file or a directory");
    const char *model = o->model ? o->model : "extended_roofline";
    if (!opm_model_find(model))
        return opm_err(err, OPM_ENOTFOUND, "--model", "no model named '%s' (see `opmodel models`)", model);
    opm_strlcpy(c->model, model, sizeof c->model);
    opm_strlcpy(c->hardware, start->name, sizeof c->hardware);
    opm_strlcpy(c->rows_for, o->rows_for ? o->rows_for : start->name, sizeof c->rows_for);
    size_t dl = strlen(o->data) + 1;
    if (!(c->data = malloc(dl))) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    memcpy(c->data, o->data, dl);

    cal_set all = {0};
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.want = c->rows_for;
    rd.set = &all;
    all.clock_hz = start->cparam[CP_CLOCK_HZ];
    rd.err = err;
    int rc = read_data(&rd, o->data);
    c->files = rd.files;
    c->rows_read = rd.rows_read;
    c->rows = all.n;
    if (!rc && all.n == 0) rc = no_rows_error(&rd, o->data, err);
    if (!rc) rc = run_fit(start, o, &all, c, err);
    set_free(&all);
    if (rc) opm_calibration_free(c);
    return rc;
}

void opm_calibration_free(opm_calibration *c)
{
    opm_hardware_free(c->hw);
    free(c->data);
    memset(c, 0, sizeof *c);
}

/* ---- the annotated YAML ---- */

/* A string on one comment line: control characters become '?'. */
static void put_clean(strbuf *t, const char *s)
{
    for (; *s; s++) sb_putc(t, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

static const char *why_not(int status)
{
    return status == OPM_CAL_NOT_ASKED ? "not asked for (--fit)"
         : status == OPM_CAL_NO_ROWS   ? "no training row runs on this engine"
                                       : "";
}

char *opm_calibration_to_yaml(const opm_calibration *c, const char *command_line, opm_error *err)
{
    char *body = opm_hardware_to_yaml(c->hw, err);
    if (!body) return NULL;
    double clock = c->hw->cparam[CP_CLOCK_HZ];
    strbuf t = {0};
    sb_puts(&t, "# ");
    put_clean(&t, c->hardware);
    sb_puts(&t, " calibrated by `opmodel calibrate` against measured GEMM latencies.\n");
    if (command_line) {
        sb_puts(&t, "# command: ");
        put_clean(&t, command_line);
        sb_puts(&t, "\n");
    }
    sb_puts(&t, "# data: ");
    put_clean(&t, c->data);
    sb_printf(&t, " (%zu file%s), rows with hardware '", c->files, c->files == 1 ? "" : "s");
    put_clean(&t, c->rows_for);
    sb_printf(&t, "': %zu; %zu train, %zu held out (every %dth row), %zu the model cannot predict\n", c->rows,
              c->train_before.n, c->heldout_before.n, OPM_CAL_HOLDOUT_EVERY, c->rows_failed);
    sb_printf(&t, "# model: %s; fit: bounded least squares on log(predicted/measured) over the train rows\n", c->model);
    sb_puts(&t, "# parameter: before -> after [bounds]\n");
    for (int p = 0; p < OPM_CAL_NPARAMS; p++) {
        const opm_cal_param *pp = &c->param[p];
        sb_printf(&t, "#   %s: %.6g", opm_cal_param_paths[p], pp->before);
        if (pp->status == OPM_CAL_FITTED)
            sb_printf(&t, " -> %.6g [%.6g, %.6g]%s", pp->after, pp->lo, pp->hi, pp->at_bound ? " (at a bound)" : "");
        else
            sb_printf(&t, ", kept: %s", why_not(pp->status));
        if (p == OPM_CAL_OVERHEAD)
            sb_printf(&t, " (%.3f -> %.3f us)", pp->before / clock * 1e6, pp->after / clock * 1e6);
        sb_puts(&t, "\n");
    }
    sb_printf(&t, "# MAPE %%: train %.2f -> %.2f, held-out ", c->train_before.mape, c->train_after.mape);
    if (c->heldout_before.n) sb_printf(&t, "%.2f -> %.2f\n", c->heldout_before.mape, c->heldout_after.mape);
    else sb_puts(&t, "n/a (no held-out row)\n");
    sb_puts(&t, body);
    free(body);
    if (t.oom) {
        free(t.p);
        opm_err(err, OPM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    return t.p;
}
