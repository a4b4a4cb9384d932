/* numoracle golden: write certified bundles (RFC 0011 layout, DESIGN §8).
 *
 * A single bundle lands in {root}/{tier}/{Operation}/{layout}/{dtype}/{name}/, derived
 * from the graph; a template sweep (--sweep FILE) writes golden/{CaseId}/ for every case
 * with a non-null golden. Every directory is written into a hidden temporary sibling and
 * renamed into place, so a killed run leaves no partial bundle and never touches the
 * previous one; an existing bundle is replaced only with --force. A backward operator
 * ("x_bwd") is generated together with its forward ("x") from the same inputs, and its
 * metadata carries forward_source pointing at that forward bundle. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_internal.h"
#include "numoracle/bundle.h"

static const char golden_epilog[] =
    "The bundle directory is derived from the graph: {root}/{tier}/{Operation}/{layout}/\n"
    "{dtype}/{name}/ (Operation e.g. RmsNormFwd, layout nchw|nhwc, dtype fp32|fp16|bfp16|...).\n"
    "It holds {name}.json (graph), {name}.tensor{uid}.bin (inputs and the expected output:\n"
    "the certified enclosure's midpoint rounded to the output format), per output uid\n"
    "{name}.tensor{uid}.lo.bin / .hi.bin (the reachable set R in the output dtype) and\n"
    ".flags.bin (one uint8 per element: 1 NaN possible, 2 R unbounded, 4 R wider than\n"
    "max_ulps, 8 always NaN), and {name}.meta.json (provenance, plan, a certified tolerance).\n"
    "An element whose enclosure is not finite makes the run fail: no NaN/Inf goldens.\n"
    "\n"
    "--sweep FILE generates golden/{CaseId}/ for every case of a template sweep\n"
    "(graph.template.json next to FILE); seed and family come from cases[].metadata,\n"
    "else --seed/--family.\n"
    "\n"
    "--root defaults to $HIPDNN_TEST_GOLDEN_DATA_DIR, then $NUMORACLE_GOLDEN_DATA_DIR, else ./bundles.\n";

static int snake(const char *s)
{
    if (!islower((unsigned char)*s)) return 0;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* Test hook: NUMORACLE_TEST_STALL_BEFORE_COMMIT=SECONDS sleeps once every file is in the
 * temporary directory and before the rename, so a test can kill the run exactly there. */
static void test_stall(void)
{
    const char *s = getenv("NUMORACLE_TEST_STALL_BEFORE_COMMIT");
    if (s && *s) {
        fprintf(stderr, "numoracle: test hook: stalling %s s before commit\n", s);
        fflush(stderr);
        sleep((unsigned)atoi(s));
    }
}

static void warn_diag(void *ctx, nmo_diag_level l, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "numoracle: %s: %s\n", l == NMO_DIAG_ERROR ? "error" : "warning", msg);
}

typedef struct {
    nmo_case *c;
    char final[NMO_BPATH];
    char tmp[NMO_BPATH];
    char rel[NMO_BPATH];
    char line[2 * NMO_BPATH];
    int have_tmp;
} job;

static int bundle_dir(job *j, const char *root, const char *tier, const nmo_case *c, const char *name,
                      nmo_layout layout)
{
    nmo_graph g;
    nmo_err err;
    if (nmo_graph_from_case(&g, c, name, layout, &err) != NMO_OK) return cli_error("%s", err.msg);
    snprintf(j->rel, sizeof j->rel, "%s/%s/%s/%s/%s", tier, g.operation, nmo_graph_layout(&g), nmo_graph_dtype_token(&g),
             name);
    snprintf(j->final, sizeof j->final, "%s/%s", root, j->rel);
    return 0;
}

/* The forward case of a backward one: the first shape (the backward's, its
 * permutations, each backward input's dims) under which every forward input that shares
 * a name with a backward input has that input's dims. Backward shapes need not follow the
 * forward's convention (matmul MxNxK vs a backward's own order). */
static int fwd_shape_fits(const nmo_op *fop, const nmo_case *bc, int ns, const int64_t *sh)
{
    nmo_case fc;
    memset(&fc, 0, sizeof fc);
    fc.op = fop;
    fc.plan = bc->plan;
    fc.nshape = ns;
    memcpy(fc.shape, sh, (size_t)ns * sizeof sh[0]);
    fc.n_in = fop->n_in;
    fc.n_out = fop->n_out;
    for (int k = 0; k < fop->n_param; k++) fc.param[k] = fop->param[k].def;
    nmo_err e;
    if (fop->setup(&fc, &e) != NMO_OK) return 0;
    int shared = 0;
    for (int k = 0; k < fop->n_in; k++) {
        int bk = nmo_op_input_index(bc->op, fop->in[k].name);
        if (bk < 0) continue;
        const nmo_tensor *a = &fc.in[k], *b = &bc->in[bk];
        if (a->ndims != b->ndims || a->dtype != b->dtype) return 0;
        for (int d = 0; d < a->ndims; d++)
            if (a->dims[d] != b->dims[d]) return 0;
        shared++;
    }
    return shared > 0;
}

static int permute_try(const nmo_op *fop, const nmo_case *bc, int64_t *a, int k, int n, int64_t *out)
{
    if (k == n) {
        if (!fwd_shape_fits(fop, bc, n, a)) return 0;
        memcpy(out, a, (size_t)n * sizeof a[0]);
        return 1;
    }
    for (int i = k; i < n; i++) {
        int64_t t = a[k];
        a[k] = a[i], a[i] = t;
        int ok = permute_try(fop, bc, a, k + 1, n, out);
        t = a[k], a[k] = a[i], a[i] = t;
        if (ok) return 1;
    }
    return 0;
}

static int find_fwd_shape(const nmo_op *fop, const nmo_case *bc, int *ns, int64_t *sh)
{
    int64_t a[NMO_MAX_DIMS];
    memcpy(a, bc->shape, sizeof a);
    if (bc->nshape <= 6 && permute_try(fop, bc, a, 0, bc->nshape, sh)) {
        *ns = bc->nshape;
        return 1;
    }
    for (int k = 0; k < bc->n_in; k++)
        if (fwd_shape_fits(fop, bc, bc->in[k].ndims, bc->in[k].dims)) {
            *ns = bc->in[k].ndims;
            memcpy(sh, bc->in[k].dims, (size_t)*ns * sizeof sh[0]);
            return 1;
        }
    return 0;
}

static int golden_sweep(cli_cmd *cmd, const char *file, int force, nmo_mode mode, const char *cmdline)
{
    char dir[NMO_BPATH];
    const char *sl = strrchr(file, '/');
    if (sl) snprintf(dir, sizeof dir, "%.*s", (int)(sl - file), file);
    else snprintf(dir, sizeof dir, ".");
    if (strcmp(sl ? sl + 1 : file, "sweep.json") != 0)
        return cli_error("--sweep %s: expected a path to sweep.json", file);
    nmo_sweep s;
    nmo_err err;
    if (nmo_sweep_load(&s, dir, warn_diag, NULL, &err) != NMO_OK) return cli_error("%s", err.msg);
    int rc = 0;
    for (int i = 0; i < s.n_cases && !rc; i++)
        if (s.cases[i].error[0]) rc = cli_error("%s", s.cases[i].error);
    /* existing golden data is never replaced without --force: check all before any work */
    for (int i = 0; i < s.n_cases && !rc; i++)
        if (!s.cases[i].golden_null && nmo__exists(s.cases[i].golden_dir)) {
            char sub[256];
            if (!force) rc = cli_error("%s exists (use --force to replace it)", s.cases[i].golden_dir);
            else if (!nmo__is_dir(s.cases[i].golden_dir))
                rc = cli_error("%s: case %s: golden directory is not a directory; not replaced", s.path, s.cases[i].id);
            else if (nmo__dir_holds_dir(s.cases[i].golden_dir, sub, sizeof sub))
                rc = cli_error("%s: case %s: golden directory %s holds a directory (%s), not one case's tensors; not replaced",
                               s.path, s.cases[i].id, s.cases[i].golden_dir, sub);
        }
    nmo_family fam_opt = NMO_FAM_GAUSSIAN;
    const char *fo = cli_val(cmd, "family"), *so = cli_val(cmd, "seed");
    if (!rc && fo && nmo_family_from_name(&fam_opt, fo) != NMO_OK) rc = cli_error("unknown family '%s'", fo);
    uint64_t seed_opt = 0;
    if (!rc && so) {
        char *end;
        seed_opt = strtoull(so, &end, 10);
        if (!*so || *end || *so == '-') rc = cli_error("bad --seed '%s': expected an unsigned integer", so);
    }
    char ts[64];
    nmo_bundle_timestamp(ts, sizeof ts);
    /* every case into its temporary directory first; commit only when all succeeded */
    char (*tmps)[NMO_BPATH] = calloc((size_t)(s.n_cases ? s.n_cases : 1), sizeof *tmps);
    char (*lines)[2 * NMO_BPATH] = calloc((size_t)(s.n_cases ? s.n_cases : 1), sizeof *lines);
    if (!tmps || !lines) rc = cli_error("out of memory");
    for (int i = 0; i < s.n_cases && !rc; i++) {
        nmo_sweep_case *sc = &s.cases[i];
        if (sc->golden_null) {
            snprintf(lines[i], sizeof lines[i], "numoracle golden: %s: case %s is graph-only (golden: null); skipped",
                     s.path, sc->id);
            continue;
        }
        nmo_bundle b;
        if (nmo_sweep_case_load(&b, &s, i, NMO_BL_GRAPH_ONLY, &err) != NMO_OK) {
            rc = cli_error("%s", err.msg);
            break;
        }
        const cJSON *md = sc->metadata;
        uint64_t seed = md && cJSON_GetObjectItemCaseSensitive(md, "seed") ? b.seed : seed_opt;
        int fam = md && cJSON_GetObjectItemCaseSensitive(md, "family") ? b.family : (int)fam_opt;
        nmo_case_fill(&b.c, fam, seed);
        nmo_bundle_wopts o = {0};
        o.name = sc->id;
        o.family = nmo_family_name((nmo_family)fam);
        o.seed = seed;
        o.command = cmdline;
        o.generated_at = ts;
        o.graph = &b.g;
        o.no_graph_file = 1;
        o.no_tolerance = cli_val(cmd, "no-tolerance") != NULL;
        o.informative = cli_val(cmd, "informative") != NULL;
        char info[512] = "";
        if (nmo_bundle_dir_begin(tmps[i], sizeof tmps[i], sc->golden_dir, &err) != NMO_OK) {
            tmps[i][0] = '\0';
            rc = cli_error("%s", err.msg);
        } else if (nmo_bundle_write(tmps[i], &b.c, &o, mode, info, sizeof info, &err) != NMO_OK) {
            rc = cli_error("%s: case %s: %s", s.path, sc->id, err.msg);
        } else {
            char shape[128];
            cli_shape_text(shape, sizeof shape, &b.c);
            snprintf(lines[i], sizeof lines[i], "numoracle golden: wrote %s (case %s op=%s shape=%s dtype=%s %s)",
                     sc->golden_dir, sc->id, b.c.op->name, shape, nmo_fmt_name(b.c.plan.in), info);
        }
        nmo_bundle_free(&b);
    }
    if (!rc) test_stall();
    for (int i = 0; i < s.n_cases && !rc; i++) {
        if (!tmps[i][0]) continue;
        if (nmo_bundle_dir_commit(tmps[i], s.cases[i].golden_dir, force, &err) != NMO_OK) rc = cli_error("%s", err.msg);
        else tmps[i][0] = '\0';
    }
    for (int i = 0; tmps && i < s.n_cases; i++)
        if (tmps[i][0]) nmo_bundle_dir_remove(tmps[i]);
    for (int i = 0; !rc && i < s.n_cases; i++)
        if (lines[i][0]) printf("%s\n", lines[i]);
    free(tmps);
    free(lines);
    nmo_sweep_free(&s);
    return rc;
}

/* A backward operator's forward bundle from the same inputs (matched by name), so that
 * saved statistics in the backward bundle come from the very forward pass it records,
 * and the backward's forward_source. No forward in the registry: a warning, and
 * forward_source records the operator's own derived statistics. */
static int golden_forward(const cli_problem *pb, const char *root, const char *tier, const char *name, nmo_layout layout,
                          const char *ts, nmo_case *fc, int *have_fwd, job *jf, cJSON **fsrc)
{
    nmo_err err;
    int rc = 0;
    const nmo_op *fop = nmo_op_is_backward(pb->op) ? nmo_op_forward(pb->op) : NULL;
    if (fop) {
        int fns;
        int64_t fsh[NMO_MAX_DIMS];
        if (!find_fwd_shape(fop, &pb->c, &fns, fsh))
            return cli_error("op %s: no shape of its forward op %s has the backward's input dims (shared inputs must "
                             "match)", pb->op->name, fop->name);
        if (nmo_case_init(fc, fop, &pb->plan, fns, fsh, &err) != NMO_OK)
            return cli_error("forward op %s of %s: %s", fop->name, pb->op->name, err.msg);
        *have_fwd = 1;
        nmo_case_fill(fc, (int)pb->family, pb->seed);
        for (int k = 0; k < fc->n_in; k++) {
            int bk = nmo_op_input_index(pb->op, fop->in[k].name);
            if (bk < 0 || pb->c.in[bk].dtype != fc->in[k].dtype ||
                nmo_tensor_numel(&pb->c.in[bk]) != nmo_tensor_numel(&fc->in[k]))
                continue;
            memcpy(fc->in[k].data, pb->c.in[bk].data, (size_t)nmo_tensor_numel(&fc->in[k]) * nmo_fmt_bytes(fc->in[k].dtype));
        }
        if (fop->derive) fop->derive(fc);
        jf->c = fc;
        if ((rc = bundle_dir(jf, root, tier, fc, name, layout))) return rc;
        *fsrc = cJSON_CreateObject();
        cJSON_AddStringToObject(*fsrc, "method", "numoracle golden");
        cJSON_AddStringToObject(*fsrc, "version", nmo_version());
        cJSON_AddStringToObject(*fsrc, "generated_at", ts);
        cJSON_AddStringToObject(*fsrc, "bundle", jf->rel);
    } else if (nmo_op_is_backward(pb->op)) {
        fprintf(stderr, "numoracle: warning: op %s: no forward operator in the registry; forward_source records the "
                        "operator's own derived statistics\n", pb->op->name);
        *fsrc = cJSON_CreateObject();
        cJSON_AddStringToObject(*fsrc, "method", "numoracle derive");
        cJSON_AddStringToObject(*fsrc, "version", nmo_version());
        cJSON_AddStringToObject(*fsrc, "generated_at", ts);
    }
    return 0;
}

/* Write every job into its temporary directory, then commit them, the forward first (a
 * backward bundle never appears without its forward), and print their lines. */
static int golden_write(job **jobs, const job *jb, const nmo_bundle_wopts *base, cJSON *fsrc, cJSON *inputs_json,
                        nmo_mode mode, int force)
{
    nmo_err err;
    int rc = 0;
    for (int q = 0; q < 2 && !rc; q++)
        if (jobs[q] && nmo__exists(jobs[q]->final) && !force)
            rc = cli_error("%s exists (use --force to replace it)", jobs[q]->final);
    for (int q = 0; q < 2 && !rc; q++) {
        job *j = jobs[q];
        if (!j) continue;
        nmo_bundle_wopts o = *base;
        o.forward_source = j == jb ? fsrc : NULL;
        o.inputs = j == jb ? inputs_json : NULL;
        char info[512] = "";
        if (nmo_bundle_dir_begin(j->tmp, sizeof j->tmp, j->final, &err) != NMO_OK) {
            rc = cli_error("%s", err.msg);
            break;
        }
        j->have_tmp = 1;
        if (nmo_bundle_write(j->tmp, j->c, &o, mode, info, sizeof info, &err) != NMO_OK) {
            rc = cli_error("%s", err.msg);
            break;
        }
        char shape[128];
        cli_shape_text(shape, sizeof shape, j->c);
        snprintf(j->line, sizeof j->line, "numoracle golden: wrote %s (op=%s shape=%s dtype=%s %s)", j->final,
                 j->c->op->name, shape, nmo_fmt_name(j->c->plan.in), info);
    }
    if (rc) return rc;
    test_stall();
    for (int q = 0; q < 2 && !rc; q++) {
        job *j = jobs[q];
        if (!j) continue;
        if (nmo_bundle_dir_commit(j->tmp, j->final, force, &err) != NMO_OK) rc = cli_error("%s", err.msg);
        else j->have_tmp = 0;
    }
    for (int q = 0; q < 2 && !rc; q++)
        if (jobs[q]) printf("%s\n", jobs[q]->line);
    return rc;
}

int cmd_golden(int argc, char **argv)
{
    cli_opt opts[] = {
        {"op", "OP", 0, 0, "operator (see numoracle ops)", NULL, {0}, 0},
        {"dtype", "DT", 0, 0, "storage dtype; selects the default plan", NULL, {0}, 0},
        {"shape", "SHAPE", 0, 0, "problem shape, e.g. 64x4097 (matmul: MxNxK); test, test2: the op's test shapes", NULL, {0}, 0},
        {"family", "F", 0, 0, "input family of generated inputs (default gaussian)", NULL, {0}, 0},
        {"seed", "S", 0, 0, "seed of generated inputs (default 0)", NULL, {0}, 0},
        {"plan", "TEXT", 0, 0, "plan fields over the dtype's default: 'key=value ...'", NULL, {0}, 0},
        {"max-ulps", "N", 0, 0, "reachable sets of more than N values are flagged WIDE", NULL, {0}, 0},
        {"param", "NAME=VALUE", 0, 1, "operator parameter (see numoracle ops)", NULL, {0}, 0},
        {"input", "NAME=FILE", 0, 1, "read input NAME from a raw .bin instead of generating", NULL, {0}, 0},
        {"enclosure", "E", 0, 0, "enclosure engine: auto (fast engine + escalation, default) or certified (alias --engine)", NULL, {0}, 0},
        {"name", "NAME", 0, 0, "bundle name, lowercase_snake_case (why the test exists)", NULL, {0}, 0},
        {"tier", "TIER", 0, 0, "quick (default), standard, comprehensive or full", NULL, {0}, 0},
        {"layout", "L", 0, 0, "nchw (row-major, default) or nhwc (channels-last, rank >= 3)", NULL, {0}, 0},
        {"root", "DIR", 0, 0, "golden data root (default $HIPDNN_TEST_GOLDEN_DATA_DIR, $NUMORACLE_GOLDEN_DATA_DIR or bundles)", NULL, {0}, 0},
        {"force", NULL, 0, 0, "replace an existing bundle", NULL, {0}, 0},
        {"sweep", "FILE", 0, 0, "generate every case of a template sweep (its sweep.json)", NULL, {0}, 0},
        {"no-tolerance", NULL, 0, 0, "do not write the certified tolerance block", NULL, {0}, 0},
        {"informative", NULL, 0, 0, "fail when any reachable set is wider than max_ulps (undecidable)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "golden",
        .summary = "Write a certified golden bundle: inputs, the expected output, the reachable set\n"
                   "of every output element (lo/hi/flags tensors) and provenance metadata.",
        .usage = "golden --op OP --dtype DT --shape SHAPE --name NAME [options]\n"
                 "       numoracle golden --sweep FILE [--force]",
        .epilog = golden_epilog,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    nmo_check_opts co = {0};
    if ((rc = cli_enclosure(&co, &cmd))) return rc;
    int force = cli_val(&cmd, "force") != NULL;
    char *cmdline = cli_command_line(argc, argv);

    const char *sweep = cli_val(&cmd, "sweep");
    if (sweep) {
        static const char *const single_only[] = {"op", "dtype", "shape", "name", "tier", "layout", "root", "input"};
        for (size_t i = 0; i < sizeof single_only / sizeof single_only[0]; i++)
            if (cli_val(&cmd, single_only[i])) {
                free(cmdline);
                return cli_error("--%s does not apply to --sweep (the sweep defines its cases)", single_only[i]);
            }
        rc = golden_sweep(&cmd, sweep, force, co.mode, cmdline);
        free(cmdline);
        return rc;
    }
    static const char *const req[] = {"op", "dtype", "shape", "name"};
    for (size_t i = 0; i < 4; i++)
        if (!cli_val(&cmd, req[i])) {
            free(cmdline);
            return cli_error("missing required option --%s (see numoracle golden --help)", req[i]);
        }
    const char *name = cli_val(&cmd, "name");
    const char *tier = cli_val(&cmd, "tier") ? cli_val(&cmd, "tier") : "quick";
    const char *lay = cli_val(&cmd, "layout") ? cli_val(&cmd, "layout") : "nchw";
    const char *root = cli_val(&cmd, "root");
    if (!root) root = cli_env2("HIPDNN_TEST_GOLDEN_DATA_DIR", "NUMORACLE_GOLDEN_DATA_DIR", NULL);
    if (!root || !*root) root = "bundles";
    nmo_layout layout = NMO_LAYOUT_ROWMAJOR;
    if (!snake(name)) rc = cli_error("bad --name '%s': bundle names are lowercase_snake_case", name);
    else if (nmo_tier_parse(tier) < 0) rc = cli_error("bad --tier '%s': expected quick, standard, comprehensive or full", tier);
    else if (strcmp(lay, "nhwc") == 0) layout = NMO_LAYOUT_CHANNELS_LAST;
    else if (strcmp(lay, "nchw") != 0) rc = cli_error("bad --layout '%s': expected nchw or nhwc", lay);
    if (rc) {
        free(cmdline);
        return rc;
    }

    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) {
        free(cmdline);
        return rc;
    }
    job jb = {0}, jf = {0};
    jb.c = &pb.c;
    nmo_case fc;
    int have_fwd = 0;
    cJSON *fsrc = NULL, *inputs_json = NULL;
    char ts[64];
    nmo_bundle_timestamp(ts, sizeof ts);
    if ((rc = bundle_dir(&jb, root, tier, &pb.c, name, layout))) goto out;
    if ((rc = golden_forward(&pb, root, tier, name, layout, ts, &fc, &have_fwd, &jf, &fsrc))) goto out;
    /* provenance of the inputs: files given with --input make the seed meaningless */
    inputs_json = cli_inputs_json(&pb);
    job *jobs[2] = {have_fwd ? &jf : NULL, &jb};
    nmo_bundle_wopts base = {0};
    base.name = name;
    base.layout = layout;
    base.family = nmo_family_name(pb.family);
    base.seed = pb.seed;
    base.command = cmdline;
    base.generated_at = ts;
    base.tier = tier;
    base.no_tolerance = cli_val(&cmd, "no-tolerance") != NULL;
    base.informative = cli_val(&cmd, "informative") != NULL;
    rc = golden_write(jobs, &jb, &base, fsrc, inputs_json, co.mode, force);
    fflush(stdout);
out:
    if (jb.have_tmp) nmo_bundle_dir_remove(jb.tmp);
    if (jf.have_tmp) nmo_bundle_dir_remove(jf.tmp);
    if (have_fwd) nmo_case_free(&fc);
    cJSON_Delete(fsrc);
    cJSON_Delete(inputs_json);
    cli_problem_free(&pb);
    free(cmdline);
    return rc;
}
