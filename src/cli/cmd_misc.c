/* cmd_misc.c — the small commands: `expand` (short form to full form),
 * `ops` (kinds, tensors, attributes) and `models`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ops/kind.h"

int cmd_expand(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        puts("usage: opmodel expand FILE|- [--format yaml|json]\n\n"
             "Prints the full form (tensors and attrs) of an operation written in short or full form.");
        return EXIT_OK;
    }
    const char *path = NULL, *format = "yaml";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc) format = argv[++i];
        else if (!strncmp(argv[i], "--format=", 9)) format = argv[i] + 9;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("expand: unknown option '%s'", argv[i]);
        else if (!path) path = argv[i];
        else return cli_usage("expand: unexpected argument '%s'", argv[i]);
    }
    if (!path) return cli_usage("expand: expected an op file (or - for stdin)");
    int json = !strcmp(format, "json");
    if (!json && strcmp(format, "yaml")) return cli_usage("--format: expected yaml or json, got '%s'", format);
    opm_error err;
    opm_op *op = opm_op_parse_file(path, &err);
    if (!op) return cli_fail(&err);
    char *text = opm_op_to_text(op, json ? OPM_FORMAT_JSON : OPM_FORMAT_YAML, &err);
    opm_op_free(op);
    if (!text) return cli_fail(&err);
    fputs(text, stdout);
    if (json) putchar('\n');
    free(text);
    return EXIT_OK;
}

static void print_attrs(const char *title, const opm_attr_def *a)
{
    if (!a || !a->key) return;
    printf("  %s:\n", title);
    for (; a->key; a++) printf("    %-22s %s\n", a->key, a->help);
}

int cmd_ops(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        puts("usage: opmodel ops [KIND]\n\nLists every op kind with its tensors, attributes and short-form keys.");
        return EXIT_OK;
    }
    if (argc > 2) return cli_usage("ops: unexpected argument '%s'", argv[2]);
    opm_kind only = OPM_KIND_COUNT;
    if (argc == 2 && opm_kind_parse(argv[1], &only)) return cli_usage("ops: unknown kind '%s'", argv[1]);
    for (int k = 0; k < OPM_KIND_COUNT; k++) {
        if (only != OPM_KIND_COUNT && k != (int)only) continue;
        const opm_kind_def *d = opm_kind_def_get((opm_kind)k);
        printf("%s — %s\n  tensors: %s\n", d->name, d->summary, d->tensors_help);
        print_attrs("attrs", d->attrs);
        if (d->from_short) {
            printf("  short form: kind, [name], [phase], dtype, [out_dtype]");
            for (const opm_attr_def *a = d->short_keys; a && a->key; a++) printf(", %s", a->key);
            printf(", and any attr\n");
        }
        printf("\n");
    }
    return EXIT_OK;
}

int cmd_models(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        puts("usage: opmodel models\n\nLists the prediction models.");
        return EXIT_OK;
    }
    if (argc > 1) return cli_usage("models: unexpected argument '%s'", argv[1]);
    for (size_t i = 0; i < opm_model_count(); i++)
        printf("%-20s %s\n", opm_model_at(i)->name, opm_model_at(i)->description);
    return EXIT_OK;
}
