/* cmd_trace.c — placeholder, being written. */
#include "cli.h"
int cmd_trace(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_usage("trace: not built yet");
}
