/* svg.c — the two charts of one predicted step as standalone SVG text:
 * time per kind as stacked bars (one bar per layer type, and per phase in a
 * training step, plus one for the ops outside the layers), and every op on
 * the hardware's roofline (log-log: FLOP per HBM byte against achieved
 * FLOP/s, a flat roof per compute peak, a slope per memory level with a
 * bandwidth).  Plain text, the same bytes on every machine (no dates, no
 * measured fonts); each bar segment and point has a <title> tooltip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm_internal.h"
#include "../core/internal.h"
#include "../io/io_internal.h"

#define W 980.0
#define H 640.0
#define X0 90.0
#define X1 740.0
#define Y0 50.0
#define Y1 560.0
#define MAX_KINDS 24
#define MAX_BARS (2 * LLM_MAX_GROUPS + 3)

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a"};
#define N_PALETTE (sizeof palette / sizeof palette[0])

/* Names here are ours (op and kind names, labels): only XML's specials need escaping. */
static void esc(strbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': sb_puts(b, "&amp;"); break;
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        default: sb_putc(b, (unsigned char)*s < 0x20 ? '?' : *s);
        }
    }
}

static void header(strbuf *b, const char *title)
{
    sb_printf(b,
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
              "font-family=\"sans-serif\" font-size=\"12\">\n"
              "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"28\" font-size=\"15\">",
              W, H, W, H, X0);
    esc(b, title);
    sb_puts(b, "</text>\n");
}

static char *finish(strbuf *b, opm_error *err)
{
    sb_puts(b, "</svg>\n");
    if (b->oom) {
        free(b->p);
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    return b->p;
}

static int kind_index(char (*kinds)[24], size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(kinds[i], k)) return (int)i;
    return -1;
}

char *llm_svg_kinds(const llm_step *s, const char *title, opm_error *err)
{
    opm_error_clear(err);
    char kinds[MAX_KINDS][24];
    size_t nk = 0;
    /* bar b: group g (train: × forward/backward), then the ops outside the layers */
    char labels[MAX_BARS][40];
    double t[MAX_BARS][MAX_KINDS];
    memset(t, 0, sizeof t);
    int train = 0;
    for (size_t i = 0; i < s->n_ops; i++) train |= s->ops[i].op && opm_op_phase(s->ops[i].op) == OPM_PHASE_TRAIN_BWD;
    size_t nb = (train ? 2 : 1) * s->n_groups + 1;
    for (size_t g = 0; g < s->n_groups; g++)
        for (int p = 0; p < (train ? 2 : 1); p++)
            snprintf(labels[g * (train ? 2 : 1) + (size_t)p], sizeof labels[0], "%s%s ×%lld", s->groups[g].label,
                     train ? (p ? " bwd" : " fwd") : "", (long long)s->groups[g].count);
    snprintf(labels[nb - 1], sizeof labels[0], "other");
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        int k = kind_index(kinds, nk, o->kind);
        if (k < 0 && nk < MAX_KINDS) {
            opm_strlcpy(kinds[nk], o->kind, sizeof kinds[0]);
            k = (int)nk++;
        }
        if (k < 0) k = MAX_KINDS - 1; /* more kinds than colours: the last segment takes the rest */
        int bwd = o->op ? opm_op_phase(o->op) == OPM_PHASE_TRAIN_BWD : strstr(o->name, "_bwd") != NULL;
        size_t bar = o->group >= 0 ? (size_t)o->group * (train ? 2 : 1) + (size_t)(train && bwd) : nb - 1;
        t[bar][k] += o->prof.latency_s * (double)o->count;
    }
    double top = 0;
    for (size_t b = 0; b < nb; b++) {
        double sum = 0;
        for (size_t k = 0; k < nk; k++) sum += t[b][k];
        if (sum > top) top = sum;
    }
    if (top <= 0) top = 1e-6;
    strbuf b = {0};
    header(&b, title);
    /* y axis in ms, 5 ticks */
    sb_printf(&b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", X0, Y0, X0, Y1);
    sb_printf(&b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", X0, Y1, X1, Y1);
    for (int i = 0; i <= 5; i++) {
        double v = top * i / 5, y = Y1 - (Y1 - Y0) * i / 5;
        sb_printf(&b, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", X0, y, X1, y);
        sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", X0 - 6, y + 4, v * 1e3);
    }
    sb_printf(&b, "<text x=\"24\" y=\"%.0f\" transform=\"rotate(-90 24 %.0f)\" text-anchor=\"middle\">ms per step</text>\n",
              (Y0 + Y1) / 2, (Y0 + Y1) / 2);
    double slot = (X1 - X0) / (double)nb, bw = slot * 0.6;
    for (size_t bar = 0; bar < nb; bar++) {
        double x = X0 + slot * ((double)bar + 0.2), y = Y1;
        for (size_t k = 0; k < nk; k++) {
            if (t[bar][k] <= 0) continue;
            double h = (Y1 - Y0) * t[bar][k] / top;
            y -= h;
            sb_printf(&b, "<rect class=\"segment\" x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"%s\"><title>",
                      x, y, bw, h, palette[k % N_PALETTE]);
            esc(&b, labels[bar]);
            sb_puts(&b, ": ");
            esc(&b, kinds[k]);
            sb_printf(&b, " %.6g ms</title></rect>\n", t[bar][k] * 1e3);
        }
        sb_printf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"end\" transform=\"rotate(-35 %.1f %.0f)\">", x + bw / 2,
                  Y1 + 16, x + bw / 2, Y1 + 16);
        esc(&b, labels[bar]);
        sb_puts(&b, "</text>\n");
    }
    for (size_t k = 0; k < nk; k++) {
        double y = Y0 + 18.0 * (double)k;
        sb_printf(&b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">",
                  X1 + 20, y, palette[k % N_PALETTE], X1 + 38, y + 10);
        esc(&b, kinds[k]);
        sb_puts(&b, "</text>\n");
    }
    return finish(&b, err);
}

static double hbm_bytes(const opm_profile *p)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (!strcmp(p->levels[i].name, "hbm")) return (double)(p->levels[i].read_bytes + p->levels[i].write_bytes);
    return p->level_count ? (double)(p->levels[p->level_count - 1].read_bytes + p->levels[p->level_count - 1].write_bytes)
                          : 0;
}

typedef struct axes {
    double xlo, xhi, ylo, yhi; /* decades */
} axes;

static double px(const axes *a, double v) { return X0 + (log10(v) - a->xlo) / (a->xhi - a->xlo) * (X1 - X0); }
static double py(const axes *a, double v) { return Y1 - (log10(v) - a->ylo) / (a->yhi - a->ylo) * (Y1 - Y0); }

char *llm_svg_roofline(const llm_step *s, const opm_hardware *hw, opm_dtype dtype, const char *title, opm_error *err)
{
    opm_error_clear(err);
    /* Roofs: the tensor peak of the step's dtype and the vector peak (fp32
     * where the dtype has none); slopes: every level with a bandwidth. */
    double roofs[2] = {opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, dtype),
                       opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, dtype)};
    if (roofs[1] <= 0) roofs[1] = opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32);
    double top = roofs[0] > roofs[1] ? roofs[0] : roofs[1];
    if (top <= 0) top = 1e12;
    /* 0.01 to 10^4 FLOP per byte; eight decades of FLOP/s below the top roof's */
    axes a = {-2, 4, floor(log10(top)) - 7, floor(log10(top)) + 1};
    double ylo = pow(10, a.ylo), xlo = pow(10, a.xlo), xhi = pow(10, a.xhi);
    strbuf b = {0};
    header(&b, title);
    sb_printf(&b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n", X0, Y0,
              X1 - X0, Y1 - Y0);
    for (int d = (int)a.xlo; d <= (int)a.xhi; d++)
        sb_printf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">1e%d</text>\n", px(&a, pow(10, d)), Y1 + 16, d);
    for (int d = (int)a.ylo; d <= (int)a.yhi; d++)
        sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n", X0 - 6, py(&a, pow(10, d)) + 4, d);
    sb_printf(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">FLOP per HBM byte</text>\n", (X0 + X1) / 2, Y1 + 36);
    sb_printf(&b, "<text x=\"20\" y=\"%.0f\" transform=\"rotate(-90 20 %.0f)\" text-anchor=\"middle\">achieved FLOP/s</text>\n",
              (Y0 + Y1) / 2, (Y0 + Y1) / 2);
    static const char *const roof_name[] = {"tensor", "vector"};
    for (int r = 0; r < 2; r++) {
        if (roofs[r] <= 0) continue;
        sb_printf(&b, "<line class=\"roof\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" stroke-dasharray=\"%s\">"
                      "<title>%s peak %.4g FLOP/s</title></line>\n",
                  X0, py(&a, roofs[r]), X1, py(&a, roofs[r]), r ? "4 3" : "none", roof_name[r], roofs[r]);
        sb_printf(&b, "<text x=\"%.0f\" y=\"%.1f\">%s %.3g TFLOP/s</text>\n", X1 + 6, py(&a, roofs[r]) + 4, roof_name[r],
                  roofs[r] / 1e12);
    }
    int nslope = 0;
    for (size_t i = 0; i < opm_hardware_level_count(hw); i++) {
        const opm_memory_level *l = opm_hardware_level(hw, i);
        double bw = l->bandwidth_bytes_per_s;
        if (bw <= 0) continue;
        /* y = bw·x from the left edge (or the floor) to where it meets the top roof */
        double x_a = ylo / bw > xlo ? ylo / bw : xlo, x_b = top / bw < xhi ? top / bw : xhi;
        if (x_b <= x_a) continue;
        sb_printf(&b, "<line class=\"slope\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"><title>", px(&a, x_a),
                  py(&a, bw * x_a), px(&a, x_b), py(&a, bw * x_b), palette[(size_t)(nslope + 6) % N_PALETTE]);
        esc(&b, l->name);
        sb_printf(&b, " %.4g B/s</title></line>\n", bw);
        sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", px(&a, x_a) + 4, py(&a, bw * x_a) - 4);
        esc(&b, l->name);
        sb_printf(&b, " %.3g TB/s</text>\n", bw / 1e12);
        nslope++;
    }
    /* One point per predicted op; an op without FLOPs or HBM bytes sits on
     * the edge it cannot reach (data-clamped). */
    char kinds[MAX_KINDS][24];
    size_t nk = 0;
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        if (!o->op) continue;
        int k = kind_index(kinds, nk, o->kind);
        if (k < 0 && nk < MAX_KINDS) {
            opm_strlcpy(kinds[nk], o->kind, sizeof kinds[0]);
            k = (int)nk++;
        }
        if (k < 0) k = MAX_KINDS - 1;
        double f = (double)o->prof.flops, by = hbm_bytes(&o->prof), lat = o->prof.latency_s;
        double x = by > 0 ? f / by : xhi, y = lat > 0 ? f / lat : ylo;
        int clamped = x < xlo || x > xhi || y < ylo || !(f > 0);
        if (x < xlo) x = xlo;
        if (x > xhi || !(x > 0)) x = xhi;
        if (y < ylo || !(y > 0)) y = ylo;
        if (y > pow(10, a.yhi)) y = pow(10, a.yhi);
        sb_printf(&b, "<circle class=\"op\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.75\"%s><title>",
                  px(&a, x), py(&a, y), palette[(size_t)k % N_PALETTE], clamped ? " data-clamped=\"1\"" : "");
        esc(&b, o->name);
        sb_printf(&b, " (%s) ×%lld: %.4g us, %.4g FLOP, %.4g B, %s</title></circle>\n", o->kind, (long long)o->count,
                  lat * 1e6, f, by, opm_bound_name(o->prof.bound));
    }
    for (size_t k = 0; k < nk; k++) {
        double y = Y0 + 60 + 18.0 * (double)k;
        sb_printf(&b, "<circle cx=\"%.0f\" cy=\"%.0f\" r=\"5\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">", X1 + 26, y,
                  palette[k % N_PALETTE], X1 + 38, y + 4);
        esc(&b, kinds[k]);
        sb_puts(&b, "</text>\n");
    }
    return finish(&b, err);
}
