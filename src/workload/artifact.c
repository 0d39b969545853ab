/* artifact.c — validate-artifact (artifact.h): EnergAIzer end-to-end runs
 * against whole-workload predictions.
 *
 * Matching follows the artifact's own rule: a run's name
 * `{model}_{config}_p{prec}_b{batch}[_s{seq}_mode{mode}][_attn{impl}]_freq{f}_iter{n}.csv`
 * and a kernel list's file name `{model}_{config}_p{prec}_b{batch}[_s{seq}_mode{mode}][_freq{f}].json`
 * match when model, config, precision, batch, sequence and mode agree, and,
 * where the kernel list names a clock (the vision lists do), the clock too.
 * Runs of a measurement file named *dvfs* look in workloads/dvfs first, then in
 * workloads/all; the others in workloads/all.  fp32 runs have no kernel list
 * and are reported unmatched.
 *
 * A run "ran out of memory" when its measured time is under a fifth of the
 * predicted device time of its listed kernels (graph mode, no host gaps):
 * such a run cannot have executed them — the A10 runs of long sequences end
 * at idle power within a tenth of a second — and is reported, not scored.
 *
 * Each run is predicted in eager mode at its own clock (avg_freq).  Per
 * hardware the host launch interval is the only calibrated number: the
 * ART_CAL_RUNS runs whose predicted device time per kernel is smallest (the
 * most host-bound, ties by name) fit it by minimising the squared relative
 * time error over [0, ART_MAX_INTERVAL_S]; they are not scored.  The
 * uncalibrated score uses the default host's interval on the same runs.
 *
 * Kernel lists are read with the kernels their model's architecture runs
 * and the list leaves out (energaizer.c) unless as_listed.
 *
 * What a run's time is.  The artifact's harness (test/code/run_model.py,
 * parse_result.py) times one iteration t1, then spawns a poller and a
 * process that runs n = ceil(30 s / t1) iterations (the run's `_iter{n}`),
 * and reports the power-sampling window / n.  The window opens when the
 * poller samples, so it holds the runner's start-up too (its CUDA context,
 * the model handed over, the first cold iteration, its exit): a start-up S
 * per host, so time = t + S / n and energy = e + idle power x S / n, the GPU
 * idle at its locked clock meanwhile.  S is measured per measurement file on
 * the runs no prediction touches (unmatched: no kernel list) as the median
 * of n x time - 30 s - time / 2 (the ceil leaves n x t1 on average half an
 * iteration over 30 s), at least 0; it is never fitted on scored runs.  On
 * the shipped data: 1.52 s (A100 900 MHz, 49 runs), 1.43 s (A100 DVFS, 44),
 * 1.07 s (A10, 26); the runs that ran out of memory, whose window is the
 * start-up and a failed first iteration, read 1.6-2.3 s and 1.3-1.5 s. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../validate/csv.h"
#include "../validate/general.h"
#include "workload_internal.h"
#include "artifact.h"

/* A run below this fraction of its predicted device time did not run it. */
#define ART_OOM_FRACTION 0.2

typedef struct art_key {
    char model[64], config[64], prec[16], mode[32];
    long batch, seq;                      /* seq -1: none (vision) */
    int freq;                             /* -1: none */
    long iter;                            /* 0: none; not part of the match */
} art_key;

/* Parses a run or kernel-list name (without extension) into k; 0 or -1. */
static int parse_name(const char *name, art_key *k)
{
    memset(k, 0, sizeof *k);
    k->seq = -1;
    k->freq = -1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    /* model and config: the first two '_' fields (config may be empty). */
    char *p = strchr(buf, '_');
    if (!p) return -1;
    *p++ = '\0';
    snprintf(k->model, sizeof k->model, "%s", buf);
    char *q = strstr(p, "_p");
    if (!q) return -1;
    *q = '\0';
    snprintf(k->config, sizeof k->config, "%s", p);
    p = q + 2;
    int have_batch = 0;
    char *save = NULL; /* strtok_r: strtok keeps hidden state across threads */
    for (char *tok = strtok_r(p, "_", &save); tok; tok = strtok_r(NULL, "_", &save)) {
        if (!k->prec[0]) {
            snprintf(k->prec, sizeof k->prec, "%s", tok);
        } else if (tok[0] == 'b' && isdigit((unsigned char)tok[1])) {
            k->batch = strtol(tok + 1, NULL, 10);
            have_batch = 1;
        } else if (tok[0] == 's' && isdigit((unsigned char)tok[1])) {
            k->seq = strtol(tok + 1, NULL, 10);
        } else if (!strncmp(tok, "mode", 4)) {
            snprintf(k->mode, sizeof k->mode, "%s", tok + 4);
        } else if (!strncmp(tok, "freq", 4)) {
            k->freq = (int)strtol(tok + 4, NULL, 10);
        } else if (!strncmp(tok, "iter", 4) && isdigit((unsigned char)tok[4])) {
            long n = strtol(tok + 4, NULL, 10);
            k->iter = n > 0 ? n : 0;
        } /* attn{impl}: not part of the match */
    }
    return have_batch && k->prec[0] ? 0 : -1;
}

static int same_config(const art_key *run, const art_key *wl)
{
    return !strcmp(run->model, wl->model) && !strcmp(run->config, wl->config) && !strcmp(run->prec, wl->prec) &&
           run->batch == wl->batch && run->seq == wl->seq && !strcmp(run->mode, wl->mode) &&
           (wl->freq < 0 || wl->freq == run->freq);
}

static int oom(opm_error *err) { return opm_err(err, OPM_ENOMEM, NULL, "out of memory"); }

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static long intern(char ***names, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*names)[i], s)) return (long)i;
    char **nn = realloc(*names, (*n + 1) * sizeof *nn);
    if (!nn) return -1;
    *names = nn;
    if (!(nn[*n] = strdup(s))) return -1;
    return (long)(*n)++;
}

void art_free(art_result *r)
{
    for (size_t i = 0; i < r->n_runs; i++) {
        free(r->runs[i].dev_s);
        free(r->runs[i].op_j);
        free(r->runs[i].cut_j);
    }
    free(r->runs);
    for (size_t i = 0; i < r->n_files; i++) free(r->files[i]);
    free(r->files);
    for (size_t i = 0; i < r->n_hw; i++) free(r->hw_names[i]);
    free(r->hw_names);
    free(r->launch_interval_s);
    free(r->startup_s);
    free(r->startup_runs);
    for (size_t i = 0; i < r->n_families; i++) free(r->families[i]);
    free(r->families);
    for (size_t i = 0; i < r->n_workloads; i++) {
        opm_workload_free(r->workloads[i]);
        free(r->workload_names[i]);
    }
    free(r->workloads);
    free(r->workload_names);
    free(r->clocks);
    free(r->by_hw);
    free(r->unc_by_hw);
    free(r->by_file);
    free(r->unc_by_file);
    free(r->by_family);
    free(r->by_clock);
    free(r->by_file_clock);
    memset(r, 0, sizeof *r);
}

/* Kernel lists of one folder (workloads/all or workloads/dvfs). */
typedef struct wl_dir {
    size_t first, n;                 /* range in r->workloads */
} wl_dir;

static int load_workloads(art_result *r, const char *dir, wl_dir *out, opm_error *err)
{
    char **paths = NULL;
    size_t n = 0, cap = 0;
    out->first = r->n_workloads;
    out->n = 0;
    opm_error e2;
    if (opm_list_dir_ext(dir, ".json", "--data-dir", &paths, &n, &cap, &e2)) return 0; /* absent: no lists */
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        opm_workload **nw = realloc(r->workloads, (r->n_workloads + 1) * sizeof *nw);
        char **nn = nw ? realloc(r->workload_names, (r->n_workloads + 1) * sizeof *nn) : NULL;
        if (nw) r->workloads = nw;
        if (nn) r->workload_names = nn;
        if (!nw || !nn) {
            rc = oom(err);
            break;
        }
        opm_workload *w = opm_workload_new(err);
        if (!w) {
            rc = OPM_ENOMEM;
            break;
        }
        opm_workload_set_implied_kernels(w, !r->as_listed);
        if ((rc = opm_workload_add_file(w, paths[i], err))) {
            opm_workload_free(w);
            break;
        }
        r->implied_kernels += opm_workload_implied(w);
        /* A run matched to no kernels would score 0 s and 0 J. */
        if (opm_workload_kernel_count(w) == 0) {
            opm_workload_free(w);
            rc = opm_err(err, OPM_EINVAL, NULL, "%s: expected a kernel list with at least one kernel", paths[i]);
            break;
        }
        const char *b = base_name(paths[i]);
        size_t bl = strlen(b);
        char *stem = strndup(b, bl > 5 ? bl - 5 : bl);
        if (!stem) {
            opm_workload_free(w);
            rc = oom(err);
            break;
        }
        r->workloads[r->n_workloads] = w;
        r->workload_names[r->n_workloads++] = stem;
        out->n++;
    }
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    return rc;
}

static long match(const art_result *r, const wl_dir *d, const art_key *k)
{
    for (size_t i = d->first; i < d->first + d->n; i++) {
        art_key wk;
        if (parse_name(r->workload_names[i], &wk) == 0 && same_config(k, &wk)) return (long)i;
    }
    return -1;
}

/* Reads one measurement file; the hardware is the longest built-in name
 * that starts the file name. */
static int read_runs(art_result *r, const char *path, const wl_dir *all, const wl_dir *dvfs, opm_error *err)
{
    const char *b = base_name(path);
    const char *hw = NULL;
    size_t best = 0;
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        const char *nm = opm_hardware_builtin_name(i);
        size_t l = strlen(nm);
        if (l > best && !strncmp(b, nm, l) && (b[l] == '_' || b[l] == '.')) {
            best = l;
            hw = nm;
        }
    }
    if (!hw)
        return opm_err(err, OPM_EINVAL, "--data-dir", "%s: expected a file name that starts with a built-in hardware name",
                       path);
    size_t bl = strlen(b);
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(bl > 4 ? bl - 4 : bl), b);
    long fi = intern(&r->files, &r->n_files, stem), hi = intern(&r->hw_names, &r->n_hw, hw);
    if (fi < 0 || hi < 0) return oom(err);
    int is_dvfs = strstr(b, "dvfs") != NULL;
    opm_csv c = {0};
    int rc = opm_csv_open(&c, path, "--data-dir", err);
    if (rc) return rc;
    static const char *const cols[] = {"workload", "energy", "time", "avg_freq"};
    int col[4];
    if ((rc = opm_csv_read(&c, err)) || c.nf == 0) {
        opm_csv_close(&c);
        return rc ? rc : opm_err(err, OPM_EINVAL, "--data-dir", "%s: empty file", path);
    }
    opm_csv_columns(&c, cols, 4, col);
    for (int i = 0; i < 4; i++)
        if (col[i] < 0) {
            rc = opm_csv_error(&c, err, cols[i], "missing column; expected a header with workload, energy, time, avg_freq");
            opm_csv_close(&c);
            return rc;
        }
    while (!(rc = opm_csv_read(&c, err)) && c.nf > 0) {
        /* Another header line inside the file (a concatenation) is skipped. */
        if (!strcmp(c.fld[col[0] < c.nf ? col[0] : 0], "workload")) continue;
        for (int i = 0; i < 4; i++)
            if (col[i] >= c.nf) {
                rc = opm_csv_error(&c, err, cols[i], "missing field");
                goto out;
            }
        art_run run;
        memset(&run, 0, sizeof run);
        snprintf(run.name, sizeof run.name, "%s", c.fld[col[0]]);
        char *end;
        double v[3];
        for (int i = 1; i < 4; i++) {
            v[i - 1] = strtod(c.fld[col[i]], &end);
            if (end == c.fld[col[i]] || *end || !(v[i - 1] > 0) || !isfinite(v[i - 1])) {
                rc = opm_csv_error(&c, err, cols[i], "expected a positive number, got '%s'", c.fld[col[i]]);
                goto out;
            }
        }
        run.energy_j = v[0];
        run.time_s = v[1] / 1e3;   /* the artifact's time is ms per iteration */
        /* Under 1 MHz no GPU runs: such a clock would predict infinite time. */
        if (v[2] < 1) {
            rc = opm_csv_error(&c, err, cols[3], "expected a clock of at least 1 MHz, got '%s'", c.fld[col[3]]);
            goto out;
        }
        run.avg_freq_mhz = v[2];
        run.file = (uint32_t)fi;
        run.hw = (uint32_t)hi;
        run.workload = -1;
        run.status = ART_UNMATCHED;
        char nm[256];
        snprintf(nm, sizeof nm, "%s", run.name);
        size_t nl = strlen(nm);
        if (nl > 4 && !strcmp(nm + nl - 4, ".csv")) nm[nl - 4] = '\0';
        art_key k;
        if (parse_name(nm, &k) == 0) {
            long fam = intern(&r->families, &r->n_families, k.model);
            if (fam < 0) {
                rc = oom(err);
                goto out;
            }
            run.family = (uint32_t)fam;
            run.clock_mhz = k.freq >= 0 ? k.freq : (int)lround(run.avg_freq_mhz);
            run.iterations = k.iter;
            run.workload = is_dvfs ? match(r, dvfs, &k) : -1;
            if (run.workload < 0) run.workload = match(r, all, &k);
            if (run.workload >= 0) run.status = ART_SCORED;
        } else {
            long fam = intern(&r->families, &r->n_families, "unknown");
            if (fam < 0) {
                rc = oom(err);
                goto out;
            }
            run.family = (uint32_t)fam;
            run.clock_mhz = (int)lround(run.avg_freq_mhz);
        }
        art_run *nr = realloc(r->runs, (r->n_runs + 1) * sizeof *nr);
        if (!nr) {
            rc = oom(err);
            goto out;
        }
        r->runs = nr;
        r->runs[r->n_runs++] = run;
    }
out:
    opm_csv_close(&c);
    return rc;
}

typedef struct cal_pick {
    double per_kernel_s;
    size_t run;
} cal_pick;

static int cmp_pick(const void *pa, const void *pb)
{
    const cal_pick *a = pa, *b = pb;
    if (a->per_kernel_s != b->per_kernel_s) return a->per_kernel_s < b->per_kernel_s ? -1 : 1;
    return a->run < b->run ? -1 : a->run > b->run;
}

/* One run's predicted time and energy per reported iteration at launch
 * interval L: its kernels, then its share of the harness start-up, idle.
 * The power limit weighs the iterations alone (wl_sum): the start-up is not
 * in the window it averages over. */
static void run_sum(const art_result *r, const art_run *u, double L, double *t, double *e)
{
    wl_sum(r->workloads[u->workload], u->dev_s, u->op_j, u->cut_j, L, u->idle_w, u->tdp_w, t, e);
    if (u->iterations > 0 && !r->no_harness) {
        double s = r->startup_s[u->file] / (double)u->iterations;
        *t += s;
        *e += u->idle_w * s;
    }
}

static double cal_cost(const art_result *r, const size_t *runs, size_t n, double L)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        const art_run *u = &r->runs[runs[i]];
        double t, e;
        run_sum(r, u, L, &t, &e);
        double d = t / u->time_s - 1;
        s += d * d;
    }
    return s;
}

/* The interval in [0, ART_MAX_INTERVAL_S] with the least cost: a scan at
 * 0.5 us, then golden-section refinement around the best step. */
static double fit_interval(const art_result *r, const size_t *runs, size_t n)
{
    double best = 0, bc = INFINITY, step = 0.5e-6;
    int steps = (int)lround(ART_MAX_INTERVAL_S / step);
    for (int i = 0; i <= steps; i++) {
        double L = step * i, c = cal_cost(r, runs, n, L);
        if (c < bc) {
            bc = c;
            best = L;
        }
    }
    double a = best > step ? best - step : 0, b = best + step < ART_MAX_INTERVAL_S ? best + step : ART_MAX_INTERVAL_S;
    const double g = 0.6180339887498949;
    for (int it = 0; it < 40; it++) {
        double x1 = b - g * (b - a), x2 = a + g * (b - a);
        if (cal_cost(r, runs, n, x1) <= cal_cost(r, runs, n, x2)) b = x2;
        else a = x1;
    }
    double m = (a + b) / 2;
    return cal_cost(r, runs, n, m) <= bc ? m : best;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Per measurement file, the harness start-up its unmatched runs measure
 * (file comment); 0 where none carries an iteration count. */
static int measure_startup(art_result *r, opm_error *err)
{
    r->startup_s = calloc(r->n_files ? r->n_files : 1, sizeof *r->startup_s);
    r->startup_runs = calloc(r->n_files ? r->n_files : 1, sizeof *r->startup_runs);
    double *v = malloc((r->n_runs ? r->n_runs : 1) * sizeof *v);
    if (!r->startup_s || !r->startup_runs || !v) {
        free(v);
        return oom(err);
    }
    for (size_t f = 0; f < r->n_files; f++) {
        size_t n = 0;
        for (size_t i = 0; i < r->n_runs; i++) {
            const art_run *u = &r->runs[i];
            if (u->file != f || u->status != ART_UNMATCHED || u->iterations <= 0) continue;
            v[n++] = (double)u->iterations * u->time_s - ART_HARNESS_WINDOW_S - u->time_s / 2;
        }
        r->startup_runs[f] = n;
        if (!n) continue;
        qsort(v, n, sizeof *v, cmp_double);
        double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        r->startup_s[f] = med > 0 && isfinite(med) ? med : 0;
    }
    free(v);
    return 0;
}

/* Stats of the scored runs whose key(run) == k (k < 0: all). */
typedef long (*run_key)(const art_run *u);
static long key_hw(const art_run *u) { return u->hw; }
static long key_file(const art_run *u) { return u->file; }
static long key_family(const art_run *u) { return u->family; }
static long key_clock(const art_run *u) { return u->clock_mhz; }

static void stats3_2(const art_result *r, run_key key, long k, run_key key2, long k2, int uncal, double *buf,
                     art_stats3 *s)
{
    size_t n = 0, N = r->n_runs;
    double *pt = buf, *mt = buf + N, *pe = buf + 2 * N, *me = buf + 3 * N, *pp = buf + 4 * N, *mp = buf + 5 * N,
           *scratch = buf + 6 * N;
    for (size_t i = 0; i < N; i++) {
        const art_run *u = &r->runs[i];
        if (u->status != ART_SCORED || (key && key(u) != k) || (key2 && key2(u) != k2)) continue;
        pt[n] = uncal ? u->unc_time_s : u->pred_time_s;
        pe[n] = uncal ? u->unc_energy_j : u->pred_energy_j;
        mt[n] = u->time_s;
        me[n] = u->energy_j;
        pp[n] = pe[n] / pt[n];
        mp[n] = me[n] / mt[n];
        n++;
    }
    opm_err_stats_of(pt, mt, n, scratch, &s->time);
    opm_err_stats_of(pe, me, n, scratch, &s->energy);
    opm_err_stats_of(pp, mp, n, scratch, &s->power);
}

static void stats3(const art_result *r, run_key key, long k, int uncal, double *buf, art_stats3 *s)
{
    stats3_2(r, key, k, NULL, 0, uncal, buf, s);
}

int art_run_all(art_result *r, const char *data_dir, const char *model, unsigned flags, opm_error *err)
{
    memset(r, 0, sizeof *r);
    r->as_listed = (flags & ART_AS_LISTED) != 0;
    r->no_harness = (flags & ART_NO_HARNESS) != 0;
    r->model = model ? model : "extended_roofline";
    snprintf(r->data_dir, sizeof r->data_dir, "%s", data_dir);
    const opm_model *m = opm_model_find(r->model);
    if (!m) return opm_err(err, OPM_ENOTFOUND, "--model", "no model named '%s' (see `opmodel models`)", r->model);
    r->default_interval_s = opm_workload_host_at(0)->launch_interval_s;
    char path[4200];
    wl_dir all, dvfs;
    int rc;
    snprintf(path, sizeof path, "%s/workloads/all", data_dir);
    if ((rc = load_workloads(r, path, &all, err))) return rc;
    snprintf(path, sizeof path, "%s/workloads/dvfs", data_dir);
    if ((rc = load_workloads(r, path, &dvfs, err))) return rc;
    if (!all.n && !dvfs.n)
        return opm_err(err, OPM_EINVAL, "--data-dir", "%s: expected kernel lists in workloads/all/*.json", data_dir);
    snprintf(path, sizeof path, "%s/measurements", data_dir);
    char **paths = NULL;
    size_t np = 0, cap = 0;
    if ((rc = opm_list_dir_ext(path, "_e2e.csv", "--data-dir", &paths, &np, &cap, err))) return rc;
    for (size_t i = 0; i < np && !rc; i++) rc = read_runs(r, paths[i], &all, &dvfs, err);
    for (size_t i = 0; i < np; i++) free(paths[i]);
    free(paths);
    if (rc) return rc;
    if (!(r->launch_interval_s = calloc(r->n_hw ? r->n_hw : 1, sizeof *r->launch_interval_s))) return oom(err);
    if ((rc = measure_startup(r, err))) return rc;

    /* Predict every matched run at its clock: per-op costs kept for the fit. */
    opm_hardware **base = calloc(r->n_hw ? r->n_hw : 1, sizeof *base);
    if (!base) return oom(err);
    for (size_t h = 0; h < r->n_hw && !rc; h++)
        if (!(base[h] = opm_hardware_builtin(r->hw_names[h], err))) rc = err ? err->code : OPM_EINVAL;
    for (size_t i = 0; i < r->n_runs && !rc; i++) {
        art_run *u = &r->runs[i];
        if (u->workload < 0) continue;
        r->runs_matched++;
        opm_workload *w = r->workloads[u->workload];
        size_t nops = opm_workload_op_count(w);
        u->dev_s = malloc((nops ? nops : 1) * sizeof *u->dev_s);
        u->op_j = malloc((nops ? nops : 1) * sizeof *u->op_j);
        u->cut_j = malloc((nops ? nops : 1) * sizeof *u->cut_j);
        if (!u->dev_s || !u->op_j || !u->cut_j) {
            rc = oom(err);
            break;
        }
        opm_hardware *hw = opm_hardware_with_clock(base[u->hw], u->avg_freq_mhz * 1e6, err);
        if (!hw) {
            opm_err_prefix(err, u->name);
            rc = err ? err->code : OPM_EINVAL;
            break;
        }
        u->idle_w = opm_hardware_idle_power_w(hw, 0);
        u->tdp_w = opm_hardware_tdp_w(hw);
        rc = wl_costs(w, hw, m, u->dev_s, u->op_j, u->cut_j, err);
        opm_hardware_free(hw);
        if (rc) {
            opm_err_prefix(err, u->name);
            break;
        }
        double e;
        wl_sum(w, u->dev_s, u->op_j, u->cut_j, 0, u->idle_w, u->tdp_w, &u->device_s, &e);
        if (u->time_s < ART_OOM_FRACTION * u->device_s) {
            u->status = ART_OUT_OF_MEMORY;
            r->runs_oom++;
        }
    }
    for (size_t h = 0; h < r->n_hw; h++) opm_hardware_free(base[h]);
    free(base);
    if (rc) return rc;

    /* Calibration: per hardware the most host-bound runs. */
    cal_pick *pick = malloc((r->n_runs ? r->n_runs : 1) * sizeof *pick);
    size_t *sel = malloc((r->n_runs ? r->n_runs : 1) * sizeof *sel);
    if (!pick || !sel) {
        free(pick);
        free(sel);
        return oom(err);
    }
    for (size_t h = 0; h < r->n_hw; h++) {
        size_t n = 0;
        for (size_t i = 0; i < r->n_runs; i++) {
            const art_run *u = &r->runs[i];
            if (u->hw != h || u->status != ART_SCORED) continue;
            double k = (double)opm_workload_kernel_count(r->workloads[u->workload]);
            pick[n++] = (cal_pick){u->device_s / (k > 0 ? k : 1), i};
        }
        qsort(pick, n, sizeof *pick, cmp_pick);
        /* Never all of a hardware's runs: at most half, so some are scored. */
        size_t nc = n / 2 < ART_CAL_RUNS ? n / 2 : ART_CAL_RUNS;
        for (size_t j = 0; j < nc; j++) {
            sel[j] = pick[j].run;
            r->runs[pick[j].run].status = ART_CALIBRATION;
        }
        r->calibration_runs += nc;
        r->launch_interval_s[h] = nc ? fit_interval(r, sel, nc) : r->default_interval_s;
    }
    free(pick);
    free(sel);
    for (size_t i = 0; i < r->n_runs; i++) {
        art_run *u = &r->runs[i];
        if (u->status != ART_SCORED && u->status != ART_CALIBRATION) continue;
        run_sum(r, u, r->launch_interval_s[u->hw], &u->pred_time_s, &u->pred_energy_j);
        run_sum(r, u, r->default_interval_s, &u->unc_time_s, &u->unc_energy_j);
    }

    /* Clocks present among scored runs. */
    r->clocks = malloc((r->n_runs ? r->n_runs : 1) * sizeof *r->clocks);
    if (!r->clocks) return oom(err);
    for (size_t i = 0; i < r->n_runs; i++) {
        if (r->runs[i].status != ART_SCORED) continue;
        int c = r->runs[i].clock_mhz, seen = 0;
        for (size_t j = 0; j < r->n_clocks; j++) seen |= r->clocks[j] == c;
        if (!seen) r->clocks[r->n_clocks++] = c;
    }
    qsort(r->clocks, r->n_clocks, sizeof *r->clocks, cmp_int);

    double *buf = malloc((7 * r->n_runs + 1) * sizeof *buf);
    r->by_hw = calloc(r->n_hw + 1, sizeof *r->by_hw);
    r->unc_by_hw = calloc(r->n_hw + 1, sizeof *r->unc_by_hw);
    r->by_file = calloc(r->n_files + 1, sizeof *r->by_file);
    r->unc_by_file = calloc(r->n_files + 1, sizeof *r->unc_by_file);
    r->by_family = calloc(r->n_families + 1, sizeof *r->by_family);
    r->by_clock = calloc(r->n_clocks + 1, sizeof *r->by_clock);
    r->by_file_clock = calloc(r->n_files * r->n_clocks + 1, sizeof *r->by_file_clock);
    if (!buf || !r->by_file_clock || !r->by_hw || !r->unc_by_hw || !r->by_file || !r->unc_by_file || !r->by_family || !r->by_clock) {
        free(buf);
        return oom(err);
    }
    stats3(r, NULL, 0, 0, buf, &r->overall);
    stats3(r, NULL, 0, 1, buf, &r->unc_overall);
    for (size_t h = 0; h < r->n_hw; h++) {
        stats3(r, key_hw, (long)h, 0, buf, &r->by_hw[h]);
        stats3(r, key_hw, (long)h, 1, buf, &r->unc_by_hw[h]);
    }
    for (size_t f = 0; f < r->n_files; f++) {
        stats3(r, key_file, (long)f, 0, buf, &r->by_file[f]);
        stats3(r, key_file, (long)f, 1, buf, &r->unc_by_file[f]);
    }
    for (size_t f = 0; f < r->n_families; f++) stats3(r, key_family, (long)f, 0, buf, &r->by_family[f]);
    for (size_t c = 0; c < r->n_clocks; c++) stats3(r, key_clock, r->clocks[c], 0, buf, &r->by_clock[c]);
    for (size_t f = 0; f < r->n_files; f++)
        for (size_t c = 0; c < r->n_clocks; c++)
            stats3_2(r, key_file, (long)f, key_clock, r->clocks[c], 0, buf, &r->by_file_clock[f * r->n_clocks + c]);
    free(buf);
    opm_error_clear(err);
    return 0;
}
