/* cli.h — what the subcommands of the `opmodel` program share.  The CLI is
 * the only layer that prints, reads arguments and chooses exit codes:
 * 0 ok, 1 some batch lines failed, 2 usage or input error. */
#ifndef OPM_CLI_H
#define OPM_CLI_H

#include "opmodel/opmodel.h"

enum { EXIT_OK = 0, EXIT_PARTIAL = 1, EXIT_USAGE = 2 };

/* Prints "opmodel: message" on one line to stderr; returns EXIT_USAGE. */
int cli_fail(const opm_error *err);
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One output of a command, built whole: text of n bytes for option opt,
 * to path ("-": stdout). */
typedef struct cli_output {
    const char *opt, *path, *text;
    size_t n;
} cli_output;
/* Writes the outputs all or none (output.c): regular files through
 * temporary files renamed into place once all are written, so a failure
 * leaves every target as it was; a device, FIFO or link in place, after
 * the temporaries, never removed.  Refuses, before writing anything, two
 * outputs naming one file (stdout included), a file that is not writable,
 * and one of the inputs (n_in files, or folders whose *.csv and *.jsonl
 * files are read, compared by file).
 * EXIT_OK, or one error line and EXIT_USAGE. */
int cli_write_outputs(const cli_output *out, size_t n, const char *const *inputs, size_t n_in);
/* True when path is "-" or names the file stdout writes to (/dev/stdout,
 * or the file stdout was redirected to): a report then goes to stderr. */
int cli_is_stdout(const char *path);
/* `--key value` or `--key=value` at argv[*i]: the value (moving *i past
 * it), "" when it is missing (a next argument that is itself an option, as
 * in `--data --hardware t4`, is not taken; "-" is), NULL when argv[*i] is
 * not key. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *key);
/* True when argv has -h/--help. */
int cli_wants_help(int argc, char **argv);

int cmd_predict(int argc, char **argv);
int cmd_hardware(int argc, char **argv);
int cmd_expand(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_validate_gemm_latency(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_calibrate_energy(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_trace_diff(int argc, char **argv); /* cmd_trace_diff.c */
int cmd_llm(int argc, char **argv);
int cmd_workload(int argc, char **argv);          /* cmd_workload.c */
int cmd_validate_artifact(int argc, char **argv); /* cmd_workload.c */

#endif
