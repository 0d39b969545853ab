/* cmd_llm.c — `opmodel llm`: one whole-model step (prefill, decode, train)
 * from a model config, predicted op by op and rolled up: per-kind and
 * per-layer tables, step latency, tokens/s, MFU, energy, memory per device
 * (refused when it does not fit), as a table, JSON (contract §9) or CSV,
 * and optionally the op list as a workload JSONL. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "llm/llm.h"

static const char usage[] =
    "usage: opmodel llm --config NAME|FILE --hardware NAME|FILE --phase prefill|decode|train\n"
    "                   [--batch B] [--seq S] [--context C] [--dtype bf16|fp8] [--kv-dtype D]\n"
    "                   [--tp N] [--pp N] [--ep N] [--model M] [--only KINDS]\n"
    "                   [--format table|json|csv] [--emit-workload FILE.jsonl]\n"
    "                   [--output-svg-kinds FILE.svg] [--output-svg-roofline FILE.svg]\n"
    "                   [--sweep AXIS=VALUES[:AXIS=VALUES...]]\n"
    "       opmodel llm --list\n"
    "\n"
    "Builds the ordered op list of one step of a whole model and predicts it op by op.\n"
    "  --config NAME|FILE    a built-in model (--list), a model YAML, or a HuggingFace config.json\n"
    "  --phase               prefill: S new tokens per sequence; decode: one token per sequence\n"
    "                        attending to C cached tokens; train: forward + backward + Adam update\n"
    "  --batch B             sequences (default 1)\n"
    "  --seq S               new tokens per sequence for prefill/train (default 2048)\n"
    "  --context C           decode: KV-cache length attended to (default 2048); prefill: cached prefix (0)\n"
    "  --dtype               weights and activations (default bf16; fp8 = fp8_e4m3)\n"
    "  --kv-dtype D          KV-cache dtype (default: --dtype)\n"
    "  --tp/--pp/--ep N      tensor, pipeline and expert parallel degrees (default 1)\n"
    "  --model M             per-op model (default extended_roofline; see `opmodel models`)\n"
    "  --only KINDS          keep only these kinds: gemm,attention,norm,elementwise,rope,embedding,moe,\n"
    "                        comm,optimizer,ssm (the seed's rollup: --only gemm,attention)\n"
    "  --format              table (default), json (contract §9) or csv (one row per op)\n"
    "  --emit-workload FILE  the op list, one contract §1 op per line with its \"count\"\n"
    "  --output-svg-kinds FILE     time per kind, stacked bars per layer type (and phase in train)\n"
    "  --output-svg-roofline FILE  every op on the hardware's roofline (log-log)\n"
    "  --sweep SPEC          one row per point of a grid instead of one step: AXIS is batch, context\n"
    "                        or seq; VALUES a comma list of N, LO..HI/STEP (linear) or LO..HI*F\n"
    "                        (geometric), e.g. batch=1..512*2:context=128..12800/128 (1,000 points);\n"
    "                        a point that does not fit is a row with fits false, not an error\n"
    "\n"
    "A configuration whose weights + KV cache + activations + optimizer state exceed the device's\n"
    "memory is an error.  Communication (all-reduce, all-to-all, pipeline sends) is timed from the\n"
    "hardware's interconnect fields (ring formulas, docs/llm.md); without them it is 0 s and says so.\n"
    "Exit status: 0 ok, 2 usage or input error (including does-not-fit).\n";

static uint64_t hbm_bytes(const opm_profile *p)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (!strcmp(p->levels[i].name, "hbm")) return p->levels[i].read_bytes + p->levels[i].write_bytes;
    return p->level_count ? p->levels[p->level_count - 1].read_bytes + p->levels[p->level_count - 1].write_bytes : 0;
}

typedef struct kind_sum {
    char kind[24];
    double latency_s;
    uint64_t flops;
} kind_sum;

typedef struct rollup {
    double latency_s, energy_j, mfu, tokens_per_s, peak;
    uint64_t flops_device, flops_model;
    kind_sum kinds[32];
    size_t n_kinds;
    double group_latency_s[LLM_MAX_GROUPS];
    int64_t devices;
} rollup;

static void roll(const llm_step *s, const llm_step_spec *sp, const opm_hardware *hw, rollup *r)
{
    memset(r, 0, sizeof *r);
    r->devices = sp->tp * sp->pp * sp->ep;
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        double lat = o->prof.latency_s * (double)o->count;
        r->latency_s += lat;
        /* every device of a stage's tp × ep group runs its share */
        r->energy_j += o->prof.energy_j * (double)o->count * (double)(sp->tp * sp->ep);
        r->flops_device += o->prof.flops * (uint64_t)o->count;
        r->flops_model += o->prof.flops * (uint64_t)o->count * (uint64_t)o->shards;
        if (o->group >= 0) r->group_latency_s[o->group] += o->prof.latency_s;
        size_t k = 0;
        while (k < r->n_kinds && strcmp(r->kinds[k].kind, o->kind)) k++;
        if (k == r->n_kinds && k < sizeof r->kinds / sizeof r->kinds[0]) {
            snprintf(r->kinds[k].kind, sizeof r->kinds[k].kind, "%s", o->kind);
            r->n_kinds++;
        }
        if (k < r->n_kinds) {
            r->kinds[k].latency_s += lat;
            r->kinds[k].flops += o->prof.flops * (uint64_t)o->count;
        }
    }
    r->peak = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, sp->dtype);
    if (r->latency_s > 0) {
        r->tokens_per_s = (double)s->out_tokens / r->latency_s;
        /* model FLOPs over every device's peak for the step */
        if (r->peak > 0) r->mfu = (double)r->flops_model / (r->latency_s * (double)r->devices * r->peak);
    }
}

static const char *phase_name(llm_phase p) { return p == LLM_PREFILL ? "prefill" : p == LLM_DECODE ? "decode" : "train"; }

static void print_json(const llm_config *c, const opm_hardware *hw, const llm_step *s, const llm_step_spec *sp,
                       const rollup *r, uint64_t capacity)
{
    printf("{\"config\": \"%s\", \"hardware\": \"%s\", \"phase\": \"%s\", \"model\": \"%s\", ", llm_config_name(c),
           opm_hardware_name(hw), phase_name(sp->phase), sp->model);
    printf("\"batch\": %lld, \"seq\": %lld, \"context\": %lld, \"dtype\": \"%s\", \"kv_dtype\": \"%s\", "
           "\"tp\": %lld, \"pp\": %lld, \"ep\": %lld,\n",
           (long long)sp->batch, (long long)(sp->phase == LLM_DECODE ? 1 : sp->seq), (long long)sp->context,
           opm_dtype_name(sp->dtype), opm_dtype_name(sp->kv_dtype), (long long)sp->tp, (long long)sp->pp,
           (long long)sp->ep);
    printf(" \"latency_s\": %.9g, \"params\": %llu, \"tokens_per_s\": %.9g, ", r->latency_s,
           (unsigned long long)s->params, r->tokens_per_s);
    if (sp->phase == LLM_DECODE) printf("\"time_per_output_token_s\": %.9g, ", r->latency_s);
    printf("\"energy_j\": %.9g, \"energy_per_token_j\": %.9g, \"mfu\": %.6g, \"flops\": %llu, \"flops_per_device\": %llu, "
           "\"communication_timed\": %s,\n",
           r->energy_j, s->out_tokens ? r->energy_j / (double)s->out_tokens : 0.0, r->mfu,
           (unsigned long long)r->flops_model, (unsigned long long)r->flops_device, s->has_link ? "true" : "false");
    printf(" \"memory\": {\"weights_bytes\": %llu, \"kv_cache_bytes\": %llu, \"activation_bytes\": %llu, "
           "\"optimizer_bytes\": %llu, \"capacity_bytes\": %llu},\n",
           (unsigned long long)s->weights_bytes, (unsigned long long)s->kv_cache_bytes,
           (unsigned long long)s->activation_bytes, (unsigned long long)s->optimizer_bytes,
           (unsigned long long)capacity);
    printf(" \"by_kind\": [");
    for (size_t k = 0; k < r->n_kinds; k++)
        printf("%s{\"kind\": \"%s\", \"latency_s\": %.9g, \"share\": %.6g, \"flops\": %llu}", k ? ", " : "",
               r->kinds[k].kind, r->kinds[k].latency_s, r->latency_s > 0 ? r->kinds[k].latency_s / r->latency_s : 0.0,
               (unsigned long long)r->kinds[k].flops);
    printf("],\n \"layers\": [");
    for (size_t g = 0; g < s->n_groups; g++)
        printf("%s{\"first\": %lld, \"count\": %lld, \"type\": \"%s\", \"latency_s_per_layer\": %.9g, \"latency_s\": %.9g}",
               g ? ", " : "", (long long)s->groups[g].first, (long long)s->groups[g].count, s->groups[g].label,
               r->group_latency_s[g], r->group_latency_s[g] * (double)s->groups[g].count);
    printf("],\n \"ops\": [");
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        printf("%s\n  {\"name\": \"%s\", \"kind\": \"%s\", \"layer_group\": %d, \"count\": %lld, \"shards\": %lld, "
               "\"latency_s\": %.9g, \"flops\": %llu, \"bytes\": %llu, \"energy_j\": %.9g, \"bound\": \"%s\"",
               i ? "," : "", o->name, o->kind, o->group, (long long)o->count, (long long)o->shards, o->prof.latency_s,
               (unsigned long long)o->prof.flops, (unsigned long long)(o->op ? hbm_bytes(&o->prof) : o->comm_bytes),
               o->prof.energy_j, o->op ? opm_bound_name(o->prof.bound) : "link");
        if (!o->op)
            printf(", \"comm_bytes\": %llu, \"devices\": %lld, \"timed\": %s", (unsigned long long)o->comm_bytes,
                   (long long)o->comm_devices, o->timed ? "true" : "false");
        printf("}");
    }
    printf("]}\n");
}

static void print_csv(const llm_step *s)
{
    printf("name,kind,layer_group,count,shards,latency_s,flops,bytes,energy_j,bound\n");
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        printf("%s,%s,%d,%lld,%lld,%.9g,%llu,%llu,%.9g,%s\n", o->name, o->kind, o->group, (long long)o->count,
               (long long)o->shards, o->prof.latency_s, (unsigned long long)o->prof.flops,
               (unsigned long long)(o->op ? hbm_bytes(&o->prof) : o->comm_bytes), o->prof.energy_j,
               o->op ? opm_bound_name(o->prof.bound) : "link");
    }
}

static void print_table(const llm_config *c, const opm_hardware *hw, const llm_step *s, const llm_step_spec *sp,
                        const rollup *r, uint64_t capacity)
{
    printf("%s %s on %s (%s), batch %lld, seq %lld, context %lld, %s, tp %lld pp %lld ep %lld\n\n",
           llm_config_name(c), phase_name(sp->phase), opm_hardware_name(hw), sp->model, (long long)sp->batch,
           (long long)(sp->phase == LLM_DECODE ? 1 : sp->seq), (long long)sp->context, opm_dtype_name(sp->dtype),
           (long long)sp->tp, (long long)sp->pp, (long long)sp->ep);
    printf("%-28s %6s %12s %12s %10s\n", "op", "count", "us each", "us total", "bound");
    for (size_t i = 0; i < s->n_ops; i++) {
        const llm_step_op *o = &s->ops[i];
        char label[64];
        if (o->group >= 0) snprintf(label, sizeof label, "L%lld+ %s", (long long)s->groups[o->group].first, o->name);
        else snprintf(label, sizeof label, "%s", o->name);
        printf("%-28s %6lld %12.3f %12.3f %10s\n", label, (long long)o->count, o->prof.latency_s * 1e6,
               o->prof.latency_s * 1e6 * (double)o->count,
               o->op ? opm_bound_name(o->prof.bound) : o->timed ? "link" : "untimed");
    }
    printf("\n%-20s %12s %8s\n", "kind", "ms", "share");
    for (size_t k = 0; k < r->n_kinds; k++)
        printf("%-20s %12.4f %7.2f%%\n", r->kinds[k].kind, r->kinds[k].latency_s * 1e3,
               r->latency_s > 0 ? 100 * r->kinds[k].latency_s / r->latency_s : 0.0);
    printf("\n%-20s %8s %14s %12s\n", "layers", "count", "us per layer", "ms");
    for (size_t g = 0; g < s->n_groups; g++)
        printf("%-20s %8lld %14.3f %12.4f\n", s->groups[g].label, (long long)s->groups[g].count,
               r->group_latency_s[g] * 1e6, r->group_latency_s[g] * 1e3 * (double)s->groups[g].count);
    printf("\n%-24s %.6g ms\n", "step latency", r->latency_s * 1e3);
    if (sp->phase == LLM_DECODE) printf("%-24s %.6g ms\n", "time per output token", r->latency_s * 1e3);
    printf("%-24s %.6g\n", "tokens/s", r->tokens_per_s);
    printf("%-24s %.4g%%\n", "MFU", 100 * r->mfu);
    printf("%-24s %.6g J (%.6g J per token)\n", "energy", r->energy_j,
           s->out_tokens ? r->energy_j / (double)s->out_tokens : 0.0);
    printf("%-24s %.4f B (%llu)\n", "params", (double)s->params / 1e9, (unsigned long long)s->params);
    printf("%-24s weights %.4g GB, KV cache %.4g GB, activations %.4g GB, optimizer %.4g GB of %.4g GB\n",
           "memory per device", (double)s->weights_bytes / 1e9, (double)s->kv_cache_bytes / 1e9,
           (double)s->activation_bytes / 1e9, (double)s->optimizer_bytes / 1e9, (double)capacity / 1e9);
    const opm_interconnect *ic = opm_hardware_interconnect(hw);
    if (!s->has_link && !ic)
        printf("%-24s no interconnect in the hardware file: communication untimed (0 s)\n", "communication");
    else if (!s->has_link)
        printf("%-24s a group exceeds the %s domain of %g devices: those ops untimed (0 s)\n", "communication",
               ic->name[0] ? ic->name : "interconnect", ic->domain_devices);
    else if (ic)
        printf("%-24s timed on %s, %.4g GB/s per direction, %.3g us per step\n", "communication",
               ic->name[0] ? ic->name : "the interconnect", ic->bandwidth_bytes_per_s / 1e9, ic->latency_s * 1e6);
}

static int write_svg(const char *opt, const char *path, char *svg, opm_error *err)
{
    if (!svg) return cli_fail(err);
    FILE *f = fopen(path, "w");
    int ok = f && fputs(svg, f) >= 0;
    if (f && fclose(f)) ok = 0;
    free(svg);
    return ok ? EXIT_OK : cli_usage("%s: cannot write '%s'", opt, path);
}

/* Each op as its full contract §1 JSON on one line, with "count" first. */
static int emit_workload(const char *path, const llm_step *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return cli_usage("--emit-workload: cannot write '%s'", path);
    for (size_t i = 0; i < s->n_ops; i++) {
        if (!s->ops[i].op) continue;
        opm_error err;
        char *t = opm_op_to_text(s->ops[i].op, OPM_FORMAT_JSON, &err);
        if (!t) {
            fclose(f);
            return cli_fail(&err);
        }
        char *p = t;
        while (*p == ' ' || *p == '\n') p++;
        fprintf(f, "{\"count\": %lld, ", (long long)s->ops[i].count);
        for (p++; *p; p++)
            if (*p != '\n') fputc(*p == '\t' ? ' ' : *p, f);
        fputc('\n', f);
        opm_free(t);
    }
    return fclose(f) ? cli_usage("--emit-workload: cannot write '%s'", path) : EXIT_OK;
}

/* ---- --sweep ---- */

enum { SWEEP_MAX_POINTS = 1000000 };

typedef struct sweep_axis {
    int64_t *v;
    size_t n, cap;
} sweep_axis;

static int axis_push(sweep_axis *a, int64_t v)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        int64_t *p = realloc(a->v, cap * sizeof *p);
        if (!p) return -1;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = v;
    return 0;
}

static int sweep_num(const char *s, char **end, int64_t *out)
{
    long long x = strtoll(s, end, 10);
    if (*end == s || x < 0) return -1;
    *out = x;
    return 0;
}

/* "batch=1,2,4:context=128..4096*2:seq=..." into the three axes; an axis
 * not given keeps the single value of its flag. */
static int parse_sweep(const char *spec, sweep_axis ax[3])
{
    static const char *const names[] = {"batch", "context", "seq"};
    const char *p = spec;
    while (*p) {
        size_t klen = strcspn(p, "=");
        int which = -1;
        for (int i = 0; i < 3; i++)
            if (strlen(names[i]) == klen && !strncmp(p, names[i], klen)) which = i;
        if (which < 0 || p[klen] != '=')
            return cli_usage("--sweep: expected batch=, context= or seq= at '%s'", p);
        if (ax[which].n) return cli_usage("--sweep: %s given twice", names[which]);
        p += klen + 1;
        for (;;) {
            char *end;
            int64_t lo, hi, step = 0;
            if (sweep_num(p, &end, &lo)) return cli_usage("--sweep: %s: expected a number at '%s'", names[which], p);
            hi = lo;
            int geo = 0;
            if (end[0] == '.' && end[1] == '.') {
                if (sweep_num(end + 2, &end, &hi) || (*end != '/' && *end != '*'))
                    return cli_usage("--sweep: %s: expected LO..HI/STEP or LO..HI*FACTOR at '%s'", names[which], p);
                geo = *end == '*';
                if (sweep_num(end + 1, &end, &step) || step < (geo ? 2 : 1) || hi < lo || (geo && lo < 1))
                    return cli_usage("--sweep: %s: a range needs LO <= HI and a step >= 1 (a factor >= 2, LO >= 1) at '%s'",
                                     names[which], p);
            }
            for (int64_t v = lo; v <= hi; v = geo ? v * step : v + (step ? step : 1)) {
                if (ax[which].n >= SWEEP_MAX_POINTS)
                    return cli_usage("--sweep: more than %d points", SWEEP_MAX_POINTS);
                if (axis_push(&ax[which], v)) return cli_usage("--sweep: out of memory");
                if (v > INT64_MAX / (step ? step : 2) - 1) break;
            }
            p = end;
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (*p == ':') p++;
        else if (*p) return cli_usage("--sweep: unexpected '%s' (axes are separated by ':')", p);
    }
    return EXIT_OK;
}

/* One row per (batch, context, seq) point: build, predict and roll each. */
static int run_sweep(const llm_config *c, const opm_hardware *hw, llm_step_spec sp, sweep_axis ax[3], int fmt,
                     uint64_t capacity)
{
    size_t total = ax[0].n * ax[1].n * ax[2].n;
    if (total > SWEEP_MAX_POINTS) return cli_usage("--sweep: %zu points (at most %d)", total, SWEEP_MAX_POINTS);
    /* Every point's spec is checked before the first row is printed: no
     * partial table on a bad point. */
    for (size_t i = 0; i < ax[0].n; i++)
        for (size_t j = 0; j < ax[1].n; j++)
            for (size_t k = 0; k < ax[2].n; k++) {
                llm_step_spec q = sp;
                q.batch = ax[0].v[i];
                q.context = ax[1].v[j];
                q.seq = ax[2].v[k];
                opm_error err;
                if (llm_spec_check(c, &q, &err)) return cli_fail(&err);
            }
    if (fmt == 2)
        puts("batch,seq,context,latency_s,tokens_per_s,time_per_output_token_s,mfu,energy_j,weights_bytes,"
             "kv_cache_bytes,activation_bytes,optimizer_bytes,capacity_bytes,fits");
    else if (fmt == 1)
        fputs("{\"sweep\": [", stdout);
    else
        printf("%8s %8s %8s %14s %14s %10s %14s %6s\n", "batch", "seq", "context", "latency ms", "tokens/s", "MFU %",
               "memory GB", "fits");
    size_t row = 0;
    for (size_t i = 0; i < ax[0].n; i++)
        for (size_t j = 0; j < ax[1].n; j++)
            for (size_t k = 0; k < ax[2].n; k++) {
                sp.batch = ax[0].v[i];
                sp.context = ax[1].v[j];
                sp.seq = ax[2].v[k];
                opm_error err;
                llm_step s;
                if (llm_step_build(c, &sp, &s, &err)) return cli_fail(&err);
                if (llm_step_predict(&s, &sp, hw, &err)) {
                    llm_step_free(&s);
                    return cli_fail(&err);
                }
                rollup r;
                roll(&s, &sp, hw, &r);
                uint64_t need = s.weights_bytes + s.kv_cache_bytes + s.activation_bytes + s.optimizer_bytes;
                int fits = !capacity || need <= capacity;
                int64_t seq = sp.phase == LLM_DECODE ? 1 : sp.seq;
                double tpot = sp.phase == LLM_DECODE ? r.latency_s : 0;
                if (fmt == 2)
                    printf("%lld,%lld,%lld,%.9g,%.9g,%.9g,%.6g,%.9g,%llu,%llu,%llu,%llu,%llu,%s\n", (long long)sp.batch,
                           (long long)seq, (long long)sp.context, r.latency_s, r.tokens_per_s, tpot, r.mfu, r.energy_j,
                           (unsigned long long)s.weights_bytes, (unsigned long long)s.kv_cache_bytes,
                           (unsigned long long)s.activation_bytes, (unsigned long long)s.optimizer_bytes,
                           (unsigned long long)capacity, fits ? "true" : "false");
                else if (fmt == 1)
                    printf("%s\n {\"batch\": %lld, \"seq\": %lld, \"context\": %lld, \"latency_s\": %.9g, "
                           "\"tokens_per_s\": %.9g, \"time_per_output_token_s\": %.9g, \"mfu\": %.6g, \"energy_j\": %.9g, "
                           "\"memory\": {\"weights_bytes\": %llu, \"kv_cache_bytes\": %llu, \"activation_bytes\": %llu, "
                           "\"optimizer_bytes\": %llu, \"capacity_bytes\": %llu}, \"fits\": %s}",
                           row ? "," : "", (long long)sp.batch, (long long)seq, (long long)sp.context, r.latency_s,
                           r.tokens_per_s, tpot, r.mfu, r.energy_j, (unsigned long long)s.weights_bytes,
                           (unsigned long long)s.kv_cache_bytes, (unsigned long long)s.activation_bytes,
                           (unsigned long long)s.optimizer_bytes, (unsigned long long)capacity, fits ? "true" : "false");
                else
                    printf("%8lld %8lld %8lld %14.6g %14.6g %10.4g %14.4g %6s\n", (long long)sp.batch, (long long)seq,
                           (long long)sp.context, r.latency_s * 1e3, r.tokens_per_s, 100 * r.mfu, (double)need / 1e9,
                           fits ? "yes" : "no");
                llm_step_free(&s);
                row++;
            }
    if (fmt == 1) puts("]}");
    return EXIT_OK;
}

static int parse_pos(const char *opt, const char *v, int64_t *out, int64_t min)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || x < min) return cli_usage("%s: expected an integer ≥ %lld, got '%s'", opt, (long long)min, v);
    *out = x;
    return 0;
}

int cmd_llm(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'},  {"hardware", required_argument, 0, 'H'},
        {"phase", required_argument, 0, 'p'},   {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 's'},     {"context", required_argument, 0, 'x'},
        {"dtype", required_argument, 0, 'd'},   {"kv-dtype", required_argument, 0, 'k'},
        {"tp", required_argument, 0, 't'},      {"pp", required_argument, 0, 'P'},
        {"ep", required_argument, 0, 'e'},      {"model", required_argument, 0, 'm'},
        {"only", required_argument, 0, 'o'},    {"format", required_argument, 0, 'f'},
        {"emit-workload", required_argument, 0, 'w'}, {"list", no_argument, 0, 'l'},
        {"output-svg-kinds", required_argument, 0, 'K'}, {"output-svg-roofline", required_argument, 0, 'R'},
        {"sweep", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    const char *config = NULL, *hw_name = NULL, *phase = NULL, *format = "table", *only = NULL, *workload = NULL;
    const char *dtype = "bf16", *kv_dtype = NULL, *svg_kinds = NULL, *svg_roof = NULL, *sweep = NULL;
    int64_t context = -1;
    llm_step_spec sp = {LLM_DECODE, 1, 2048, 0, OPM_BF16, OPM_BF16, 1, 1, 1, "extended_roofline", 0};
    int ch, rc;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'c': config = optarg; break;
        case 'H': hw_name = optarg; break;
        case 'p': phase = optarg; break;
        case 'b': if ((rc = parse_pos("--batch", optarg, &sp.batch, 1))) return rc; break;
        case 's': if ((rc = parse_pos("--seq", optarg, &sp.seq, 1))) return rc; break;
        case 'x': if ((rc = parse_pos("--context", optarg, &context, 0))) return rc; break;
        case 'd': dtype = optarg; break;
        case 'k': kv_dtype = optarg; break;
        case 't': if ((rc = parse_pos("--tp", optarg, &sp.tp, 1))) return rc; break;
        case 'P': if ((rc = parse_pos("--pp", optarg, &sp.pp, 1))) return rc; break;
        case 'e': if ((rc = parse_pos("--ep", optarg, &sp.ep, 1))) return rc; break;
        case 'm': sp.model = optarg; break;
        case 'o': only = optarg; break;
        case 'f': format = optarg; break;
        case 'w': workload = optarg; break;
        case 'K': svg_kinds = optarg; break;
        case 'R': svg_roof = optarg; break;
        case 'S': sweep = optarg; break;
        case 'l':
            for (size_t i = 0; i < llm_config_builtin_count(); i++) puts(llm_config_builtin_name(i));
            return EXIT_OK;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: return cli_usage("llm: unknown or incomplete option '%s' (see `opmodel llm --help`)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage("llm: unexpected argument '%s'", argv[optind]);
    if (!config) return cli_usage("llm: --config is required (see `opmodel llm --list`)");
    if (!hw_name) return cli_usage("llm: --hardware is required (see `opmodel hardware list`)");
    if (!phase) return cli_usage("llm: --phase is required (prefill, decode or train)");
    if (!strcmp(phase, "prefill")) sp.phase = LLM_PREFILL;
    else if (!strcmp(phase, "decode")) sp.phase = LLM_DECODE;
    else if (!strcmp(phase, "train")) sp.phase = LLM_TRAIN;
    else return cli_usage("--phase: expected prefill, decode or train, got '%s'", phase);
    sp.context = context >= 0 ? context : sp.phase == LLM_DECODE ? 2048 : 0;
    if (!strcmp(dtype, "fp8")) dtype = "fp8_e4m3";
    if (opm_dtype_parse(dtype, &sp.dtype)) return cli_usage("--dtype: unknown dtype '%s'", dtype);
    if (kv_dtype && !strcmp(kv_dtype, "fp8")) kv_dtype = "fp8_e4m3";
    if (kv_dtype && opm_dtype_parse(kv_dtype, &sp.kv_dtype)) return cli_usage("--kv-dtype: unknown dtype '%s'", kv_dtype);
    if (!kv_dtype) sp.kv_dtype = sp.dtype;
    int fmt = !strcmp(format, "table") ? 0 : !strcmp(format, "json") ? 1 : !strcmp(format, "csv") ? 2 : -1;
    if (fmt < 0) return cli_usage("--format: expected table, json or csv, got '%s'", format);
    opm_error err;
    if (only && llm_kinds_parse(only, &sp.kinds_mask, &err)) return cli_fail(&err);
    if (!opm_model_find(sp.model)) return cli_usage("--model: no model named '%s' (see `opmodel models`)", sp.model);

    llm_config *c = llm_config_open(config, &err);
    if (!c) return cli_fail(&err);
    opm_hardware *hw = opm_hardware_open(hw_name, &err);
    if (!hw) {
        llm_config_free(c);
        return cli_fail(&err);
    }
    const opm_memory_level *hbm = opm_hardware_find_level(hw, "hbm");
    if (!hbm && opm_hardware_level_count(hw)) hbm = opm_hardware_level(hw, opm_hardware_level_count(hw) - 1);
    uint64_t capacity = hbm ? (uint64_t)hbm->size_bytes : 0;
    if (sweep) {
        sweep_axis ax[3] = {{0}};
        rc = svg_kinds || svg_roof || workload
                 ? cli_usage("--sweep writes one row per point: --output-svg-* and --emit-workload take one step")
                 : parse_sweep(sweep, ax);
        const int64_t one[3] = {sp.batch, sp.context, sp.seq};
        for (int i = 0; i < 3 && !rc; i++)
            if (!ax[i].n && axis_push(&ax[i], one[i])) rc = cli_usage("--sweep: out of memory");
        if (!rc) rc = run_sweep(c, hw, sp, ax, fmt, capacity);
        for (int i = 0; i < 3; i++) free(ax[i].v);
        goto out;
    }
    llm_step s;
    rc = EXIT_OK;
    if (llm_step_build(c, &sp, &s, &err)) {
        rc = cli_fail(&err);
        goto out;
    }
    uint64_t need = s.weights_bytes + s.kv_cache_bytes + s.activation_bytes + s.optimizer_bytes;
    if (capacity && need > capacity) {
        fprintf(stderr,
                "opmodel: %s %s does not fit %s: weights %llu + KV cache %llu + activations %llu + optimizer %llu = "
                "%llu bytes per device > %llu bytes of memory (tp %lld, pp %lld, ep %lld)\n",
                llm_config_name(c), phase, opm_hardware_name(hw), (unsigned long long)s.weights_bytes,
                (unsigned long long)s.kv_cache_bytes, (unsigned long long)s.activation_bytes,
                (unsigned long long)s.optimizer_bytes, (unsigned long long)need, (unsigned long long)capacity,
                (long long)sp.tp, (long long)sp.pp, (long long)sp.ep);
        rc = EXIT_USAGE;
        goto out_step;
    }
    if (llm_step_predict(&s, &sp, hw, &err)) {
        rc = cli_fail(&err);
        goto out_step;
    }
    rollup r;
    roll(&s, &sp, hw, &r);
    if (workload && (rc = emit_workload(workload, &s))) goto out_step;
    if (svg_kinds || svg_roof) {
        char title[160];
        snprintf(title, sizeof title, "%s %s on %s (%s), batch %lld, tp %lld pp %lld ep %lld", llm_config_name(c),
                 phase, opm_hardware_name(hw), sp.model, (long long)sp.batch, (long long)sp.tp, (long long)sp.pp,
                 (long long)sp.ep);
        if (svg_kinds &&
            (rc = write_svg("--output-svg-kinds", svg_kinds, llm_svg_kinds(&s, title, &err), &err)))
            goto out_step;
        if (svg_roof &&
            (rc = write_svg("--output-svg-roofline", svg_roof, llm_svg_roofline(&s, hw, sp.dtype, title, &err), &err)))
            goto out_step;
    }
    if (fmt == 1) print_json(c, hw, &s, &sp, &r, capacity);
    else if (fmt == 2) print_csv(&s);
    else print_table(c, hw, &s, &sp, &r, capacity);
out_step:
    llm_step_free(&s);
out:
    opm_hardware_free(hw);
    llm_config_free(c);
    return rc;
}
