/* sagerun diff: compares two reports of the same workload; a non-zero exit on a regression. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

#include "cli.h"
#include "sagerun/compare.h"

static void diff_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun diff [--threshold PCT] OLD.json NEW.json\n\n"
            "Compares two reports of the same workload (same q_shape and metadata), variant by\n"
            "variant (matched by label, the name in the seed's format): p50 change, byte-exactness\n"
            "and output hash changes.\n\n"
            "  --threshold PCT   a p50 more than PCT percent slower is a regression (default 2)\n\n"
            "exit status:\n"
            "  0  no regression\n"
            "  1  error: unreadable or malformed report, or not the same workload\n"
            "  2  usage error\n"
            "  4  regression: a variant slower beyond the threshold, one that no longer runs or\n"
            "     is missing, or one that lost byte-exactness\n");
}

int sr_cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {
        {"threshold", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    sagerun_report_diff_options o;
    sagerun_report_diff_options_init(&o);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (!sr_cli_parse_decimal("diff", "--threshold", optarg, 0, true, 1e6,
                                      &o.threshold_percent))
                return SR_EXIT_USAGE;
            break;
        case 'h': diff_usage(stdout); return SR_EXIT_OK;
        default: return sr_cli_bad_option("diff", c, argv);
        }
    }
    if (argc - optind != 2) {
        sr_cli_error("diff: expected two report files (see 'sagerun diff --help')");
        return SR_EXIT_USAGE;
    }
    sagerun_error err = {0};
    unsigned findings = 0;
    FILE *out = sr_cli_escaping_stream(stdout);
    sagerun_status st = sagerun_report_diff(argv[optind], argv[optind + 1], &o, out, &findings,
                                            &err);
    sr_cli_escaping_close(out, stdout);
    if (st != SAGERUN_OK) {
        sr_cli_error("diff: %s", err.message);
        return SR_EXIT_ERROR;
    }
    return findings ? SR_EXIT_REGRESSION : SR_EXIT_OK;
}
