/* sagerun compare: the A/B harness. Runs the comparison engine (compare.h) on one workload, prints
 * the table, writes the JSON / markdown reports, and says by its exit code whether everything ran
 * and was byte-exact. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "compare_options.h"
#include "repeat.h"
#include "isolate.h"

static void compare_usage(FILE *out)
{
    fprintf(out,
            "usage: sagerun compare [--baseline NAME] [--variant NAME]... [workload] [options]\n"
            "\n"
            "A/B comparison: the baseline and each variant are created and prepared (prepare is\n"
            "timed apart), warmed up, checked (output poisoned, one untimed call), timed in\n"
            "rounds, then checked again; both checked outputs are hashed: byte-exact = both equal\n"
            "the reference hash (the baseline's, or --expect-sha256). Accuracy is measured against\n"
            "exact attention over sampled rows. Each sample is timed by device events with the\n"
            "stream held while the calls are queued, so the host's launch cost is not timed (host\n"
            "backend: a monotonic clock around the calls). The speedup is the paired\n"
            "estimate: per round the log-ratio of the two p50s, its 20%%-trimmed mean and 95%%\n"
            "interval, which also holds the spread between each variant's instances\n"
            "(--instances, 6: the rounds go to each in turn); the verdict comes from that\n"
            "interval: faster / slower beyond the threshold, same (holds 0), differs below the\n"
            "threshold, or ambiguous. With several variants a warning gives the chance that one\n"
            "reads other than same by luck alone (each interval is at 95%%).\n"
            "\n"
            SR_CLI_COMPARE_VARIANTS_HELP
            SR_CLI_WORKLOAD_HELP
            SR_CLI_COMPARE_SCHEDULE_HELP
            "  The notes under the table give each variant's host time to queue one timed call\n"
            "  (not in its timing: a C plugin's launch cost, a Python variant's interpreter\n"
            "  overhead) beside the launch floor (an empty kernel's).\n"
            "checks:\n"
            "  --expect-sha256 HEX    pin the reference output hash instead of the baseline's\n"
            SR_CLI_COMPARE_CHECKS_HELP
            SR_CLI_TOLERANCE_HELP
            "reports:\n"
            "  --fail-if-slower[=PCT] exit 5 when a variant is slower than the baseline by\n"
            "                         more than PCT (its whole interval; default: the noise\n"
            "                         threshold), after the table and reports (a CI gate)\n"
            "  --require-faster PCT   exit 5 unless every variant is faster than the baseline\n"
            "                         by at least PCT (its whole interval above it)\n"
            "  --json FILE            write the JSON report (the seed's schema + extensions)\n"
            "  --markdown FILE        write a markdown report\n"
            "  --csv FILE             write the table as CSV: one row per variant, times in\n"
            "                         seconds, percentages in percent points\n"            "  A FILE of - is stdout, and the table then goes to stderr (--json - | jq ...)\n"
            "  --quiet                no progress line on stderr (shown only on a terminal)\n"
            SR_CLI_REPEAT_HELP
            "                         (--json FILE: the runs' reports FILE-stem.rK.ext, and\n"
            "                         FILE the index of them, which diff reads;\n"
            "                         --markdown/--csv likewise per run; exit: the first\n"
            "                         nonzero status of the runs, each failed one named)\n"
            SR_CLI_COMPARE_DEVICE_HELP
            "fault containment:\n"
            "  The measurement runs in a child process. A variant that crashes (signal, abort,\n"
            "  sanitizer report), hangs, or faults on the GPU (which poisons the CUDA context)\n"
            "  is reported failed with its phase and reason, and the comparison runs again\n"
            "  without it: the other variants keep their results.\n"
            SR_CLI_COMPARE_TIMEOUT_HELP
            "  --in-process           measure in this process: no containment and no watchdog\n"
            "                         (for debuggers and compute-sanitizer)\n"
            "  SIGINT/SIGTERM/SIGHUP stop the comparison at the next call: the reports are written with\n"
            "  the rounds finished so far, marked \"complete\": false. A second signal a second or\n"
            "  more after the first ends the measurement at once, without a report; two within a\n"
            "  second are one request.\n"
            "\n"
            "the table's columns:\n"
            "  p50         median time of one call (all timed samples)\n"
            "  spread      -(p50-min)/p50 and +(p90-p50)/p50 in percent: how far the fastest\n"
            "              call and the 90th percentile lie from the median\n"
            "  TOPS        operations (4*Hq*D per (query, key) pair attended: 4*B*Hq*N*K*D\n"
            "              for full attention; causal (N*(N+1)/2 pairs for N = K), window and\n"
            "              varlen counted pair by pair) / p50, in 10^12 per second\n"
            "  speedup     the paired estimate, percent (baseline / variant - 1: + = faster\n"
            "              than the baseline), the factor it means (\"1.25\u00d7 faster\",\n"
            "              \"10.06\u00d7 slower\") and its 95%% interval; without an interval,\n"
            "              the p50 ratio - 1, labelled \"p50 ratio\" (CSV: speedup_source,\n"
            "              speedup_times = baseline / variant)\n"
            "  verdict     faster / slower: the whole interval beyond the noise threshold;\n"
            "              same: it holds 0 and lies within it; differs, below: it excludes 0\n"
            "              but lies within it; ambiguous: otherwise (it straddles the\n"
            "              threshold, or there is no interval), and where one side has a\n"
            "              slow mode of its own (many more slow outliers than the other's,\n"
            "              beyond chance by Fisher's exact test, which the medians leave out)\n"
            "              whose verdict the ratio of the means (its interval) does not\n"
            "              give too: a warning says so, with its mean; and where the\n"
            "              speedup drifted across the threshold during the run (its first and\n"
            "              last third of rounds tell different verdicts)\n"
            "  byte-exact  yes: both checked outputs hash to the reference hash; NO (N el.):\n"
            "              N elements differ from the baseline; NO (nondet.): two calls differ;\n"
            "              \", tol. ok\" / \", tol. FAIL\": judged by the tolerance options\n"
            "  accuracy    against exact attention over the sampled rows: cosine similarity\n"
            "              and relative L1 error (sum |o - ref| / sum |ref|)\n"
            "The JSON report's fields: schema/report.schema.json in the source tree.\n"
            "\n"
            "exit status:\n"
            "  0  every variant ran and is byte-exact with the reference, or within its\n"
            "     tolerance (--max-ulp, --min-cos, --max-rel-l1)\n"
            "  1  error: bad input, plugin, device, I/O, or a variant failed to run\n"
            "     (crashed, hung, returned an error)\n"
            "  2  usage error\n"
            "  3  every variant ran, but some variant's output is not byte-exact\n"
            "     (differs from the reference, or is not deterministic) and not within\n"
            "     its tolerance\n"
            "  5  every variant ran and is accepted, but a gate is not met:\n"
            "     --fail-if-slower[=PCT] (a variant's whole interval slower than -PCT; PCT\n"
            "     defaults to --noise-threshold) or --require-faster PCT (a variant's\n"
            "     interval not wholly above +PCT, or no interval); each is named on stderr\n"
            "  130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP)  interrupted: the reports hold the\n"
            "     rounds finished\n");
}

/* The progress line: only on a terminal, overwritten in place, erased at the end. */
typedef struct progress_state {
    bool shown;
    double t_first_round; /* when round 1 was reported (for the ETA) */
} progress_state;

static void show_progress(void *user, const char *phase, const char *variant, uint32_t step,
                          uint32_t steps)
{
    progress_state *ps = user;
    if (strcmp(phase, "round") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double now = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
        if (step <= 1 || ps->t_first_round == 0)
            ps->t_first_round = now;
        double per = step > 1 ? (now - ps->t_first_round) / (step - 1) : 0;
        fprintf(stderr, "\r\033[Ksagerun compare: round %u of about %u, ETA %.0f s", step,
                steps, per * (steps > step ? steps - step : 0));
    }
    else
        fprintf(stderr, "\r\033[Ksagerun compare: %s %s", phase, variant ? variant : "");
    fflush(stderr);
    ps->shown = true;
}

/* The report files asked for (- is stdout); false after saying which failed. */
static bool write_reports(const sagerun_compare_result *r, const char *json_path,
                          const char *md_path, const char *csv_path)
{
    sagerun_error err = {0};
    bool written = true;
    if (json_path && sagerun_compare_result_write_json(r, json_path, NULL, &err) != SAGERUN_OK) {
        sr_cli_error("compare: --json: %s", err.message);
        written = false;
    }
    if (md_path && sagerun_compare_result_write_markdown(r, md_path, &err) != SAGERUN_OK) {
        sr_cli_error("compare: --markdown: %s", err.message);
        written = false;
    }
    if (csv_path && sagerun_compare_result_write_csv(r, csv_path, &err) != SAGERUN_OK) {
        sr_cli_error("compare: --csv: %s", err.message);
        written = false;
    }
    return written;
}

/* What compare's command line says. */
typedef struct compare_cmd {
    sr_cli_compare_settings set;
    sr_cli_workload_options wo;
    const char *json_path, *md_path, *csv_path;
    /* gates: a variant slower than the baseline beyond slower_pct (its whole interval), or not
     * faster by faster_pct (its whole interval); NaN: not asked. slower_pct < 0: the noise
     * threshold */
    double slower_pct, faster_pct;
    bool quiet;
    bool in_process;
    /* the isolated child's side (isolate.h): the pipe, the report, the entries to leave out */
    int child_fd;              /* -1 unless --isolated-child passed the checks */
    const char *child_fd_text; /* --isolated-child as given */
    const char *child_report;
    char **skips;
    size_t n_skips;
} compare_cmd;

/* The exit code of a stop signal, as shells report it. */
static int signal_exit_code(int sig)
{
    return sig == SIGTERM ? SR_EXIT_SIGTERM : sig == SIGINT ? SR_EXIT_SIGINT : 128 + sig;
}

/* Whether every variant passes the gates (--fail-if-slower, --require-faster): each that does not
 * is said with its interval. A variant without an interval is not slower beyond anything, and
 * not faster by anything. */
static bool gates_pass(const compare_cmd *c, const sagerun_compare_result *r)
{
    double slower = c->slower_pct < 0 ? c->set.opts.noise_threshold_percent : c->slower_pct;
    bool pass = true;
    for (size_t i = 0; i < sagerun_compare_result_variant_count(r); i++) {
        sagerun_compare_variant v = {.struct_size = sizeof v};
        if (sagerun_compare_result_variant(r, i, &v, NULL) != SAGERUN_OK || v.is_baseline)
            continue;
        char *label = sagerun_text_escape(v.label, 0), times[48];
        sr_cli_speedup_times(v.speedup_estimate_percent, times, sizeof times);
        if (!isnan(c->slower_pct) && v.speedup_high_percent < -slower) {
            sr_cli_error("compare: gate --fail-if-slower=%g: %s is slower than the baseline: "
                         "%+.2f%% (%s) [%+.2f, %+.2f]", slower, label ? label : "?",
                         v.speedup_estimate_percent, times, v.speedup_low_percent,
                         v.speedup_high_percent);
            pass = false;
        }
        if (!isnan(c->faster_pct) && !(v.speedup_low_percent >= c->faster_pct)) {
            sr_cli_error("compare: gate --require-faster %g: %s is not shown faster by %g%%: "
                         "%+.2f%% (%s) [%+.2f, %+.2f]", c->faster_pct, label ? label : "?",
                         c->faster_pct, v.speedup_estimate_percent, times,
                         v.speedup_low_percent, v.speedup_high_percent);
            pass = false;
        }
        free(label);
    }
    return pass;
}

/* The end of a comparison, in the parent or in-process: the tolerance judged, the table
 * (control characters of plugins' failure reasons escaped), the report files, the exit code.
 * sig: the stop signal seen (0: none), whose exit code it is when the reports are written (they
 * hold the rounds finished); a report that could not be written is an error either way. */
static int finish_report(const compare_cmd *c, sagerun_compare_result *r, int sig)
{
    sagerun_compare_result_apply_tolerance(r, c->set.tolerance);
    const char *const outs[] = {c->json_path, c->md_path, c->csv_path};
    FILE *table = sr_cli_table_out(outs, 3);
    FILE *out = sr_cli_escaping_stream(table);
    sagerun_compare_result_print(r, out);
    sr_cli_escaping_close(out, table);
    fflush(table);
    bool written = write_reports(r, c->json_path, c->md_path, c->csv_path);
    if (!written)
        return SR_EXIT_ERROR;
    if (sig)
        return signal_exit_code(sig);
    if (!sagerun_compare_result_complete(r) || !sagerun_compare_result_all_ran(r))
        return SR_EXIT_ERROR;
    if (!sagerun_compare_result_all_accepted(r))
        return SR_EXIT_NOT_BYTE_EXACT;
    return gates_pass(c, r) ? SR_EXIT_OK : SR_EXIT_GATE;
}


/* Whether every variant named runs on the host: the baseline too where it is named (NULL: not
 * named, the backend's default follows). */
static bool variants_all_on_host(sagerun_registry *reg, const char *baseline,
                                 const char *const *names, size_t n)
{
    for (size_t i = 0; i <= n; i++) {
        const char *name = i == n ? baseline : names[i];
        if (!name)
            continue;
        long idx = sagerun_registry_find(reg, name);
        sagerun_variant_info vi = {.struct_size = sizeof vi};
        if (idx < 0 || sagerun_registry_variant_info(reg, (size_t)idx, &vi, NULL) != SAGERUN_OK ||
            vi.backend != SAGERUN_BACKEND_HOST)
            return false;
    }
    return true;
}

/* On the host backend, a CUDA variant named (or a named baseline) is refused before anything
 * runs: it failed at its create only after the others had been measured. */
static sagerun_status named_on_host(sagerun_registry *reg, const char *baseline,
                                    const char *const *names, size_t n, sagerun_error *err)
{
    for (size_t i = 0; i <= n; i++) {
        const char *name = i == n ? baseline : names[i];
        long idx = name ? sagerun_registry_find(reg, name) : -1;
        sagerun_variant_info vi = {.struct_size = sizeof vi};
        if (idx < 0 || sagerun_registry_variant_info(reg, (size_t)idx, &vi, NULL) != SAGERUN_OK ||
            vi.backend == SAGERUN_BACKEND_HOST)
            continue;
        char *shown = sagerun_text_escape(name, 0);
        snprintf(err->message, sizeof err->message,
                 "variant %s needs a CUDA device: it runs on the %s backend, this comparison on "
                 "the host (no GPU here, or --backend host); nothing was measured",
                 shown ? shown : "?", sagerun_backend_name(vi.backend));
        free(shown);
        return err->status = SAGERUN_UNSUPPORTED;
    }
    return SAGERUN_OK;
}

/* The context and registry to measure in, the variant specs bound, and the baseline for the
 * backend: host-only variants named on a GPU machine with --backend auto run on the host (*host
 * is that context; a baseline not named does not count: `--variant reference-mt` alone ran it
 * against the GPU's 'baseline' and failed it at create), and on the host the baseline is
 * 'reference' unless named. */
static sagerun_status open_backend(const compare_cmd *c, sagerun_compare_options *opts,
                                   sagerun_context **ctx, sagerun_context **host,
                                   sagerun_registry **reg, sagerun_error *err)
{
    const sr_cli_compare_settings *s = &c->set;
    sagerun_status st;
    if ((st = sr_cli_context(s->backend, (int)s->device, c->quiet, ctx, err)) != SAGERUN_OK ||
        (st = sr_cli_registry(*ctx, s->plugins, s->n_plugins, &s->policy, reg, err)) !=
            SAGERUN_OK ||
        (st = sr_cli_bind_specs(*reg, &opts->baseline, 1, err)) != SAGERUN_OK ||
        (st = sr_cli_bind_specs(*reg, s->variants, s->n_variants, err)) != SAGERUN_OK)
        return st;
    if (strcmp(s->backend, "auto") == 0 && s->n_variants &&
        sagerun_context_backend(*ctx) == SAGERUN_BACKEND_CUDA &&
        variants_all_on_host(*reg, sr_cli_compare_given(s, SR_OPT_BASELINE) ? opts->baseline : NULL,
                             s->variants, s->n_variants)) {
        if ((st = sagerun_context_create(SAGERUN_BACKEND_HOST, 0, host, err)) != SAGERUN_OK)
            return st;
        if (!c->quiet)
            fprintf(stderr, "sagerun: every variant named runs on the host: host backend\n");
    }
    bool on_host = sagerun_context_backend(*host ? *host : *ctx) == SAGERUN_BACKEND_HOST;
    if (on_host && (st = named_on_host(*reg, sr_cli_compare_given(s, SR_OPT_BASELINE)
                                                 ? opts->baseline : NULL,
                                       s->variants, s->n_variants, err)) != SAGERUN_OK)
        return st;
    if (on_host && !sr_cli_compare_given(s, SR_OPT_BASELINE)) {
        /* No GPU: the host pair, the single-threaded oracle against its multi-threaded twin. */
        opts->baseline = "reference";
        if (!c->quiet)
            fprintf(stderr, "sagerun: host backend: baseline 'reference' (CUDA variants need a "
                            "GPU)\n");
    }
    return SAGERUN_OK;
}

/* The measurement, in the child or in-process: one comparison on the workload (the library
 * checks the device memory it needs before allocating anything). Errors are printed; false then. */
static bool measure(const compare_cmd *c, sagerun_compare_options *opts,
                    sagerun_compare_result **res)
{
    sagerun_context *ctx = NULL, *host = NULL;
    sagerun_registry *reg = NULL;
    sagerun_workload *w = NULL;
    sagerun_error err = {0};
    bool ok = false;
    sr_cli_workload_options wo = c->wo;
    if (open_backend(c, opts, &ctx, &host, &reg, &err) != SAGERUN_OK) {
        sr_cli_error("%s", err.message);
        goto out;
    }
    const char *const out_opts[] = {"--json", "--markdown", "--csv"},
                      *const outs[] = {c->json_path, c->md_path, c->csv_path};
    if (!sr_cli_check_outputs_spare_plugins("compare", out_opts, outs, 3, reg))
        goto out;
    sagerun_context *run_ctx = host ? host : ctx;
    wo.on_host = sagerun_context_backend(run_ctx) == SAGERUN_BACKEND_HOST;
    wo.quiet = c->quiet;
    ok = sr_cli_workload(&wo, &w, &err) == SAGERUN_OK &&
         sagerun_compare_run_workload(reg, run_ctx, w, opts, res, &err) == SAGERUN_OK;
    if (!ok)
        sr_cli_error("compare: %s", err.message);
out:
    sagerun_workload_destroy(w);
    sagerun_registry_destroy(reg);
    sagerun_context_destroy(host);
    sagerun_context_destroy(ctx);
    return ok;
}

/* The parent: the measurement runs in child processes (isolate.c), which survive a variant's
 * crash or hang; the parent prints and writes the report of the child that finished. */
static int compare_parent(const compare_cmd *c, int argc, char **argv)
{
    sr_isolate_options io = {.argc = argc, .argv = argv, .timeout_s = c->set.timeout_s,
                             .quiet = c->quiet,
                             .show_progress = !c->quiet && isatty(STDERR_FILENO)};
    sagerun_compare_result *report = NULL;
    int sig = 0;
    int rc = sr_isolate_run(&io, &report, &sig);
    if (rc == SR_EXIT_OK)
        rc = finish_report(c, report, sig);
    else if (sig)
        rc = signal_exit_code(sig);
    sagerun_compare_result_destroy(report);
    return rc;
}

/* The isolated child: measures with every call into a variant announced to the parent through
 * the pipe, and writes the report where the parent reads it. */
static int compare_child(const compare_cmd *c)
{
    size_t n = c->n_skips ? c->n_skips : 1;
    const char **labels = calloc(n, sizeof(*labels)), **phases = calloc(n, sizeof(*phases)),
               **reasons = calloc(n, sizeof(*reasons));
    sagerun_compare_options opts = c->set.opts;
    sagerun_compare_hooks hooks;
    sagerun_compare_result *res = NULL;
    sagerun_error err = {0};
    int rc = SR_EXIT_ERROR;
    if (!labels || !phases || !reasons) {
        sr_cli_error("compare: out of memory");
        goto out;
    }
    memset(&hooks, 0, sizeof hooks);
    sr_isolate_child_setup(c->child_fd, &opts, &hooks, c->skips, c->n_skips, labels, phases,
                           reasons);
    if (!measure(c, &opts, &res))
        goto out;
    sr_isolate_child_before_report();
    if (sagerun_compare_result_write_json(res, c->child_report, NULL, &err) != SAGERUN_OK) {
        sr_cli_error("compare: %s", err.message);
    } else {
        rc = SR_EXIT_OK;
        sr_isolate_child_report_written();
    }
out:
    sagerun_compare_result_destroy(res);
    free(labels);
    free(phases);
    free(reasons);
    return rc;
}

/* --in-process: no containment and no watchdog (for debuggers and compute-sanitizer); SIGINT and
 * SIGTERM still end with a report of the rounds finished. */
static int compare_in_process(const compare_cmd *c)
{
    sagerun_compare_options opts = c->set.opts;
    sagerun_compare_hooks hooks;
    memset(&hooks, 0, sizeof hooks);
    sr_stop_signals_install();
    hooks.struct_size = sizeof hooks;
    hooks.interrupted = sr_stop_interrupted;
    opts.hooks = &hooks;
    progress_state ps = {0};
    if (!c->quiet && isatty(STDERR_FILENO)) {
        opts.progress = show_progress;
        opts.progress_user = &ps;
    }
    sagerun_compare_result *res = NULL;
    bool measured = measure(c, &opts, &res);
    if (ps.shown)
        fprintf(stderr, "\r\033[K");
    if (!measured)
        return SR_EXIT_ERROR;
    int rc = finish_report(c, res, sr_stop_signal());
    sagerun_compare_result_destroy(res);
    return rc;
}

/* The command line's values, checked one by one; -1 when they are good, else the exit code. */
static int parse_options(compare_cmd *c, int argc, char **argv)
{
    enum {
        O_EXPECT = 256, O_JSON, O_MARKDOWN, O_CSV, O_QUIET, O_IN_PROCESS, O_ISO_CHILD,
        O_ISO_REPORT, O_ISO_SKIP, O_FAIL_SLOWER, O_REQUIRE_FASTER
    };
    static const struct option longopts[] = {
        SR_CLI_COMPARE_OPTIONS,
        SR_CLI_WORKLOAD_OPTIONS,
        {"expect-sha256", required_argument, 0, O_EXPECT},
        {"json", required_argument, 0, O_JSON},
        {"markdown", required_argument, 0, O_MARKDOWN},
        {"csv", required_argument, 0, O_CSV},
        {"quiet", no_argument, 0, O_QUIET},
        {"in-process", no_argument, 0, O_IN_PROCESS},
        {"fail-if-slower", optional_argument, 0, O_FAIL_SLOWER},
        {"require-faster", required_argument, 0, O_REQUIRE_FASTER},
        {SR_ISOLATE_OPT_CHILD, required_argument, 0, O_ISO_CHILD},
        {SR_ISOLATE_OPT_REPORT, required_argument, 0, O_ISO_REPORT},
        {SR_ISOLATE_OPT_SKIP, required_argument, 0, O_ISO_SKIP},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_EXPECT: c->set.opts.expect_sha256 = optarg; break;
        case O_JSON: c->json_path = optarg; break;
        case O_MARKDOWN: c->md_path = optarg; break;
        case O_CSV: c->csv_path = optarg; break;
        case O_QUIET: c->quiet = true; break;
        case O_IN_PROCESS: c->in_process = true; break;
        case O_FAIL_SLOWER:
            c->slower_pct = -1; /* the noise threshold */
            if (optarg && !sr_cli_parse_decimal("compare", "--fail-if-slower", optarg, 0, true,
                                                1e6, &c->slower_pct))
                return SR_EXIT_USAGE;
            break;
        case O_REQUIRE_FASTER:
            if (!sr_cli_parse_decimal("compare", "--require-faster", optarg, -1e6, true, 1e6,
                                      &c->faster_pct))
                return SR_EXIT_USAGE;
            break;
        case O_ISO_CHILD: c->child_fd_text = optarg; break;
        case O_ISO_REPORT: c->child_report = optarg; break;
        case O_ISO_SKIP: c->skips[c->n_skips++] = optarg; break;
        case 'h': compare_usage(stdout); return SR_EXIT_OK;
        default: {
            int taken = sr_cli_compare_option("compare", &c->set, opt, optarg);
            if (!taken)
                taken = sr_cli_workload_option("compare", &c->wo, opt, optarg);
            if (taken < 0)
                return SR_EXIT_USAGE;
            if (!taken)
                return sr_cli_bad_option("compare", opt, argv, longopts);
        }
        }
    }
    if (optind < argc) {
        sr_cli_error("compare: unexpected argument '%s' (see 'sagerun compare --help')",
                     argv[optind]);
        return SR_EXIT_USAGE;
    }
    return -1;
}

/* What the options say together; -1 when they make sense, else the exit code. */
static int check_options(compare_cmd *c)
{
    const char *hex = c->set.opts.expect_sha256;
    if ((c->child_fd_text || c->child_report || c->n_skips) &&
        !sr_isolate_child_args_ok(c->child_fd_text, c->child_report, &c->child_fd))
        return SR_EXIT_USAGE;
    if (!sr_cli_compare_settings_finish("compare", &c->set))
        return SR_EXIT_USAGE;
    if (c->in_process && sr_cli_compare_given(&c->set, SR_OPT_TIMEOUT)) { /* as run says */
        sr_cli_error("compare: --timeout needs the watched child, which --in-process leaves out");
        return SR_EXIT_USAGE;
    }
    if (!sr_cli_workload_options_check("compare", &c->wo))
        return SR_EXIT_USAGE;
    if (hex && strlen(hex) != 64) {
        sr_cli_error("compare: --expect-sha256 '%s': expected 64 hex digits", hex);
        return SR_EXIT_USAGE;
    }
    for (const char *h = hex; h && *h; h++)
        if (!strchr("0123456789abcdefABCDEF", *h)) {
            sr_cli_error("compare: --expect-sha256: '%c' is not a hex digit", *h);
            return SR_EXIT_USAGE;
        }
    const char *const out_opts[] = {"--json", "--markdown", "--csv"},
                      *const outs[] = {c->json_path, c->md_path, c->csv_path};
    int rc = c->child_fd < 0 ? sr_cli_check_run_outputs("compare", out_opts, outs, 3, &c->wo,
                                                        c->set.plugins, c->set.n_plugins)
                             : SR_EXIT_OK;
    return rc != SR_EXIT_OK ? rc : -1;
}

int sr_cmd_compare(int argc, char **argv)
{
    unsigned repeat;
    if (!sr_cli_repeat_take("compare", &argc, argv, &repeat))
        return SR_EXIT_USAGE;
    if (repeat)
        return sr_cli_repeat_run("compare", argc, argv, repeat);
    compare_cmd c;
    memset(&c, 0, sizeof c);
    c.wo.seed = SAGERUN_WORKLOAD_DEFAULT_SEED;
    c.child_fd = -1;
    c.slower_pct = c.faster_pct = NAN; /* no gates */
    if (!sr_cli_compare_settings_init(&c.set, "compare", argc))
        return SR_EXIT_ERROR;
    int rc = SR_EXIT_ERROR;
    if (!(c.skips = calloc((size_t)argc + 1, sizeof(*c.skips))))
        sr_cli_error("compare: out of memory");
    else if ((rc = parse_options(&c, argc, argv)) < 0 && (rc = check_options(&c)) < 0)
        rc = c.child_fd >= 0 ? compare_child(&c)
           : c.in_process    ? compare_in_process(&c)
                             : compare_parent(&c, argc, argv);
    free(c.skips);
    sr_cli_compare_settings_free(&c.set);
    return rc;
}
