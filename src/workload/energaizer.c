/* energaizer.c — the EnergAIzer kernel-list reader: one JSON array of
 * [query, [op, engine, precision]] entries (data/energaizer/README.md), the
 * kernels a PyTorch model ran in order, each mapped to an opmodel op:
 *
 *   gemm        batch 1: gemm M×N×K; batch > 1: batched_gemm; dtype precM
 *               (tf32 when a tensor-core GEMM says fp32, fp32 on CUDA cores)
 *   conv2d      conv, input [b, c, hw, hw], weight [m, c/groups, rs, rs],
 *               stride, padding; groups from the implicit GEMM's K = c·rs²/groups
 *   elementwise pointwise_* two inputs, scalar_* / unspecified_scalar one,
 *               unspecified_tensor one of dim elements and one broadcast (GPT-2's
 *               only one: the scores divided by a 0-d tensor, whose reads are
 *               the scores'), typecast_to_* a cast, the
 *               activations (relu, silu, gelu, tanh) one
 *   layernorm, softmax   rows × dim
 *
 * Each entry becomes a short-form op text that the op parser validates; the
 * text is also the key under which a repeated kernel is one op.  A list
 * whose name names a model it knows gets the kernels that model runs and the
 * list leaves out (see "Kernels the lists leave out" below).  Errors name
 * SOURCE:ENTRY:FIELD with the entry index from 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../io/doc.h"
#include "../io/io_internal.h"
#include "workload_internal.h"

/* JSONL holds one object per line; a kernel list is one array. */
int wl_is_energaizer(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        return c == '[';
    }
    return 0;
}

typedef struct ectx {
    const char *source;
    size_t entry;
    opm_error *err;
} ectx;

static int fail(const ectx *c, const char *field, const char *fmt, const char *got)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, got);
    /* The field is in the located message already; err->field names it too. */
    int rc = opm_err(c->err, OPM_EINVAL, NULL, "%s:%zu:%s: %s", c->source, c->entry, field, msg);
    if (c->err) opm_strlcpy(c->err->field, field, sizeof c->err->field);
    return rc;
}

/* An integer field of the query in [lo, hi]. */
static int get_int(const ectx *c, const doc_node *q, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const doc_node *n = doc_get(q, key);
    char got[64];
    if (!n) return fail(c, key, "missing; expected an integer%s", "");
    if (n->type != DOC_SCALAR || n->quoted || doc_int(n, out) || *out < lo || *out > hi) {
        doc_describe(n, got, sizeof got);
        char want[96];
        snprintf(want, sizeof want, "expected an integer in [%lld, %lld], got %%s", (long long)lo, (long long)hi);
        return fail(c, key, want, got);
    }
    return 0;
}

static int get_str(const ectx *c, const doc_node *q, const char *key, const char **out)
{
    const doc_node *n = doc_get(q, key);
    char got[64];
    if (!n) return fail(c, key, "missing; expected a string%s", "");
    if (n->type != DOC_SCALAR || !n->quoted) {
        doc_describe(n, got, sizeof got);
        return fail(c, key, "expected a string, got %s", got);
    }
    *out = n->text;
    return 0;
}

static int get_dtype(const ectx *c, const doc_node *q, const char *key, const char **out)
{
    if (get_str(c, q, key, out)) return c->err ? c->err->code : OPM_EINVAL;
    opm_dtype dt;
    if (opm_dtype_parse(*out, &dt)) return fail(c, key, "expected a dtype name (bf16, fp16, fp32, ...), got '%s'", *out);
    return 0;
}

/* Largest dimension accepted: 2^40 keeps every product of the entry's
 * sizes far from 64-bit overflow and is beyond any real kernel. */
#define EMAX ((int64_t)1 << 40)

#define BROADCAST 3

typedef struct elem_map {
    const char *name;      /* the kernel list's op */
    const char *op;        /* the FLOP-weight table's function */
    int inputs;            /* 1, 2, or BROADCAST: one of dim elements and one broadcast */
    const char *out;       /* out dtype of a cast, NULL: the input's */
} elem_map;

static const elem_map elems[] = {
    {"pointwise_add", "add", 2, NULL}, {"pointwise_mul", "mul", 2, NULL}, {"pointwise_sub", "sub", 2, NULL},
    {"pointwise_div", "div", 2, NULL}, {"scalar_add", "add", 1, NULL},    {"scalar_mul", "mul", 1, NULL},
    {"scalar_sub", "sub", 1, NULL},    {"scalar_div", "div", 1, NULL},    {"unspecified_scalar", "mul", 1, NULL},
    {"unspecified_tensor", "add", BROADCAST, NULL}, {"typecast_to_fp32", "cast", 1, "fp32"},
    {"typecast_to_bf16", "cast", 1, "bf16"}, {"typecast_to_fp16", "cast", 1, "fp16"},
    {"relu", "relu", 1, NULL}, {"silu", "silu", 1, NULL}, {"gelu", "gelu", 1, NULL}, {"tanh", "tanh", 1, NULL},
    {"sigmoid", "sigmoid", 1, NULL}, {"exp", "exp", 1, NULL},
};

static const elem_map *find_elem(const char *name)
{
    for (size_t i = 0; i < sizeof elems / sizeof elems[0]; i++)
        if (!strcmp(elems[i].name, name)) return &elems[i];
    return NULL;
}

/* The op text and display name of one entry into text / name. */
static int entry_text(const ectx *c, const doc_node *q, const char *opname, strbuf *text, char *name, size_t cap)
{
    int64_t b, m, n, k, d;
    const char *dt = NULL, *s = NULL;
    if (!strcmp(opname, "gemm")) {
        if (get_int(c, q, "batch", 1, EMAX, &b) || get_int(c, q, "dimM", 1, EMAX, &m) ||
            get_int(c, q, "dimN", 1, EMAX, &n) || get_int(c, q, "dimK", 1, EMAX, &k) || get_dtype(c, q, "precM", &dt))
            return c->err ? c->err->code : OPM_EINVAL;
        const doc_node *tc = doc_get(q, "useTensorCore");
        int use_tc = 1;
        if (tc && doc_bool(tc, &use_tc)) return fail(c, "useTensorCore", "expected true or false%s", "");
        /* PyTorch runs an fp32 matmul on tensor cores only as TF32. */
        if (!strcmp(dt, "fp32") && use_tc) dt = "tf32";
        if (b == 1) {
            sb_printf(text, "{\"kind\":\"gemm\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"dtype\":\"%s\"}", (long long)m,
                      (long long)n, (long long)k, dt);
            snprintf(name, cap, "gemm %lldx%lldx%lld %s", (long long)m, (long long)n, (long long)k, dt);
        } else {
            sb_printf(text, "{\"kind\":\"batched_gemm\",\"batch\":%lld,\"m\":%lld,\"n\":%lld,\"k\":%lld,\"dtype\":\"%s\"}",
                      (long long)b, (long long)m, (long long)n, (long long)k, dt);
            snprintf(name, cap, "batched_gemm %lldx%lldx%lldx%lld %s", (long long)b, (long long)m, (long long)n,
                     (long long)k, dt);
        }
        return 0;
    }
    if (!strcmp(opname, "conv2d")) {
        int64_t cin, hw, rs, st, pad;
        if (get_int(c, q, "b", 1, EMAX, &b) || get_int(c, q, "m", 1, EMAX, &m) || get_int(c, q, "c", 1, EMAX, &cin) ||
            get_int(c, q, "hw", 1, 1 << 20, &hw) || get_int(c, q, "rs", 1, 1 << 10, &rs) ||
            get_int(c, q, "stride", 1, 1 << 10, &st) || get_int(c, q, "padding", 0, 1 << 10, &pad) ||
            get_int(c, q, "dimK", 1, EMAX, &k) || get_dtype(c, q, "precM", &dt))
            return c->err ? c->err->code : OPM_EINVAL;
        /* The implicit GEMM's K is c·rs²/groups: a depthwise conv lists rs². */
        int64_t full = cin * rs * rs;
        if (full % k || cin % (full / k) || m % (full / k)) {
            char got[32];
            snprintf(got, sizeof got, "%lld", (long long)k);
            return fail(c, "dimK", "expected c*rs*rs divided by a group count that divides c and m, got %s", got);
        }
        int64_t groups = full / k;
        sb_printf(text,
                  "{\"kind\":\"conv\",\"input\":[%lld,%lld,%lld,%lld],\"weight\":[%lld,%lld,%lld,%lld],"
                  "\"stride\":[%lld,%lld],\"padding\":[%lld,%lld],\"groups\":%lld,\"dtype\":\"%s\"}",
                  (long long)b, (long long)cin, (long long)hw, (long long)hw, (long long)m, (long long)(cin / groups),
                  (long long)rs, (long long)rs, (long long)st, (long long)st, (long long)pad, (long long)pad,
                  (long long)groups, dt);
        snprintf(name, cap, "conv2d %lldx%lldx%lld -> %lld k%lld s%lld%s %s", (long long)b, (long long)cin,
                 (long long)hw, (long long)m, (long long)rs, (long long)st, groups > 1 ? " grouped" : "", dt);
        return 0;
    }
    if (!strcmp(opname, "elementwise")) {
        if (get_int(c, q, "dim", 1, EMAX, &d) || get_str(c, q, "op", &s) || get_dtype(c, q, "prec", &dt))
            return c->err ? c->err->code : OPM_EINVAL;
        const elem_map *e = find_elem(s);
        if (!e) {
            char names[512] = "";
            for (size_t i = 0; i < sizeof elems / sizeof elems[0]; i++) {
                strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
                strncat(names, elems[i].name, sizeof names - strlen(names) - 1);
            }
            char want[600];
            snprintf(want, sizeof want, "expected one of %s; got '%%s'", names);
            return fail(c, "op", want, s);
        }
        if (e->inputs == 2)
            sb_printf(text, "{\"kind\":\"elementwise\",\"inputs\":[[%lld],[%lld]],\"op\":\"%s\",\"dtype\":\"%s\"",
                      (long long)d, (long long)d, e->op, dt);
        else if (e->inputs == BROADCAST)
            sb_printf(text, "{\"kind\":\"elementwise\",\"inputs\":[[%lld],[1]],\"op\":\"%s\",\"dtype\":\"%s\"",
                      (long long)d, e->op, dt);
        else
            sb_printf(text, "{\"kind\":\"elementwise\",\"inputs\":[[%lld]],\"op\":\"%s\",\"dtype\":\"%s\"",
                      (long long)d, e->op, dt);
        if (e->out) sb_printf(text, ",\"out_dtype\":\"%s\"", e->out);
        sb_putc(text, '}');
        snprintf(name, cap, "elementwise %s %lld %s", s, (long long)d, dt);
        return 0;
    }
    if (!strcmp(opname, "layernorm") || !strcmp(opname, "softmax")) {
        if (get_int(c, q, "batch", 1, EMAX, &b) || get_int(c, q, "dim", 1, EMAX, &d) || get_dtype(c, q, "prec", &dt))
            return c->err ? c->err->code : OPM_EINVAL;
        sb_printf(text, "{\"kind\":\"%s\",\"shape\":[%lld,%lld],\"dtype\":\"%s\"}", opname, (long long)b, (long long)d, dt);
        snprintf(name, cap, "%s %lldx%lld %s", opname, (long long)b, (long long)d, dt);
        return 0;
    }
    return fail(c, "op", "expected gemm, conv2d, elementwise, layernorm or softmax, got '%s'", opname);
}

/* ---- Kernels the lists leave out ----
 *
 * The artifact's list generator (test/code/parse_trace.py upstream) keeps
 * only the TorchLens layer types it maps: linear/addmm/matmul/bmm/mm,
 * conv2d, softmax, layernorm, scaled-dot-product attention and a fixed set
 * of elementwise functions (add, mul, div, sub, pow, rsqrt, relu, gelu, tanh,
 * silu, sigmoid, ...).  Every other layer of the model ran, launched from
 * the host, and is missing from the list: batch norm, pooling, torch.where,
 * and the in-place residual add of torchvision's blocks.  Where the list's
 * name names the model, its architecture says where those layers are, so
 * they are added ("implied") at the shapes the listed neighbours give:
 *
 *   torchvision ResNet (resnet18/34: BasicBlock, 2 convolutions a block;
 *   resnet50/101/152: Bottleneck, 3): every Conv2d is followed by a
 *   BatchNorm2d (eval: one pass, batchnorm kind); the stem's ReLU by the
 *   3×3 stride-2 max pool; each block's last ReLU follows `out += identity`
 *   (after the stem, every 2nd or 3rd ReLU); the fc by the global average
 *   pool of the last convolution's output.
 *   Hugging Face MobileViT: every MobileViTConvLayer normalises (BatchNorm2d)
 *   except MobileViTLayer's conv_1x1 (use_normalization=False), the one
 *   convolution whose next listed kernel is the transformer's layer norm;
 *   the model ends with torch.mean over the last feature map.
 *   Hugging Face GPT-2 (eager attention): the scores are divided by a 0-d
 *   tensor (listed, `unspecified_tensor`) and then masked by
 *   torch.where(causal_mask, scores, min) (not listed) in every layer.
 *
 * Not added: copies (contiguous, cat, the head split's reshapes), embedding
 * gathers, mask construction, scalar fills and the language models' small
 * casts, whose presence depends on PyTorch's stride rules and the library
 * version, and which a per-kernel launch interval calibrated on the lists
 * can only absorb while every family's list lacks them alike
 * (docs/workload.md, "What the kernel lists leave out"). */

/* No implied tensor beyond 2^50 elements (a convolution's output that large
 * gets none): far past any real layer, and its byte counts stay exact. */
#define IMPLIED_MAX_ELEMS ((uint64_t)1 << 50)

typedef enum wl_arch { ARCH_NONE, ARCH_RESNET_BASIC, ARCH_RESNET_BOTTLENECK, ARCH_MOBILEVIT, ARCH_GPT2 } wl_arch;

static const struct {
    const char *model;     /* the list name's first '_' field */
    wl_arch arch;
} archs[] = {
    {"resnet18", ARCH_RESNET_BASIC},        {"resnet34", ARCH_RESNET_BASIC},
    {"resnet50", ARCH_RESNET_BOTTLENECK},   {"resnet101", ARCH_RESNET_BOTTLENECK},
    {"resnet152", ARCH_RESNET_BOTTLENECK},  {"mobilevitmodel", ARCH_MOBILEVIT},
    {"gpt2model", ARCH_GPT2},
};

static wl_arch arch_of(const char *source, const char **model)
{
    const char *b = strrchr(source, '/');
    b = b ? b + 1 : source;
    size_t n = strcspn(b, "_");
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strlen(archs[i].model) == n && !strncmp(b, archs[i].model, n) && b[n] == '_') {
            *model = archs[i].model;
            return archs[i].arch;
        }
    *model = NULL;
    return ARCH_NONE;
}

typedef struct arch_state {
    wl_arch arch;
    const char *model;
    uint64_t relus;               /* ReLUs seen (ResNet) */
    int have_conv;                /* the last convolution's output: */
    int64_t b, m, ho;             /* [b, m, ho, ho] */
    char dt[16];
} arch_state;

/* Adds one launch of the op `text` named `name`; the op is keyed by its
 * text, so a repeated kernel is one op.  Errors name entry i. */
static int add_text_op(opm_workload *w, const char *text, size_t len, const char *name, const char *source, size_t i,
                       opm_error *err)
{
    uint32_t idx = wl_find_key(w, text, len);
    if (idx == UINT32_MAX) {
        opm_op *op = opm_op_parse_string(text, len, OPM_FORMAT_JSON, source, 1, err);
        if (!op) {
            /* The op parser's own location is the generated text's; name
             * the entry instead. */
            char msg[OPM_ERROR_MESSAGE_MAX];
            snprintf(msg, sizeof msg, "%s", err ? err->message : "");
            const char *p = strstr(msg, ": ");
            char field[OPM_ERROR_FIELD_MAX];
            opm_strlcpy(field, err ? err->field : "", sizeof field);
            int rc = opm_err(err, err ? err->code : OPM_EINVAL, NULL, "%s:%zu:%s", source, i, p ? p + 1 : msg);
            if (err) opm_strlcpy(err->field, field, sizeof err->field);
            return rc;
        }
        int rc = wl_add_owned(w, op, name, text, len, &idx, err);
        if (rc) return rc;
    }
    return wl_launch_op(w, idx, 1, err);
}

/* One implied kernel: the text in sb, named "implied NAME (model)". */
static int implied(opm_workload *w, const arch_state *a, strbuf *sb, const char *what, const char *source, size_t i,
                   opm_error *err)
{
    if (sb->oom) return opm_err(err, OPM_ENOMEM, NULL, "out of memory");
    char name[200];
    snprintf(name, sizeof name, "implied %s (%s)", what, a->model);
    int rc = add_text_op(w, sb->p, sb->n, name, source, i, err);
    if (!rc) w->implied++;
    return rc;
}

static int implied_batchnorm(opm_workload *w, const arch_state *a, strbuf *sb, const char *source, size_t i,
                             opm_error *err)
{
    sb->n = 0;
    sb_printf(sb, "{\"kind\":\"batchnorm\",\"shape\":[%lld,%lld,%lld,%lld],\"dtype\":\"%s\",\"training\":false}",
              (long long)a->b, (long long)a->m, (long long)a->ho, (long long)a->ho, a->dt);
    char what[120];
    snprintf(what, sizeof what, "batchnorm %lldx%lldx%lldx%lld %s", (long long)a->b, (long long)a->m,
             (long long)a->ho, (long long)a->ho, a->dt);
    return implied(w, a, sb, what, source, i, err);
}

/* A reduction of [rows, cols] over cols: a pool whose windows tile its
 * input, read once, one output per row. */
static int implied_pool(opm_workload *w, const arch_state *a, strbuf *sb, const char *op, int64_t rows, int64_t cols,
                        const char *source, size_t i, opm_error *err)
{
    sb->n = 0;
    sb_printf(sb, "{\"kind\":\"reduction\",\"shape\":[%lld,%lld],\"op\":\"%s\",\"dim\":1,\"dtype\":\"%s\"}",
              (long long)rows, (long long)cols, op, a->dt);
    char what[120];
    snprintf(what, sizeof what, "%s pool %lldx%lld %s", !strcmp(op, "max") ? "max" : "average", (long long)rows,
             (long long)cols, a->dt);
    return implied(w, a, sb, what, source, i, err);
}

static int implied_elementwise(opm_workload *w, const arch_state *a, strbuf *sb, const char *op, int64_t d,
                               int broadcast, const char *dt, const char *source, size_t i, opm_error *err)
{
    sb->n = 0;
    sb_printf(sb, "{\"kind\":\"elementwise\",\"inputs\":[[%lld],[%lld]],\"op\":\"%s\",\"dtype\":\"%s\"}",
              (long long)d, broadcast ? 1LL : (long long)d, op, dt);
    char what[120];
    snprintf(what, sizeof what, "%s %lld %s", !strcmp(op, "add") ? "residual add" : op, (long long)d, dt);
    return implied(w, a, sb, what, source, i, err);
}

static const char *entry_op(const doc_node *e) { return e->kids[1]->kids[0]->text; }

/* The query's string `key`, NULL when absent or not a string. */
static const char *qstr(const doc_node *q, const char *key)
{
    const doc_node *n = doc_get(q, key);
    return n && n->type == DOC_SCALAR && n->quoted ? n->text : NULL;
}

static int64_t qint(const doc_node *q, const char *key)
{
    const doc_node *n = doc_get(q, key);
    int64_t v = 0;
    if (!n || n->type != DOC_SCALAR || n->quoted || doc_int(n, &v)) return 0;
    return v;
}

/* Kernels the architecture runs before entry i (which entry_text accepted). */
static int arch_before(opm_workload *w, arch_state *a, const doc_node *e, strbuf *sb, const char *source, size_t i,
                       opm_error *err)
{
    const char *op = entry_op(e);
    const doc_node *q = e->kids[0];
    if (a->arch != ARCH_RESNET_BASIC && a->arch != ARCH_RESNET_BOTTLENECK) return 0;
    const char *eo = qstr(q, "op");
    if (!strcmp(op, "elementwise") && eo && !strcmp(eo, "relu")) {
        uint64_t per_block = a->arch == ARCH_RESNET_BASIC ? 2 : 3;
        a->relus++;
        /* After the stem's, a block's last ReLU follows out += identity. */
        if (a->relus > 1 && (a->relus - 1) % per_block == 0)
            return implied_elementwise(w, a, sb, "add", qint(q, "dim"), 0, qstr(q, "prec"), source, i, err);
    }
    if (!strcmp(op, "gemm") && a->have_conv)
        return implied_pool(w, a, sb, "mean", a->b * a->m, a->ho * a->ho, source, i, err);
    return 0;
}

/* Kernels the architecture runs after entry i; next: entry i + 1 or NULL. */
static int arch_after(opm_workload *w, arch_state *a, const doc_node *e, const doc_node *next, strbuf *sb,
                      const char *source, size_t i, opm_error *err)
{
    const char *op = entry_op(e);
    const doc_node *q = e->kids[0];
    if (a->arch == ARCH_GPT2) {
        const char *eo = qstr(q, "op");
        if (!strcmp(op, "elementwise") && eo && !strcmp(eo, "unspecified_tensor"))
            return implied_elementwise(w, a, sb, "where", qint(q, "dim"), 1, qstr(q, "prec"), source, i, err);
        return 0;
    }
    if (a->arch == ARCH_NONE) return 0;
    if (!strcmp(op, "conv2d")) {
        /* entry_text checked the fields: hw, rs, stride, padding bounded. */
        int64_t hw = qint(q, "hw"), rs = qint(q, "rs"), st = qint(q, "stride"), pad = qint(q, "padding");
        int64_t ho = hw + 2 * pad >= rs ? (hw + 2 * pad - rs) / st + 1 : 0;
        int64_t b = qint(q, "b"), m = qint(q, "m");
        /* Its output's element count bounds every implied tensor's. */
        int ok = 1;
        uint64_t hw2 = ho > 0 ? opm_mul((uint64_t)ho, (uint64_t)ho, &ok) : 0;
        uint64_t n = opm_mul(opm_mul((uint64_t)b, (uint64_t)m, &ok), hw2, &ok);
        a->have_conv = ho > 0 && ok && n <= IMPLIED_MAX_ELEMS;
        if (!a->have_conv) return 0;
        a->b = b;
        a->m = m;
        a->ho = ho;
        snprintf(a->dt, sizeof a->dt, "%s", qstr(q, "precM"));
        /* MobileViTLayer's conv_1x1 has no norm: the transformer follows. */
        if (a->arch == ARCH_MOBILEVIT && next && !strcmp(entry_op(next), "layernorm")) return 0;
        return implied_batchnorm(w, a, sb, source, i, err);
    }
    if ((a->arch == ARCH_RESNET_BASIC || a->arch == ARCH_RESNET_BOTTLENECK) && a->relus == 1 && a->have_conv &&
        !strcmp(op, "elementwise")) {
        const char *eo = qstr(q, "op");
        if (!eo || strcmp(eo, "relu")) return 0;
        /* The stem's max pool: 3x3, stride 2, padding 1. */
        int64_t hp = (a->ho + 2 - 3) / 2 + 1;
        if (hp < 1) return 0;
        int64_t win = (a->ho * a->ho + hp * hp - 1) / (hp * hp);
        return implied_pool(w, a, sb, "max", a->b * a->m * hp * hp, win, source, i, err);
    }
    return 0;
}

int wl_read_energaizer(opm_workload *w, const char *text, size_t len, const char *source, opm_error *err)
{
    doc *d = doc_parse_json(text, len, source, 1, err);
    if (!d) return err ? err->code : OPM_EINVAL;
    const doc_node *root = doc_root(d);
    int rc = 0;
    ectx c = {source, 0, err};
    strbuf sb = {0}, isb = {0};
    arch_state a;
    memset(&a, 0, sizeof a);
    a.arch = w->as_listed ? ARCH_NONE : arch_of(source, &a.model);
    if (!root || root->type != DOC_SEQ) {
        rc = opm_err(err, OPM_EINVAL, NULL, "%s: expected a JSON array of [query, [op, ...]] entries", source);
        goto out;
    }
    for (size_t i = 0; i < root->n && !rc; i++) {
        c.entry = i;
        const doc_node *e = root->kids[i];
        if (e->type != DOC_SEQ || e->n != 2 || e->kids[0]->type != DOC_MAP || e->kids[1]->type != DOC_SEQ ||
            e->kids[1]->n < 1 || e->kids[1]->kids[0]->type != DOC_SCALAR) {
            char got[64];
            doc_describe(e, got, sizeof got);
            rc = fail(&c, "entry", "expected [query object, [op, engine, precision]], got %s", got);
            break;
        }
        char name[160];
        sb.n = 0;
        if ((rc = entry_text(&c, e->kids[0], entry_op(e), &sb, name, sizeof name))) break;
        if (sb.oom) {
            rc = opm_err(err, OPM_ENOMEM, NULL, "out of memory");
            break;
        }
        if ((rc = arch_before(w, &a, e, &isb, source, i, err))) break;
        if ((rc = add_text_op(w, sb.p, sb.n, name, source, i, err))) break;
        const doc_node *next = i + 1 < root->n ? root->kids[i + 1] : NULL;
        if (next && (next->type != DOC_SEQ || next->n != 2 || next->kids[1]->type != DOC_SEQ || next->kids[1]->n < 1 ||
                     next->kids[1]->kids[0]->type != DOC_SCALAR))
            next = NULL; /* a malformed next entry fails on its own turn */
        rc = arch_after(w, &a, e, next, &isb, source, i, err);
    }
    /* MobileViTModel ends with torch.mean over the last feature map. */
    if (!rc && a.arch == ARCH_MOBILEVIT && a.have_conv)
        rc = implied_pool(w, &a, &isb, "mean", a.b * a.m, a.ho * a.ho, source, root->n ? root->n - 1 : 0, err);
out:
    free(sb.p);
    free(isb.p);
    doc_free(d);
    return rc;
}
