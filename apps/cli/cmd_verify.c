/* numoracle verify: the pre-commit bundle verifier (RFC 0011 "Data Integrity"): the nine
 * checks over a golden data root, one finding per line naming the file and tensor uid:
 *   1 tensor sizes against dims/strides/data_type (bound tensors included),
 *   2/3 NaN/Inf in expected outputs, 4 tier folders, 5 stray non-graph .json files,
 *   6 template-sweep rules, 7 missing .bin files, 8 forward_source of backward bundles,
 *   9 the payload budget (warn above 2 MB per case, fail above 800 MB in total);
 * plus required .meta.json fields, format_version, test-name collisions, certified bounds
 * that do not hold the expected value, and files that resolve outside their bundle.
 * Exit 0 when there is no error (warnings allowed), 1 with errors, 2 on usage errors. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nmo_internal.h"
#include "numoracle/bundle.h"

static void print_diag(void *ctx, nmo_diag_level l, const char *msg)
{
    (void)ctx;
    /* the SKIP line run and calibrate print for the same case */
    if (l == NMO_DIAG_SKIP) printf("SKIP %s\n", msg);
    else printf("%s: %s\n", l == NMO_DIAG_ERROR ? "error" : "warning", msg);
}

/* Take the one positional argument (DIR) out of argv, leaving options for cli_parse. */
static int take_positional(cli_cmd *cmd, int *argc, char **argv, const char **pos)
{
    *pos = NULL;
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) == 0 && a[2]) {
            argv[out++] = argv[i];
            const char *nm = a + 2;
            if (strchr(nm, '=')) continue;
            for (int k = 0; k < cmd->nopts; k++)
                if (strcmp(cmd->opts[k].name, nm) == 0 && cmd->opts[k].metavar && i + 1 < *argc) {
                    argv[out++] = argv[++i];
                    break;
                }
            continue;
        }
        if (a[0] == '-' || *pos) {
            argv[out++] = argv[i]; /* let cli_parse report it */
            continue;
        }
        *pos = a;
    }
    *argc = out;
    return 0;
}

static int parse_mb(int64_t *out, const char *s, const char *opt)
{
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s) return 0;
    if (!*s || *end || !(v > 0) || v > 1e9)
        return cli_error("bad --%s '%s': expected a positive number of megabytes", opt, s);
    *out = (int64_t)(v * 1024 * 1024);
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    cli_opt opts[] = {
        {"case-warn-mb", "MB", 0, 0, "warn when one case's tensors exceed MB (default 2)", NULL, {0}, 0},
        {"total-fail-mb", "MB", 0, 0, "fail when all tensors together exceed MB (default 800)", NULL, {0}, 0},
        {"strict", NULL, 0, 0, "exit 1 when a case is skipped (an unsupported operation)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "verify",
        .summary = "Verify a golden data tree before commit (RFC 0011 data integrity checks):\n"
                   "tensor sizes, NaN/Inf in goldens, tier folders, stray .json, template sweeps,\n"
                   "missing .bin files, forward_source of backward bundles, payload budgets,\n"
                   "metadata fields, certified bounds. DIR defaults to $HIPDNN_TEST_GOLDEN_DATA_DIR, $NUMORACLE_GOLDEN_DATA_DIR,\n"
                   "else ./bundles. A case of an unsupported operation is a SKIP line, as in run.\n"
                   "Exit 0 clean (warnings and skips allowed; --strict: no skips), 1 errors, 2 usage errors.",
        .usage = "verify [DIR] [options]",
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    const char *dir;
    take_positional(&cmd, &argc, argv, &dir);
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    nmo_verify_opts vo = {0, 0};
    if ((rc = parse_mb(&vo.case_warn_bytes, cli_val(&cmd, "case-warn-mb"), "case-warn-mb"))) return rc;
    if ((rc = parse_mb(&vo.total_fail_bytes, cli_val(&cmd, "total-fail-mb"), "total-fail-mb"))) return rc;
    if (!dir) dir = cli_env2("HIPDNN_TEST_GOLDEN_DATA_DIR", "NUMORACLE_GOLDEN_DATA_DIR", NULL);
    if (!dir || !*dir) dir = "bundles";
    if (!nmo__is_dir(dir)) return cli_error("golden data dir '%s' does not exist", dir);
    nmo_verify_summary s;
    nmo_verify_tree(&s, dir, &vo, print_diag, NULL);
    double tot = (double)s.payload / (1024.0 * 1024.0), big = (double)s.largest / (1024.0 * 1024.0);
    double budget = (double)(vo.total_fail_bytes ? vo.total_fail_bytes : 800LL * 1024 * 1024) / (1024.0 * 1024.0);
    printf("verify: %s: %d single-graph bundles, %d sweeps, %d cases; tensor payload %.2f MB of %.0f MB", dir,
           s.bundles, s.sweeps, s.cases, tot, budget);
    if (s.largest_name[0]) printf(" (largest case %.2f MB: %s)", big, s.largest_name);
    printf("; %d error%s, %d warning%s", s.errors, s.errors == 1 ? "" : "s", s.warnings, s.warnings == 1 ? "" : "s");
    if (s.skipped) printf(", %d skipped", s.skipped);
    printf("\n");
    return s.errors || (s.skipped && cli_val(&cmd, "strict")) ? 1 : 0;
}
