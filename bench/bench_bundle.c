/* numoracle bundle benchmark (DESIGN §11: a ratio measured side by side in one process).
 *
 * The point of certified bundles: once the reachable sets are stored, judging a candidate
 * needs no MPFR and no recomputation. For each operator (rms_norm and softmax 1024x1024
 * bf16, matmul 256x256x512 bf16; --quick: a quarter of the work) this program writes one
 * certified bundle into a temporary directory (not timed), runs the operator's default
 * CPU candidate once (not timed), and then times, best of --reps, alternating the order:
 *   bundle     nmo_bundle_load(NMO_BL_BOUNDS_ONLY): graph, metadata and the bound tensors
 *              read from disk with their integrity checks (sizes, flag bits, lo <= hi),
 *              then nmo_bundle_judge against the stored bounds;
 *   recompute  nmo_check (fast engine + escalation, judging) on the same inputs, already
 *              in memory.
 * Neither side loads inputs (running the engine on them is not part of checking); the
 * full load (inputs, expected outputs, every check) is timed too and printed as
 * full_load_s for reference.
 * It checks that both sides give the same verdict counts, then prints per operator
 *   op=NAME bundle_s=... recompute_s=... speedup=X.X
 * and finally, exactly, bundle_check_speedup=X.X: the smallest per-operator ratio (the
 * least favourable operator sets the claim). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "numoracle/bundle.h"
#include "numoracle/numoracle.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const nmo_err *err)
{
    fprintf(stderr, "nmo_bench_bundle: %s: %s\n", what, err->msg);
    exit(2);
}

static double bench_op(const char *opname, const char *shape, int reps)
{
    nmo_err err = {{0}};
    const nmo_op *op = nmo_op_find(opname);
    if (!op) {
        fprintf(stderr, "nmo_bench_bundle: no op %s in this build; skipped\n", opname);
        return -1;
    }
    nmo_plan plan;
    nmo_plan_default(&plan, NMO_BF16);
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    if (nmo_shape_parse(&ns, sh, shape, &err) != NMO_OK) die("shape", &err);
    nmo_case c;
    if (nmo_case_init(&c, op, &plan, ns, sh, &err) != NMO_OK) die("case", &err);
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);

    char tmpl[] = "/tmp/nmo_bench_bundle.XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        exit(2);
    }
    nmo_bundle_wopts o = {0};
    o.name = "bench";
    o.family = "gaussian";
    o.seed = 1;
    o.generated_at = "1970-01-01T00:00:00Z";
    if (nmo_bundle_write(tmpl, &c, &o, NMO_MODE_ESCALATE, NULL, 0, &err) != NMO_OK) die("write", &err);
    char json[512];
    snprintf(json, sizeof json, "%s/bench.json", tmpl);

    const nmo_cand *cd = nmo_cand_find(op->name, NULL);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    if (nmo_case_alloc_outputs(&c, out, 0, &err) != NMO_OK) die("alloc", &err);
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
    if (cd->run(&a, &err) != NMO_OK) die("candidate", &err);

    double best_b = 1e30, best_r = 1e30, best_full = 1e30;
    int64_t fail_b = -1, fail_r = -1, pass_b = -1, pass_r = -1;
    for (int r = 0; r < reps; r++) {
        for (int side = 0; side < 2; side++) {
            int which = (side + r) % 2; /* alternate the order every repetition */
            nmo_report rep;
            double t0 = now_s();
            if (which == 0) {
                nmo_bundle b;
                if (nmo_bundle_load(&b, json, NMO_BL_BOUNDS_ONLY, &err) != NMO_OK) die("load", &err);
                if (nmo_bundle_judge(&rep, &b, out, NMO_JUDGE_WIDTHS, &err) != NMO_OK) die("judge", &err);
                double t = now_s() - t0;
                if (t < best_b) best_b = t;
                fail_b = rep.n_fail, pass_b = rep.n_pass;
                nmo_bundle_free(&b);
            } else {
                nmo_check_opts co = {0};
                if (nmo_check(&rep, &c, out, &co, &err) != NMO_OK) die("check", &err);
                double t = now_s() - t0;
                if (t < best_r) best_r = t;
                fail_r = rep.n_fail, pass_r = rep.n_pass;
            }
            nmo_report_free(&rep);
        }
    }
    for (int r = 0; r < reps; r++) {
        nmo_bundle b;
        double t0 = now_s();
        if (nmo_bundle_load(&b, json, 0, &err) != NMO_OK) die("full load", &err);
        double t = now_s() - t0;
        if (t < best_full) best_full = t;
        nmo_bundle_free(&b);
    }
    if (fail_b != fail_r || pass_b != pass_r) {
        fprintf(stderr, "nmo_bench_bundle: %s: stored-bounds verdicts (%lld pass, %lld fail) differ from recomputed (%lld, %lld)\n",
                opname, (long long)pass_b, (long long)fail_b, (long long)pass_r, (long long)fail_r);
        exit(1);
    }
    double sp = best_r / best_b;
    printf("op=%s shape=%s dtype=bf16 bundle_s=%.6f recompute_s=%.6f speedup=%.1f full_load_s=%.6f\n", opname, shape,
           best_b, best_r, sp, best_full);
    fflush(stdout);
    nmo_bundle_dir_remove(tmpl);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return sp;
}

int main(int argc, char **argv)
{
    int quick = 0, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: nmo_bench_bundle [--quick] [--reps N]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    static const char *const ops[3][3] = {
        {"rms_norm", "1024x1024", "256x1024"},
        {"softmax", "1024x1024", "256x1024"},
        {"matmul", "256x256x512", "128x128x512"},
    };
    double worst = -1;
    for (int i = 0; i < 3; i++) {
        double s = bench_op(ops[i][0], quick ? ops[i][2] : ops[i][1], reps);
        if (s > 0 && (worst < 0 || s < worst)) worst = s;
    }
    printf("bundle_check_speedup=%.1f\n", worst);
    return 0;
}
