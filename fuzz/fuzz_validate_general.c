/* fuzz_validate_general.c — libFuzzer target for `opmodel validate`'s
 * general measurement JSONL reader (src/validate/general.c, contract §4):
 * the input is one file of lines, read, predicted and scored with the
 * roofline, with and without the fixed-overhead calibration (the first
 * byte's low bit).  Nothing may crash or leak; every error and every first
 * bad line must be one printable line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"
#include "validate/general.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[] = "/tmp/opm_fuzz_general_XXXXXX", path[64];
    if (!path[0]) {
        if (!mkdtemp(dir)) abort();
        snprintf(path, sizeof path, "%s/lines.jsonl", dir);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f)) abort();

    opm_general v;
    opm_error err;
    int calibrate = size && (data[0] & 1);
    int rc = opm_general_init(&v, "roofline", calibrate, &err);
    if (rc == 0) rc = opm_general_add_path(&v, path, "--data", &err);
    if (rc == 0) rc = opm_general_score(&v, &err);
    if (rc) {
        if (!err.message[0]) abort();
        check_line(err.message);
    } else {
        if (v.rows + v.calibration_rows > v.n_lines) abort();
        for (size_t i = 0; i < v.n_lines; i++) {
            double p = opm_general_line_predicted_s(&v, &v.lines[i]);
            if (!(p >= 0)) abort();
        }
    }
    check_line(v.first_bad);
    check_line(v.first_unknown_hw);
    opm_general_free(&v);
    return 0;
}
