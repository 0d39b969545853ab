/* general.c — `opmodel validate`: measured latencies (and energies) of any
 * op kind, one contract §4 JSONL object per line, against a model's
 * predictions; general.h gives the API and the per-line record.
 *
 * Speed comes from the paths `predict --batch` uses: each line goes through
 * yajl into the positioned document tree (doc_parse_json), its "op" member
 * through the op reader, one opm_profile is reused for every prediction,
 * and hardware is opened once per distinct name (interned) and once per
 * (hardware, clock) when lines give clock_mhz.  A line keeps only a 64-byte
 * record, so memory grows with the lines by that much and nothing else.
 *
 * Calibration (asked for): per (hardware, source) group, the lines with the
 * smallest predicted latency, the first min(8, half the group) by
 * (predicted latency, file order), set the group's overhead to
 * max(0, median(measured - predicted)) over them and are not scored; every
 * other line of the group is scored as predicted + that overhead.  The
 * smallest predictions are the lines where a fixed per-call cost the model
 * does not see (host dispatch, the timing loop) dominates, so they measure
 * it best and the rest are a held-out test of what remains.  The median
 * keeps one odd line from setting it; the bound at 0 keeps a model that
 * over-predicts small ops from being "corrected" by a negative overhead.
 * Energy is scored as the model predicts it, over the same scored lines. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../core/internal.h"
#include "../io/doc.h"
#include "../io/io_internal.h"
#include "csv.h"
#include "general.h"

static const char *const line_keys[] = {"hardware", "clock_mhz", "op", "measured", "source", "timing", "kernel", NULL};
enum { K_HARDWARE, K_CLOCK, K_OP, K_MEASURED, K_SOURCE, K_TIMING, K_KERNEL, K_COUNT };
static const char *const measured_keys[] = {"latency_s", "energy_j", NULL};
static const char *const timing_names[] = {"graph", "eager", "kernel", "events", NULL};
enum { T_GRAPH, T_EAGER, T_KERNEL, T_EVENTS };

/* The source name of lines without one (contract §5 by_source). */
#define UNKNOWN_SOURCE "unknown"

static int oom(opm_error *err) { return opm_err(err, OPM_ENOMEM, NULL, "out of memory"); }

int opm_general_init(opm_general *v, const char *model, int calibrate, opm_error *err)
{
    return opm_general_init_with(v, NULL, model, calibrate, err);
}

int opm_general_init_with(opm_general *v, const opm_registry *reg, const char *model, int calibrate,
                          opm_error *err)
{
    memset(v, 0, sizeof *v);
    v->model = model;
    v->reg = reg;
    v->calibrate = calibrate;
    v->events_host_s = opm_workload_host_at(0)->launch_interval_s;
    if (!(v->m = opm_registry_find_model(reg, model)))
        return opm_err(err, OPM_ENOTFOUND, "--model", "no model named '%s' (see `opmodel models`)", model);
    return 0;
}

void opm_general_free(opm_general *v)
{
    for (size_t i = 0; i < v->n_hw; i++) opm_hardware_free(v->hw[i]);
    for (size_t i = 0; i < v->clock_tab.count; i++) opm_hardware_free(v->clocked[i]);
    free(v->hw);
    free(v->clocked);
    free(v->lines);
    free(v->groups);
    free(v->time.by_hw);
    free(v->time.by_source);
    free(v->energy.by_hw);
    free(v->energy.by_source);
    opm_strtab_free(&v->file_tab);
    opm_strtab_free(&v->hw_tab);
    opm_strtab_free(&v->source_tab);
    opm_strtab_free(&v->limiting_tab);
    opm_strtab_free(&v->clock_tab);
    opm_strtab_free(&v->group_tab);
    memset(v, 0, sizeof *v);
}

/* ---- bad lines ---- */

/* Counts a bad line; the first is kept as "PATH:LINE: <fmt...>".  Only the
 * first is formatted: a file of a million bad lines costs no more than
 * reading it. */
static void bad(opm_general *v, const char *path, size_t line, const char *fmt, ...) OPM_PRINTF(4, 5);
static void bad(opm_general *v, const char *path, size_t line, const char *fmt, ...)
{
    if (v->rows_failed++) return;
    char body[OPM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(v->first_bad, sizeof v->first_bad, "%s:%zu: %s", path, line, body);
    opm_escape_controls(v->first_bad, sizeof v->first_bad); /* keys and paths are input text */
}

/* A bad line whose message is already located (the document reader's). */
static void bad_located(opm_general *v, const char *msg)
{
    if (!v->rows_failed++) {
        opm_strlcpy(v->first_bad, msg, sizeof v->first_bad);
        opm_escape_controls(v->first_bad, sizeof v->first_bad);
    }
}

/* The op reader's error, which reads "PATH:LINE: FIELD: ..." with FIELD
 * relative to the op: said as "PATH:LINE: op.FIELD: ...", so the field
 * names the line's key path. */
static void bad_op(opm_general *v, const char *path, size_t line, const opm_error *e)
{
    if (v->rows_failed) {
        v->rows_failed++;
        return;
    }
    char loc[OPM_ERROR_MESSAGE_MAX];
    snprintf(loc, sizeof loc, "%s:%zu: ", path, line);
    const char *msg = e->message;
    size_t ll = strlen(loc), fl = strlen(e->field);
    if (!strncmp(msg, loc, ll)) msg += ll;
    if (fl && !strncmp(msg, e->field, fl) && msg[fl] == ':' && msg[fl + 1] == ' ')
        bad(v, path, line, "op.%s: %s", e->field, msg + fl + 2);
    else
        bad(v, path, line, "op: %s", msg);
}

static void describe(const doc_node *n, char *buf, size_t cap)
{
    if (!n) snprintf(buf, cap, "nothing (the key is missing)");
    else doc_describe(n, buf, cap);
}

/* A string value: a quoted scalar (a JSON number or true is not a name). */
static int is_string(const doc_node *n) { return n->type == DOC_SCALAR && n->quoted; }

/* ---- hardware ---- */

/* Index of hardware `name`, opened when first seen (NULL when it does not
 * open, its error kept in *why); -2 when out of memory. */
static long hw_index(opm_general *v, const char *name, opm_error *why)
{
    uint32_t id = opm_strtab_intern(&v->hw_tab, name, strlen(name));
    if (id == UINT32_MAX) return -2;
    if (id < v->n_hw) return id;
    if (opm_array_grow((void **)&v->hw, &v->hw_cap, (size_t)id + 1, sizeof *v->hw)) return -2;
    opm_error_clear(why);
    v->hw[id] = opm_hardware_open(name, why);
    v->n_hw = (size_t)id + 1;
    if (!v->hw[id] && why->code == OPM_ENOMEM) return -2;
    return id;
}

/* Hardware hw at clock_hz, made once per pair; *out NULL when the clock is
 * not valid for it (*why then says why).  -1 when out of memory. */
static int hw_at_clock(opm_general *v, uint32_t hw, double clock_hz, const opm_hardware **out, opm_error *why)
{
    char key[sizeof hw + sizeof clock_hz];
    memcpy(key, &hw, sizeof hw);
    memcpy(key + sizeof hw, &clock_hz, sizeof clock_hz);
    /* Room for a new entry first, so clocked[] is never shorter than the
     * table (opm_general_free walks both). */
    size_t before = v->clock_tab.count;
    if (opm_array_grow((void **)&v->clocked, &v->clocked_cap, before + 1, sizeof *v->clocked)) return -1;
    uint32_t id = opm_strtab_intern(&v->clock_tab, key, sizeof key);
    if (id == UINT32_MAX) return -1;
    if (id < before) {
        /* The pair's first line was counted bad already (and named, if it
         * was the first); later ones get the short reason. */
        if (!(*out = v->clocked[id])) opm_err(why, OPM_EINVAL, "clock", "expected a clock this hardware runs at");
        return 0;
    }
    opm_error_clear(why);
    *out = v->clocked[id] = opm_hardware_with_clock(v->hw[hw], clock_hz, why);
    return !*out && why->code == OPM_ENOMEM ? -1 : 0;
}

/* The (hardware, source) group, interned by the exact index pair; -1 when
 * out of memory. */
static long group_index(opm_general *v, uint32_t hw, uint32_t source)
{
    uint32_t key[2] = {hw, source};
    size_t before = v->group_tab.count;
    if (opm_array_grow((void **)&v->groups, &v->groups_cap, before + 1, sizeof *v->groups)) return -1;
    uint32_t id = opm_strtab_intern(&v->group_tab, (const char *)key, sizeof key);
    if (id == UINT32_MAX) return -1;
    if (id == before) v->groups[id] = (opm_general_group){hw, source, 0, 0};
    return id;
}

/* The contract §5 size class of a gemm or batched_gemm op, from its output
 * C [B..., M, N] (a gemm folds leading dims into M) and its input A
 * [..., M, K] ([..., K, M] transposed). */
static uint8_t gemm_class(const opm_op *op)
{
    opm_kind k = opm_op_kind(op);
    if (k != OPM_KIND_GEMM && k != OPM_KIND_BATCHED_GEMM) return OPM_GENERAL_NO_CLASS;
    const opm_tensor *a = opm_op_find_tensor(op, OPM_ROLE_INPUT, 0), *c = opm_op_find_tensor(op, OPM_ROLE_OUTPUT, 0);
    if (!a || !c || a->rank < 2 || c->rank < 2) return OPM_GENERAL_NO_CLASS;
    int lead = k == OPM_KIND_BATCHED_GEMM ? c->rank - 2 : 0;
    double batch = 1, m = 1;
    for (int d = 0; d < lead; d++) batch *= (double)c->shape[d];
    for (int d = lead; d < c->rank - 1; d++) m *= (double)c->shape[d];
    double n = (double)c->shape[c->rank - 1];
    double kk = (double)a->shape[opm_op_get_bool(op, "transpose_a", 0) ? a->rank - 2 : a->rank - 1];
    return (uint8_t)opm_gemm_size_class(batch, m, n, kk);
}

/* ---- one line ---- */

/* The line's members, checked; NULL for the optional ones it lacks (a JSON
 * null is taken as absent: generated data writes "energy_j": null). */
typedef struct fields {
    const doc_node *k[K_COUNT];
    doc_node *op;                /* k[K_OP], to re-root the tree at */
    double latency_s, energy_j, clock_hz;
    const char *source;
    int timing;                  /* index into timing_names, -1 when absent */
} fields;

static const doc_node *present(const doc_node *n) { return n && !doc_is_null(n) ? n : NULL; }

/* Reads and checks everything but the op; 0, or -1 after counting a bad line. */
static int read_fields(opm_general *v, const char *path, size_t line, const doc_node *root, fields *f)
{
    char got[80];
    memset(f, 0, sizeof *f);
    f->energy_j = NAN;
    f->timing = -1;
    if (root->type != DOC_MAP) {
        describe(root, got, sizeof got);
        bad(v, path, line, "expected a measurement object {\"hardware\", \"op\", \"measured\", ...}, got %s", got);
        return -1;
    }
    for (size_t i = 0; i < root->n; i++) {
        const char *key = root->kids[2 * i]->text;
        int j = 0;
        while (line_keys[j] && strcmp(key, line_keys[j])) j++;
        if (!line_keys[j]) {
            const char *hint = opm_closest(key, line_keys);
            char tail[96] = "";
            if (hint) snprintf(tail, sizeof tail, " (did you mean '%s'?)", hint);
            bad(v, path, line, "%.60s: expected one of hardware, clock_mhz, op, measured, source, timing, kernel, "
                               "got an unknown key%s", key, tail);
            return -1;
        }
        f->k[j] = root->kids[2 * i + 1];
        if (j == K_OP) f->op = root->kids[2 * i + 1];
    }
    const doc_node *n = f->k[K_HARDWARE];
    if (!n || !is_string(n) || !n->text[0]) {
        describe(n, got, sizeof got);
        bad(v, path, line, "hardware: expected a built-in hardware name or a hardware file path, got %s", got);
        return -1;
    }
    if ((n = present(f->k[K_CLOCK]))) {
        double mhz;
        if (doc_double(n, &mhz) || !(mhz >= OPM_GEMM_MIN_CLOCK_MHZ && mhz <= OPM_GEMM_MAX_CLOCK_MHZ)) {
            describe(n, got, sizeof got);
            bad(v, path, line, "clock_mhz: expected a clock from 1 to 100000 MHz, got %s", got);
            return -1;
        }
        f->clock_hz = mhz * 1e6;
    }
    const doc_node *meas = f->k[K_MEASURED];
    if (!meas || meas->type != DOC_MAP) {
        describe(meas, got, sizeof got);
        bad(v, path, line, "measured: expected an object with latency_s (and optionally energy_j), got %s", got);
        return -1;
    }
    for (size_t i = 0; i < meas->n; i++) {
        const char *key = meas->kids[2 * i]->text;
        if (!strcmp(key, "latency_s") || !strcmp(key, "energy_j")) continue;
        const char *hint = opm_closest(key, measured_keys);
        char tail[96] = "";
        if (hint) snprintf(tail, sizeof tail, " (did you mean '%s'?)", hint);
        bad(v, path, line, "measured.%.60s: expected latency_s or energy_j, got an unknown key%s", key, tail);
        return -1;
    }
    n = doc_get(meas, "latency_s");
    if (!n || doc_double(n, &f->latency_s) || !(f->latency_s > 0)) {
        describe(n, got, sizeof got);
        bad(v, path, line, "measured.latency_s: expected a positive number of seconds, got %s", got);
        return -1;
    }
    if ((n = present(doc_get(meas, "energy_j"))) && (doc_double(n, &f->energy_j) || !(f->energy_j > 0))) {
        describe(n, got, sizeof got);
        bad(v, path, line, "measured.energy_j: expected a positive number of joules, got %s", got);
        return -1;
    }
    static const int strings[2] = {K_SOURCE, K_KERNEL};
    for (int s = 0; s < 2; s++)
        if ((n = present(f->k[strings[s]])) && !is_string(n)) {
            describe(n, got, sizeof got);
            bad(v, path, line, "%s: expected a string, got %s", line_keys[strings[s]], got);
            return -1;
        }
    if ((n = present(f->k[K_SOURCE])) && n->text[0]) f->source = n->text;
    if ((n = present(f->k[K_TIMING]))) {
        int j = 0;
        while (is_string(n) && timing_names[j] && strcmp(n->text, timing_names[j])) j++;
        if (!is_string(n) || !timing_names[j]) {
            describe(n, got, sizeof got);
            bad(v, path, line, "timing: expected graph, eager, kernel or events, got %s", got);
            return -1;
        }
        f->timing = j;
    }
    n = f->k[K_OP];
    if (!n || n->type != DOC_MAP) {
        describe(n, got, sizeof got);
        bad(v, path, line, "op: expected an operation object (full or short form, contract §1), got %s", got);
        return -1;
    }
    return 0;
}

/* The record of a predicted line, appended. */
static int keep_line(opm_general *v, uint32_t file, size_t line, uint32_t hw, const fields *f, const opm_op *op,
                     const opm_profile *p, opm_error *err)
{
    const char *src = f->source ? f->source : UNKNOWN_SOURCE;
    uint32_t source = opm_strtab_intern(&v->source_tab, src, strlen(src));
    if (source == UINT32_MAX) return oom(err);
    long group = group_index(v, hw, source);
    if (group < 0) return oom(err);
    uint32_t limiting = OPM_GENERAL_NONE;
    const opm_diag *lim = opm_profile_diag(p, "limiting_resource");
    if (!lim || !lim->is_text) lim = opm_profile_diag(p, "limiting_level");
    if (lim && lim->is_text && (limiting = opm_strtab_intern(&v->limiting_tab, lim->text, strlen(lim->text))) ==
                                   UINT32_MAX)
        return oom(err);
    if (opm_array_grow((void **)&v->lines, &v->lines_cap, v->n_lines + 1, sizeof *v->lines)) return oom(err);
    /* CUDA events around one eager call time the host's dispatch before
     * the launch too: the host's launch interval, not the GPU's. */
    double host_s = f->timing == T_EVENTS ? v->events_host_s : 0;
    v->lines[v->n_lines++] = (opm_general_line){
        .measured_s = f->latency_s,
        .predicted_s = p->latency_s + host_s,
        .measured_j = f->energy_j,
        .predicted_j = p->energy_j,
        .file = file,
        .line = (uint32_t)line,
        .hw = hw,
        .source = source,
        .group = (uint32_t)group,
        .limiting = limiting,
        .kind = (uint8_t)opm_op_kind(op),
        .bound = (uint8_t)p->bound,
        .cls = gemm_class(op),
    };
    return 0;
}

/* Reads, predicts and keeps one non-blank line.  Bad lines are counted;
 * only running out of memory is returned. */
static int do_line(opm_general *v, uint32_t file, const char *path, size_t line, const char *text, size_t len,
                   opm_profile *p, opm_error *err)
{
    opm_error e;
    opm_error_clear(&e);
    doc *d = doc_parse_json(text, len, path, (int)line, &e);
    if (!d) {
        if (e.code == OPM_ENOMEM) return oom(err);
        bad_located(v, e.message);
        return 0;
    }
    fields f;
    opm_op *op = NULL;
    int rc = 0;
    if (read_fields(v, path, line, doc_root(d), &f)) goto done;
    /* The op member is read as an op document of its own: the tree is
     * re-rooted at it, so the op reader's field paths and positions are
     * the op's (the tree is freed right after, never used whole again). */
    doc_set_root(d, f.op);
    if (!(op = opm_op_from_doc(d, &e))) {
        if (e.code == OPM_ENOMEM) rc = oom(err);
        else bad_op(v, path, line, &e);
        goto done;
    }
    const char *name = f.k[K_HARDWARE]->text;
    long hw = hw_index(v, name, &e);
    if (hw == -2) {
        rc = oom(err);
        goto done;
    }
    if (!v->hw[hw]) {
        if (!v->rows_unknown_hw++) {
            snprintf(v->first_unknown_hw, sizeof v->first_unknown_hw, "%s:%zu: %s", path, line, e.message);
            opm_escape_controls(v->first_unknown_hw, sizeof v->first_unknown_hw);
        }
        goto done;
    }
    const opm_hardware *h = v->hw[hw];
    if (f.clock_hz > 0) {
        if (hw_at_clock(v, (uint32_t)hw, f.clock_hz, &h, &e)) {
            rc = oom(err);
            goto done;
        }
        if (!h) {
            /* The hardware says "clock: expected ..."; the line's key is clock_mhz. */
            const char *why = e.message;
            size_t fl = strlen(e.field);
            if (fl && !strncmp(why, e.field, fl) && why[fl] == ':' && why[fl + 1] == ' ') why += fl + 2;
            bad(v, path, line, "clock_mhz: %s", why);
            goto done;
        }
    }
    if (opm_predict_with(v->reg, v->model, op, h, p, &e)) {
        if (e.code == OPM_ENOMEM) rc = oom(err);
        else bad(v, path, line, "%s", e.message);
        goto done;
    }
    if (!(p->latency_s > 0) || !isfinite(p->latency_s)) {
        bad(v, path, line, "op: expected a positive predicted latency, got %g s from %s", p->latency_s, v->model);
        goto done;
    }
    rc = keep_line(v, file, line, (uint32_t)hw, &f, op, p, err);
    if (!rc && v->on_line && v->on_line(v->on_line_ctx, v, &v->lines[v->n_lines - 1], p, h)) rc = oom(err);
done:
    opm_op_free(op);
    doc_free(d);
    return rc;
}

/* ---- reading files ---- */


static int read_file(opm_general *v, const char *path, const char *field, opm_error *err)
{
    uint32_t file = opm_strtab_intern(&v->file_tab, path, strlen(path));
    if (file == UINT32_MAX) return oom(err);
    const char *name = v->file_tab.strs[file]; /* kept: the lines' errors name it */
    FILE *f = fopen(path, "rb");
    if (!f) return opm_err(err, OPM_EIO, field, "cannot read '%s': %s", path, strerror(errno));
    v->files++;
    char *buf = NULL;
    size_t cap = 0, len = 0, line = 0;
    int got, rc = 0;
    opm_profile p; /* one profile for every line: ~5 KB not cleared per line */
    while (!rc && (got = opm_read_line(f, &buf, &cap, &len)) > 0) {
        if (++line > INT32_MAX) {
            rc = opm_err(err, OPM_EINVAL, field, "%s: expected at most %d lines in a file", name, INT32_MAX);
            break;
        }
        char *s = buf;
        /* A byte order mark opens a file only; left there it is a JSON error. */
        if (line == 1 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) s += 3, len -= 3;
        while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
        size_t lead = 0;
        while (lead < len && (s[lead] == ' ' || s[lead] == '\t')) lead++;
        if (lead == len) continue;
        /* Leading blanks stay: yajl skips them, and its error columns are
         * then the line's. */
        rc = do_line(v, file, name, line, s, len, &p, err);
    }
    if (!rc && got == -1)
        rc = opm_err(err, OPM_EINVAL, field, "%s:%zu: expected a line of at most %zu MiB (OPM_DOCUMENT_MAX_BYTES), "
                                             "got a longer one", name, line + 1, OPM_DOCUMENT_MAX_BYTES >> 20);
    if (!rc && got == -2) rc = oom(err);
    if (!rc && ferror(f)) rc = opm_err(err, OPM_EIO, field, "error reading '%s'", name);
    free(buf);
    fclose(f);
    return rc;
}

int opm_general_add_path(opm_general *v, const char *path, const char *field, opm_error *err)
{
    struct stat st;
    if (stat(path, &st)) return opm_err(err, OPM_EIO, field, "cannot read '%s': %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return read_file(v, path, field, err);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = opm_list_dir_ext(path, ".jsonl", field, &paths, &n, &cap, err);
    if (!rc && n == 0) rc = opm_err(err, OPM_EINVAL, field, "no *.jsonl files under '%s'", path);
    for (size_t i = 0; i < n; i++) {
        if (!rc) rc = read_file(v, paths[i], field, err);
        free(paths[i]);
    }
    free(paths);
    return rc;
}

/* ---- scoring ---- */

double opm_general_line_predicted_s(const opm_general *v, const opm_general_line *l)
{
    return l->predicted_s + v->groups[l->group].overhead_s;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_dbl);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Sort key of a calibration candidate: (group, predicted latency, line). */
typedef struct cal_key {
    uint32_t group;
    double pred;
    size_t idx;
} cal_key;

static int cmp_cal(const void *pa, const void *pb)
{
    const cal_key *a = pa, *b = pb;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    if (a->pred != b->pred) return a->pred < b->pred ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Marks each group's calibration lines and sets its overhead: every group
 * in one sort, so many groups cost no pass each. */
static int calibrate(opm_general *v, double *scratch)
{
    cal_key *keys = malloc((v->n_lines + 1) * sizeof *keys);
    if (!keys) return -1;
    for (size_t i = 0; i < v->n_lines; i++) keys[i] = (cal_key){v->lines[i].group, v->lines[i].predicted_s, i};
    qsort(keys, v->n_lines, sizeof *keys, cmp_cal);
    for (size_t a = 0; a < v->n_lines;) {
        size_t b = a;
        while (b < v->n_lines && keys[b].group == keys[a].group) b++;
        size_t take = (b - a) / 2 < OPM_GENERAL_CAL_PER_GROUP ? (b - a) / 2 : OPM_GENERAL_CAL_PER_GROUP;
        for (size_t j = 0; j < take; j++) {
            opm_general_line *l = &v->lines[keys[a + j].idx];
            l->is_cal = 1;
            scratch[j] = l->measured_s - l->predicted_s;
        }
        opm_general_group *g = &v->groups[keys[a].group];
        double med = take ? median_of(scratch, take) : 0;
        g->overhead_s = med > 0 ? med : 0;
        g->cal_rows = take;
        v->calibration_rows += take;
        a = b;
    }
    free(keys);
    return 0;
}

/* The breakdowns a line is counted in. */
enum { BY_ALL, BY_HW, BY_SOURCE, BY_KIND, BY_CLASS, BY_COUNT };

static size_t key_of(const opm_general_line *l, int by)
{
    switch (by) {
    case BY_HW: return l->hw;
    case BY_SOURCE: return l->source;
    case BY_KIND: return l->kind;
    case BY_CLASS: return l->cls;
    default: return 0;
    }
}

/* Contract §5 statistics of the lines idx[0..n): errors in percent of the
 * measurement, geomean of predicted/measured; scratch holds n doubles. */
static void stats_of(const opm_general *v, const size_t *idx, size_t n, int energy, double *scratch,
                     opm_err_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n) return;
    double sum_ape = 0, sum_signed = 0, sum_log = 0;
    for (size_t j = 0; j < n; j++) {
        const opm_general_line *l = &v->lines[idx[j]];
        double meas = energy ? l->measured_j : l->measured_s;
        double pred = energy ? l->predicted_j : opm_general_line_predicted_s(v, l);
        double e = (pred - meas) / meas;
        scratch[j] = fabs(e) * 100;
        sum_ape += fabs(e) * 100;
        sum_signed += e * 100;
        sum_log += log(pred / meas);
    }
    s->mape = sum_ape / (double)n;
    s->signed_mean_error = sum_signed / (double)n;
    s->geomean_ratio = exp(sum_log / (double)n);
    s->median_ape = median_of(scratch, n); /* sorts scratch, which the p90 reads */
    size_t p90 = (size_t)ceil(0.9 * (double)n);
    s->p90_ape = scratch[p90 ? p90 - 1 : 0];
}

void opm_err_stats_of(const double *pred, const double *meas, size_t n, double *scratch, opm_err_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (!n) return;
    double sum_ape = 0, sum_signed = 0, sum_log = 0;
    for (size_t j = 0; j < n; j++) {
        double e = (pred[j] - meas[j]) / meas[j];
        scratch[j] = fabs(e) * 100;
        sum_ape += fabs(e) * 100;
        sum_signed += e * 100;
        sum_log += log(pred[j] / meas[j]);
    }
    s->mape = sum_ape / (double)n;
    s->signed_mean_error = sum_signed / (double)n;
    s->geomean_ratio = exp(sum_log / (double)n);
    s->median_ape = median_of(scratch, n);
    size_t p90 = (size_t)ceil(0.9 * (double)n);
    s->p90_ape = scratch[p90 ? p90 - 1 : 0];
}

/* Scores the selected lines sel[0..n) along every breakdown: per breakdown,
 * a counting sort by key and one stats pass per key, so the work is linear
 * in the lines (plus the sorts) however many hardware or sources there are. */
static int score(const opm_general *v, const size_t *sel, size_t n, int energy, opm_general_scores *s,
                 size_t *order, double *scratch)
{
    size_t n_keys[BY_COUNT] = {1, v->n_hw, v->source_tab.count, OPM_KIND_COUNT, GC_COUNT};
    opm_err_stats *out[BY_COUNT] = {&s->overall, s->by_hw, s->by_source, s->by_kind, s->by_class};
    for (int by = 0; by < BY_COUNT; by++) {
        size_t *start = calloc(n_keys[by] + 2, sizeof *start);
        if (!start) return -1;
        for (size_t j = 0; j < n; j++) {
            size_t k = key_of(&v->lines[sel[j]], by);
            if (k < n_keys[by]) start[k + 2]++;
        }
        for (size_t k = 0; k < n_keys[by]; k++) start[k + 2] += start[k + 1];
        /* start[k + 1] is now where key k's lines go; filling moves it to
         * where key k + 1's start, so start[k] .. start[k + 1] is key k. */
        for (size_t j = 0; j < n; j++) {
            size_t k = key_of(&v->lines[sel[j]], by);
            if (k < n_keys[by]) order[start[k + 1]++] = sel[j];
        }
        for (size_t k = 0; k < n_keys[by]; k++)
            stats_of(v, order + start[k], start[k + 1] - start[k], energy, scratch, &out[by][k]);
        free(start);
    }
    return 0;
}

int opm_general_score(opm_general *v, opm_error *err)
{
    size_t n = v->n_lines;
    v->time.by_hw = calloc(v->n_hw + 1, sizeof *v->time.by_hw);
    v->time.by_source = calloc(v->source_tab.count + 1, sizeof *v->time.by_source);
    v->energy.by_hw = calloc(v->n_hw + 1, sizeof *v->energy.by_hw);
    v->energy.by_source = calloc(v->source_tab.count + 1, sizeof *v->energy.by_source);
    /* calloc, not malloc: gcc -O2 cannot see that score() reads only the
     * m entries written, and -Wmaybe-uninitialized is an error here. */
    size_t *sel = calloc(n + 1, sizeof *sel), *order = calloc(n + 1, sizeof *order);
    double *scratch = calloc(n + 1, sizeof *scratch);
    int rc = 0;
    if (!v->time.by_hw || !v->time.by_source || !v->energy.by_hw ||
        !v->energy.by_source || !sel || !order || !scratch || (v->calibrate && calibrate(v, scratch)))
        rc = oom(err);
    size_t m = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (!v->lines[i].is_cal) sel[m++] = i;
    v->rows = m;
    if (!rc && score(v, sel, m, 0, &v->time, order, scratch)) rc = oom(err);
    /* Energy: the scored lines that carry a measured energy. */
    size_t me = 0;
    for (size_t j = 0; !rc && j < m; j++)
        if (!isnan(v->lines[sel[j]].measured_j)) sel[me++] = sel[j];
    v->energy_rows = me;
    if (!rc && score(v, sel, me, 1, &v->energy, order, scratch)) rc = oom(err);
    free(sel);
    free(order);
    free(scratch);
    return rc;
}
