/* validate_report.h — the contract §5 statistics printers the two
 * validation commands share (defined in cmd_validate.c), so that
 * `validate-gemm-latency` and `validate` print a stats object with the same
 * keys and the same table columns. */
#ifndef OPM_CLI_VALIDATE_REPORT_H
#define OPM_CLI_VALIDATE_REPORT_H

#include "io/io_internal.h"
#include "validate/gemm_latency.h"

/* {"rows", "mape", "median_ape", "p90_ape", "geomean_ratio",
 * "signed_mean_error"} (errors in percent; geomean 1 with no rows). */
void cli_json_stats(strbuf *b, const opm_err_stats *s);
/* One table row: label, rows, mape%, median%, p90%, geomean, signed%. */
void cli_table_stats_line(strbuf *b, const char *label, const opm_err_stats *s);

#endif
