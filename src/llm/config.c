/* config.c — model architecture configs: the embedded configs/models/NAME.yaml,
 * a user's YAML file, or a HuggingFace config.json read as it is.  The
 * shipped files use config.json's own keys (and their GPT-2 aliases), so one
 * reader serves both; keys it does not know are ignored because config.json
 * carries many that do not change the cost (eps, rope scaling, token ids).
 * A known key with a value of the wrong type is an error at its line. */
#include <stdlib.h>
#include <string.h>
#include "llm_internal.h"
#include "../core/internal.h"
#include "../io/doc.h"
#include "../io/io_internal.h"

size_t llm_config_builtin_count(void) { return opm_builtin_models_count; }
const char *llm_config_builtin_name(size_t i)
{
    return i < opm_builtin_models_count ? opm_builtin_models_entries[i].name : NULL;
}

/* An integer key from a list of aliases: 1 found, 0 absent (or null), -1 error. */
static int get_int(const doc *d, const doc_node *root, const char *const *keys, int64_t *out, opm_error *err)
{
    for (; *keys; keys++) {
        const doc_node *n = doc_get(root, *keys);
        if (!n || doc_is_null(n)) continue;
        int64_t v;
        /* 2^24 bounds every size (the largest real ones: 10M positions, 256k
         * vocabularies) and keeps their products in 64 bits */
        if (n->type != DOC_SCALAR || doc_int(n, &v) || v < 0 || v > (1 << 24)) {
            char what[64];
            doc_describe(n, what, sizeof what);
            opm_err(err, OPM_EINVAL, *keys, "expected an integer from 0 to 16777216, got %s", what);
            doc_error_at(d, n, err);
            return -1;
        }
        *out = v;
        return 1;
    }
    return 0;
}

static int get_bool(const doc *d, const doc_node *root, const char *key, int *out, opm_error *err)
{
    const doc_node *n = doc_get(root, key);
    if (!n || doc_is_null(n)) return 0;
    if (n->type != DOC_SCALAR || doc_bool(n, out)) {
        char what[64];
        doc_describe(n, what, sizeof what);
        opm_err(err, OPM_EINVAL, key, "expected true or false, got %s", what);
        doc_error_at(d, n, err);
        return -1;
    }
    return 1;
}

static const char *get_str(const doc_node *root, const char *key)
{
    const doc_node *n = doc_get(root, key);
    return n && n->type == DOC_SCALAR && !doc_is_null(n) ? n->text : NULL;
}

#define K(...) ((const char *const[]){__VA_ARGS__, NULL})

/* mamba_ssm's MambaConfig (mamba_ssm/models/config_mamba.py) and its mixers'
 * defaults (modules/mamba2.py: d_state 128, d_conv 4, expand 2, headdim 64,
 * ngroups 1, chunk_size 256; modules/mamba_simple.py: d_state 16): ssm_cfg
 * overrides them; d_intermediate > 0 adds a gated MLP; the embedding is
 * padded to pad_vocab_size_multiple (mixer_seq_simple.py). */
static int read_mamba_ssm(const doc *d, const doc_node *r, const doc_node *sc, llm_config *c, opm_error *err)
{
    int v2 = c->ssm == 2;
    int64_t d_inter = 0, pad = 0;
    c->ssm_state = v2 ? 128 : 16;
    c->ssm_groups = 1;
    c->ssm_head_dim = v2 ? 64 : 0;
    c->head_dim = 0;
    if (get_int(d, sc, K("d_state"), &c->ssm_state, err) < 0 || get_int(d, sc, K("d_conv"), &c->ssm_conv, err) < 0 ||
        get_int(d, sc, K("expand"), &c->ssm_expand, err) < 0 || get_int(d, sc, K("headdim"), &c->ssm_head_dim, err) < 0 ||
        get_int(d, sc, K("ngroups"), &c->ssm_groups, err) < 0 || get_int(d, sc, K("chunk_size"), &c->ssm_chunk, err) < 0 ||
        get_bool(d, sc, "bias", &c->ssm_proj_bias, err) < 0 || get_bool(d, sc, "conv_bias", &c->ssm_conv_bias, err) < 0 ||
        get_int(d, r, K("d_intermediate"), &d_inter, err) < 0 ||
        get_int(d, r, K("pad_vocab_size_multiple"), &pad, err) < 0)
        return -1;
    const doc_node *ai = doc_get(r, "attn_layer_idx");
    if (ai && ai->type == DOC_SEQ && ai->n) {
        opm_err(err, OPM_EUNSUPPORTED, "attn_layer_idx", "mamba_ssm hybrids with attention layers are not modelled");
        doc_error_at(d, ai, err);
        return -1;
    }
    if (d_inter) {
        c->no_mlp = 0;
        c->intermediate = d_inter;
    }
    if (pad > 1) c->vocab = (c->vocab + pad - 1) / pad * pad;
    return 0;
}

/* layer_types (Gemma 2/3, newer Qwen/Mistral config.json): one
 * "sliding_attention" or "full_attention" per layer. */
static int read_layer_types(const doc *d, const doc_node *r, llm_config *c, opm_error *err)
{
    const doc_node *n = doc_get(r, "layer_types");
    if (!n || doc_is_null(n)) return 0;
    if (n->type != DOC_SEQ || (int64_t)n->n != c->layers || n->n > LLM_MAX_LAYER_TYPES) {
        opm_err(err, OPM_EINVAL, "layer_types", "expected a list of %lld layer types (at most %d), got %s%zu entries",
                (long long)c->layers, LLM_MAX_LAYER_TYPES, n->type == DOC_SEQ ? "" : "no list: ",
                n->type == DOC_SEQ ? n->n : 0);
        doc_error_at(d, n, err);
        return -1;
    }
    int any = 0;
    for (size_t i = 0; i < n->n; i++) {
        const doc_node *t = n->kids[i];
        int sw = t->type == DOC_SCALAR && !strcmp(t->text, "sliding_attention");
        if (!sw && !(t->type == DOC_SCALAR && !strcmp(t->text, "full_attention"))) {
            char what[64];
            doc_describe(t, what, sizeof what);
            opm_err(err, OPM_EINVAL, "layer_types", "entry %zu: expected sliding_attention or full_attention, got %s", i,
                    what);
            doc_error_at(d, t, err);
            return -1;
        }
        c->swa_list[i] = (unsigned char)sw;
        any |= sw;
    }
    c->has_layer_types = any;
    return 0;
}

static int read_config(const doc *d, llm_config *c, opm_error *err)
{
    const doc_node *r = doc_root(d);
    if (!r || r->type != DOC_MAP) {
        opm_err(err, OPM_EINVAL, "", "a model config is a mapping of config.json keys");
        doc_error_at(d, r, err);
        return OPM_EINVAL;
    }
    const char *mt = get_str(r, "model_type");
    opm_strlcpy(c->model_type, mt ? mt : "llama", sizeof c->model_type);
    const char *name = get_str(r, "name");
    if (!name) name = get_str(r, "_name_or_path");
    opm_strlcpy(c->name, name ? name : c->model_type, sizeof c->name);
    int gpt2 = !strcmp(c->model_type, "gpt2"), bert = !strcmp(c->model_type, "bert");
    c->encoder = bert;
    c->learned_pos = gpt2 || bert;
    c->all_bias = gpt2 || bert;
    c->qkv_bias = !strcmp(c->model_type, "qwen2") || !strcmp(c->model_type, "qwen2_moe");
    c->qk_norm = !strcmp(c->model_type, "qwen3") || !strcmp(c->model_type, "qwen3_moe");
    c->gated = !(gpt2 || bert);
    c->layernorm = gpt2 || bert;
    c->tied = 1; /* HF's PretrainedConfig default */
    /* mamba_ssm's own config.json (state-spaces/mamba2-2.7b and kin): no
     * model_type, the mixer in ssm_cfg.layer. */
    const doc_node *ssm_cfg = doc_get(r, "ssm_cfg");
    int mamba_ssm = !mt && ssm_cfg && ssm_cfg->type == DOC_MAP;
    if (mamba_ssm) {
        const char *layer = get_str(ssm_cfg, "layer");
        opm_strlcpy(c->model_type, layer && !strcmp(layer, "Mamba2") ? "mamba2" : "mamba", sizeof c->model_type);
        if (!name) opm_strlcpy(c->name, c->model_type, sizeof c->name);
    }
    /* SSM stacks and hybrids, with the defaults of HF's Mamba/Mamba2/Jamba
     * configs (a config.json leaves out what equals them). */
    int mamba1 = !strcmp(c->model_type, "mamba") || !strcmp(c->model_type, "falcon_mamba");
    int mamba2 = !strcmp(c->model_type, "mamba2"), jamba = !strcmp(c->model_type, "jamba");
    c->ssm = mamba2 ? 2 : mamba1 || jamba ? 1 : 0;
    c->no_mlp = mamba1 || mamba2;
    c->ssm_state = mamba2 ? 128 : 16;
    c->ssm_conv = 4;
    c->ssm_expand = 2;
    c->ssm_groups = mamba2 ? 8 : 1;
    c->ssm_chunk = 256;
    c->ssm_conv_bias = 1;
    /* Gemma 2 alternates sliding and full layers when its config.json has
     * no layer_types (HF's Gemma2Config: layer i slides when (i+1) % 2) */
    if (!strcmp(c->model_type, "gemma2")) c->swa_pattern = 2;
    c->no_rope = jamba; /* Lieber et al. 2024, "Jamba", §6.4: no explicit positional information */
    if (jamba) {
        c->attn_period = 8;
        c->attn_offset = 4;
        c->expert_period = 2;
        c->expert_offset = 1;
    }

    struct { const char *const *keys; int64_t *dst; int required; } ints[] = {
        {K("num_hidden_layers", "n_layer", "num_layers"), &c->layers, 1},
        {K("hidden_size", "n_embd", "d_model"), &c->hidden, 1},
        {K("num_attention_heads", "n_head"), &c->heads, !c->ssm}, /* SSM stacks have none; hybrids checked below */
        {K("vocab_size"), &c->vocab, 1},
        {K("intermediate_size", "n_inner", "ffn_dim"), &c->intermediate, 0},
        {K("num_key_value_heads"), &c->kv_heads, 0},
        {K("head_dim"), &c->head_dim, 0},
        {K("max_position_embeddings", "n_positions"), &c->max_pos, 0},
        {K("type_vocab_size"), &c->type_vocab, 0},
        {K("num_local_experts", "num_experts", "n_routed_experts"), &c->experts, 0},
        {K("num_experts_per_tok"), &c->top_k, 0},
        {K("moe_intermediate_size"), &c->moe_inter, 0},
        {K("n_shared_experts"), &c->shared_experts, 0},
        {K("first_k_dense_replace"), &c->first_dense, 0},
        {K("q_lora_rank"), &c->q_lora, 0},
        {K("kv_lora_rank"), &c->kv_lora, 0},
        {K("qk_nope_head_dim"), &c->qk_nope, 0},
        {K("qk_rope_head_dim"), &c->qk_rope, 0},
        {K("v_head_dim"), &c->v_head, 0},
        {K("sliding_window"), &c->sliding_window, 0},
        {K("max_window_layers"), &c->max_window_layers, 0},
        {K("sliding_window_pattern"), &c->swa_pattern, 0},
        {K("state_size", "mamba_d_state"), &c->ssm_state, 0},
        {K("conv_kernel", "mamba_d_conv"), &c->ssm_conv, 0},
        {K("expand", "mamba_expand"), &c->ssm_expand, 0},
        {K("n_groups", "mamba_ngroups"), &c->ssm_groups, 0},
        {K("chunk_size", "mamba_chunk_size"), &c->ssm_chunk, 0},
        {K("attn_layer_period"), &c->attn_period, 0},
        {K("attn_layer_offset"), &c->attn_offset, 0},
        {K("expert_layer_period"), &c->expert_period, 0},
        {K("expert_layer_offset"), &c->expert_offset, 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int got = get_int(d, r, ints[i].keys, ints[i].dst, err);
        if (got < 0) return OPM_EINVAL;
        if (!got && ints[i].required) {
            opm_err(err, OPM_EINVAL, ints[i].keys[0], "required (the number of %s)",
                    i == 0 ? "layers" : i == 1 ? "hidden units" : i == 2 ? "attention heads" : "vocabulary entries");
            doc_error_at(d, r, err);
            return OPM_EINVAL;
        }
    }
    /* Qwen2/Qwen3 configs carry a sliding_window that only applies with
     * use_sliding_window (HF's default there: false); Mistral's applies. */
    int use_swa = strncmp(c->model_type, "qwen", 4) != 0;
    if (get_bool(d, r, "tie_word_embeddings", &c->tied, err) < 0 ||
        get_bool(d, r, "tie_embeddings", &c->tied, err) < 0 ||
        get_bool(d, r, "attention_bias", &c->qkv_bias, err) < 0 ||
        get_bool(d, r, "gated", &c->gated, err) < 0 ||
        get_bool(d, r, "use_sliding_window", &use_swa, err) < 0 ||
        get_bool(d, r, "use_conv_bias", &c->ssm_conv_bias, err) < 0 ||
        get_bool(d, r, "mamba_conv_bias", &c->ssm_conv_bias, err) < 0 ||
        get_bool(d, r, "use_bias", &c->ssm_proj_bias, err) < 0 ||
        get_bool(d, r, "mamba_proj_bias", &c->ssm_proj_bias, err) < 0)
        return OPM_EINVAL;
    if (!use_swa) c->sliding_window = 0;
    if (mamba_ssm && read_mamba_ssm(d, r, ssm_cfg, c, err)) return OPM_EINVAL;
    if (read_layer_types(d, r, c, err)) return OPM_EINVAL;
    if (c->ssm) {
        /* Mamba2Config names the SSM heads num_heads and their width
         * head_dim; Jamba's dt rank may be "auto" (⌈hidden/16⌉). */
        if (mamba2 && !mamba_ssm) {
            c->ssm_head_dim = c->head_dim ? c->head_dim : 64;
            c->head_dim = 0;
            if (get_int(d, r, K("num_heads"), &c->ssm_heads, err) < 0) return OPM_EINVAL;
        }
        const doc_node *dr = doc_get(r, "time_step_rank");
        if (!dr) dr = doc_get(r, "mamba_dt_rank");
        if (dr && !doc_is_null(dr) && !(dr->type == DOC_SCALAR && !strcmp(dr->text, "auto")) &&
            get_int(d, r, K("time_step_rank", "mamba_dt_rank"), &c->ssm_dt_rank, err) < 0)
            return OPM_EINVAL;
    }
    const char *norm = get_str(r, "norm");
    if (norm) {
        if (!strcmp(norm, "layernorm")) c->layernorm = 1;
        else if (!strcmp(norm, "rmsnorm")) c->layernorm = 0;
        else {
            opm_err(err, OPM_EINVAL, "norm", "expected rmsnorm or layernorm, got '%s'", norm);
            doc_error_at(d, doc_get(r, "norm"), err);
            return OPM_EINVAL;
        }
    }
    const doc_node *pp = doc_get(r, "published_params");
    if (pp && !doc_is_null(pp) && (pp->type != DOC_SCALAR || doc_double(pp, &c->published_params))) {
        opm_err(err, OPM_EINVAL, "published_params", "expected a number");
        doc_error_at(d, pp, err);
        return OPM_EINVAL;
    }

    /* Defaults as the HF modeling code applies them. */
    if (!c->kv_heads) c->kv_heads = c->heads;
    if (!c->intermediate) c->intermediate = 4 * c->hidden; /* GPT-2's n_inner: null */
    if (c->experts && !c->moe_inter) c->moe_inter = c->intermediate;
    c->mla = c->kv_lora > 0;
    const char *bad = NULL;
    int64_t d_inner = c->ssm_expand * c->hidden;
    if (c->ssm == 2 && !c->ssm_heads && c->ssm_head_dim) c->ssm_heads = d_inner / c->ssm_head_dim;
    if (c->ssm == 1 && !c->ssm_dt_rank) c->ssm_dt_rank = (c->hidden + 15) / 16;
    int attention = !c->ssm || c->attn_period > 0;
    if (!attention) c->heads = c->kv_heads = 1; /* no attention layer reads them */
    if (!c->layers || !c->hidden || !c->vocab) bad = "num_hidden_layers";
    else if (!c->heads) {
        opm_err(err, OPM_EINVAL, "num_attention_heads", "required (the number of attention heads)");
        doc_error_at(d, r, err);
        return OPM_EINVAL;
    } else if (c->ssm && (!c->ssm_state || !c->ssm_conv || !c->ssm_expand || !c->ssm_groups || !c->ssm_chunk))
        bad = c->ssm == 2 ? "state_size" : "mamba_d_state";
    else if (c->ssm == 2 && (!c->ssm_heads || c->ssm_heads * c->ssm_head_dim != d_inner || c->ssm_heads % c->ssm_groups))
        bad = "num_heads";
    else if (c->attn_period && c->attn_offset >= c->attn_period) bad = "attn_layer_offset";
    else if (c->expert_period && c->expert_offset >= c->expert_period) bad = "expert_layer_offset";
    else if (c->has_layer_types && !c->sliding_window) bad = "sliding_window";
    else if (!c->head_dim && c->hidden % c->heads) bad = "num_attention_heads";
    else if (c->kv_heads == 0 || c->heads % c->kv_heads) bad = "num_key_value_heads";
    else if (c->experts && (!c->top_k || c->top_k > c->experts)) bad = "num_experts_per_tok";
    else if (c->first_dense > c->layers) bad = "first_k_dense_replace";
    else if (c->mla && (!c->qk_nope || !c->qk_rope || !c->v_head)) bad = "qk_nope_head_dim";
    if (bad) {
        opm_err(err, OPM_EINVAL, bad, "inconsistent with the other sizes (layers %lld, hidden %lld, heads %lld, kv heads %lld, experts %lld, top-k %lld)",
                (long long)c->layers, (long long)c->hidden, (long long)c->heads, (long long)c->kv_heads,
                (long long)c->experts, (long long)c->top_k);
        const doc_node *at = doc_get(r, bad);
        doc_error_at(d, at ? at : r, err);
        return OPM_EINVAL;
    }
    if (!c->head_dim) c->head_dim = c->hidden / c->heads;
    if (c->encoder && c->experts) {
        opm_err(err, OPM_EUNSUPPORTED, "model_type", "an encoder with experts is not modelled");
        return OPM_EUNSUPPORTED;
    }
    return 0;
}

llm_config *llm_config_load_string(const char *text, size_t len, const char *source, opm_error *err)
{
    opm_error_clear(err);
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) i++;
    /* config.json is JSON: parse it as such so yajl's stricter reading and
     * its error positions apply. */
    doc *d = i < len && text[i] == '{' ? doc_parse_json(text, len, source, 1, err)
                                       : doc_parse_yaml(text, len, source, 1, err);
    if (!d) return NULL;
    llm_config *c = calloc(1, sizeof *c);
    if (!c) {
        doc_free(d);
        opm_err(err, OPM_ENOMEM, "", "out of memory");
        return NULL;
    }
    int rc = read_config(d, c, err);
    doc_free(d);
    if (rc) {
        free(c);
        return NULL;
    }
    return c;
}

llm_config *llm_config_open(const char *name_or_path, opm_error *err)
{
    opm_error_clear(err);
    char stem[64];
    opm_strlcpy(stem, name_or_path, sizeof stem);
    for (char *p = stem; *p; p++)
        if (*p == '.') *p = '_'; /* "qwen2.5_7b" names qwen2_5_7b.yaml */
    for (size_t i = 0; i < opm_builtin_models_count; i++)
        if (!strcmp(opm_builtin_models_entries[i].name, stem)) {
            char source[96];
            snprintf(source, sizeof source, "configs/models/%s.yaml", stem);
            return llm_config_load_string(opm_builtin_models_entries[i].text, opm_builtin_models_entries[i].len,
                                          source, err);
        }
    if (!strchr(name_or_path, '/') && !strstr(name_or_path, ".yaml") && !strstr(name_or_path, ".json")) {
        const char *names[64];
        size_t n = opm_builtin_models_count < 63 ? opm_builtin_models_count : 63;
        for (size_t i = 0; i < n; i++) names[i] = opm_builtin_models_entries[i].name;
        names[n] = NULL;
        const char *hint = opm_closest(stem, names);
        opm_err(err, OPM_ENOTFOUND, "config", "expected a built-in model (see `opmodel llm --list`) or a file, got '%s'%s%s%s",
                name_or_path, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
        return NULL;
    }
    size_t len;
    char *text = opm_read_file(name_or_path, &len, err);
    if (!text) return NULL;
    llm_config *c = llm_config_load_string(text, len, name_or_path, err);
    free(text);
    return c;
}

void llm_config_free(llm_config *c) { free(c); }
const char *llm_config_name(const llm_config *c) { return c->name; }
double llm_config_published_params(const llm_config *c) { return c->published_params; }
int64_t llm_config_layers(const llm_config *c) { return c->layers; }

/* Parameters of one layer's attention block (weights, biases, norms inside it). */
uint64_t llm_attn_params(const llm_config *c)
{
    uint64_t h = (uint64_t)c->hidden, p;
    if (c->mla) {
        uint64_t qk = (uint64_t)(c->qk_nope + c->qk_rope), nh = (uint64_t)c->heads;
        uint64_t q = c->q_lora ? h * (uint64_t)c->q_lora + (uint64_t)c->q_lora + (uint64_t)c->q_lora * nh * qk
                               : h * nh * qk;
        p = q + h * (uint64_t)(c->kv_lora + c->qk_rope) + (uint64_t)c->kv_lora +
            (uint64_t)c->kv_lora * nh * (uint64_t)(c->qk_nope + c->v_head) + nh * (uint64_t)c->v_head * h;
        return p;
    }
    uint64_t q = (uint64_t)(c->heads * c->head_dim), kv = (uint64_t)(c->kv_heads * c->head_dim);
    p = h * (q + 2 * kv) + q * h;
    if (c->qkv_bias || c->all_bias) p += q + 2 * kv;
    if (c->all_bias) p += h;
    if (c->qk_norm) p += 2 * (uint64_t)c->head_dim;
    return p;
}

/* One norm's parameters (γ, and β for LayerNorm). */
uint64_t llm_norm_params(const llm_config *c) { return (uint64_t)c->hidden * (c->layernorm ? 2 : 1); }

/* A dense MLP of width `inter`. */
uint64_t llm_mlp_params(const llm_config *c, int64_t inter)
{
    uint64_t h = (uint64_t)c->hidden, i = (uint64_t)inter;
    return h * i * (c->gated ? 3 : 2) + (c->all_bias ? i + h : 0);
}

int llm_layer_mixer(const llm_config *c, int64_t l)
{
    if (c->ssm && (!c->attn_period || l % c->attn_period != c->attn_offset)) return LLM_MIX_SSM;
    if (!c->sliding_window) return LLM_MIX_ATTN;
    if (c->has_layer_types) return l < LLM_MAX_LAYER_TYPES && c->swa_list[l] ? LLM_MIX_SWA : LLM_MIX_ATTN;
    if (c->swa_pattern) return (l + 1) % c->swa_pattern ? LLM_MIX_SWA : LLM_MIX_ATTN;
    return l >= c->max_window_layers ? LLM_MIX_SWA : LLM_MIX_ATTN;
}

int llm_layer_ffn(const llm_config *c, int64_t l)
{
    if (c->no_mlp) return LLM_FFN_NONE;
    if (!c->experts) return LLM_FFN_DENSE;
    if (c->expert_period) return l % c->expert_period == c->expert_offset ? LLM_FFN_MOE : LLM_FFN_DENSE;
    return l >= c->first_dense ? LLM_FFN_MOE : LLM_FFN_DENSE;
}

int llm_layer_is_moe(const llm_config *c, int64_t layer) { return llm_layer_ffn(c, layer) == LLM_FFN_MOE; }

int64_t llm_ssm_inner(const llm_config *c) { return c->ssm_expand * c->hidden; }

/* One SSM mixer's parameters (the block's pre-norm is counted with the
 * layer's norms).  Mamba-2 (mamba_ssm Mamba2): in_proj to z, x, B, C, dt;
 * depthwise conv over x, B, C; dt_bias, A_log, D per head; the gated
 * RMSNorm over d_inner; out_proj.  Mamba-1 (Jamba's mixer): in_proj to x, z;
 * conv over x; x_proj to dt, B, C; dt_proj (+ bias); A_log [d_inner, N]; D;
 * out_proj; Jamba's dt/B/C RMSNorms. */
uint64_t llm_ssm_params(const llm_config *c)
{
    uint64_t h = (uint64_t)c->hidden, di = (uint64_t)llm_ssm_inner(c), n = (uint64_t)c->ssm_state;
    uint64_t w = (uint64_t)c->ssm_conv, pb = (uint64_t)c->ssm_proj_bias, cb = (uint64_t)c->ssm_conv_bias;
    if (c->ssm == 2) {
        uint64_t g = (uint64_t)c->ssm_groups, nh = (uint64_t)c->ssm_heads;
        uint64_t in = 2 * di + 2 * g * n + nh, conv = di + 2 * g * n;
        return h * in + pb * in + conv * w + cb * conv + 3 * nh + di + di * h + pb * h;
    }
    uint64_t r = (uint64_t)c->ssm_dt_rank;
    uint64_t p = h * 2 * di + pb * 2 * di + di * w + cb * di + di * (r + 2 * n) + r * di + di + di * n + di +
                 di * h + pb * h;
    if (!strcmp(c->model_type, "jamba")) p += r + 2 * n;
    return p;
}

uint64_t llm_config_params(const llm_config *c)
{
    uint64_t h = (uint64_t)c->hidden, v = (uint64_t)c->vocab;
    uint64_t p = v * h + (c->tied ? 0 : v * h) + llm_norm_params(c); /* embed, head, final norm */
    if (c->learned_pos) p += (uint64_t)c->max_pos * h + (uint64_t)c->type_vocab * h;
    if (c->encoder) p += h * h + h; /* BERT's pooler; its embedding LayerNorm is the "final" norm above */
    uint64_t attn = llm_attn_params(c), ssm = c->ssm ? llm_ssm_params(c) : 0;
    uint64_t dense = llm_mlp_params(c, c->intermediate);
    uint64_t moe = h * (uint64_t)c->experts + (uint64_t)(c->experts + c->shared_experts) * llm_mlp_params(c, c->moe_inter);
    for (int64_t l = 0; l < c->layers; l++) {
        int f = llm_layer_ffn(c, l);
        p += (llm_layer_mixer(c, l) == LLM_MIX_SSM ? ssm : attn) + (f == LLM_FFN_NONE ? 1 : 2) * llm_norm_params(c) +
             (f == LLM_FFN_MOE ? moe : f == LLM_FFN_DENSE ? dense : 0);
    }
    return p;
}
