/* numoracle campaign / mutants: mutation-testing campaigns and the mutation engine.
 * Exit codes: 0 done, 2 usage/input errors (one line on stderr), 1 the campaign ran but
 * could not finish (journal write failure, ...). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "campaign/engine.h"
#include "campaign/mpi.h"
#include "campaign/mutate.h"
#include "cli.h"

static const char campaign_epilog[] =
    "The config is JSON; every key is optional (see papers/sound-oracles/README.md):\n"
    "  name, backend (cpu|hip), operators (\"all\" | [names]), dtypes, families {main, shifted},\n"
    "  seeds, mutant_seeds ([..] | {first, count}), shapes (\"test\" | {op: [shapes]}),\n"
    "  mutants {generated, hand_written, null_control, bases, operators, util_functions,\n"
    "  max_per_op, coverage, determinism_check}, checks, calibration {seeds, families,\n"
    "  quantile}, reference (midpoint|fp64), workers, timeout, journal, work_dir, out_dir,\n"
    "  source_root, cc, fsync (line|none).\n"
    "\n"
    "A killed campaign resumes from its journal: finished runs are never redone. Shards\n"
    "(--shard I/N) split the evaluation inputs; merge their journals with --report-only\n"
    "--journal A --journal B. Reports: OUT/report.json, report.md, report.html.\n"
    "\n"
    "Under MPI (mpirun -n K numoracle campaign --config C; a build with OpenMPI, -Dmpi):\n"
    "rank R runs shard R+1/K into JOURNAL.rank<R+1>of<K>.jsonl with its own work dir\n"
    "(WORK/rank<R+1>of<K>); rank 0 merges the K journals into one report when all are done.\n";

/* mpirun -n K: this rank's shard, journal and work dir; rank 0 merges (see the epilog).
 * Returns the CLI exit code. */
static int run_mpi(nmo_camp_cfg *cfg, nmo_camp_opts *o, int rank, int size)
{
    nmo_err err = {{0}};
    if (o->shard_n) return cli_error("--shard and mpirun both split the campaign: give one of them");
    char base[1024];
    snprintf(base, sizeof base, "%s", cfg->journal);
    size_t l = strlen(base);
    if (l > 6 && strcmp(base + l - 6, ".jsonl") == 0) base[l - 6] = '\0';
    /* the K journals, in rank order: the merge reads them all */
    static char jn[64][1100];
    if (size > 64) return cli_error("mpirun -n %d: at most 64 ranks (one journal each)", size);
    for (int r = 0; r < size; r++) snprintf(jn[r], sizeof jn[r], "%.1000s.rank%dof%d.jsonl", base, r + 1, size);
    int st = NMO_OK;
    if (!o->report_only) {
        snprintf(cfg->journal, sizeof cfg->journal, "%.1000s", jn[rank]);
        /* a work dir per rank: mutant objects are compiled in place, two ranks building
         * the same one on a shared file system would race */
        char wd[1100];
        snprintf(wd, sizeof wd, "%.1000s/rank%dof%d", cfg->work_dir, rank + 1, size);
        snprintf(cfg->work_dir, sizeof cfg->work_dir, "%.1000s", wd);
        o->shard_i = rank + 1, o->shard_n = size;
        o->no_report = 1;
        if (rank != 0) o->quiet = 1, o->progress = 0;
        st = nmo_camp_run(cfg, o, o->quiet ? NULL : stdout, &err);
        if (st != NMO_OK) fprintf(stderr, "numoracle: error: rank %d of %d: %s\n", rank, size, err.msg);
    }
    int worst = nmo_camp_mpi_allmax(st != NMO_OK); /* also the barrier before the merge */
    if (worst) return 1;
    if (rank != 0) return 0;
    const char *js[64];
    for (int r = 0; r < size; r++) js[r] = jn[r];
    if (nmo_camp_report(cfg, js, size, cfg->out_dir, stdout, &err) != NMO_OK) {
        fprintf(stderr, "numoracle: error: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int cmd_campaign(int argc, char **argv)
{
    cli_opt opts[] = {
        {"config", "FILE", 1, 0, "campaign configuration (JSON)", NULL, {0}, 0},
        {"journal", "PATH", 0, 1, "JSONL journal (default from the config); several only with --report-only", NULL, {0}, 0},
        {"out", "DIR", 0, 0, "report directory (default <journal>-report)", NULL, {0}, 0},
        {"workers", "N", 0, 0, "parallel worker processes (default from the config, 2)", NULL, {0}, 0},
        {"shard", "I/N", 0, 0, "run shard I of N of the evaluation inputs", NULL, {0}, 0},
        {"ops", "LIST", 0, 0, "operators to run (comma-separated), overriding the config", NULL, {0}, 0},
        {"report-only", NULL, 0, 0, "only build the reports from the journal(s)", NULL, {0}, 0},
        {"oracle-device", "D", 0, 0, "cpu (default) or gpu: judge with the GPU tier where it checks the case (backend hip)", NULL, {0}, 0},
        {"progress", "WHEN", 0, 0, "progress bar: auto (on a TTY, default), on, off", NULL, {0}, 0},
        {"force", NULL, 0, 0, "resume a journal written with another configuration", NULL, {0}, 0},
        {"quiet", NULL, 0, 0, "no progress and no summary", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "campaign",
        .summary = "Run a mutation-testing campaign: correct kernels and mutants judged by numoracle and fixed baselines.",
        .usage = "campaign --config FILE [options]",
        .epilog = campaign_epilog,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    nmo_camp_opts o = {0};
    o.progress = -1;
    const char *sh = cli_val(&cmd, "shard");
    if (sh) {
        if ((rc = cli_parse_shard(&o.shard_i, &o.shard_n, sh))) return rc;
        o.shard_i += 1; /* the campaign engine counts shards from 1 */
    }
    const char *pg = cli_val(&cmd, "progress");
    if (pg) {
        if (strcmp(pg, "auto") == 0) o.progress = -1;
        else if (strcmp(pg, "on") == 0) o.progress = 1;
        else if (strcmp(pg, "off") == 0) o.progress = 0;
        else return cli_error("bad --progress '%s': expected auto, on or off", pg);
    }
    o.report_only = cli_val(&cmd, "report-only") != NULL;
    const char *od = cli_val(&cmd, "oracle-device");
    if (od && strcmp(od, "gpu") && strcmp(od, "cpu")) return cli_error("--oracle-device '%s': expected cpu or gpu", od);
    o.oracle_gpu = od && strcmp(od, "gpu") == 0;
    o.force = cli_val(&cmd, "force") != NULL;
    o.quiet = cli_val(&cmd, "quiet") != NULL;
    cli_opt *jo = cli_get(&cmd, "journal");
    if (jo->nvals > 1 && !o.report_only) return cli_error("several --journal only with --report-only (merging shards)");
    nmo_camp_cfg cfg;
    nmo_err err = {{0}};
    if (nmo_camp_cfg_load(&cfg, cli_val(&cmd, "config"), cli_val(&cmd, "ops"), &err) != NMO_OK) {
        nmo_camp_cfg_free(&cfg);
        return cli_error("%s", err.msg);
    }
    if (jo->nvals == 1) snprintf(cfg.journal, sizeof cfg.journal, "%s", jo->vals[0]);
    for (int i = 0; i < jo->nvals; i++) o.journals[o.njournals++] = jo->vals[i];
    const char *out = cli_val(&cmd, "out");
    if (out) {
        snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s", out);
        cfg.out_dir_set = 1;
    }
    const char *w = cli_val(&cmd, "workers");
    if (w) {
        char *e;
        long v = strtol(w, &e, 10);
        if (*e || v < 1 || v > 256) {
            nmo_camp_cfg_free(&cfg);
            return cli_error("bad --workers '%s': expected 1..256", w);
        }
        cfg.workers = (int)v;
    }
    if (nmo_camp_cfg_finish(&cfg, &err) != NMO_OK) {
        nmo_camp_cfg_free(&cfg);
        return cli_error("%s", err.msg);
    }
    int rank = 0, size = 1;
    if (nmo_camp_mpi_init(&argc, &argv, &rank, &size) && size > 1) {
        rc = run_mpi(&cfg, &o, rank, size);
        nmo_camp_cfg_free(&cfg);
        nmo_camp_mpi_finalize();
        return rc;
    }
    nmo_status st = nmo_camp_run(&cfg, &o, o.quiet ? NULL : stdout, &err);
    nmo_camp_mpi_finalize();
    nmo_camp_cfg_free(&cfg);
    if (st == NMO_ERR_USAGE || st == NMO_ERR_UNSUPPORTED || st == NMO_ERR_PARSE || st == NMO_ERR_UNKNOWN_OP)
        return cli_error("%s", err.msg);
    if (st != NMO_OK) {
        fflush(stdout);
        fprintf(stderr, "numoracle: error: %s\n", err.msg);
        return 1;
    }
    return 0;
}

int cmd_mutants(int argc, char **argv)
{
    cli_opt opts[] = {
        {"op", "OP", 0, 0, "operator: mutate refs/cand/<op>_cand.c", NULL, {0}, 0},
        {"file", "PATH", 0, 0, "a kernel source to mutate instead (C or HIP)", NULL, {0}, 0},
        {"profile", "P", 0, 0, "language profile: c (default) or hip", NULL, {0}, 0},
        {"function", "PATTERN", 0, 1, "only mutate these functions (shell patterns)", NULL, {0}, 0},
        {"mutop", "NAME", 0, 1, "only these mutation operators (aor ror lb cp rwc acc rnd sdl term idx bcast)", NULL, {0}, 0},
        {"source-root", "DIR", 0, 0, "source tree holding refs/ (default: the build's)", NULL, {0}, 0},
        {"diff", NULL, 0, 0, "print each mutant's unified diff", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "mutants",
        .summary = "List the mutants the mutation engine generates for a kernel source (no compilation, no coverage filter).",
        .usage = "mutants (--op OP | --file PATH) [options]",
        .epilog = NULL,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const char *opn = cli_val(&cmd, "op"), *file = cli_val(&cmd, "file");
    if (!!opn == !!file) return cli_error("give exactly one of --op and --file");
    const char *pname = cli_val(&cmd, "profile");
    const nmo_mut_profile *prof = nmo_mut_profile_get(pname ? pname : "c");
    if (!prof) return cli_error("unknown profile '%s' (c, hip)", pname);
    char path[1200], label[1200];
    const char *root = cli_val(&cmd, "source-root");
#ifndef NMO_SRCDIR
#define NMO_SRCDIR "."
#endif
    if (!root) root = NMO_SRCDIR;
    if (opn) {
        const nmo_op *op;
        if ((rc = cli_resolve_op(&op, opn))) return rc;
        snprintf(path, sizeof path, "%s/refs/cand/%s_cand.c", root, op->name);
        snprintf(label, sizeof label, "refs/cand/%s_cand.c", op->name);
    } else {
        snprintf(path, sizeof path, "%s", file);
        snprintf(label, sizeof label, "%s", file);
    }
    int on[NMO_MOP_COUNT];
    cli_opt *mo = cli_get(&cmd, "mutop");
    for (int i = 0; i < NMO_MOP_COUNT; i++) on[i] = mo->nvals == 0;
    for (int i = 0; i < mo->nvals; i++) {
        int m = nmo_mop_from_name(mo->vals[i]);
        if (m < 0) return cli_error("unknown mutation operator '%s'", mo->vals[i]);
        on[m] = 1;
    }
    nmo_src s, u;
    nmo_err err = {{0}};
    if (nmo_src_load(&s, path, &err) != NMO_OK) return cli_error("%s", err.msg);
    char up[1300];
    snprintf(up, sizeof up, "%s/refs/cand/cand_util.h", root);
    if (nmo_src_load(&u, up, &err) == NMO_OK) {
        nmo_src_add_types(&s, &u);
        nmo_src_free(&u);
    }
    cli_opt *fo = cli_get(&cmd, "function");
    nmo_mut_filter f = {on, fo->nvals ? fo->vals : NULL, fo->nvals, NULL, 0};
    nmo_mutation *mv;
    int n;
    if (nmo_mutate(&mv, &n, &s, prof, &f, &err) != NMO_OK) {
        nmo_src_free(&s);
        return cli_error("%s", err.msg);
    }
    int want_diff = cli_val(&cmd, "diff") != NULL;
    int count[NMO_MOP_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        count[mv[i].mop]++;
        printf("%s:%d:%d %-5s %s: %s\n", label, mv[i].line, mv[i].col, nmo_mop_name(mv[i].mop), mv[i].func, mv[i].desc);
        if (want_diff) {
            char *d = nmo_mutation_diff(&s, &mv[i], label);
            if (d) fputs(d, stdout);
            free(d);
        }
    }
    printf("%d mutants:", n);
    for (int i = 0; i < NMO_MOP_COUNT; i++)
        if (count[i]) printf(" %s %d", nmo_mop_name((nmo_mop)i), count[i]);
    printf("\n");
    nmo_mutations_free(mv, n);
    nmo_src_free(&s);
    return 0;
}
