/* numoracle CLI: helpers shared by the verbs (implemented in main.c).
 *
 * Conventions (pinned by tests/cli/cases):
 *  - an error is exactly one line on stderr, "numoracle: error: <message>", exit code 2;
 *  - options are "--name VALUE" or "--name=VALUE"; repeatable options accumulate; any
 *    other option given twice keeps the last value; "-h"/"--help" print the verb's usage
 *    (every option) to stdout and exit 0;
 *  - files are written only after the work succeeded, each through a temporary file in
 *    the same directory renamed over the target, all renames after all writes. */
#ifndef NMO_CLI_H
#define NMO_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "numoracle/numoracle.h"

#define CLI_EXIT_USAGE 2
#define CLI_MAX_REPEAT 64

/* Print "numoracle: error: <msg>" and return CLI_EXIT_USAGE. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- option tables ---------------------------------------------------------------- */

typedef struct {
    const char *name;     /* without the dashes: "op" */
    const char *metavar;  /* "OP"; NULL: a flag that takes no value */
    int required;
    int repeat;           /* may be given several times */
    const char *help;
    /* results */
    const char *val;      /* last value (flags: "1" when given) */
    const char *vals[CLI_MAX_REPEAT];
    int nvals;
} cli_opt;

typedef struct {
    const char *verb;     /* "check" */
    const char *summary;  /* one line */
    const char *usage;    /* the synopsis after "numoracle " */
    const char *epilog;   /* optional free text printed after the options */
    cli_opt *opts;
    int nopts;
    /* Optional: plan text laid over the dtype's default before --plan (a kernel's
     * declared plan). Each text is parsed on its own: --plan overrides it field by
     * field, and a field repeated inside either text is an error. */
    const char *base_plan;
    /* Optional: the reduction geometry a kernel declares for the built case (plugin ABI
     * 2's geometry callback): 1 with plan text laid over base_plan, under --plan. */
    int (*geometry)(void *ctx, const nmo_case *c, char *text, size_t len);
    void *geometry_ctx;
} cli_cmd;

/* Parse argv[1..argc-1] (argv[0] is the verb). Returns 0 on success, -1 when help was
 * printed (caller exits 0), CLI_EXIT_USAGE after printing an error (unknown option,
 * missing value, unexpected argument, missing required option). */
int cli_parse(cli_cmd *cmd, int argc, char **argv);
void cli_print_help(const cli_cmd *cmd);
cli_opt *cli_get(cli_cmd *cmd, const char *name);
const char *cli_val(cli_cmd *cmd, const char *name); /* NULL when not given */
/* The spelling the command line used for option `name`: name itself or its former
 * spelling (cli_parse accepts --engine for --enclosure, main.c "aliases"). */
const char *cli_given(const cli_opt *o);

/* ---- the common problem description (check and bounds) -------------------------- */

typedef struct {
    const nmo_op *op;
    nmo_fmt dtype;
    nmo_plan plan;
    nmo_family family;
    uint64_t seed;
    nmo_case c;
    int have_case;
    const char *input_path[NMO_MAX_TENSORS]; /* NULL: not read from a file */
    int input_dt[NMO_MAX_TENSORS];           /* storage type of that file (--input-dtype) */
    char src[NMO_MAX_TENSORS][1100];         /* where each input came from (c.in_src) */
} cli_problem;

/* The options that describe a problem (check and bounds share them). */
#define CLI_PROBLEM_OPTS                                                                   \
    {"op", "OP", 1, 0, "operator (see numoracle ops)", NULL, {0}, 0},                      \
    {"dtype", "DT", 1, 0, "storage dtype; selects the default plan", NULL, {0}, 0},       \
    {"shape", "SHAPE", 1, 0, "problem shape, e.g. 64x4097 (matmul: MxNxK)", NULL, {0}, 0}, \
    {"family", "F", 0, 0, "input family of generated inputs (default gaussian)", NULL,     \
     {0}, 0},                                                                              \
    {"seed", "S", 0, 0, "seed of generated inputs (default 0)", NULL, {0}, 0},             \
    {"plan", "TEXT", 0, 0, "plan fields over the dtype's default: 'key=value ...'", NULL,  \
     {0}, 0},                                                                              \
    {"max-ulps", "N", 0, 0, "reachable sets of more than N values are INCONCLUSIVE", NULL, \
     {0}, 0},                                                                              \
    {"param", "NAME=VALUE", 0, 1, "operator parameter (see numoracle ops)", NULL, {0}, 0}, \
    {"input", "NAME=FILE", 0, 1, "read input NAME from a raw .bin instead of generating", \
     NULL, {0}, 0},                                                                        \
    {"input-dtype", "NAME=DT", 0, 1,                                                       \
     "storage type of --input NAME's file: int32, int64 (labels) or a format", NULL, {0},  \
     0},                                                                                   \
    {"recompute", "NAME", 0, 1,                                                            \
     "do not use optional input NAME (a saved statistic): enclose its recomputation",      \
     NULL, {0}, 0},                                                                        \
    {"enclosure", "E", 0, 0,                                                               \
     "enclosure engine: auto (fast engine + escalation, default) or certified (alias --engine)", \
     NULL, {0}, 0}

/* --enclosure (formerly --engine: the enclosure engine, not the implementation under test
 * that run's --engine names) into opts->mode. Returns 0 or CLI_EXIT_USAGE. */
int cli_enclosure(nmo_check_opts *opts, cli_cmd *cmd);
/* cJSON object {input name: source} (returns cJSON *): "file:PATH",
 * "generated:FAMILY seed=S", "derived", "unused" or "recomputed" (nmo_report_print_case). */
void *cli_inputs_json(const cli_problem *pb);

/* Resolve --op (only), for verbs that need the operator before anything else. */
int cli_resolve_op(const nmo_op **op, const char *name);

/* From the options op, dtype, shape, plan, max-ulps, family, seed, param, input,
 * input-dtype, recompute: validate everything, build the case, read the given inputs
 * and obtain the others:
 *  - for a file: candidate (--candidate file:...) without an explicit --family, every
 *    input must be given (a missing one is an error naming it), except optional ones
 *    (absent: the reference recomputes them) and source-only ones (unused);
 *  - otherwise inputs not given are generated from --family/--seed and derived inputs
 *    derived from the final inputs (after the files are read);
 *  - --recompute NAME marks an optional input absent (a CPU candidate still reads the
 *    derived value).
 * Label inputs read from files are checked (nmo_case_check_input). Returns 0 or
 * CLI_EXIT_USAGE (error printed; nothing to free). */
int cli_problem_build(cli_problem *pb, cli_cmd *cmd);
void cli_problem_free(cli_problem *pb);

/* "64x4097" */
void cli_shape_text(char *buf, size_t n, const nmo_case *c);

/* ---- staged atomic writes --------------------------------------------------------- */

typedef struct {
    int n;
    char *tmp[3 * NMO_MAX_TENSORS + 2];
    char *dst[3 * NMO_MAX_TENSORS + 2];
    /* "-" and device targets (tmp NULL): the bytes, written directly at commit */
    unsigned char *direct[3 * NMO_MAX_TENSORS + 2];
    size_t direct_len[3 * NMO_MAX_TENSORS + 2];
} cli_stage;

/* Write data to a temporary file next to path. Returns 0, or CLI_EXIT_USAGE after
 * printing the error (the temporaries staged so far are removed). */
int cli_stage_file(cli_stage *st, const char *path, const void *data, size_t len);
/* Rename every staged file onto its target. Returns 0 or CLI_EXIT_USAGE. */
int cli_stage_commit(cli_stage *st);
void cli_stage_abort(cli_stage *st);

/* The command line, quoted for a shell (for provenance); malloc'd. */
char *cli_command_line(int argc, char **argv);

/* ---- bundles: engines under test and run options (cmd_run.c) -------------------------- */

#include "numoracle/bundle.h"
#include "nmo_runner.h"

#include "eut.h"

/* --golden-data-dir / --gd, else $NUMORACLE_GOLDEN_DATA_DIR, else "bundles". */
const char *cli_data_dir(cli_cmd *cmd);
const char *cli_env2(const char *rfc, const char *alias, const char **which);
/* "I/N" with 0 <= I < N (NULL: 0/1). */
int cli_parse_shard(int *idx, int *cnt, const char *s);
/* Diagnostics to stderr as "numoracle: warning: ..." / "numoracle: error: ...". */
void cli_stderr_diag(void *ctx, nmo_diag_level l, const char *msg);

/* Verbs. argv[0] is the verb name. */
int cmd_check(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_candidates(int argc, char **argv);
int cmd_plans(int argc, char **argv);
int cmd_bounds(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_golden(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_campaign(int argc, char **argv);
int cmd_mutants(int argc, char **argv);
int cmd_judge(int argc, char **argv);

#endif
