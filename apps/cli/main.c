/* numoracle CLI: verb dispatch, global --help / --version, and the helpers the verbs
 * share (option parsing, building a problem from options, staged atomic writes).
 * Behaviour is pinned by tests/cli/cases (DESIGN §12). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <mpfr.h> /* --version names the MPFR and GMP versions */

#include "campaign/engine.h"
#include "cli.h"
#include "nmo_internal.h"

/* ---- option parsing ---------------------------------------------------------------- */

cli_opt *cli_get(cli_cmd *cmd, const char *name)
{
    for (int i = 0; i < cmd->nopts; i++)
        if (strcmp(cmd->opts[i].name, name) == 0) return &cmd->opts[i];
    return NULL;
}

const char *cli_val(cli_cmd *cmd, const char *name)
{
    cli_opt *o = cli_get(cmd, name);
    return o ? o->val : NULL;
}

void cli_print_help(const cli_cmd *cmd)
{
    printf("usage: numoracle %s\n\n%s\n\noptions:\n", cmd->usage, cmd->summary);
    for (int i = 0; i < cmd->nopts; i++) {
        const cli_opt *o = &cmd->opts[i];
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        printf("  %-26s %s%s%s\n", lhs, o->help, o->required ? " (required)" : "",
               o->repeat ? " (repeatable)" : "");
    }
    printf("  %-26s %s\n", "-h, --help", "print this help and exit");
    if (cmd->epilog) printf("\n%s", cmd->epilog);
}

/* Former spellings still accepted, for verbs that have the new option and not the old
 * one: "engine" meant the enclosure engine in check, bounds and golden, while run and
 * calibrate keep --engine for the implementation under test (RFC 0006's word). */
static const struct {
    const char *name, *alias;
} aliases[] = {{"enclosure", "engine"}};
static const cli_opt *alias_used[8]; /* options last given by their former spelling */

static cli_opt *by_alias(cli_cmd *cmd, const char *name, size_t nl)
{
    for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++) {
        if (strlen(aliases[a].alias) != nl || strncmp(aliases[a].alias, name, nl) != 0) continue;
        cli_opt *o = cli_get(cmd, aliases[a].name);
        if (!o) continue;
        for (size_t k = 0; k < sizeof alias_used / sizeof alias_used[0]; k++)
            if (!alias_used[k] || alias_used[k] == o) {
                alias_used[k] = o;
                break;
            }
        return o;
    }
    return NULL;
}

const char *cli_given(const cli_opt *o)
{
    for (size_t k = 0; k < sizeof alias_used / sizeof alias_used[0]; k++)
        if (alias_used[k] == o)
            for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
                if (strcmp(aliases[a].name, o->name) == 0) return aliases[a].alias;
    return o->name;
}

/* An output FILE must be "-", an existing non-directory, or a new name in an existing,
 * writable folder. */
static int out_path_check(const char *opt, const char *path)
{
    if (!*path) return cli_error("--%s: empty file name", opt);
    if (strcmp(path, "-") == 0) return 0;
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return cli_error("--%s %s: is a directory", opt, path);
        return 0;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return cli_error("out of memory");
    int rc = 0;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        rc = cli_error("--%s %s: folder '%s' does not exist", opt, path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = cli_error("--%s %s: folder '%s' is not writable", opt, path, dir);
    free(dir);
    return rc;
}

int cli_parse(cli_cmd *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cli_print_help(cmd);
            return -1;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            return cli_error("unexpected argument '%s' (see numoracle %s --help)", a, cmd->verb);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        cli_opt *o = NULL;
        for (int k = 0; k < cmd->nopts; k++)
            if (strlen(cmd->opts[k].name) == nl && strncmp(cmd->opts[k].name, name, nl) == 0)
                o = &cmd->opts[k];
        if (!o) o = by_alias(cmd, name, nl);
        if (!o)
            return cli_error("unknown option '--%.*s' (see numoracle %s --help)", (int)nl, name,
                             cmd->verb);
        const char *v;
        if (!o->metavar) {
            if (eq) return cli_error("option --%s takes no value", o->name);
            v = "1";
        } else if (eq) {
            v = eq + 1;
        } else {
            if (i + 1 >= argc) return cli_error("option --%s needs a value (%s)", o->name, o->metavar);
            v = argv[++i];
        }
        /* last-one-wins would silently drop the first value (issue 16.12) */
        if (!o->repeat && o->val) return cli_error("option --%s given twice", o->name);
        if (o->repeat) {
            if (o->nvals >= CLI_MAX_REPEAT)
                return cli_error("option --%s given more than %d times", o->name, CLI_MAX_REPEAT);
            o->vals[o->nvals++] = v;
        }
        o->val = v;
    }
    for (int k = 0; k < cmd->nopts; k++)
        if (cmd->opts[k].required && !cmd->opts[k].val)
            return cli_error("missing required option --%s (see numoracle %s --help)",
                             cmd->opts[k].name, cmd->verb);
    /* output files (--json, bounds' --lo/--hi/--flags): a folder that is not there is
     * reported now, not after the whole check ran (issue 16.12) */
    static const char *const outs[] = {"json", "lo", "hi", "flags"};
    for (int k = 0; k < cmd->nopts; k++)
        for (size_t q = 0; q < sizeof outs / sizeof outs[0]; q++)
            if (cmd->opts[k].val && cmd->opts[k].metavar && strcmp(cmd->opts[k].name, outs[q]) == 0) {
                int rc = out_path_check(cmd->opts[k].name, cmd->opts[k].val);
                if (rc) return rc;
            }
    return 0;
}

/* ---- problems: op, plan, shape, inputs ---------------------------------------------- */

int cli_resolve_op(const nmo_op **op, const char *name)
{
    *op = nmo_op_find(name);
    if (!*op) return cli_error("unknown op '%s' (see numoracle ops)", name);
    return 0;
}

static void join_names(char *buf, size_t n, const char *(*get)(int, const void *), int count,
                       const void *ctx)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? " %s" : "%s", get(i, ctx));
    if (count == 0) snprintf(buf, n, "none");
}

static const char *get_fmt(int i, const void *ctx) { (void)ctx; return nmo_fmt_name((nmo_fmt)i); }
static const char *get_fam(int i, const void *ctx) { (void)ctx; return nmo_family_name((nmo_family)i); }
static const char *get_in(int i, const void *ctx) { return ((const nmo_op *)ctx)->in[i].name; }
static const char *get_par(int i, const void *ctx) { return ((const nmo_op *)ctx)->param[i].name; }

static int parse_u64(uint64_t *out, const char *s)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return 0;
    *out = (uint64_t)v;
    return 1;
}

void cli_shape_text(char *buf, size_t n, const nmo_case *c)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->nshape && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? "x%lld" : "%lld", (long long)c->shape[i]);
}

/* operator and dtype; the plan: the dtype's default, the kernel's declared plan,
 * --plan on top, then --max-ulps (an overlay: each text parsed on its own) */
static int problem_op_plan(cli_problem *pb, cli_cmd *cmd)
{
    char list[256];
    nmo_err err = {{0}};
    int rc;
    if ((rc = cli_resolve_op(&pb->op, cli_val(cmd, "op")))) return rc;
    const nmo_op *op = pb->op;
    const char *dt = cli_val(cmd, "dtype");
    if (nmo_fmt_from_name(&pb->dtype, dt) != NMO_OK) {
        join_names(list, sizeof list, get_fmt, NMO_FMT_COUNT, NULL);
        return cli_error("unknown dtype '%s' (known: %s)", dt, list);
    }
    if (!nmo_op_has_dtype(op, pb->dtype))
        return cli_error("op %s has no dtype %s (dtypes: %s; see numoracle ops)", op->name,
                         nmo_fmt_name(pb->dtype), op->dtypes);

    /* plan: the dtype's default, the kernel's declared plan, --plan on top, then
     * --max-ulps (an overlay: each text parsed on its own) */
    nmo_plan_default(&pb->plan, pb->dtype);
    if (cmd->base_plan && nmo_plan_parse_op(&pb->plan, op->name, cmd->base_plan, &err) != NMO_OK)
        return cli_error("the kernel's declared plan: %s", err.msg);
    const char *pt = cli_val(cmd, "plan");
    if (pt && nmo_plan_parse_op(&pb->plan, op->name, pt, &err) != NMO_OK) return cli_error("%s", err.msg);
    const char *mu = cli_val(cmd, "max-ulps");
    if (mu) {
        uint64_t v;
        if (!parse_u64(&v, mu) || v < 1 || v > (uint64_t)1 << 40)
            return cli_error("bad --max-ulps '%s': expected a positive integer", mu);
        pb->plan.max_ulps = (long)v;
    }

    return 0;
}

/* --shape ("test" / "test2": the operator's first / second test shape, the
 * generic tests' small ones) */
static int problem_shape(cli_cmd *cmd, const nmo_op *op, int *nshape, int64_t *shape)
{
    nmo_err err = {{0}};
    const char *shape_text = cli_val(cmd, "shape");
    char test_shape[128];
    if (shape_text && (strcmp(shape_text, "test") == 0 || strcmp(shape_text, "test2") == 0)) {
        const char *ts = op->test_shapes ? op->test_shapes : "";
        if (shape_text[4] == '2') ts = strchr(ts, ';') ? strchr(ts, ';') + 1 : "";
        snprintf(test_shape, sizeof test_shape, "%.*s", (int)strcspn(ts, ";"), ts);
        if (!test_shape[0]) return cli_error("op %s has no %s shape; give --shape", op->name, shape_text);
        shape_text = test_shape;
    }
    if (nmo_shape_parse(nshape, shape, shape_text, &err) != NMO_OK)
        return cli_error("%s", err.msg);

    return 0;
}

/* --family and --seed */
static int problem_family_seed(cli_problem *pb, cli_cmd *cmd, const nmo_op *op)
{
    char list[256];
    (void)op;
    const char *fam = cli_val(cmd, "family");
    pb->family = NMO_FAM_GAUSSIAN;
    if (fam && nmo_family_from_name(&pb->family, fam) != NMO_OK) {
        join_names(list, sizeof list, get_fam, NMO_FAM_COUNT, NULL);
        return cli_error("unknown family '%s' (known: %s)", fam, list);
    }
    const char *sd = cli_val(cmd, "seed");
    if (sd && !parse_u64(&pb->seed, sd))
        return cli_error("bad --seed '%s': expected an unsigned integer", sd);

    return 0;
}

/* --param NAME=VALUE, each once */
static int problem_params(cli_cmd *cmd, const nmo_op *op, double *pval, int *pset)
{
    char list[256];
    cli_opt *po = cli_get(cmd, "param");
    for (int i = 0; po && i < po->nvals; i++) {
        const char *a = po->vals[i], *eq = strchr(a, '=');
        if (!eq || eq == a) return cli_error("bad --param '%s': expected NAME=VALUE", a);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
        int k = nmo_op_param_index(op, name);
        if (k < 0) {
            join_names(list, sizeof list, get_par, op->n_param, op);
            return cli_error("unknown param '%s' for op %s (params: %s)", name, op->name, list);
        }
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (!eq[1] || *end || errno == ERANGE || v != v || v - v != 0)
            return cli_error("bad value '%s' for param %s of op %s (expected a finite number)",
                             eq + 1, name, op->name);
        if (pset[k]) return cli_error("param %s given twice (--param)", name);
        pval[k] = v;
        pset[k] = 1;
    }

    return 0;
}

/* One --FLAG NAME=VALUE argument naming an input of op: its index *k, the name and
 * *eq (the '=' before the value); the error names the flag and the known inputs. */
static int input_name_value(const nmo_op *op, const char *flag, const char *what, const char *a, char *name,
                            size_t len, int *k, const char **eq)
{
    *eq = strchr(a, '=');
    if (!*eq || *eq == a || !(*eq)[1]) return cli_error("bad --%s '%s': expected NAME=%s", flag, a, what);
    snprintf(name, len, "%.*s", (int)(*eq - a), a);
    *k = nmo_op_input_index(op, name);
    if (*k < 0) {
        char list[256];
        join_names(list, sizeof list, get_in, op->n_in, op);
        return cli_error("unknown input '%s' for op %s (inputs: %s)", name, op->name, list);
    }
    return 0;
}

/* --input NAME=FILE and --input-dtype NAME=DT (names checked before any work) */
static int problem_inputs(cli_problem *pb, cli_cmd *cmd, const nmo_op *op)
{
    char list[256], name[64];
    int k, rc;
    const char *eq;
    cli_opt *io = cli_get(cmd, "input");
    for (int i = 0; io && i < io->nvals; i++) {
        const char *a = io->vals[i];
        if ((rc = input_name_value(op, "input", "FILE", a, name, sizeof name, &k, &eq))) return rc;
        if (pb->input_path[k]) return cli_error("input %s given twice (--input)", name);
        pb->input_path[k] = eq + 1;
    }
    for (int k = 0; k < NMO_MAX_TENSORS; k++) pb->input_dt[k] = -1; /* the input's own dtype */
    cli_opt *dto = cli_get(cmd, "input-dtype");
    for (int i = 0; dto && i < dto->nvals; i++) {
        const char *a = dto->vals[i];
        if ((rc = input_name_value(op, "input-dtype", "DT", a, name, sizeof name, &k, &eq))) return rc;
        if (!pb->input_path[k])
            return cli_error("--input-dtype %s: input %s is not read from a file (give --input %s=FILE)", a,
                             name, name);
        if (pb->input_dt[k] != -1) return cli_error("input %s given twice (--input-dtype)", name);
        nmo_fmt f;
        if (strcmp(eq + 1, "int32") == 0) pb->input_dt[k] = NMO_DT_INT32;
        else if (strcmp(eq + 1, "int64") == 0) pb->input_dt[k] = NMO_DT_INT64;
        else if (nmo_fmt_from_name(&f, eq + 1) == NMO_OK) pb->input_dt[k] = (int)f;
        else {
            join_names(list, sizeof list, get_fmt, NMO_FMT_COUNT, NULL);
            return cli_error("bad --input-dtype '%s': unknown dtype '%s' (known: int32 int64 %s)", a, eq + 1, list);
        }
    }
    return 0;
}

/* --recompute: optional inputs the reference recomputes instead of reading */
static int problem_recompute(cli_problem *pb, cli_cmd *cmd, const nmo_op *op, uint32_t *absentp)
{
    char list[256];
    uint32_t absent = *absentp, opt = nmo_op_optional_mask(op);
    cli_opt *ro = cli_get(cmd, "recompute");
    for (int i = 0; ro && i < ro->nvals; i++) {
        int k = nmo_op_input_index(op, ro->vals[i]);
        if (k < 0 || !(opt & (1u << k))) {
            size_t off = 0;
            list[0] = '\0';
            for (int q = 0; q < op->n_in; q++)
                if (opt & (1u << q))
                    off += (size_t)snprintf(list + off, sizeof list - off, off ? " %s" : "%s", op->in[q].name);
            return cli_error("bad --recompute '%s': op %s %s%s%s", ro->vals[i], op->name,
                             off ? "can recompute only its optional inputs (" : "has no optional inputs",
                             list, off ? ")" : "");
        }
        if (pb->input_path[k])
            return cli_error("input %s is both given (--input) and to be recomputed (--recompute)", ro->vals[i]);
        absent |= 1u << k;
    }
    *absentp = absent;
    return 0;
}

/* A file: candidate ran on inputs that numoracle did not make: unless --family says
 * to generate, every input it reads must be given (generating them silently judged the
 * output against inputs it never saw). Optional inputs not given are recomputed;
 * source-only ones are not read at all. */
static int problem_strict_inputs(const nmo_op *op, const cli_problem *pb, int strict, uint32_t *absentp)
{
    uint32_t absent = *absentp;
    if (strict) {
        char miss[256] = "";
        size_t off = 0;
        int nmiss = 0;
        for (int k = 0; k < op->n_in; k++) {
            if (pb->input_path[k] || (op->in[k].flags & NMO_IN_SOURCE)) continue;
            if (op->in[k].flags & NMO_IN_OPTIONAL) {
                absent |= 1u << k;
                continue;
            }
            off += (size_t)snprintf(miss + off, off < sizeof miss ? sizeof miss - off : 0, nmiss ? ", %s" : "%s",
                                    op->in[k].name);
            nmiss++;
        }
        if (nmiss == 1)
            return cli_error("input %s of op %s not given: a file: candidate is judged on the inputs it ran on; "
                             "give --input %s=FILE (or --family F to generate inputs that are not given)",
                             miss, op->name, miss);
        if (nmiss > 1)
            return cli_error("inputs %s of op %s not given: a file: candidate is judged on the inputs it ran on; "
                             "give --input NAME=FILE for each (or --family F to generate inputs that are not given)",
                             miss, op->name);
    }
    *absentp = absent;
    return 0;
}

/* The case's inputs: files read (strict: into the case; else generated and derived,
 * then the files over them), labels checked. */
static int problem_read_inputs(cli_problem *pb, const nmo_op *op, int strict)
{
    nmo_err err = {{0}};
    nmo_tensor given[NMO_MAX_TENSORS];
    memset(given, 0, sizeof given);
    int ngiven = 0, rc2 = 0;
    for (int k = 0; k < op->n_in && !rc2; k++) {
        if (!pb->input_path[k]) continue;
        given[k] = pb->c.in[k];
        given[k].data = NULL;
        given[k].own = 0;
        nmo_tensor *t = strict ? &pb->c.in[k] : &given[k]; /* strict: nothing generated to keep apart */
        int dt = pb->input_dt[k] < 0 ? (int)t->dtype : pb->input_dt[k];
        if (nmo_tensor_read_bin_as(t, dt, pb->input_path[k], &err) != NMO_OK) rc2 = 1;
        ngiven++;
    }
    if (!rc2 && !strict) {
        /* generated and derived, then the files over them; derived inputs are derived
         * again from the final inputs, and the files put back (derive may touch a given
         * input: cross_entropy marks ignored labels) */
        nmo_case_fill(&pb->c, (int)pb->family, pb->seed);
        int rederive = 0;
        for (int k = 0; k < op->n_in; k++)
            rederive |= op->derive && ngiven && !pb->input_path[k] && op->in[k].role == NMO_ROLE_DERIVED;
        for (int pass = 0; pass < 1 + rederive; pass++) {
            if (pass) op->derive(&pb->c);
            for (int k = 0; k < op->n_in; k++)
                if (pb->input_path[k])
                    memcpy(pb->c.in[k].data, given[k].data,
                           (size_t)nmo_tensor_span(&given[k]) * nmo_fmt_bytes(given[k].dtype));
        }
    }
    for (int k = 0; k < op->n_in; k++) nmo_tensor_free(&given[k]);
    for (int k = 0; k < op->n_in && !rc2; k++) /* labels from files: classes or ignore_index */
        if (pb->input_path[k] && nmo_case_check_input(&pb->c, k, pb->input_path[k], &err) != NMO_OK) rc2 = 1;
    if (rc2) {
        cli_problem_free(pb);
        return cli_error("%s", err.msg);
    }

    return 0;
}

/* Where each input came from, for the reports. */
static int problem_sources(cli_problem *pb, const nmo_op *op, uint32_t absent, int strict)
{
    for (int k = 0; k < op->n_in; k++) {
        if (pb->input_path[k]) {
            if (pb->input_dt[k] >= 0 && pb->input_dt[k] != (int)pb->c.in[k].dtype)
                snprintf(pb->src[k], sizeof pb->src[k], "file:%s (%s)", pb->input_path[k],
                         nmo_dt_file_name(pb->input_dt[k]));
            else snprintf(pb->src[k], sizeof pb->src[k], "file:%s", pb->input_path[k]);
        } else if (absent & (1u << k)) snprintf(pb->src[k], sizeof pb->src[k], "recomputed");
        else if (strict) snprintf(pb->src[k], sizeof pb->src[k], "unused");
        else if (op->in[k].role == NMO_ROLE_DERIVED && op->derive) snprintf(pb->src[k], sizeof pb->src[k], "derived");
        else snprintf(pb->src[k], sizeof pb->src[k], "generated:%s seed=%llu", nmo_family_name(pb->family),
                      (unsigned long long)pb->seed);
        pb->c.in_src[k] = pb->src[k];
    }
    return 0;
}

/* The kernel's reduction geometry at the built case's shape: over its declared plan,
 * under --plan (which is laid over it again, field by field). */
static int problem_geometry(cli_problem *pb, cli_cmd *cmd, const nmo_op *op)
{
    if (!cmd->geometry) return 0;
    nmo_err err = {{0}};
    char gt[256];
    if (!cmd->geometry(cmd->geometry_ctx, &pb->c, gt, sizeof gt)) return 0;
    const char *pt = cli_val(cmd, "plan");
    nmo_plan q = pb->c.plan;
    if (nmo_plan_parse_op(&q, op->name, gt, &err) != NMO_OK)
        return cli_error("the kernel's declared geometry '%s': %s", gt, err.msg);
    if (pt && nmo_plan_parse_op(&q, op->name, pt, &err) != NMO_OK) return cli_error("%s", err.msg);
    q.max_ulps = pb->c.plan.max_ulps;
    pb->c.plan = q;
    pb->plan = q;
    return 0;
}

int cli_problem_build(cli_problem *pb, cli_cmd *cmd)
{
    memset(pb, 0, sizeof *pb);
    nmo_err err = {{0}};
    int rc;
    if ((rc = problem_op_plan(pb, cmd))) return rc;
    const nmo_op *op = pb->op;
    int nshape = 0;
    int64_t shape[NMO_MAX_DIMS];
    if ((rc = problem_shape(cmd, op, &nshape, shape))) return rc;
    if ((rc = problem_family_seed(pb, cmd, op))) return rc;
    double pval[NMO_MAX_PARAMS];
    int pset[NMO_MAX_PARAMS] = {0};
    if ((rc = problem_params(cmd, op, pval, pset))) return rc;
    if ((rc = problem_inputs(pb, cmd, op))) return rc;
    uint32_t absent = 0;
    if ((rc = problem_recompute(pb, cmd, op, &absent))) return rc;
    const char *cand = cli_get(cmd, "candidate") ? cli_val(cmd, "candidate") : NULL;
    int strict = cand && strncmp(cand, "file:", 5) == 0 && !cli_val(cmd, "family");
    if ((rc = problem_strict_inputs(op, pb, strict, &absent))) return rc;

    /* the case: shape -> tensors and params; then the inputs */
    if (nmo_case_init_params(&pb->c, op, &pb->plan, nshape, shape, pval, pset, &err) != NMO_OK)
        return cli_error("%s", err.msg);
    pb->have_case = 1;
    pb->c.absent = absent;
    if ((rc = problem_geometry(pb, cmd, op))) return rc;
    if ((rc = problem_read_inputs(pb, op, strict))) return rc;
    return problem_sources(pb, op, absent, strict);
}

void cli_problem_free(cli_problem *pb)
{
    if (pb->have_case) nmo_case_free(&pb->c);
    pb->have_case = 0;
}

int cli_enclosure(nmo_check_opts *opts, cli_cmd *cmd)
{
    cli_opt *o = cli_get(cmd, "enclosure");
    const char *val = o ? o->val : NULL;
    if (!val || strcmp(val, "auto") == 0) opts->mode = NMO_MODE_ESCALATE;
    else if (strcmp(val, "certified") == 0) opts->mode = NMO_MODE_CERT;
    else return cli_error("bad --%s '%s': expected auto or certified", cli_given(o), val);
    return 0;
}

void *cli_inputs_json(const cli_problem *pb)
{
    cJSON *in = cJSON_CreateObject();
    if (!in) return NULL;
    for (int k = 0; k < pb->op->n_in; k++) cJSON_AddStringToObject(in, pb->op->in[k].name, pb->src[k]);
    return in;
}

/* ---- staged atomic writes ----------------------------------------------------------- */

void cli_stage_abort(cli_stage *st)
{
    for (int i = 0; i < st->n; i++) {
        if (st->tmp[i]) unlink(st->tmp[i]);
        free(st->tmp[i]);
        free(st->dst[i]);
        free(st->direct[i]);
        st->direct[i] = NULL;
    }
    st->n = 0;
}

int cli_stage_file(cli_stage *st, const char *path, const void *data, size_t len)
{
    if (st->n >= (int)(sizeof st->tmp / sizeof st->tmp[0])) {
        cli_stage_abort(st);
        return cli_error("too many output files");
    }
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->dst[i], path) == 0) {
            cli_stage_abort(st);
            return cli_error("%s: named twice as an output", path);
        }
    if (nmo__out_is_direct(path)) {
        /* "-" or a device: renaming a temporary over /dev/null would replace the node */
        unsigned char *copy = malloc(len ? len : 1);
        char *d = strdup(path);
        if (!copy || !d) {
            free(copy), free(d);
            cli_stage_abort(st);
            return cli_error("out of memory");
        }
        if (len) memcpy(copy, data, len);
        st->tmp[st->n] = NULL;
        st->dst[st->n] = d;
        st->direct[st->n] = copy;
        st->direct_len[st->n] = len;
        st->n++;
        return 0;
    }
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32), *dst = strdup(path);
    if (!tmp || !dst) {
        free(tmp), free(dst);
        cli_stage_abort(st);
        return cli_error("out of memory");
    }
    snprintf(tmp, pl + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp), free(dst);
        cli_stage_abort(st);
        return cli_error("%s: cannot create: %s", path, strerror(e));
    }
    st->tmp[st->n] = tmp;
    st->dst[st->n] = dst;
    st->direct[st->n] = NULL;
    st->n++;
    const unsigned char *p = data;
    size_t done = 0;
    int e = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            e = errno;
            break;
        }
        done += (size_t)w;
    }
    mode_t um = umask(0);
    umask(um);
    if (!e && fchmod(fd, 0666 & ~um) != 0) e = errno; /* mkstemp made it 0600 */
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (e) {
        cli_stage_abort(st);
        return cli_error("%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

int cli_stage_commit(cli_stage *st)
{
    for (int i = 0; i < st->n; i++) {
        if (st->direct[i]) {
            nmo_err err;
            if (nmo__write_direct(st->dst[i], st->direct[i], st->direct_len[i], &err) != NMO_OK) {
                cli_stage_abort(st);
                cli_error("%s", err.msg);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        if (rename(st->tmp[i], st->dst[i]) != 0) {
            int e = errno;
            char *d = strdup(st->dst[i]);
            cli_stage_abort(st);
            cli_error("%s: cannot write: %s", d ? d : "output", strerror(e));
            free(d);
            return CLI_EXIT_USAGE;
        }
        free(st->tmp[i]);
        st->tmp[i] = NULL;
    }
    cli_stage_abort(st); /* frees the names; nothing left to unlink */
    return 0;
}

char *cli_command_line(int argc, char **argv)
{
    size_t n = 16;
    for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3;
    char *s = malloc(n), *p = s;
    if (!s) return NULL;
    p += sprintf(p, "numoracle");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int plain = *a != '\0';
        for (const char *q = a; *q; q++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/+@%", *q))
                plain = 0;
        *p++ = ' ';
        if (plain) {
            p += sprintf(p, "%s", a);
        } else {
            *p++ = '\'';
            for (const char *q = a; *q; q++) {
                if (*q == '\'') p += sprintf(p, "'\\''");
                else *p++ = *q;
            }
            *p++ = '\'';
        }
    }
    *p = '\0';
    return s;
}

/* ---- dispatch ----------------------------------------------------------------------- */

static int cmd_campaign_main(int argc, char **argv)
{
    nmo_camp_no_aslr(argc + 1, argv - 1); /* reproducible garbage reads of mutants (re-execs) */
    return cmd_campaign(argc, argv);
}

/* The verbs: one table for the help and the dispatch. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the verb */
    const char *summary;
} verbs[] = {
    {"check", cmd_check, "judge a candidate's output: PASS (exit 0), FAIL (1), INCONCLUSIVE (3)"},
    {"bounds", cmd_bounds, "write the reachable set of every output element (lo, hi, flags)"},
    {"ops", cmd_ops, "list the operators: tensors, parameters, dtypes and default plans"},
    {"candidates", cmd_candidates, "list an operator's CPU candidates (correct variants and mutants)"},
    {"plans", cmd_plans, "list the named plan presets (PyTorch, Triton, cuBLAS, cuDNN, attention)"},
    {"gen", cmd_gen, "write a problem's generated inputs as .bin files"},
    {"golden", cmd_golden, "write a certified golden bundle (or every case of a template sweep)"},
    {"verify", cmd_verify, "check a golden data tree before commit (integrity, layout, budgets)"},
    {"run", cmd_run, "run an engine on every bundle of a tier and judge both verdicts"},
    {"calibrate", cmd_calibrate, "write empirical p99.9 tolerances into bundle metadata"},
    {"campaign", cmd_campaign_main, "run a mutation-testing campaign: numoracle vs fixed-tolerance baselines"},
    {"mutants", cmd_mutants, "list the mutants the mutation engine generates for a kernel source"},
    {"judge", cmd_judge, "the four-judgment matrix of a contract (accuracy and invariance)"},
};

static void print_main_help(void)
{
    printf("usage: numoracle <command> [options]\n"
           "\n"
           "Decides, per output element, whether a kernel's output is one that a correct\n"
           "implementation of a declared precision plan could produce.\n"
           "\n"
           "commands:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        printf("  %-11s %s\n", verbs[i].name, verbs[i].summary);
    printf("\n"
           "options:\n"
           "  -h, --help     print this help (numoracle <command> --help: that command's)\n"
           "  --version      print the version\n"
           "\n"
           "Usage and input errors exit with 2.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) return cli_error("no command given (see numoracle --help)");
    const char *v = argv[1];
    if (strcmp(v, "-h") == 0 || strcmp(v, "--help") == 0 || strcmp(v, "help") == 0) {
        print_main_help();
        return 0;
    }
    if (strcmp(v, "--version") == 0 || strcmp(v, "version") == 0) {
        printf("numoracle %s (MPFR %s, GMP %s)\n", nmo_version(), mpfr_get_version(), gmp_version);
        return 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(v, verbs[i].name) == 0) return verbs[i].run(argc - 1, argv + 1);
    if (v[0] == '-') return cli_error("unknown option '%s' (see numoracle --help)", v);
    return cli_error("unknown command '%s' (see numoracle --help)", v);
}
