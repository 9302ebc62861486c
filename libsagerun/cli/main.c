/* sagerun: the command-line front end. Each command lives in cmd_<name>.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"compare", sr_cmd_compare, "A/B comparison of variants: byte-exactness, timing, verdict"},
    {"run", sr_cmd_run, "run one variant on a workload; print its time and output SHA-256"},
    {"list", sr_cmd_list, "list the variants found and the plugin files rejected, with reasons"},
    {"workload", sr_cmd_workload, "show the default workload or check a workload file"},
    {"show", sr_cmd_show, "render a report (ours or the seed's) as a table"},
    {"diff", sr_cmd_diff, "compare two reports; non-zero exit on a regression"},
    {"plot", sr_cmd_plot, "draw a report (SVG, PNG or PDF): calls by round, distribution, speedup"},
    {"sweep", sr_cmd_sweep, "compare on every workload of a sweep file (--shard I/N)"},
    {"merge", sr_cmd_merge, "combine the summaries of sweep shards into one"},
    {"profile", sr_cmd_profile, "one warmed call in an NVTX range, for ncu or nsys"},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < SR_ARRAY_LEN(commands); i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: sagerun [--version] [--help] <command> [<args>]\n\n"
                 "A/B testing of GPU attention kernels: is a variant's output bit-identical to\n"
                 "the baseline's, and is it really faster?\n\ncommands:\n");
    for (size_t i = 0; i < SR_ARRAY_LEN(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'sagerun help <command>' (or 'sagerun <command> --help') describes a command.\n\n"
            "exit codes:\n"
            "  0  success\n"
            "  1  error (bad input file, plugin, device, I/O)\n"
            "  2  usage error (bad command line)\n"
            "  3  compare: ran, but some variant is not byte-exact with the reference (nor\n"
            "     within its tolerance: --max-ulp, --min-cos, --max-rel-l1);\n"
            "     profile: the profiled call's output differs from the checked call's\n"
            "  4  diff: regression beyond the threshold, or byte-exactness lost\n"
            "  129, 130, 143  compare, run, sweep: stopped by SIGHUP, SIGINT, SIGTERM (what\n"
            "     was measured is written, marked incomplete)\n\n"
            "environment:\n"
            "  SAGERUN_PLUGIN_PATH  colon-separated folders searched for plugins (NAME.so) and\n"
            "                       Python variant files (NAME.py) before the default folder\n"
            "  SAGERUN_PYTHON       the Python interpreter Python variants run in (a path, or a\n"
            "                       name searched in PATH; default $VIRTUAL_ENV/bin/python3, else\n"
            "                       python3): its libpython and its packages (a venv's too)\n"
            "  SAGERUN_PYTHON_BRIDGE  the Python bridge's bridge.so (default: python/bridge.so\n"
            "                       in the plugins folder)\n"
            "  SAGERUN_DEBUG        when set, explain plugin decisions and plugin logs on stderr\n"
            "  SAGERUN_PLUGIN_SCAN_TIMEOUT  seconds a plugin file may take to load in the\n"
            "                       scanner process (default 10, at most 3600)\n"
            "  SAGERUN_CACHE_DIR    where the scanner's verdicts are cached (empty: nowhere;\n"
            "                       default $XDG_CACHE_HOME/sagerun or ~/.cache/sagerun)\n");
}

/* What a command printed may still sit in stdout's buffer: a write error (a full disk, a closed
 * pipe reader, /dev/full) shows only when it is flushed, and must not pass for success. */
static int close_stdout(int rc)
{
    /* a closed stdout (>&-) that nothing was written to is no error (EBADF with nothing pending,
     * as gnulib's close_stream): a command that printed nothing keeps its own exit code */
    bool pending = __fpending(stdout) > 0, failed = ferror(stdout) != 0;
    errno = 0;
    failed = (pending && fflush(stdout) != 0) || failed;
    int why = errno, closed = fclose(stdout);
    why = why ? why : errno;
    failed = failed || (closed != 0 && (pending || errno != EBADF));
    if (failed) {
        sr_cli_error("error writing to standard output: %s",
                     why ? strerror(why) : "a write failed (its reader gone, or a full disk?)");
        return SR_EXIT_ERROR;
    }
    return rc;
}

/* SAGERUN_PLUGIN_SCAN_TIMEOUT as the scanner reads it (plugin_scan.c), which takes a bad value
 * for the default: said here instead, before anything loads. */
static bool scan_timeout_ok(void)
{
    const char *env = getenv("SAGERUN_PLUGIN_SCAN_TIMEOUT");
    char *end;
    double t = env && *env ? strtod(env, &end) : 1;
    if (!env || !*env || (!*end && t > 0 && t <= 3600))
        return true;
    sr_cli_error("SAGERUN_PLUGIN_SCAN_TIMEOUT '%s': expected seconds, more than 0 and at most 3600",
                 env);
    return false;
}

int main(int argc, char **argv)
{
    /* A reader gone from stdout (`| head`) and a file size limit (ulimit -f) are write errors,
     * said and exit 1 after the report files are written, not signals that end the process before
     * them (SIGPIPE lost a whole measurement, SIGXFSZ left plot's temporary file behind). */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return SR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    opterr = 0; /* each command says what is wrong in one line (sr_cli_bad_option) */
    if (strcmp(cmd, "help") == 0 && argc >= 3) {
        /* sagerun help CMD: what CMD --help prints */
        const struct command *c = find_command(argv[2]);
        if (!c) {
            sr_cli_error("help: unknown command '%s' (see 'sagerun --help')", argv[2]);
            return SR_EXIT_USAGE;
        }
        char *help_argv[] = {argv[2], "--help", NULL};
        return close_stdout(c->run(2, help_argv));
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return close_stdout(SR_EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
#ifdef SAGERUN_NO_CUDA
        const char *cuda = ", built without CUDA: host backend only";
#else
        const char *cuda = "";
#endif
        printf("sagerun %s (library %s, plugin ABI %d.%d, commit %s%s)\n", SAGERUN_VERSION_STRING,
               sagerun_version_string(), SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR,
               SAGERUN_GIT_COMMIT, cuda);
        return close_stdout(SR_EXIT_OK);
    }
    const struct command *c = find_command(cmd);
    if (c && !scan_timeout_ok())
        return SR_EXIT_USAGE;
    if (c)
        return close_stdout(c->run(argc - 1, argv + 1));
    sr_cli_error("unknown command '%s' (see 'sagerun --help')", cmd);
    return SR_EXIT_USAGE;
}
