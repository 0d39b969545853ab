/* main.c — the `opmodel` program: dispatch to subcommands, --help and
 * --version, and the one-line error convention. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char usage[] =
    "usage: opmodel <command> [options]\n"
    "\n"
    "Predicts how an accelerator executes one operation, without running it.\n"
    "\n"
    "commands:\n"
    "  predict    predict latency, FLOPs, bytes, bound and energy of one op (or a JSONL batch)\n"
    "  expand     print the full form of an op file written in short form\n"
    "  ops        list the op kinds with their tensors and attributes\n"
    "  models     list the prediction models\n"
    "  hardware   list or show the built-in hardware descriptions\n"
    "  validate               score a model on measured latencies and energies of any op kind (JSONL)\n"
    "  validate-gemm-latency  score GEMM latency models on measured CSVs (fixed overhead calibrated)\n"
    "  calibrate              fit one hardware's efficiency and overhead parameters to measurements\n"
    "  calibrate-energy       fit one hardware's energy coefficients to measured energies (JSONL)\n"
    "  trace report           measured kernels of a PyTorch profiler trace beside the model\n"
    "  llm                    one prefill, decode or training step of a whole model (configs/models)\n"
    "  workload               a whole op sequence (JSONL, EnergAIzer kernel list, trace) summed: time, energy\n"
    "  validate-artifact      whole-workload time and energy against the EnergAIzer end-to-end runs\n"
    "\n"
    "Run `opmodel <command> --help` for a command's options.  `opmodel --version` prints the version.\n"
    "Exit status: 0 ok, 1 some batch lines failed, 2 usage or input error.\n";

int cli_fail(const opm_error *err)
{
    fprintf(stderr, "opmodel: %s\n", err->message[0] ? err->message : "error");
    return EXIT_USAGE;
}

int cli_usage(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "opmodel: %s\n", msg);
    return EXIT_USAGE;
}

const char *cli_opt_value(int argc, char **argv, int *i, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(argv[*i], key, n)) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1])) return "";
    return argv[++*i];
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("opmodel %s\n", opm_version());
        return EXIT_OK;
    }
    if (!strcmp(cmd, "predict")) return cmd_predict(argc - 1, argv + 1);
    if (!strcmp(cmd, "hardware")) return cmd_hardware(argc - 1, argv + 1);
    if (!strcmp(cmd, "expand")) return cmd_expand(argc - 1, argv + 1);
    if (!strcmp(cmd, "ops")) return cmd_ops(argc - 1, argv + 1);
    if (!strcmp(cmd, "models")) return cmd_models(argc - 1, argv + 1);
    if (!strcmp(cmd, "validate")) return cmd_validate(argc - 1, argv + 1);
    if (!strcmp(cmd, "validate-gemm-latency")) return cmd_validate_gemm_latency(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate")) return cmd_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate-energy")) return cmd_calibrate_energy(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace")) return cmd_trace(argc - 1, argv + 1);
    if (!strcmp(cmd, "llm")) return cmd_llm(argc - 1, argv + 1);
    if (!strcmp(cmd, "workload")) return cmd_workload(argc - 1, argv + 1);
    if (!strcmp(cmd, "validate-artifact")) return cmd_validate_artifact(argc - 1, argv + 1);
    return cli_usage("unknown command '%s' (see `opmodel --help`)", cmd);
}
