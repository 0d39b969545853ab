/* cmd_calibrate.c — placeholder, being written. */
#include "cli.h"
int cmd_calibrate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_usage("calibrate: not built yet");
}
