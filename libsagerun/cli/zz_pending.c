#include "cli.h"
int sr_cmd_compare(int argc, char **argv) { (void)argc;(void)argv; return 1; }
int sr_cmd_show(int argc, char **argv) { (void)argc;(void)argv; return 1; }
int sr_cmd_diff(int argc, char **argv) { (void)argc;(void)argv; return 1; }
int sr_cmd_workload(int argc, char **argv) { (void)argc;(void)argv; return 1; }
