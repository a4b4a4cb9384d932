/* nmo_geom_width: how much narrower R gets under the reduction geometry each CPU candidate
 * declares (refs/cand/cand_geom.c) than under sum=any — the width table of issue 17.
 *
 *   ./build/bench/nmo_geom_width [--seeds N] [--ops a,b] [--shape S]
 *
 * For every correct candidate with a declared geometry, fp32 and bf16, 6 input families x
 * N seeds (default 2) at the operator's odd test shape (or --shape): the median and p99
 * of the width of R in output ulps (hi and lo as ordinals of the output format; finite R
 * only) under `any` and under the geometry, side by side with their ratio, and the FAIL
 * and INCONCLUSIVE counts under each (a FAIL under the geometry is a false alarm: exit 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/numoracle.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double *w;
    int64_t n, cap;
} wvec;

static int widths(const nmo_report *rep, nmo_fmt out, wvec *v)
{
    for (int k = 0; k < rep->n_out; k++)
        for (int64_t i = 0; i < rep->out_n[k]; i++) {
            double lo = rep->rlo[k][i], hi = rep->rhi[k][i];
            if (!isfinite(lo) || !isfinite(hi)) continue;
            if (v->n == v->cap) {
                v->cap = v->cap ? 2 * v->cap : 4096;
                double *nw = realloc(v->w, (size_t)v->cap * sizeof(double));
                if (!nw) return 1;
                v->w = nw;
            }
            v->w[v->n++] = (double)(nmo_fmt_ordinal(out, hi) - nmo_fmt_ordinal(out, lo));
        }
    return 0;
}

static void quantiles(wvec *v, double *med, double *p99)
{
    if (v->n == 0) { *med = *p99 = NAN; return; }
    qsort(v->w, (size_t)v->n, sizeof(double), cmp_d);
    *med = v->w[v->n / 2];
    *p99 = v->w[(int64_t)((double)(v->n - 1) * 0.99)];
}

static nmo_status run_one(nmo_report *rep, const nmo_op *op, const nmo_cand *cd, const nmo_plan *p, int ns,
                          const int64_t *sh, int fam, uint64_t seed, nmo_err *err)
{
    nmo_case c;
    NMO_RETURN_IF_ERR(nmo_case_init(&c, op, p, ns, sh, err));
    nmo_case_fill(&c, fam, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    nmo_status s = nmo_case_alloc_outputs(&c, out, 0, err);
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
    if (s == NMO_OK) s = cd->run(&a, err);
    nmo_check_opts o = {.keep_bounds = 1};
    if (s == NMO_OK) s = nmo_check(rep, &c, out, &o, err);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return s;
}

static int in_list(const char *name, const char *list)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* the operator's test shape with an odd reduction width (the first one whose last
 * dimension is odd, else the first) */
static int op_shape(const nmo_op *op, int64_t *sh, int *ns)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", op->test_shapes ? op->test_shapes : "3x1025");
    int got = 0;
    for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) {
        int n;
        int64_t s[NMO_MAX_DIMS];
        nmo_err e;
        if (nmo_shape_parse(&n, s, tok, &e) != NMO_OK) continue;
        if (!got || (s[n - 1] & 1)) {
            memcpy(sh, s, sizeof s);
            *ns = n;
            if (s[n - 1] & 1) return 1;
            got = 1;
        }
    }
    return got;
}

int main(int argc, char **argv)
{
    int seeds = 2;
    const char *ops = NULL, *shape = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) ops = argv[++i];
        else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) shape = argv[++i];
        else {
            fprintf(stderr, "usage: nmo_geom_width [--seeds N] [--ops a,b] [--shape S]\n");
            return 2;
        }
    }
    if (seeds < 1) seeds = 1;
    static const int fams[] = {NMO_FAM_GAUSSIAN, NMO_FAM_UNIFORM, NMO_FAM_SMALL, NMO_FAM_LARGE,
                               NMO_FAM_SHIFTED, NMO_FAM_OUTLIER};
    const int nfam = (int)(sizeof fams / sizeof fams[0]);
    printf("%-14s %-13s %-5s %-10s %-28s %9s %9s %9s %9s %8s %8s %s\n", "op", "candidate", "dtype", "shape",
           "geometry", "any:med", "any:p99", "geo:med", "geo:p99", "med_x", "p99_x", "FAIL/INC any|geo");
    int bad = 0;
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (!cd->correct || !nmo_cand_geom(cd)) continue;
        if (ops && !in_list(cd->op, ops)) continue;
        const nmo_op *op = nmo_op_find(cd->op);
        if (!op) continue;
        int ns = 0;
        int64_t sh[NMO_MAX_DIMS];
        nmo_err err = {{0}};
        if (shape ? nmo_shape_parse(&ns, sh, shape, &err) != NMO_OK : !op_shape(op, sh, &ns)) {
            fprintf(stderr, "%s: no shape\n", cd->op);
            return 2;
        }
        char sbuf[64] = "";
        for (int i = 0, o = 0; i < ns; i++)
            o += snprintf(sbuf + o, sizeof sbuf - (size_t)o, "%s%lld", i ? "x" : "", (long long)sh[i]);
        for (int di = 0; di < 2; di++) {
            nmo_fmt dt = di ? NMO_BF16 : NMO_FP32;
            nmo_plan pa, pg;
            if (nmo_cand_plan(&pa, cd, dt, &err) != NMO_OK ||
                nmo_cand_geom_plan(&pg, cd, dt, ns, sh, NULL, &err) != NMO_OK) {
                fprintf(stderr, "%s/%s: %s\n", cd->op, cd->name, err.msg);
                return 2;
            }
            char gt[512];
            nmo_plan_to_string(&pg, gt, sizeof gt);
            const char *gs = strstr(gt, "sum=");
            char g[40];
            snprintf(g, sizeof g, "%.*s", gs ? (int)strcspn(gs + 4, " ") : 0, gs ? gs + 4 : "");
            wvec wa = {0}, wg = {0};
            long fa = 0, ia = 0, fg = 0, ig = 0;
            for (int f = 0; f < nfam; f++)
                for (int s = 1; s <= seeds; s++) {
                    nmo_report ra, rg;
                    if (run_one(&ra, op, cd, &pa, ns, sh, fams[f], (uint64_t)s, &err) != NMO_OK ||
                        run_one(&rg, op, cd, &pg, ns, sh, fams[f], (uint64_t)s, &err) != NMO_OK) {
                        fprintf(stderr, "%s/%s %s: %s\n", cd->op, cd->name, nmo_fmt_name(dt), err.msg);
                        return 2;
                    }
                    fa += ra.verdict == NMO_FAIL, ia += ra.verdict == NMO_INCONCLUSIVE;
                    fg += rg.verdict == NMO_FAIL, ig += rg.verdict == NMO_INCONCLUSIVE;
                    if (widths(&ra, pa.out, &wa) || widths(&rg, pg.out, &wg)) return 2;
                    nmo_report_free(&ra);
                    nmo_report_free(&rg);
                }
            double am, ap, gm, gp;
            quantiles(&wa, &am, &ap);
            quantiles(&wg, &gm, &gp);
            printf("%-14s %-13s %-5s %-10s %-28s %9.0f %9.0f %9.0f %9.0f %8.1f %8.1f %ld/%ld|%ld/%ld\n", cd->op,
                   cd->name, nmo_fmt_name(dt), sbuf, g, am, ap, gm, gp, gm > 0 ? am / gm : NAN,
                   gp > 0 ? ap / gp : NAN, fa, ia, fg, ig);
            fflush(stdout);
            bad |= fg > 0;
            free(wa.w), free(wg.w);
        }
    }
    return bad;
}
