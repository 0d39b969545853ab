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
/* Writes text whole to path ("-": stdout) for option opt; a failed write
 * removes the file and reports "opt: cannot write 'path': reason". */
int cli_write_text(const char *opt, const char *path, const char *text, size_t n);
/* True when argv has -h/--help. */
int cli_wants_help(int argc, char **argv);

int cmd_predict(int argc, char **argv);
int cmd_hardware(int argc, char **argv);
int cmd_expand(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_validate_gemm_latency(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif
