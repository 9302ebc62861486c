/* sagerun show: renders a JSON report (ours or the seed's) as the comparison table. */
#include <getopt.h>

#include "cli.h"
#include "sagerun/compare.h"
#include "sweep.h"

static void show_usage(FILE *out)
{
    fprintf(out, "usage: sagerun show [--markdown] REPORT.json | SUMMARY.json\n\n"
                 "Renders a comparison report, ours or one in the seed's format, as the table\n"
                 "'sagerun compare' prints; a sweep's summary.json as the table 'sagerun sweep'\n"
                 "prints.\n\n"
                 "  --markdown   print markdown instead\n\n"
                 "exit status: 0 success, 1 unreadable or malformed report, 2 usage\n");
}

int sr_cmd_show(int argc, char **argv)
{
    static const struct option opts[] = {
        {"markdown", no_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int markdown = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'm': markdown = 1; break;
        case 'h': show_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("show", c, argv, opts);
        }
    }
    if (argc - optind != 1) {
        sr_cli_error("show: expected one report file (see 'sagerun show --help')");
        return SR_EXIT_USAGE;
    }
    sagerun_error err = {0};
    FILE *out = sr_cli_escaping_stream(stdout);
    json_t *summary = sr_sweep_summary_load(argv[optind], &err);
    sagerun_status st = err.status;
    if (summary) /* a sweep: its summary table */
        sr_sweep_summary_print(summary, out, markdown);
    else if (st == SAGERUN_OK)
        st = sagerun_report_show(argv[optind], markdown, out, &err);
    json_decref(summary);
    sr_cli_escaping_close(out, stdout); /* a write error: main's close of stdout says so */
    if (st != SAGERUN_OK) {
        sr_cli_error("show: %s", err.message);
        return SR_EXIT_ERROR;
    }
    return SR_EXIT_OK;
}
