/* cmd_trace_diff.c — `opmodel trace diff A B`: two profiler traces of one
 * model (another GPU, another software version) each read and reported
 * exactly as `trace report` does, then paired group by group by the
 * library (opm_trace_diff_new) and printed as a table, CSV or JSON
 * (contract §8).
 *
 * As in `trace report`, the whole output is built before anything is
 * written, so an error leaves stdout empty and one line on stderr. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "opmodel/trace_diff.h"

static const char help[] =
    "usage: opmodel trace diff A B [--hardware NAME|FILE] [--format table|json|csv] [--top N]\n"
    "\n"
    "Two PyTorch profiler traces of the same model side by side: each op group of A paired with\n"
    "its counterpart in B (same name and call arguments; else same name and model parameters;\n"
    "else the same place in the GPU execution order), with count and kernel time on each side\n"
    "and delta_s = B - A, largest regression first; categories and GPU timelines side by side.\n"
    "\n"
    "  --hardware NAME|FILE  hardware for both reports (a built-in name or a YAML file);\n"
    "                        default: each trace's own GPU, when recognised\n"
    "  --format FMT          table (default): for people; csv: one row per pair; json: contract §8\n"
    "  --top N               table: the N largest regressions and the N largest improvements\n"
    "                        (default 20; 0: every group).  JSON and CSV always hold every group.\n"
    "\n"
    "Exit status: 0 ok, 2 usage or input error (one line on stderr, nothing on stdout).\n";

typedef struct diff_opts {
    const char *path[2], *hw_name, *format;
    size_t top;
} diff_opts;

static int parse_args(int argc, char **argv, diff_opts *o)
{
    static const struct option opts[] = {
        {"hardware", required_argument, 0, 'H'}, {"format", required_argument, 0, 'f'},
        {"top", required_argument, 0, 't'},      {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (diff_opts){.format = "table", .top = 20};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': o->hw_name = optarg; break;
        case 'f': o->format = optarg; break;
        case 't': {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *optarg == '-' || *end || errno)
                return cli_usage("--top: expected a whole number >= 0, got '%s'", optarg);
            o->top = (size_t)v;
            break;
        }
        case 'h': fputs(help, stdout); return -1;
        default:
            return cli_usage("trace diff: unknown or incomplete option '%s' (see `opmodel trace diff --help`)",
                             argv[optind - 1]);
        }
    }
    if (argc - optind < 2)
        return cli_usage("trace diff: expected two trace files A and B (see `opmodel trace diff --help`)");
    o->path[0] = argv[optind++];
    o->path[1] = argv[optind++];
    if (optind < argc) return cli_usage("trace diff: unexpected argument '%s'", argv[optind]);
    if (!strcmp(o->path[0], "-") && !strcmp(o->path[1], "-"))
        return cli_usage("trace diff: stdin can be only one of A and B");
    if (strcmp(o->format, "table") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
        return cli_usage("--format: expected table, csv or json, got '%s'", o->format);
    return 0;
}

/* One side: read, pick hardware (--hardware, else the trace's first GPU
 * when it names a built-in; none otherwise, silently, since the diff's
 * fields do not depend on it), report. */
static opm_trace_report *side_report(const char *path, const char *hw_name, opm_error *err)
{
    opm_trace *t = opm_trace_read_file(path, err);
    if (!t) return NULL;
    opm_hardware *hw = NULL;
    if (hw_name) {
        hw = opm_hardware_open(hw_name, err);
    } else {
        const char *device = opm_trace_device_count(t) ? opm_trace_device_name(t, 0) : NULL;
        const char *builtin = device ? opm_hardware_detect(device) : NULL;
        if (builtin) hw = opm_hardware_builtin(builtin, err);
        else opm_error_clear(err);
        if (builtin && !hw) {
            opm_trace_free(t);
            return NULL;
        }
    }
    if (hw_name && !hw) {
        opm_trace_free(t);
        return NULL;
    }
    opm_trace_report *r = opm_trace_report_new(t, hw, NULL, err);
    opm_trace_free(t);
    opm_hardware_free(hw);
    return r;
}

int cmd_trace_diff(int argc, char **argv)
{
    diff_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    opm_error err;
    opm_error_clear(&err);
    opm_trace_report *r[2] = {NULL, NULL};
    opm_trace_diff *d = NULL;
    char *text = NULL;
    for (int i = 0; i < 2 && !rc; i++)
        if (!(r[i] = side_report(o.path[i], o.hw_name, &err))) rc = cli_fail(&err);
    if (!rc && !(d = opm_trace_diff_new(r[0], r[1], &err))) rc = cli_fail(&err);
    if (!rc) {
        if (!strcmp(o.format, "json")) text = opm_trace_diff_to_json(d, &err);
        else if (!strcmp(o.format, "csv")) text = opm_trace_diff_to_csv(d, &err);
        else text = opm_trace_diff_to_table(d, o.top, &err);
        if (!text) rc = cli_fail(&err);
    }
    if (!rc) {
        fputs(text, stdout);
        if (fflush(stdout)) rc = cli_usage("stdout: write error");
    }
    free(text);
    opm_trace_diff_free(d);
    opm_trace_report_free(r[0]);
    opm_trace_report_free(r[1]);
    return rc;
}
