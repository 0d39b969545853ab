/* cmd_predict.c — `opmodel predict`: one op from a file, or a JSONL stream
 * of ops with one prediction per line (contract §3). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "io/io_internal.h"

static const char help[] =
    "usage: opmodel predict --hardware NAME|FILE (--op FILE|- | --batch FILE.jsonl|-)\n"
    "                       [--model roofline] [--clock-mhz F] [--format json|table]\n"
    "\n"
    "  --hardware NAME|FILE  a built-in name (`opmodel hardware list`) or a hardware YAML file\n"
    "  --op FILE|-           one operation, YAML or JSON, full or short form (- reads stdin)\n"
    "  --batch FILE|-        JSONL: one operation per line; one prediction per line, in order;\n"
    "                        a bad line prints {\"line\": N, \"error\": \"...\"} and the run goes on\n"
    "  --model NAME          prediction model (default roofline; see `opmodel models`)\n"
    "  --clock-mhz F         run the hardware at F MHz: compute and on-chip bandwidths scale; DRAM\n"
    "                        bandwidth does not, the L2 part of DRAM latency does\n"
    "  --format json|table   json (default): one JSON object per prediction; table: for people\n"
    "\n"
    "Exit status: 0 ok, 1 some batch lines failed, 2 usage or input error.\n";

static void print_table(const opm_profile *p)
{
    printf("%-22s %s\n", "name", p->name);
    printf("%-22s %s (%s)\n", "kind", opm_kind_name(p->kind), opm_phase_name(p->phase));
    printf("%-22s %s on %s%s\n", "model", p->model, p->hardware, p->fell_back ? " (fell back to the roofline)" : "");
    printf("%-22s %.6g us\n", "latency", p->latency_s * 1e6);
    printf("%-22s %s", "bound", opm_bound_name(p->bound));
    const opm_diag *lim = opm_profile_diag(p, "limiting_level");
    if (lim && lim->is_text) printf(" (%s)", lim->text);
    printf("\n%-22s %llu (%s engine)\n", "flops", (unsigned long long)p->flops, opm_engine_name(p->engine));
    printf("%-22s %.6g FLOP/byte\n", "arithmetic intensity", p->arithmetic_intensity);
    for (size_t i = 0; i < p->level_count; i++)
        printf("%-22s read %llu B, write %llu B, %.6g us\n", p->levels[i].name,
               (unsigned long long)p->levels[i].read_bytes, (unsigned long long)p->levels[i].write_bytes,
               p->levels[i].time_s * 1e6);
    printf("%-22s input %llu B, weight %llu B, output %llu B, workspace %llu B\n", "footprint",
           (unsigned long long)p->input_bytes, (unsigned long long)p->weight_bytes,
           (unsigned long long)p->output_bytes, (unsigned long long)p->workspace_bytes);
    printf("%-22s %.6g J (compute %.6g J, static %.6g J)\n", "energy", p->energy_j, p->compute_energy_j,
           p->static_energy_j);
    printf("%-22s %.6g W\n", "average power", p->average_power_w);
    for (size_t i = 0; i < p->diag_count; i++) {
        const opm_diag *d = &p->diags[i];
        if (d->is_text) printf("  %-20s %s\n", d->key, d->text);
        else printf("  %-20s %.6g\n", d->key, d->number);
    }
    if (p->diags_dropped) printf("  %-20s %zu\n", "diagnostics_dropped", p->diags_dropped);
}


/* Lines out of large reads: a getc per byte was a tenth of a short line's
 * cost.  The same contract as opm_read_line: 1 a line (NUL-terminated, *len
 * bytes without the newline, valid until the next call), 0 the end, -1 a
 * line longer than OPM_DOCUMENT_MAX_BYTES, -2 out of memory. */
typedef struct line_reader {
    FILE *f;
    char *buf;
    size_t cap, start, end;
    int eof;
} line_reader;

enum { READ_BLOCK = 1 << 16 };

static int next_line(line_reader *r, char **line, size_t *len)
{
    for (;;) {
        size_t have = r->end - r->start;
        char *b = have ? r->buf + r->start : NULL; /* buf is NULL before the first read */
        char *nl = have ? memchr(b, '\n', have) : NULL;
        if (nl || (r->eof && have)) {
            size_t n = nl ? (size_t)(nl - b) : have;
            if (n > OPM_DOCUMENT_MAX_BYTES) return -1;
            b[n] = '\0'; /* the newline, or the byte kept free past the end */
            r->start += nl ? n + 1 : n;
            *line = b;
            *len = n;
            return 1;
        }
        if (r->eof) return 0;
        if (have > OPM_DOCUMENT_MAX_BYTES) return -1;
        if (r->start) {
            if (have) memmove(r->buf, b, have); /* b is NULL when nothing is left */
            r->start = 0;
            r->end = have;
        }
        if (r->cap - r->end < READ_BLOCK + 1) {
            size_t cap = r->cap ? 2 * r->cap : 4 * READ_BLOCK;
            /* enough for the longest line and one block after it, no more */
            if (cap > OPM_DOCUMENT_MAX_BYTES + READ_BLOCK + 2) cap = OPM_DOCUMENT_MAX_BYTES + READ_BLOCK + 2;
            char *p = realloc(r->buf, cap);
            if (!p) return -2;
            r->buf = p;
            r->cap = cap;
        }
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->f);
        r->end += got;
        if (got == 0) r->eof = 1;
    }
}

/* Writes what `out` holds to stdout; 0, or -1 on a write error.  Straight
 * to the descriptor (after whatever stdio holds): a block through fwrite
 * is copied once more into stdio's buffer. */
static int flush_out(strbuf *out)
{
    const char *p = out->p;
    size_t n = out->n;
    out->n = 0;
    if (!n) return 0;
    if (fflush(stdout)) return -1;
    while (n) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

enum { OUT_FLUSH_BYTES = 1 << 16 };

static int run_batch(const char *path, const opm_model *model, const opm_hardware *hw, int table)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return cli_usage("%s: cannot open for reading", path);
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    const char *source = strcmp(path, "-") ? path : "<stdin>";
    line_reader reader = {.f = f};
    char *line;
    size_t len;
    int lineno = 0, failed = 0, got, wbad = 0;
    /* JSON answers collect here and go out in blocks of about 64 KiB: one
     * stdio call per block instead of one per line. */
    strbuf out = {0};
    opm_num_cache nums = {0}; /* the numbers that repeat from line to line */
    out.nums = &nums;
    opm_op *op = NULL; /* one op, rebuilt line after line */
    while ((got = next_line(&reader, &line, &len)) > 0) {
        lineno++;
        while (len && line[len - 1] == '\r') len--;
        size_t s = 0;
        while (s < len && (line[s] == ' ' || line[s] == '\t')) s++;
        if (s == len) continue;
        opm_error err;
        opm_error_clear(&err);
        opm_profile p;
        op = opm_op_parse_json_line(line, len, source, lineno, op, &err);
        int rc = op ? opm_predict(model->name, op, hw, &p, &err) : 1;
        if (rc) {
            failed++;
            sb_printf(&out, "{\"line\": %d, \"error\": ", lineno);
            sb_json_string(&out, err.message);
            SB_LIT(&out, "}\n");
        } else if (table) {
            wbad |= flush_out(&out);
            print_table(&p);
            putchar('\n');
        } else {
            opm_profile_write_json(&p, &out);
            sb_putc(&out, '\n');
        }
        if (out.oom) {
            opm_op_free(op);
            free(reader.buf);
            free(out.p);
            return cli_usage("out of memory");
        }
        if (out.n >= OUT_FLUSH_BYTES) wbad |= flush_out(&out);
    }
    wbad |= flush_out(&out);
    opm_op_free(op);
    free(reader.buf);
    free(out.p);
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (fflush(stdout) || bad || wbad) return cli_usage("%s: I/O error", source);
    if (got == -1)
        return cli_usage("%s:%d: expected a line of at most %zu MiB (OPM_DOCUMENT_MAX_BYTES), got a longer one",
                         source, lineno + 1, OPM_DOCUMENT_MAX_BYTES >> 20);
    if (got == -2) return cli_usage("%s:%d: out of memory reading the line", source, lineno + 1);
    return failed ? EXIT_PARTIAL : EXIT_OK;
}

int cmd_predict(int argc, char **argv)
{
    static const struct option opts[] = {
        {"hardware", required_argument, 0, 'H'}, {"op", required_argument, 0, 'o'},
        {"batch", required_argument, 0, 'b'},    {"model", required_argument, 0, 'm'},
        {"clock-mhz", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0},
    };
    const char *hw_name = NULL, *op_path = NULL, *batch = NULL, *model_name = "roofline", *format = "json";
    double clock_mhz = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': hw_name = optarg; break;
        case 'o': op_path = optarg; break;
        case 'b': batch = optarg; break;
        case 'm': model_name = optarg; break;
        case 'f': format = optarg; break;
        case 'c': {
            char *end;
            clock_mhz = strtod(optarg, &end);
            if (*end || !(clock_mhz > 0)) return cli_usage("--clock-mhz: expected a positive number, got '%s'", optarg);
            break;
        }
        case 'h': fputs(help, stdout); return EXIT_OK;
        default: return cli_usage("predict: unknown or incomplete option '%s' (see `opmodel predict --help`)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage("predict: unexpected argument '%s'", argv[optind]);
    if (!hw_name) return cli_usage("predict: --hardware is required (see `opmodel hardware list`)");
    if (!op_path == !batch) return cli_usage("predict: give exactly one of --op and --batch");
    int table = !strcmp(format, "table");
    if (!table && strcmp(format, "json")) return cli_usage("--format: expected json or table, got '%s'", format);
    const opm_model *model = opm_model_find(model_name);
    if (!model) return cli_usage("--model: no model named '%s' (see `opmodel models`)", model_name);

    opm_error err;
    opm_error_clear(&err);
    opm_hardware *hw = opm_hardware_open(hw_name, &err);
    if (!hw) return cli_fail(&err);
    if (clock_mhz > 0) {
        opm_hardware *scaled = opm_hardware_with_clock(hw, clock_mhz * 1e6, &err);
        opm_hardware_free(hw);
        if (!scaled) return cli_fail(&err);
        hw = scaled;
    }
    int rc;
    if (batch) {
        rc = run_batch(batch, model, hw, table);
    } else {
        opm_op *op = opm_op_parse_file(op_path, &err);
        opm_profile p;
        if (!op || opm_predict(model->name, op, hw, &p, &err)) {
            rc = cli_fail(&err);
        } else if (table) {
            print_table(&p);
            rc = EXIT_OK;
        } else {
            char *json = opm_profile_to_json(&p, &err);
            if (!json) rc = cli_fail(&err);
            else {
                puts(json);
                free(json);
                rc = EXIT_OK;
            }
        }
        opm_op_free(op);
    }
    opm_hardware_free(hw);
    return rc;
}
