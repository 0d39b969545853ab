/* cmd_trace.c — `opmodel trace report`: a PyTorch profiler trace read,
 * linked and grouped by the library, then printed as a table, CSV or JSON,
 * or written as a set of files (JSON, CSVs, table, SVG roofline) into a
 * folder.
 *
 * Every output is built in memory before anything is written, so an error
 * leaves stdout empty; the folder's files go through cli_write_outputs
 * (output.c), all or none. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "opmodel/trace_analysis.h"

static const char help[] =
    "usage: opmodel trace report TRACE [--hardware NAME|FILE] [--model NAME]\n"
    "                            [--format table|csv|json] [--instances] [--top N] [--output-dir DIR]\n"
    "                            [--capture CAPTURE_TRACE|DIR] [--window START_MS:END_MS]\n"
    "                            [--iterations] [--kernel-hints]\n"
    "       opmodel trace report DIR | --ranks TRACE0 TRACE1 ... [--format table|json] [--top N]\n"
    "\n"
    "Measured GPU time of every op in a PyTorch profiler trace (Chrome-trace JSON, plain or gzip,\n"
    "- for stdin), grouped by op name and call parameters, beside the FLOPs and bytes the op\n"
    "library counts and, with a hardware, the roofline time.\n"
    "\n"
    "  --hardware NAME|FILE  a built-in name (`opmodel hardware list`) or a hardware YAML file;\n"
    "                        default: detected from the GPU named in the trace, if recognised\n"
    "  --model NAME          model for the roofline columns (default roofline; see `opmodel models`)\n"
    "  --format FMT          table (default): for people; csv: one row per group; json: contract §6\n"
    "  --instances           with --format csv: one row per op instance instead of per group\n"
    "  --top N               table: show the N groups with most kernel time and the N with the\n"
    "                        largest gap to roofline (default 20; 0: all)\n"
    "  --output-dir DIR      write report.json, groups.csv, instances.csv, report.txt and (with a\n"
    "                        hardware) roofline.svg into DIR, created if missing; prints their paths\n"
    "  --capture FILE|DIR    CUDA/HIP-graph runs: the trace recorded while the graphs were captured\n"
    "                        (or a folder holding exactly one); kernels replayed by graph launches\n"
    "                        are attributed to the ops captured (see docs/trace.md, Graph traces)\n"
    "  --window A:B          only events wholly inside [A, B] ms from the trace's first event\n"
    "  --iterations          also the run's repeated iterations (ProfilerStep# ranges, else the\n"
    "                        period of the kernel sequence): count, time per iteration, the outlier\n"
    "  --kernel-hints        with a hardware: GEMM groups predicted with the tile, stages and split-K\n"
    "                        their kernel's name gives, next to the model's own choice\n"
    "                        (--model, default extended_roofline for this section)\n"
    "  DIR, --ranks          a distributed run, one trace per rank (DIR: its .json/.json.gz files,\n"
    "                        rank = file order, digits compared as numbers): collectives matched\n"
    "                        across ranks with bytes, bus bandwidth, skew and the slowest rank, and\n"
    "                        each rank's exposed communication (docs/trace.md, Multi-rank)\n"
    "  (--iterations and --kernel-hints add to the table and the JSON, keys \"iterations\" and\n"
    "   \"kernel_hints\"; CSV is unchanged)\n"
    "\n"
    "In the table, # is the group's index in the JSON groups and CSV rows (instances.csv's group).\n"
    "Exit status: 0 ok, 2 usage or input error (one line on stderr, nothing on stdout).\n";

typedef struct report_opts {
    const char *trace, *hw_name, *model, *format, *out_dir, *capture;
    int has_window;
    double win_start_ms, win_end_ms;
    size_t top;
    int instances;
    int iterations, kernel_hints;
    int ranks;                    /* --ranks: every positional argument is a rank's trace */
    char **files;                 /* the positional arguments */
    int n_files;
    /* Filled by cmd_report: the extra sections, as JSON and table text. */
    char *extra_json, *extra_table;
} report_opts;

static int parse_top(const char *s, size_t *top)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *end || errno) return cli_usage("--top: expected a whole number >= 0, got '%s'", s);
    *top = (size_t)v;
    return 0;
}

/* "A:B", milliseconds, 0 <= A < B. */
static int parse_window(const char *s, report_opts *o)
{
    char *end;
    errno = 0;
    double a = strtod(s, &end);
    if (end == s || *end != ':' || errno)
        return cli_usage("--window: expected START_MS:END_MS, got '%s'", s);
    const char *s2 = end + 1;
    double b = strtod(s2, &end);
    if (end == s2 || *end || errno || !(a >= 0) || !(b > a) || b > 9.2e12)
        return cli_usage("--window: expected START_MS:END_MS with 0 <= START_MS < END_MS, got '%s'", s);
    o->has_window = 1;
    o->win_start_ms = a;
    o->win_end_ms = b;
    return 0;
}

static int parse_report_args(int argc, char **argv, report_opts *o)
{
    static const struct option opts[] = {
        {"hardware", required_argument, 0, 'H'},   {"model", required_argument, 0, 'm'},
        {"format", required_argument, 0, 'f'},     {"output-dir", required_argument, 0, 'o'},
        {"top", required_argument, 0, 't'},        {"instances", no_argument, 0, 'i'},
        {"capture", required_argument, 0, 'c'},    {"window", required_argument, 0, 'w'},
        {"iterations", no_argument, 0, 'I'},       {"kernel-hints", no_argument, 0, 'K'},
        {"ranks", no_argument, 0, 'R'},
        {"help", no_argument, 0, 'h'},             {0, 0, 0, 0},
    };
    *o = (report_opts){.format = "table", .top = 20};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': o->hw_name = optarg; break;
        case 'm': o->model = optarg; break;
        case 'f': o->format = optarg; break;
        case 'o': o->out_dir = optarg; break;
        case 't':
            if (parse_top(optarg, &o->top)) return EXIT_USAGE;
            break;
        case 'i': o->instances = 1; break;
        case 'c': o->capture = optarg; break;
        case 'I': o->iterations = 1; break;
        case 'K': o->kernel_hints = 1; break;
        case 'R': o->ranks = 1; break;
        case 'w':
            if (parse_window(optarg, o)) return EXIT_USAGE;
            break;
        case 'h': fputs(help, stdout); return -1;
        default:
            return cli_usage("trace report: unknown or incomplete option '%s' (see `opmodel trace report --help`)",
                             argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage("trace report: expected a trace file (see `opmodel trace report --help`)");
    o->trace = argv[optind];
    o->files = argv + optind;
    o->n_files = argc - optind;
    optind++;
    if (optind < argc && !o->ranks) return cli_usage("trace report: unexpected argument '%s'", argv[optind]);
    if (strcmp(o->format, "table") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
        return cli_usage("--format: expected table, csv or json, got '%s'", o->format);
    if (o->instances && !o->out_dir && strcmp(o->format, "csv"))
        return cli_usage("--instances: only with --format csv (instances.csv is always in --output-dir)");
    if (o->model && !opm_model_find(o->model))
        return cli_usage("--model: no model named '%s' (see `opmodel models`)", o->model);
    if (o->out_dir && !*o->out_dir) return cli_usage("--output-dir: expected a folder name");
    if (o->capture && !*o->capture) return cli_usage("--capture: expected a capture trace or a folder");
    return 0;
}

/* --hardware, else the trace's first GPU if it names a built-in entry.
 * *hw stays NULL (no roofline) when nothing is known.  `note` gets the
 * line that says which way it went, printed only once the report is out so
 * that a failing run still has exactly one line on stderr. */
static int pick_hardware(const opm_trace *t, const char *hw_name, opm_hardware **hw, char *note, size_t cap,
                         opm_error *err)
{
    *hw = NULL;
    note[0] = '\0';
    if (hw_name) {
        *hw = opm_hardware_open(hw_name, err);
        return *hw ? 0 : -1;
    }
    const char *device = opm_trace_device_count(t) ? opm_trace_device_name(t, 0) : NULL;
    const char *builtin = device ? opm_hardware_detect(device) : NULL;
    if (!builtin) {
        if (device)
            snprintf(note, cap, "opmodel: no built-in hardware for device \"%s\": no roofline columns (give --hardware)",
                     device);
        else
            snprintf(note, cap, "opmodel: the trace names no GPU: no roofline columns (give --hardware)");
        return 0;
    }
    *hw = opm_hardware_builtin(builtin, err);
    if (!*hw) return -1;
    snprintf(note, cap, "opmodel: hardware auto-detected: %s (from \"%s\")", builtin, device);
    return 0;
}

static void print_note(const char *note)
{
    if (note[0]) fprintf(stderr, "%s\n", note);
}

/* mkdir -p. */
static int make_dir(const char *dir)
{
    char *p = strdup(dir);
    if (!p) return cli_usage("out of memory");
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/') continue;
        char was = *s;
        *s = '\0';
        if (mkdir(p, 0777) && errno != EEXIST) {
            int e = errno;
            free(p);
            return cli_usage("%s: cannot create folder: %s", dir, strerror(e));
        }
        *s = was;
        if (!was) break;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return cli_usage("%s: not a folder", dir);
    return 0;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    const char *slash = n && dir[n - 1] == '/' ? "" : "/";
    size_t len = n + strlen(slash) + strlen(name) + 1;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s%s%s", dir, slash, name);
    return p;
}

static void oom(opm_error *err)
{
    opm_error_clear(err);
    err->code = OPM_ENOMEM;
    snprintf(err->message, sizeof err->message, "out of memory");
}

/* The report's JSON, with the extra sections (--iterations,
 * --kernel-hints) as keys after all of the report's own. */
static char *report_json(const report_opts *o, const opm_trace_report *r, opm_error *err)
{
    char *j = opm_trace_report_to_json(r, err);
    if (!j || !o->extra_json) return j;
    char *close = strrchr(j, '}');
    if (!close) return j;
    size_t head = (size_t)(close - j);
    while (head && (j[head - 1] == '\n' || j[head - 1] == ' ')) head--;
    size_t len = head + strlen(o->extra_json) + strlen(close) + 8;
    char *out = malloc(len);
    if (!out) {
        free(j);
        oom(err);
        return NULL;
    }
    snprintf(out, len, "%.*s,\n%s\n%s", (int)head, j, o->extra_json, close);
    free(j);
    return out;
}

/* The report's table, then the extra sections. */
static char *report_table(const report_opts *o, const opm_trace_report *r, opm_error *err)
{
    char *t = opm_trace_report_to_table(r, o->top, err);
    if (!t || !o->extra_table) return t;
    size_t len = strlen(t) + strlen(o->extra_table) + 2;
    char *out = malloc(len);
    if (!out) {
        free(t);
        oom(err);
        return NULL;
    }
    snprintf(out, len, "%s\n%s", t, o->extra_table);
    free(t);
    return out;
}

static int emit_dir(const report_opts *o, const opm_trace_report *r, const char *note, opm_error *err)
{
    static const char *const names[5] = {"report.json", "groups.csv", "instances.csv", "report.txt", "roofline.svg"};
    char *text[5] = {NULL}, *path[5] = {NULL};
    size_t n = opm_trace_report_hardware(r) ? 5 : 4;
    int rc = 0;
    if (!(text[0] = report_json(o, r, err)) || !(text[1] = opm_trace_report_to_csv(r, 0, err)) ||
        !(text[2] = opm_trace_report_to_csv(r, 1, err)) || !(text[3] = report_table(o, r, err)) ||
        (n == 5 && !(text[4] = opm_trace_report_to_svg(r, err))))
        rc = cli_fail(err);
    cli_output outs[5];
    for (size_t i = 0; !rc && i < n; i++) {
        if (!(path[i] = join(o->out_dir, names[i]))) rc = cli_usage("out of memory");
        else outs[i] = (cli_output){"--output-dir", path[i], text[i], strlen(text[i])};
    }
    if (!rc) rc = make_dir(o->out_dir);
    if (!rc) {
        /* All or none, and never over the trace being read. */
        const char *inputs[1] = {o->trace};
        rc = cli_write_outputs(outs, n, inputs, 1);
    }
    if (!rc) {
        print_note(note);
        for (size_t i = 0; i < n; i++) puts(path[i]);
        if (fflush(stdout)) rc = cli_usage("stdout: write error");
    }
    for (size_t i = 0; i < 5; i++) {
        free(text[i]);
        free(path[i]);
    }
    return rc;
}

static int emit_stdout(const report_opts *o, const opm_trace_report *r, const char *note, opm_error *err)
{
    char *text;
    if (!strcmp(o->format, "json")) text = report_json(o, r, err);
    else if (!strcmp(o->format, "csv")) text = opm_trace_report_to_csv(r, o->instances, err);
    else text = report_table(o, r, err);
    if (!text) return cli_fail(err);
    print_note(note);
    fputs(text, stdout);
    free(text);
    if (fflush(stdout)) return cli_usage("stdout: write error");
    return EXIT_OK;
}

static int is_trace_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz"));
}

/* --capture DIR: the one trace file in it (execution_details.json, which
 * only says batch size and mode, is not one).  *path is malloc'ed. */
static int capture_path(const char *arg, char **path)
{
    struct stat st;
    *path = NULL;
    if (stat(arg, &st) || !S_ISDIR(st.st_mode)) {
        *path = strdup(arg);
        return *path ? 0 : cli_usage("out of memory");
    }
    DIR *d = opendir(arg);
    if (!d) return cli_usage("--capture: %s: cannot open folder: %s", arg, strerror(errno));
    struct dirent *de;
    int n = 0, rc = 0;
    while ((de = readdir(d))) {
        if (!is_trace_name(de->d_name) || !strcmp(de->d_name, "execution_details.json")) continue;
        if (++n > 1) {
            rc = cli_usage("--capture: %s holds more than one capture trace: give the file", arg);
            break;
        }
        *path = join(arg, de->d_name);
        if (!*path) {
            rc = cli_usage("out of memory");
            break;
        }
    }
    closedir(d);
    if (!rc && n == 0) rc = cli_usage("--capture: %s holds no .json or .json.gz trace", arg);
    if (rc) {
        free(*path);
        *path = NULL;
    }
    return rc;
}

/* --window, then --capture, on the run's trace before it is reported. */
static int prepare_trace(const report_opts *o, opm_trace *t, opm_error *err)
{
    if (o->has_window && opm_trace_keep_window(t, o->win_start_ms * 1e-3, o->win_end_ms * 1e-3, err))
        return cli_fail(err);
    if (!o->capture) return 0;
    char *path;
    int rc = capture_path(o->capture, &path);
    if (rc) return rc;
    opm_trace *c = opm_trace_read_file(path, err);
    free(path);
    if (!c) return cli_fail(err);
    opm_trace_graph_stats st;
    rc = opm_trace_merge_capture(t, c, &st, err) ? cli_fail(err) : 0;
    opm_trace_free(c);
    return rc;
}

/* Appends "  \"key\": text" to the extra JSON and the table text to the
 * extra table; both texts are freed. */
static int add_extra(report_opts *o, const char *key, char *json, char *table)
{
    size_t jl = (o->extra_json ? strlen(o->extra_json) : 0) + strlen(key) + strlen(json) + 16;
    size_t tl = (o->extra_table ? strlen(o->extra_table) : 0) + strlen(table) + 2;
    char *j = malloc(jl), *t = malloc(tl);
    if (j) snprintf(j, jl, "%s%s  \"%s\": %s", o->extra_json ? o->extra_json : "", o->extra_json ? ",\n" : "", key, json);
    if (t) snprintf(t, tl, "%s%s%s", o->extra_table ? o->extra_table : "", o->extra_table ? "\n" : "", table);
    free(json);
    free(table);
    free(o->extra_json);
    free(o->extra_table);
    o->extra_json = j;
    o->extra_table = t;
    return j && t ? 0 : cli_usage("out of memory");
}

static int add_iterations(report_opts *o, const opm_trace *t, opm_error *err)
{
    opm_trace_iterations *it = opm_trace_iterations_new(t, err);
    if (!it) return cli_fail(err);
    char *j = opm_trace_iterations_to_json(it, err), *tb = j ? opm_trace_iterations_to_table(it, err) : NULL;
    opm_trace_iterations_free(it);
    if (!tb) {
        free(j);
        return cli_fail(err);
    }
    return add_extra(o, "iterations", j, tb);
}

static int add_kernel_hints(report_opts *o, const opm_trace_report *r, const opm_hardware *hw, opm_error *err)
{
    const char *model = o->model && strcmp(o->model, "roofline") ? o->model : NULL;
    opm_trace_kernel_checks *c = opm_trace_kernel_checks_new(r, hw, model, err);
    if (!c) return cli_fail(err);
    char *j = opm_trace_kernel_checks_to_json(c, r, err), *tb = j ? opm_trace_kernel_checks_to_table(c, r, err) : NULL;
    opm_trace_kernel_checks_free(c);
    if (!tb) {
        free(j);
        return cli_fail(err);
    }
    return add_extra(o, "kernel_hints", j, tb);
}

/* Natural order: digit runs compare as numbers (rank2 before rank10). */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            while (*a == '0') a++;
            while (*b == '0') b++;
            size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
            if (la != lb) return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c) return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++, b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_natural(const void *a, const void *b)
{
    return natural_cmp(*(char *const *)a, *(char *const *)b);
}

/* DIR's trace files, in natural order; *paths and its strings malloc'ed. */
static int dir_traces(const char *dir, char ***paths, size_t *n)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return cli_usage("%s: cannot open folder: %s", dir, strerror(errno));
    struct dirent *de;
    size_t cap = 0;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        if (!is_trace_name(de->d_name) || !strcmp(de->d_name, "execution_details.json")) continue;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            char **p = realloc(*paths, nc * sizeof *p);
            if (!p) {
                rc = cli_usage("out of memory");
                break;
            }
            *paths = p;
            cap = nc;
        }
        if (!((*paths)[*n] = join(dir, de->d_name))) rc = cli_usage("out of memory");
        else (*n)++;
    }
    closedir(d);
    if (!rc && !*n) rc = cli_usage("trace report: %s holds no .json or .json.gz trace", dir);
    if (!rc) qsort(*paths, *n, sizeof **paths, cmp_natural);
    return rc;
}

static int cmd_ranks(const report_opts *o, char **paths, size_t n)
{
    if (strcmp(o->format, "table") && strcmp(o->format, "json"))
        return cli_usage("--format: a multi-rank report is table or json, got '%s'", o->format);
    if (o->out_dir || o->capture || o->has_window || o->iterations || o->kernel_hints || o->instances)
        return cli_usage("trace report: a multi-rank report takes only --format and --top");
    opm_error err;
    opm_error_clear(&err);
    opm_trace **t = calloc(n, sizeof *t);
    if (!t) return cli_usage("out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (!(t[i] = opm_trace_read_file(paths[i], &err))) rc = cli_fail(&err);
    opm_trace_ranks *r = NULL;
    if (!rc && !(r = opm_trace_ranks_new((const opm_trace *const *)t, n, &err))) rc = cli_fail(&err);
    for (size_t i = 0; i < n; i++) opm_trace_free(t[i]);
    free(t);
    if (rc) return rc;
    char *text = !strcmp(o->format, "json") ? opm_trace_ranks_to_json(r, &err) : opm_trace_ranks_to_table(r, o->top, &err);
    opm_trace_ranks_free(r);
    if (!text) return cli_fail(&err);
    fputs(text, stdout);
    free(text);
    if (fflush(stdout)) return cli_usage("stdout: write error");
    return EXIT_OK;
}

/* `trace report DIR` or `--ranks T0 T1 ...`; returns -1 when the arguments
 * name one trace (the ordinary report). */
static int maybe_ranks(const report_opts *o)
{
    struct stat st;
    if (!o->ranks && (strcmp(o->trace, "-") == 0 || stat(o->trace, &st) || !S_ISDIR(st.st_mode))) return -1;
    if (!o->ranks) {
        char **paths;
        size_t n;
        int rc = dir_traces(o->trace, &paths, &n);
        if (!rc) rc = cmd_ranks(o, paths, n);
        for (size_t i = 0; paths && i < n; i++) free(paths[i]);
        free(paths);
        return rc;
    }
    for (int i = 0; i < o->n_files; i++)
        if (!strcmp(o->files[i], "-")) return cli_usage("--ranks: each rank's trace must be a file, not stdin");
    return cmd_ranks(o, o->files, (size_t)o->n_files);
}

static int cmd_report(int argc, char **argv)
{
    report_opts o;
    int rc = parse_report_args(argc, argv, &o);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    if ((rc = maybe_ranks(&o)) >= 0) return rc;
    opm_error err;
    opm_error_clear(&err);
    opm_trace *t = opm_trace_read_file(o.trace, &err);
    if (!t) return cli_fail(&err);
    if ((rc = prepare_trace(&o, t, &err)) || (o.iterations && (rc = add_iterations(&o, t, &err)))) {
        opm_trace_free(t);
        free(o.extra_json);
        free(o.extra_table);
        return rc;
    }
    opm_hardware *hw;
    char note[OPM_ERROR_MESSAGE_MAX + 128];
    if (pick_hardware(t, o.hw_name, &hw, note, sizeof note, &err)) {
        opm_trace_free(t);
        free(o.extra_json);
        free(o.extra_table);
        return cli_fail(&err);
    }
    opm_trace_report *r = opm_trace_report_new(t, hw, o.model, &err);
    opm_trace_free(t);
    if (!r) rc = cli_fail(&err);
    else if (o.kernel_hints && !hw)
        rc = cli_usage("--kernel-hints: needs a hardware (give --hardware; the trace's GPU was not recognised)");
    else if (o.kernel_hints)
        rc = add_kernel_hints(&o, r, hw, &err);
    opm_hardware_free(hw);
    if (!rc) rc = o.out_dir ? emit_dir(&o, r, note, &err) : emit_stdout(&o, r, note, &err);
    opm_trace_report_free(r);
    free(o.extra_json);
    free(o.extra_table);
    return rc;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2) return cli_usage("trace: expected a subcommand: report or diff (see `opmodel trace --help`)");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(help, stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "diff")) return cmd_trace_diff(argc - 1, argv + 1);
    if (strcmp(argv[1], "report"))
        return cli_usage("trace: unknown subcommand '%s' (expected report or diff; see `opmodel trace --help`)",
                         argv[1]);
    return cmd_report(argc - 1, argv + 1);
}
