/* numoracle campaign: mutation-testing campaigns (DESIGN §1.2).
 *
 * A campaign runs, for every input (operator x dtype x shape x family x seed), the
 * operator's correct CPU candidates and its mutants on the same input, judges every
 * output with numoracle and the fixed baselines, and journals one JSON line per run.
 * A mutant is EFFECTIVE when its output differs bitwise from its base (the correct
 * variant it was derived from) on some input; a check DETECTS it when the check FAILs
 * the mutant and PASSes the base on the same input. Reports are a pure function of the
 * journal, so a killed and resumed campaign reports exactly what an uninterrupted one
 * does.
 *
 * Phases: prepare (mutants generated, compiled, recorded), probe (each mutant once, on
 * one input: hangs and crashes are classified there once instead of on every input),
 * calibration (correct variants on calibration seeds: p99.9 tolerances), evaluation
 * (sharded with --shard I/N). Every phase's runs are journaled and skipped on resume. */
#ifndef NMO_CAMPAIGN_H
#define NMO_CAMPAIGN_H

#include <stdint.h>

#include "campaign/checks.h"
#include "campaign/mutate.h"
#include "numoracle/numoracle.h"
#include "numoracle/plugin.h"

#define NMO_CAMP_ENGINE_VERSION "campaign-2"
#define NMO_CAMP_MAX_OPS 64
#define NMO_CAMP_MAX_SHAPES 8
#define NMO_CAMP_MAX_FAM 8
#define NMO_CAMP_MAX_DT 8

typedef struct {
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    char text[64];
} nmo_camp_shape;

typedef struct {
    char name[128];
    char backend[16];           /* "cpu" (emulations) | "hip" */
    int nops;
    const nmo_op *ops[NMO_CAMP_MAX_OPS];
    int nshapes[NMO_CAMP_MAX_OPS];
    nmo_camp_shape shapes[NMO_CAMP_MAX_OPS][NMO_CAMP_MAX_SHAPES];
    int ndt;
    nmo_fmt dt[NMO_CAMP_MAX_DT];
    int nmain, nshift;
    int fam_main[NMO_CAMP_MAX_FAM], fam_shift[NMO_CAMP_MAX_FAM];
    int nseeds, nmseeds, ncseeds;
    uint64_t *seeds, *mseeds, *cseeds; /* evaluation, mutant (subset), calibration */
    int ncfam;
    int cfam[NMO_CAMP_MAX_FAM];
    double quantile;            /* calibration quantile (0.999) */
    /* mutants */
    int gen, hand, null_control;
    int bases_all;              /* 0: mutate the default correct variant only */
    int mop_on[NMO_MOP_COUNT];
    int nutil;
    char util_fns[48][64];      /* cand_util.h functions that may be mutated */
    int max_per_op;             /* 0: all generated mutants */
    int coverage;               /* 1: mutate only lines the base executes (gcov) */
    int determinism;            /* 1: run every mutant twice with different stack fill */
    int check_on[NMO_CK_COUNT];
    int ref_fp64;               /* reference: 0 midpoint of the plan's enclosure, 1 fp64 */
    int workers;
    double timeout;             /* seconds per run */
    int fsync_line;             /* 1: every journal line is fsynced before it counts */
    int geometry;               /* 1: correct variants and mutants also judged under the
                                 * reduction geometry the variant declares (issue 17) */
    char journal[1024], work_dir[1024], out_dir[1024], source_root[1024], cc[256];
    int work_dir_set, out_dir_set; /* given explicitly (else derived from the journal) */
    char hip_dropped[1024];     /* backend hip: operators without HIP kernels (not run) */
    char config_hash[17];
    char *config_text;          /* canonical JSON of the effective config (malloc'd) */
} nmo_camp_cfg;

/* Parse a config file (JSON); every field is optional. Defaults: all registry
 * operators, dtypes fp32 bf16 fp16, op test shapes, main = gaussian small, shifted =
 * shifted large near_degenerate outlier, seeds 1..4, mutant seeds = seeds, calibration
 * seeds 1001..1010 on the main families, generated + hand-written mutants, all checks,
 * 2 workers, timeout 10 s, journal <config>.jsonl. Paths are relative to the current
 * directory. ops_override (may be NULL): a comma-separated operator list replacing the
 * config's. */
nmo_status nmo_camp_cfg_load(nmo_camp_cfg *cfg, const char *path, const char *ops_override, nmo_err *err);
void nmo_camp_cfg_free(nmo_camp_cfg *cfg);
/* Restrict the operator list (comma-separated names; "all" = registry). */
nmo_status nmo_camp_cfg_set_ops(nmo_camp_cfg *cfg, const char *list, nmo_err *err);
/* Recompute config_text / config_hash after overrides. */
nmo_status nmo_camp_cfg_finish(nmo_camp_cfg *cfg, nmo_err *err);

typedef enum { NMO_MUT_HAND = 0, NMO_MUT_GEN, NMO_MUT_NULL } nmo_mut_kind;

typedef struct {
    char id[48];
    int op;                     /* index into cfg->ops */
    nmo_mut_kind kind;
    char base[64];              /* the correct candidate it derives from */
    char mop[16];               /* mutation operator ("hand" for hand-written) */
    char file[256];             /* source file relative to the source root */
    char func[64];
    int line, col;
    char desc[256];
    char *diff;                 /* unified diff (generated) */
    int stillborn;
    char cc_error[512];
    char so_path[1100];
    const nmo_cand *hand;       /* hand-written: the registry entry */
    const nmo_plugin_kernel *kern; /* backend hip: the HIP registry's mutant kernel */
    /* loaded in a worker */
    void *dl;
    nmo_status (*run)(const nmo_cand_args *, nmo_err *);
    void *(*rt_alloc)(size_t);
    void (*rt_release)(void *);
    void (*rt_fill)(unsigned);
    int load_failed;
    /* probe outcome: 0 not probed, else run status */
    int probed;
    char probe_status[16];
} nmo_camp_mutant;

typedef struct {
    int n, cap;
    nmo_camp_mutant *m;
    int n_generated_total;      /* before the per-op cap */
    char notes[2048];           /* what could not be done (no gcov, missing sources) */
} nmo_camp_mutants;

/* Generate, compile (in parallel) and list the mutants of every configured operator.
 * Compiled objects are cached in the work dir (keyed by source hash). Progress lines go
 * to log (may be NULL). */
nmo_status nmo_camp_mutants_prepare(nmo_camp_mutants *ms, const nmo_camp_cfg *cfg, FILE *log,
                                    nmo_err *err);
void nmo_camp_mutants_free(nmo_camp_mutants *ms);
/* Load a compiled mutant (dlopen) in the calling process. */
int nmo_camp_mutant_load(nmo_camp_mutant *m, const nmo_camp_cfg *cfg);

/* Backend hip: the HIP registry's kernels of an operator (correct: 1 correct variants,
 * 0 mutants), in registry order; returns how many, fills up to max. */
int nmo_camp_hip_kernels(const nmo_plugin_kernel **k, int max, const char *op, int correct);
/* Backend hip: the correct kernel a mutant kernel derives from: the first correct kernel
 * of its operator whose name starts with the mutant's prefix before "mut_" ("tc_mut_x"
 * -> the first correct "tc_*"), else the operator's first correct kernel. */
const nmo_plugin_kernel *nmo_camp_hip_base(const nmo_plugin_kernel *mut);

/* The first correct candidate of an operator (its default), and the i-th correct one. */
const nmo_cand *nmo_camp_correct(const nmo_op *op, int i);
int nmo_camp_ncorrect(const nmo_op *op);

/* Run options from the command line. */
typedef struct {
    int shard_i, shard_n;       /* 1-based shard I of N (0/0: no sharding) */
    int report_only;
    int njournals;
    const char *journals[64];   /* report-only: several shard journals */
    int quiet;
    int progress;               /* -1 auto (TTY), 0 off, 1 on */
    int force;                  /* resume a journal whose config hash differs */
    int no_report;              /* run only: the reports are built by the caller (MPI rank 0) */
    int oracle_gpu;             /* 1: numoracle's verdicts by the GPU tier (nmo_gpu_check) wherever
                                 * it checks the case (backend hip); not part of the config hash:
                                 * the verdicts are the same by construction (issue 22) */
} nmo_camp_opts;

/* Run the campaign (or only the report) and write the reports into cfg->out_dir.
 * Returns NMO_OK when everything planned ran; a summary goes to out (stdout). */
nmo_status nmo_camp_run(nmo_camp_cfg *cfg, const nmo_camp_opts *opts, FILE *out, nmo_err *err);

/* Build the reports (JSON, Markdown, HTML) from journal files. */
nmo_status nmo_camp_report(const nmo_camp_cfg *cfg, const char *const *journals, int nj,
                           const char *out_dir, FILE *out, nmo_err *err);

/* Write a whole file atomically (temporary + rename). */
nmo_status nmo_camp_write_file(const char *path, const char *data, size_t len, nmo_err *err);
/* mkdir -p */
int nmo_camp_mkdirs(const char *path);

#endif
