/* trace_svg.c — the roofline chart of a trace report as a standalone SVG:
 * log-log axes of arithmetic intensity (FLOP/byte) against achieved FLOP/s,
 * the memory roof, one flat compute roof per distinct peak the groups ran
 * against, and one circle per group with a FLOP count, its area
 * proportional to the group's kernel time and its colour its category.
 *
 * Written as plain SVG text: no plotting library needed, the output is the
 * same bytes on every machine (no dates, no fonts measured), and any
 * browser shows it with a tooltip per point (the <title> of each circle). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report_internal.h"

/* Canvas and plot area, in px. */
#define SVG_W 980.0
#define SVG_H 640.0
#define PX0 90.0
#define PX1 760.0
#define PY0 50.0
#define PY1 570.0
/* The largest group's circle radius; a circle never shrinks below
 * MIN_R so that tiny groups stay visible (their area is then not to scale). */
#define MAX_R 26.0
#define MIN_R 1.5
#define MAX_DECADES 14
#define DEG_PER_RAD (180 / 3.14159265358979323846)
#define MAX_ROOFS 8

static const char *const cat_colour[OPM_TCAT_COUNT] = {
    "#1f77b4", /* gemm */
    "#d62728", /* attention */
    "#9467bd", /* conv */
    "#2ca02c", /* norm */
    "#ff7f0e", /* elementwise */
    "#8c564b", /* reduce */
    "#e377c2", /* comm */
    "#7f7f7f", /* memcpy */
    "#bcbd22", /* other */
};

/* Text for XML character data and attribute values. */
static void xml_text(strbuf *b, const char *s)
{
    strbuf tmp = {0};
    const char *clean = opm_report_utf8(opm_report_str(s), &tmp);
    if (tmp.oom) b->oom = 1;
    for (const char *p = clean; *p; p++) {
        unsigned char c = (unsigned char)*p;
        switch (c) {
        case '&': sb_puts(b, "&amp;"); break;
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        case '\'': sb_puts(b, "&apos;"); break;
        default:
            /* XML 1.0 allows no other control characters, not even escaped. */
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') sb_putc(b, '?');
            else sb_putc(b, (char)c);
        }
    }
    free(tmp.p);
}

typedef struct axes {
    int xlo, xhi, ylo, yhi; /* decades */
} axes;

static double px_x(const axes *a, double v)
{
    return PX0 + (log10(v) - a->xlo) / (a->xhi - a->xlo) * (PX1 - PX0);
}

static double px_y(const axes *a, double v)
{
    return PY1 - (log10(v) - a->ylo) / (a->yhi - a->ylo) * (PY1 - PY0);
}

static int plottable(const opm_trace_group *g)
{
    return g->has_kind && g->flops > 0 && g->bytes > 0 && g->kernel_time_s > 0 && g->count > 0 &&
           isfinite(g->kernel_time_s);
}

static double point_x(const opm_trace_group *g) { return (double)g->flops / (double)g->bytes; }

static double point_y(const opm_trace_group *g)
{
    return (double)g->flops * (double)g->count / g->kernel_time_s;
}

/* Distinct positive peaks, largest first. */
static size_t collect_roofs(const opm_trace_report *r, double *roof)
{
    size_t n = 0;
    for (size_t i = 0; r->group_peak_flops_per_s && i < r->n_groups; i++) {
        double p = r->group_peak_flops_per_s[i];
        if (!(p > 0) || !isfinite(p)) continue;
        size_t j = 0;
        while (j < n && fabs(roof[j] - p) > 1e-9 * p) j++;
        if (j < n) continue;
        if (n == MAX_ROOFS) {
            /* Keep the largest MAX_ROOFS: drop the smallest if p beats it. */
            if (p <= roof[n - 1]) continue;
            n--;
        }
        size_t k = n++;
        while (k > 0 && roof[k - 1] < p) roof[k] = roof[k - 1], k--;
        roof[k] = p;
    }
    return n;
}

static void span(double lo, double hi, int *dlo, int *dhi)
{
    *dlo = (int)floor(log10(lo));
    *dhi = (int)ceil(log10(hi));
    while (*dhi - *dlo < 3) {
        (*dhi)++;
        if (*dhi - *dlo < 3) (*dlo)--;
    }
    if (*dhi - *dlo > MAX_DECADES) *dlo = *dhi - MAX_DECADES;
}

static axes choose_axes(const opm_trace_report *r, const double *roof, size_t nroof)
{
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    for (size_t i = 0; i < r->n_groups; i++) {
        const opm_trace_group *g = &r->groups[i];
        if (!plottable(g)) continue;
        /* A factor 2 of room keeps circles off the frame. */
        xmin = fmin(xmin, point_x(g) / 2), xmax = fmax(xmax, point_x(g) * 2);
        ymin = fmin(ymin, point_y(g) / 2), ymax = fmax(ymax, point_y(g) * 2);
    }
    for (size_t i = 0; i < nroof; i++) {
        ymin = fmin(ymin, roof[i] / 1e3), ymax = fmax(ymax, roof[i] * 1.5);
        if (r->hbm_bytes_per_s > 0) {
            double ridge = roof[i] / r->hbm_bytes_per_s;
            xmin = fmin(xmin, ridge / 10), xmax = fmax(xmax, ridge * 10);
        }
    }
    if (!(xmax > 0)) xmin = 0.1, xmax = 1e4;
    if (!(ymax > 0)) ymin = 1e9, ymax = 1e15;
    axes a;
    span(xmin, xmax, &a.xlo, &a.xhi);
    span(ymin, ymax, &a.ylo, &a.yhi);
    return a;
}

/* "1", "10", "100", "1k" ... "100P"; "0.1", "0.01", "0.001", then 1e-4. */
static void decade_label(int k, char *buf, size_t cap)
{
    static const char prefix[] = " kMGTPEZY";
    if (k < 0) {
        if (k >= -3) snprintf(buf, cap, "%.*f", -k, pow(10, k));
        else snprintf(buf, cap, "1e%d", k);
    } else if (k / 3 < (int)sizeof prefix - 1) {
        snprintf(buf, cap, "%.0f%c", pow(10, k % 3), prefix[k / 3]);
        size_t n = strlen(buf);
        if (n && buf[n - 1] == ' ') buf[n - 1] = '\0';
    } else {
        snprintf(buf, cap, "1e%d", k);
    }
}

static void put_axes(strbuf *b, const axes *a)
{
    char lab[32];
    sb_printf(b, "<g class=\"grid\" stroke=\"#e0e0e0\" stroke-width=\"1\">\n");
    for (int k = a->xlo; k <= a->xhi; k++) {
        double x = px_x(a, pow(10, k));
        sb_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x, PY0, x, PY1);
    }
    for (int k = a->ylo; k <= a->yhi; k++) {
        double y = px_y(a, pow(10, k));
        sb_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", PX0, y, PX1, y);
    }
    sb_puts(b, "</g>\n");
    sb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"#000\"/>\n",
              PX0, PY0, PX1 - PX0, PY1 - PY0);
    sb_puts(b, "<g class=\"ticks\" font-size=\"12\" fill=\"#000\">\n");
    for (int k = a->xlo; k <= a->xhi; k++) {
        decade_label(k, lab, sizeof lab);
        sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%s</text>\n", px_x(a, pow(10, k)),
                  PY1 + 18, lab);
    }
    for (int k = a->ylo; k <= a->yhi; k++) {
        decade_label(k, lab, sizeof lab);
        sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n", PX0 - 8,
                  px_y(a, pow(10, k)) + 4, lab);
    }
    sb_puts(b, "</g>\n");
    sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"14\" text-anchor=\"middle\">"
                 "arithmetic intensity (FLOP/byte)</text>\n", (PX0 + PX1) / 2, PY1 + 45);
    sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"14\" text-anchor=\"middle\" "
                 "transform=\"rotate(-90 %.2f %.2f)\">achieved FLOP/s</text>\n",
              25.0, (PY0 + PY1) / 2, 25.0, (PY0 + PY1) / 2);
}

/* The kinds whose groups run against this peak, for its label. */
static void roof_kinds(strbuf *b, const opm_trace_report *r, double peak)
{
    int seen[OPM_KIND_COUNT] = {0};
    int listed = 0;
    for (size_t i = 0; i < r->n_groups; i++) {
        const opm_trace_group *g = &r->groups[i];
        double p = r->group_peak_flops_per_s[i];
        if (!g->has_kind || (unsigned)g->kind >= OPM_KIND_COUNT || seen[g->kind] || fabs(p - peak) > 1e-9 * peak)
            continue;
        seen[g->kind] = 1;
        if (listed == 3) {
            sb_puts(b, ", ...");
            break;
        }
        sb_puts(b, listed++ ? ", " : ": ");
        sb_puts(b, opm_kind_name(g->kind));
    }
}

static void put_roofs(strbuf *b, const opm_trace_report *r, const axes *a, const double *roof, size_t nroof)
{
    double hbm = r->hbm_bytes_per_s, xend = pow(10, a->xhi);
    sb_puts(b, "<g class=\"roofs\" clip-path=\"url(#plot)\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\">\n");
    if (hbm > 0) {
        double xstart = pow(10, a->xlo), xridge = nroof ? roof[0] / hbm : xend;
        sb_printf(b, "<line class=\"memory-roof\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
                  px_x(a, xstart), px_y(a, hbm * xstart), px_x(a, xridge), px_y(a, hbm * xridge));
    }
    for (size_t i = 0; i < nroof; i++) {
        double x0 = hbm > 0 ? roof[i] / hbm : pow(10, a->xlo);
        sb_printf(b, "<line class=\"compute-roof\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"%s/>\n",
                  px_x(a, x0), px_y(a, roof[i]), px_x(a, xend), px_y(a, roof[i]),
                  i ? " stroke-dasharray=\"6 4\"" : "");
    }
    sb_puts(b, "</g>\n");
}

/* Drawn after the points, with a white halo, so that labels stay readable
 * where they cross lines or circles. */
static void put_roof_labels(strbuf *b, const opm_trace_report *r, const axes *a, const double *roof, size_t nroof)
{
    double hbm = r->hbm_bytes_per_s;
    sb_puts(b, "<g class=\"roof-labels\" font-size=\"12\" fill=\"#000\" stroke=\"#fff\" "
               "stroke-width=\"3\" paint-order=\"stroke\" pointer-events=\"none\">\n");
    if (hbm > 0) {
        /* On the visible part of the memory roof, a fifth of the way in. */
        double lh = log10(hbm);
        double lo = fmax(a->xlo, a->ylo - lh), hi = fmin(nroof ? log10(roof[0] / hbm) : a->xhi, a->yhi - lh);
        if (hi > lo) {
            double lx = lo + 0.2 * (hi - lo), x = px_x(a, pow(10, lx)), y = px_y(a, pow(10, lx + lh));
            double ang = atan2(px_y(a, pow(10, lx + lh + 1)) - y, px_x(a, pow(10, lx + 1)) - x) * DEG_PER_RAD;
            sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" transform=\"rotate(%.2f %.2f %.2f)\">HBM %.3g TB/s</text>\n", x,
                      y - 6, ang, x, y, hbm / 1e12);
        }
    }
    for (size_t i = 0; i < nroof; i++) {
        sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.4g TFLOP/s", PX1 - 6, px_y(a, roof[i]) - 6,
                  roof[i] / 1e12);
        roof_kinds(b, r, roof[i]);
        sb_puts(b, "</text>\n");
    }
    sb_puts(b, "</g>\n");
}

static void put_tooltip(strbuf *b, const opm_trace_group *g)
{
    sb_puts(b, "<title>");
    xml_text(b, g->name);
    sb_putc(b, '\n');
    xml_text(b, g->params_json);
    sb_printf(b, "\ncount %llu, kernel time %.6g us (mean %.6g us)\n%.4g TFLOP/s, %.4g FLOP/byte",
              (unsigned long long)g->count, g->kernel_time_s * 1e6, g->kernel_time_mean_s * 1e6,
              point_y(g) / 1e12, point_x(g));
    if (g->has_roofline)
        sb_printf(b, "\n%.1f%% of roofline (%s-bound)", g->pct_roofline, opm_bound_name(g->bound));
    sb_puts(b, "</title>");
}

typedef struct by_time {
    double t;
    size_t i;
} by_time;

static int larger_first(const void *pa, const void *pb)
{
    const by_time *x = pa, *y = pb;
    if (x->t != y->t) return x->t > y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Largest circles first, so small ones stay on top and hoverable. */
static int put_points(strbuf *b, const opm_trace_report *r, const axes *a, int *cat_used)
{
    by_time *order = malloc((r->n_groups ? r->n_groups : 1) * sizeof *order);
    if (!order) return -1;
    size_t n = 0;
    double tmax = 0;
    for (size_t i = 0; i < r->n_groups; i++) {
        if (!plottable(&r->groups[i])) continue;
        order[n++] = (by_time){r->groups[i].kernel_time_s, i};
        tmax = fmax(tmax, r->groups[i].kernel_time_s);
    }
    qsort(order, n, sizeof *order, larger_first);
    sb_puts(b, "<g class=\"points\" clip-path=\"url(#plot)\" fill-opacity=\"0.6\" stroke-width=\"1\">\n");
    for (size_t k = 0; k < n; k++) {
        const opm_trace_group *g = &r->groups[order[k].i];
        unsigned c = (unsigned)g->category < OPM_TCAT_COUNT ? (unsigned)g->category : OPM_TCAT_OTHER;
        cat_used[c] = 1;
        double rad = fmax(MIN_R, MAX_R * sqrt(g->kernel_time_s / tmax));
        sb_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" stroke=\"%s\">", px_x(a, point_x(g)),
                  px_y(a, point_y(g)), rad, cat_colour[c], cat_colour[c]);
        put_tooltip(b, g);
        sb_puts(b, "</circle>\n");
    }
    sb_puts(b, "</g>\n");
    if (!n)
        sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"14\" text-anchor=\"middle\" fill=\"#555\">"
                     "no op with a FLOP count to plot</text>\n", (PX0 + PX1) / 2, (PY0 + PY1) / 2);
    free(order);
    return (int)(n > 0);
}

static void put_legend(strbuf *b, const int *cat_used, double tmax_s)
{
    double y = PY0 + 10;
    sb_puts(b, "<g class=\"legend\" font-size=\"12\">\n");
    for (unsigned c = 0; c < OPM_TCAT_COUNT; c++) {
        if (!cat_used[c]) continue;
        sb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"12\" fill=\"%s\" fill-opacity=\"0.6\" "
                     "stroke=\"%s\"/><text x=\"%.2f\" y=\"%.2f\">%s</text>\n",
                  PX1 + 20, y, cat_colour[c], cat_colour[c], PX1 + 38, y + 10,
                  opm_report_category((opm_trace_category)c));
        y += 20;
    }
    if (tmax_s > 0)
        sb_printf(b, "<text x=\"%.2f\" y=\"%.2f\">area: kernel time</text>\n"
                     "<text x=\"%.2f\" y=\"%.2f\">largest %.4g ms</text>\n",
                  PX1 + 20, y + 16, PX1 + 20, y + 32, tmax_s * 1e3);
    sb_puts(b, "</g>\n");
}

char *opm_trace_report_to_svg(const opm_trace_report *r, opm_error *err)
{
    opm_error_clear(err);
    if (!r || !r->hardware) {
        opm_err(err, OPM_EINVAL, NULL, "svg: %s", r ? "the roofline chart needs a hardware" : "no report");
        return NULL;
    }
    double roof[MAX_ROOFS];
    size_t nroof = collect_roofs(r, roof);
    axes a = choose_axes(r, roof, nroof);
    double tmax = 0;
    for (size_t i = 0; i < r->n_groups; i++)
        if (plottable(&r->groups[i])) tmax = fmax(tmax, r->groups[i].kernel_time_s);

    strbuf b = {0};
    sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
              SVG_W, SVG_H, SVG_W, SVG_H);
    sb_printf(&b, "<defs><clipPath id=\"plot\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>"
                  "</clipPath></defs>\n", PX0, PY0, PX1 - PX0, PY1 - PY0);
    sb_printf(&b, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", SVG_W, SVG_H);
    sb_printf(&b, "<text x=\"%.2f\" y=\"28\" font-size=\"16\">Roofline on ", PX0);
    xml_text(&b, r->hardware);
    sb_puts(&b, ": ");
    xml_text(&b, r->source);
    sb_puts(&b, "</text>\n");
    put_axes(&b, &a);
    put_roofs(&b, r, &a, roof, nroof);
    int cat_used[OPM_TCAT_COUNT] = {0};
    if (put_points(&b, r, &a, cat_used) < 0) b.oom = 1;
    put_roof_labels(&b, r, &a, roof, nroof);
    put_legend(&b, cat_used, tmax);
    sb_puts(&b, "</svg>\n");
    return opm_report_finish(&b, "svg", err);
}
