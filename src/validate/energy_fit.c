/* energy_fit.c — the calibrate-energy fit (energy_fit.h): per-line energy
 * terms gathered while opm_general reads the lines, a deterministic
 * train/held-out split, bounded non-negative least squares on relative
 * error (exact, over the bound assignments), and the calibrated copy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../hardware/hw_internal.h"
#include "../models/energy.h"
#include "energy_fit.h"

const char *const opm_efit_names[OPM_EFIT_N] = {"compute", "dram", "l2", "static"};

/* One line in EFIT_HOLD_EVERY is held out (by hash). */
#define EFIT_HOLD_EVERY 4

static uint32_t fnv1a(const char *s, uint32_t line)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    for (int i = 0; i < 4; i++) h = (h ^ ((line >> (8 * i)) & 0xff)) * 16777619u;
    return h;
}

static int on_line(void *ctx, const opm_general *v, const opm_general_line *l, const opm_profile *p,
                   const opm_hardware *hw)
{
    opm_energy_fit *f = ctx;
    if (strcmp(opm_hardware_name(hw), f->hw_name)) {
        f->rows_other_hw++;
        return 0;
    }
    if (!(l->measured_j > 0)) {
        f->rows_no_energy++;
        return 0;
    }
    /* A line the model puts at tdp_w (the TDP left the active base power
     * only part) has energy tdp_w × time whatever the per-term
     * coefficients: it says nothing of them, and is not used. */
    const opm_diag *act = opm_profile_diag(p, "active_power_w");
    double act_w = act && !act->is_text ? act->number : 0;
    if (act && act_w < opm_energy_active_power_w(hw) * (1 - 1e-9)) {
        f->rows_at_tdp++;
        return 0;
    }
    if (opm_array_grow((void **)&f->rows, &f->cap, f->n_rows + 1, sizeof *f->rows)) return -1;
    opm_efit_row *r = &f->rows[f->n_rows++];
    memset(r, 0, sizeof *r);
    r->measured_j = l->measured_j;
    /* The active base power (energy.c) is no J/FLOP: charged as it is. */
    double act_j = act_w * p->latency_s;
    r->term[OPM_EFIT_COMPUTE] = p->compute_energy_j - act_j;
    r->fixed_j = act_j;
    /* Static energy over the predicted latency, as the calibrated file
     * will charge it: the held-out error reported is the one it gives. */
    r->term[OPM_EFIT_STATIC] = p->static_energy_j;
    for (size_t i = 0; i < p->level_count; i++) {
        if (!strcmp(p->levels[i].name, "hbm")) r->term[OPM_EFIT_DRAM] += p->levels[i].energy_j;
        else if (!strcmp(p->levels[i].name, "l2")) r->term[OPM_EFIT_L2] += p->levels[i].energy_j;
        else r->fixed_j += p->levels[i].energy_j;
    }
    r->held_out = fnv1a(v->file_tab.strs[l->file], l->line) % EFIT_HOLD_EVERY == 0;
    return 0;
}

static double predict_row(const opm_efit_row *r, const double *a)
{
    double e = r->fixed_j;
    for (int i = 0; i < OPM_EFIT_N; i++) e += a[i] * r->term[i];
    return e;
}

static double mape(const opm_energy_fit *f, const double *a, int held)
{
    double s = 0;
    size_t n = 0;
    for (size_t i = 0; i < f->n_rows; i++) {
        const opm_efit_row *r = &f->rows[i];
        if (r->held_out != held) continue;
        s += fabs(predict_row(r, a) - r->measured_j) / r->measured_j;
        n++;
    }
    return n ? 100 * s / (double)n : 0;
}

/* Solves the n×n system M x = r in place (partial pivoting); 0 when singular. */
static int solve(int n, double M[OPM_EFIT_N][OPM_EFIT_N], double *r)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int k = c + 1; k < n; k++)
            if (fabs(M[k][c]) > fabs(M[piv][c])) piv = k;
        if (!(fabs(M[piv][c]) > 1e-300)) return 0;
        for (int k = 0; k < n; k++) {
            double t = M[c][k];
            M[c][k] = M[piv][k];
            M[piv][k] = t;
        }
        double t = r[c];
        r[c] = r[piv];
        r[piv] = t;
        for (int k = c + 1; k < n; k++) {
            double f = M[k][c] / M[c][c];
            for (int l = c; l < n; l++) M[k][l] -= f * M[c][l];
            r[k] -= f * r[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        for (int k = c + 1; k < n; k++) r[c] -= M[c][k] * r[k];
        r[c] /= M[c][c];
    }
    return 1;
}

/* min Σ ((Σ a_i x_i + c − y) / y)² over a ∈ [0, OPM_EFIT_MAX]^N, i.e.
 * aᵀAa − 2bᵀa with A_ij = Σ x_i x_j / y², b_i = Σ x_i (y − c) / y².  Exact:
 * the minimum is a KKT point, where each multiplier is free (its row of
 * the normal equations holds) or at a bound, so every one of the 3^N
 * assignments is solved and the best feasible one kept (81 small solves). */
static void fit(opm_energy_fit *f)
{
    double A[OPM_EFIT_N][OPM_EFIT_N] = {{0}}, b[OPM_EFIT_N] = {0};
    for (size_t k = 0; k < f->n_rows; k++) {
        const opm_efit_row *r = &f->rows[k];
        if (r->held_out) continue;
        double w = 1 / (r->measured_j * r->measured_j);
        for (int i = 0; i < OPM_EFIT_N; i++) {
            b[i] += w * r->term[i] * (r->measured_j - r->fixed_j);
            for (int j = 0; j < OPM_EFIT_N; j++) A[i][j] += w * r->term[i] * r->term[j];
        }
    }
    for (int i = 0; i < OPM_EFIT_N; i++) {
        f->alpha[i] = 1;
        f->fitted[i] = A[i][i] > 0;
    }
    double best = HUGE_VAL, best_a[OPM_EFIT_N];
    memcpy(best_a, f->alpha, sizeof best_a);
    int combos = 1;
    for (int i = 0; i < OPM_EFIT_N; i++) combos *= 3;
    for (int code = 0; code < combos; code++) {
        double a[OPM_EFIT_N];
        int freev[OPM_EFIT_N], nf = 0, skip = 0;
        for (int i = 0, c = code; i < OPM_EFIT_N; i++, c /= 3) {
            int st = c % 3;                        /* 0 free, 1 at 0, 2 at the upper bound */
            if (!f->fitted[i]) {
                skip |= st != 0;                    /* one assignment per unfitted term */
                a[i] = 1;
                continue;
            }
            a[i] = st == 1 ? 0 : st == 2 ? OPM_EFIT_MAX : NAN;
            if (st == 0) freev[nf++] = i;
        }
        if (skip) continue;
        double M[OPM_EFIT_N][OPM_EFIT_N], r[OPM_EFIT_N];
        for (int p = 0; p < nf; p++) {
            r[p] = b[freev[p]];
            for (int j = 0; j < OPM_EFIT_N; j++)
                if (isfinite(a[j]) && f->fitted[j]) r[p] -= A[freev[p]][j] * a[j];
            for (int q = 0; q < nf; q++) M[p][q] = A[freev[p]][freev[q]];
        }
        if (nf && !solve(nf, M, r)) continue;
        int ok = 1;
        for (int p = 0; p < nf; p++) {
            ok &= r[p] >= 0 && r[p] <= OPM_EFIT_MAX;
            a[freev[p]] = r[p];
        }
        if (!ok) continue;
        double obj = 0;
        for (int i = 0; i < OPM_EFIT_N; i++) {
            if (!f->fitted[i]) continue;
            obj -= 2 * b[i] * a[i];
            for (int j = 0; j < OPM_EFIT_N; j++)
                if (f->fitted[j]) obj += a[i] * A[i][j] * a[j];
        }
        if (obj < best) {
            best = obj;
            memcpy(best_a, a, sizeof best_a);
        }
    }
    memcpy(f->alpha, best_a, sizeof best_a);
}

int opm_energy_fit_run(const opm_hardware *hw, const char *const *paths, size_t n_paths, const char *model,
                       opm_energy_fit *f, opm_error *err)
{
    memset(f, 0, sizeof *f);
    f->hw_name = opm_hardware_name(hw);
    int rc = opm_general_init(&f->g, model, 0, err);
    if (rc) return rc;
    if (hw->power_set)
        return opm_err(err, OPM_EINVAL, "--hardware",
                       "%s gives energy_model.power_coefficients; calibrate-energy fits the J/FLOP and J/byte form",
                       f->hw_name);
    f->g.on_line = on_line;
    f->g.on_line_ctx = f;
    for (size_t i = 0; i < n_paths; i++)
        if ((rc = opm_general_add_path(&f->g, paths[i], "--data", err))) return rc;
    for (size_t i = 0; i < f->n_rows; i++) {
        if (f->rows[i].held_out) f->n_held++;
        else f->n_train++;
    }
    if (!f->n_train)
        return opm_err(err, OPM_EINVAL, "--data",
                       "no training line of hardware '%s' with measured.energy_j (%zu lines of it without one, "
                       "%zu of other hardware, %zu bad, %zu predicted at tdp_w)",
                       f->hw_name, f->rows_no_energy, f->rows_other_hw, f->g.rows_failed, f->rows_at_tdp);
    double one[OPM_EFIT_N] = {1, 1, 1, 1};
    f->train_before = mape(f, one, 0);
    f->held_before = mape(f, one, 1);
    fit(f);
    f->train_after = mape(f, f->alpha, 0);
    f->held_after = mape(f, f->alpha, 1);
    return 0;
}

opm_hardware *opm_energy_fit_apply(const opm_hardware *hw, const opm_energy_fit *f, opm_error *err)
{
    opm_hardware *c = opm_hardware_clone(hw, err);
    if (!c) return NULL;
    const double *a = f->alpha;
    /* J/FLOP: given figures scale; the TDP rule's become figures. */
    for (int d = 0; d < OPM_DTYPE_COUNT; d++)
        for (int e = 0; e < 2; e++) {
            double *m = &c->maps[e ? HM_VECTOR_ENERGY : HM_TENSOR_ENERGY][d];
            if (*m <= 0) *m = c->derived_j_per_flop[e][d];
            *m *= a[OPM_EFIT_COMPUTE];
            c->derived_j_per_flop[e][d] = 0;
        }
    for (size_t i = 0; i < c->n_levels; i++) {
        opm_memory_level *l = &c->levels[i];
        double s = !strcmp(l->name, "hbm") ? a[OPM_EFIT_DRAM] : !strcmp(l->name, "l2") ? a[OPM_EFIT_L2] : 1;
        l->energy_j_per_byte *= s;
        l->energy_j_per_sector *= s;
    }
    double s = a[OPM_EFIT_STATIC];
    for (size_t i = 0; i < c->n_idle; i++) c->idle_w[i] *= s;
    if (!c->has_static_power && c->has_tdp && !c->n_idle) {
        /* The TDP rule's idle power becomes a figure. */
        c->static_power_w = opm_hardware_idle_power_w(hw, c->static_power_clock_hz > 0 ? c->static_power_clock_hz
                                                                                      : opm_hardware_clock_hz(hw));
        c->has_static_power = 1;
    }
    c->static_power_w *= s;
    return c;
}

void opm_energy_fit_free(opm_energy_fit *f)
{
    opm_general_free(&f->g);
    free(f->rows);
    memset(f, 0, sizeof *f);
}
