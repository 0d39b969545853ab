/* fuzz_op.c — libFuzzer target for the operation parsers: the bytes are
 * read as YAML and as JSON; anything that parses is also expanded back to
 * text, counted and predicted with every model, none of which may crash or
 * leak.  Every error must be one printable line, every success must leave
 * the error cleared, and every prediction must be finite.  `predict
 * --batch`'s line reader (op_line.c, which scans flat short forms itself)
 * must give the same op, or the same message, as the JSON parser. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"
#include "io/io_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const opm_error *err)
{
    if (err->code == OPM_OK || !err->message[0]) abort();
    for (const unsigned char *c = (const unsigned char *)err->message; *c; c++)
        if (*c < 0x20 || *c == 0x7f) abort(); /* one line, no control characters */
}

static void check_cleared(const opm_error *err)
{
    if (err->code != OPM_OK || err->message[0] || err->field[0]) abort();
}

static void same_as_parser(const uint8_t *data, size_t size, int reuse)
{
    opm_error e1, e2;
    /* predict --batch rebuilds one op line after line: an op with a name,
     * attributes and tensors of its own goes in */
    static const char seed[] = "{\"name\": \"a longer name than most\", \"kind\": \"elementwise\", "
                               "\"inputs\": [[16, 4096], [16, 4096]], \"dtype\": \"bf16\", \"op\": \"add\"}";
    opm_op *r = reuse ? opm_op_parse_json_line(seed, sizeof seed - 1, "<seed>", 1, NULL, &e1) : NULL;
    if (reuse && !r) abort();
    opm_op *a = opm_op_parse_json_line((const char *)data, size, "<fuzz>", 3, r, &e1);
    opm_op *b = opm_op_parse_string((const char *)data, size, OPM_FORMAT_JSON, "<fuzz>", 3, &e2);
    if (!a != !b) abort();
    if (!a) {
        if (e1.code != e2.code || strcmp(e1.message, e2.message)) abort();
    } else {
        check_cleared(&e1);
        char *ta = opm_op_to_text(a, OPM_FORMAT_JSON, &e1), *tb = opm_op_to_text(b, OPM_FORMAT_JSON, &e2);
        if (!ta != !tb || (ta && strcmp(ta, tb))) abort();
        opm_counts ca, cb;
        int ra = opm_op_count(a, &ca, &e1), rb = opm_op_count(b, &cb, &e2);
        if (ra != rb || (!ra && memcmp(&ca, &cb, sizeof ca))) abort();
        opm_free(ta);
        opm_free(tb);
    }
    opm_op_free(a);
    opm_op_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static opm_hardware *hw;
    opm_error err;
    if (!hw) hw = opm_hardware_builtin("h100_sxm", &err);
    same_as_parser(data, size, 0);
    same_as_parser(data, size, 1);
    for (int fmt = 0; fmt < 2; fmt++) {
        opm_op *op = opm_op_parse_string((const char *)data, size, fmt ? OPM_FORMAT_JSON : OPM_FORMAT_YAML,
                                         "<fuzz>", 1, &err);
        if (!op) {
            check_error(&err);
            continue;
        }
        check_cleared(&err);
        for (size_t m = 0; hw && m < opm_model_count(); m++) {
            opm_profile p;
            if (opm_predict(opm_model_at(m)->name, op, hw, &p, &err) != 0) {
                check_error(&err);
                continue;
            }
            check_cleared(&err);
            if (!isfinite(p.latency_s) || !isfinite(p.energy_j)) abort();
            char *j = opm_profile_to_json(&p, &err);
            opm_free(j);
        }
        /* A misspelt key is refused whatever the kind. */
        if (opm_op_set_int(op, "sliding_windw_x", 1, &err) == 0) abort();
        check_error(&err);
        char *t = opm_op_to_text(op, fmt ? OPM_FORMAT_JSON : OPM_FORMAT_YAML, &err);
        if (t) check_cleared(&err);
        opm_free(t);
        opm_op_free(op);
    }
    return 0;
}
