/* cmd_hardware.c — `opmodel hardware list` and `opmodel hardware show`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char help[] =
    "usage: opmodel hardware list\n"
    "       opmodel hardware show NAME|FILE [--format yaml|json]\n"
    "\n"
    "  list   the built-in entries: name, kind, SMs, dense bf16/fp16 tensor peak, fp32 vector peak,\n"
    "         DRAM size and bandwidth\n"
    "  show   the full description; the YAML output can be edited and passed back to --hardware\n";

static int list(void)
{
    printf("%-16s %-4s %5s %12s %12s %9s %10s\n", "name", "kind", "sms", "bf16_tflops", "fp32_tflops",
           "hbm_gb", "hbm_tb_s");
    for (size_t i = 0; i < opm_hardware_builtin_count(); i++) {
        opm_error err;
        opm_hardware *hw = opm_hardware_builtin(opm_hardware_builtin_name(i), &err);
        if (!hw) return cli_fail(&err);
        double bf16 = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, OPM_BF16);
        if (bf16 == 0) bf16 = opm_hardware_peak_flops(hw, OPM_ENGINE_TENSOR, OPM_FP16);
        const opm_memory_level *hbm = opm_hardware_find_level(hw, "hbm");
        printf("%-16s %-4s %5d %12.1f %12.1f %9.1f %10.3f\n", opm_hardware_name(hw), opm_hardware_kind(hw),
               opm_hardware_num_sms(hw), bf16 / 1e12, opm_hardware_peak_flops(hw, OPM_ENGINE_VECTOR, OPM_FP32) / 1e12,
               hbm->size_bytes / 1e9, hbm->bandwidth_bytes_per_s / 1e12);
        opm_hardware_free(hw);
    }
    return EXIT_OK;
}

int cmd_hardware(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv)) {
        fputs(help, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "list")) {
        if (argc > 2) return cli_usage("hardware list: unexpected argument '%s'", argv[2]);
        return list();
    }
    if (strcmp(argv[1], "show")) return cli_usage("hardware: unknown subcommand '%s' (list or show)", argv[1]);
    const char *name = NULL, *format = "yaml";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc) format = argv[++i];
        else if (!strncmp(argv[i], "--format=", 9)) format = argv[i] + 9;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("hardware show: unknown option '%s'", argv[i]);
        else if (!name) name = argv[i];
        else return cli_usage("hardware show: unexpected argument '%s'", argv[i]);
    }
    if (!name) return cli_usage("hardware show: expected a hardware name or file");
    int json = !strcmp(format, "json");
    if (!json && strcmp(format, "yaml")) return cli_usage("--format: expected yaml or json, got '%s'", format);
    opm_error err;
    opm_hardware *hw = opm_hardware_open(name, &err);
    if (!hw) return cli_fail(&err);
    char *text = json ? opm_hardware_to_json(hw, &err) : opm_hardware_to_yaml(hw, &err);
    opm_hardware_free(hw);
    if (!text) return cli_fail(&err);
    fputs(text, stdout);
    if (json) putchar('\n');
    free(text);
    return EXIT_OK;
}
