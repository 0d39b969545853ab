/* fuzz_gemm_csv.c — libFuzzer target for the two GEMM latency CSV loaders
 * (contract §4): validate-gemm-latency's dataset loader and calibrate's
 * reader + overhead fit, both on the shared reader in src/validate/csv.c,
 * and that reader alone (fields, column lookup, located errors).  The
 * loaders take paths, so each input is written to one file in a directory
 * made once per process.  The first byte picks how: below 0xf0 the input is
 * the file as is; from 0xf0 the rest is written over and over (newlines
 * dropped on odd modes) until the file passes OPM_CSV_MAX_LINE_BYTES, which
 * reaches the reader's line cap, and with it the loaders' handling of a
 * reader error, from inputs libFuzzer's length limit keeps short.  Every
 * error must be one printable line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opmodel/opmodel.h"
#include "validate/calibrate.h"
#include "validate/csv.h"
#include "validate/gemm_latency.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const opm_error *err)
{
    if (err->code == OPM_OK || !err->message[0]) abort();
    for (const unsigned char *c = (const unsigned char *)err->message; *c; c++)
        if (*c < 0x20 || *c == 0x7f) abort();
}

static void write_input(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && data[0] >= 0xf0) {
        int flat = data[0] & 1; /* one endless line, or the rows repeated */
        static char chunk[4096];
        size_t n = 0;
        for (size_t i = 1; i < size && n < sizeof chunk; i++)
            if (!flat || data[i] != '\n') chunk[n++] = (char)data[i];
        if (n == 0) chunk[n++] = 'x';
        for (size_t written = 0; written <= OPM_CSV_MAX_LINE_BYTES + 1; written += n)
            if (fwrite(chunk, 1, n, f) != n) abort();
    } else if (fwrite(data, 1, size, f) != size) {
        abort();
    }
    if (fclose(f)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[] = "/tmp/opm_fuzz_csv_XXXXXX", path[64];
    static opm_hardware *p4;
    opm_error err;
    if (!path[0]) {
        if (!mkdtemp(dir)) abort();
        snprintf(path, sizeof path, "%s/rows.csv", dir);
        p4 = opm_hardware_builtin("p4", &err);
        if (!p4) abort();
    }
    write_input(path, data, size);

    opm_csv c;
    if (opm_csv_open(&c, path, "--data", &err) == 0) {
        static const char *const names[] = {"hardware", "dtype", "m", "n", "k", "latency_us"};
        int col[6], rc;
        size_t lines = 0;
        while ((rc = opm_csv_read(&c, &err)) == 0 && c.nf) {
            if (c.nf > OPM_CSV_MAX_FIELDS || c.line <= lines) abort();
            lines = c.line;
            opm_csv_columns(&c, names, 6, col);
            for (int k = 0; k < 6; k++)
                if (col[k] >= c.nf) abort();
            opm_error row;
            opm_csv_error(&c, &row, "m", "expected %s", c.fld[c.nf - 1]);
            check_error(&row);
        }
        if (rc) check_error(&err);
        if (c.cap > OPM_CSV_MAX_LINE_BYTES + 2) abort();
    }
    opm_csv_close(&c);

    opm_gemm_dataset ds;
    if (opm_gemm_dataset_load(dir, &ds, &err) == 0) opm_gemm_dataset_free(&ds);
    else check_error(&err);

    /* The overhead alone: one bounded parameter keeps each input fast. */
    opm_cal_options o = {path, NULL, NULL, 0, 1u << OPM_CAL_OVERHEAD};
    opm_calibration cal;
    if (opm_calibrate(p4, &o, &cal, &err) == 0) {
        if (!cal.hw) abort();
    } else {
        check_error(&err);
    }
    opm_calibration_free(&cal);
    return 0;
}
