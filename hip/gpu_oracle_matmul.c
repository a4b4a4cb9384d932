/* numoracle GPU tier (issue 22): matmul C = A B checked on the device (the kernels and
 * why their verdicts are the certified engine's: hip/gpu_oracle_matmul.inc). The host
 * part: the plan's constants (the k table of nmo_fe_dot_k, as the CPU's gemm path uses
 * it), the elements the device left to the CPU checker, the worst element's details and
 * the merge (gpu_oracle.c nmo_go_merge_report).
 *
 * An element the device leaves is checked by the CPU checker exactly as nmo_check would
 * check it, through a case of its own: per row i of C with listed columns J, the matmul
 * 1 x |J| x K of A's row i and B's columns J (same plan: each element of a matrix
 * product depends on its row, its column and the plan only; k depends on K, kept). Its
 * report's counts add to the device's, element for element; nothing recomputes the
 * whole product on the CPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#include "nmo_internal.h"
#include "engine/enc_fast.h"

static double mm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

/* the cases nmo_fenc_gemm_row decides in its vectorized kernel (and no others) */
int nmo_gpu_mm_supported(const nmo_case *c, const char **why)
{
    const char *w = NULL;
    const nmo_plan *p = &c->plan;
    const nmo_fmt_info *ci = nmo_fmt_get(p->compute);
    if (!nmo_gpu_enabled()) w = NMO_GPU_NONE_MSG;
    else if (p->inter != p->compute) w = "matmul split-K partials (inter != compute): not on the device";
    else if (p->acc != NMO_FP32 || p->ftz) w = "matmul on the device needs acc=fp32 without ftz";
    else if (!ci || ci->prec > 25) w = "compute wider than 25 bits: the fast engine certifies nothing";
    else if (p->sum != NMO_SUM_ANY && p->sum != NMO_SUM_GEOM) w = "matmul on the device needs sum=any or a declared geometry";
    else if (p->round != NMO_RNE || p->round_sr) w = "the device judges RNE stores only";
    else if (p->out != NMO_BF16 && p->out != NMO_FP32) w = "out must be bf16 or fp32";
    else if (p->in != NMO_BF16 && p->in != NMO_FP32) w = "in must be bf16 or fp32";
    else if (c->absent) w = "absent inputs: not on the device";
    else if (!nmo_tensor_is_packed(&c->in[0]) || !nmo_tensor_is_packed(&c->in[1])) w = "inputs must be packed";
    else if (nmo_tensor_numel(&c->out[0]) >= 0x3fffffff) w = "too many elements (2^30 at most)";
    else if (c->shape[2] >= (1 << 24)) w = "K >= 2^24: the device's nonzero counts are binary32";
    if (why) *why = w;
    return w == NULL;
}

int64_t nmo_gpu_mm_refined = 0, nmo_gpu_mm_exact = 0, nmo_gpu_mm_host_every = 0;
int nmo_go_mm_blas = 1, nmo_go_mm_used_blas = 0;

enum { M_A, M_B, M_BT, M_VERD, M_RLO, M_RHI, M_REF, M_XL, M_REDO, M_ACC, M_CTR, M_KTAB, M_Z, M_N };
static struct {
    pthread_mutex_t mu;
    void *p[M_N];
    size_t cap[M_N];
} mm_scr = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}};

static nmo_status mm_get(void **out, int k, size_t bytes, nmo_err *err)
{
    if (bytes == 0) bytes = 1;
    if (mm_scr.cap[k] < bytes) {
        nmo_gpu_free(mm_scr.p[k]);
        mm_scr.p[k] = NULL;
        mm_scr.cap[k] = 0;
        NMO_RETURN_IF_ERR(nmo_gpu_alloc(&mm_scr.p[k], bytes, err));
        mm_scr.cap[k] = bytes;
    }
    *out = mm_scr.p[k];
    return NMO_OK;
}

static int mm_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* the counts of report b added to a (gpu_oracle.c nmo_go_merge_report's list) */
static void mm_add_counts(nmo_report *a, const nmo_report *b)
{
    a->n_pass += b->n_pass, a->n_fail += b->n_fail, a->n_inconc += b->n_inconc;
    a->n_nonfinite += b->n_nonfinite, a->n_wide += b->n_wide;
    a->n_overflow += b->n_overflow, a->n_unbounded += b->n_unbounded;
    a->n_noscale += b->n_noscale, a->n_nan += b->n_nan, a->n_scaled += b->n_scaled;
    a->n_unc += b->n_unc, a->n_escalated += b->n_escalated;
    a->units_escalated += b->units_escalated;
    a->n_term_esc += b->n_term_esc, a->n_sum_cert += b->n_sum_cert;
    for (int i = 0; i <= NMO_WIDTH_HIST; i++) a->width_hist[i] += b->width_hist[i];
    if (b->width_max > a->width_max) a->width_max = b->width_max;
}

/* The CPU checker on row i's columns J[0..nj) (a case of their own, see the top): the
 * counts into *h, the per-element arrays at their places in h's full arrays, the worst
 * element (its index mapped back) into h->worst. */
static nmo_status mm_host_row(nmo_report *h, const nmo_case *c, const nmo_check_opts *o, int64_t i,
                              const int64_t *J, int64_t nj, const void *cand_row, nmo_err *err)
{
    const int64_t N = c->shape[1], K = c->shape[2];
    const size_t ies = nmo_fmt_bytes(c->plan.in), oes = nmo_fmt_bytes(c->plan.out);
    int64_t shape[3] = {1, nj, K};
    nmo_case sc;
    NMO_RETURN_IF_ERR(nmo_case_init_params(&sc, c->op, &c->plan, 3, shape, c->param, NULL, err));
    memcpy(sc.in[0].data, (const char *)c->in[0].data + (size_t)(i * K) * ies, (size_t)K * ies);
    for (int64_t k = 0; k < K; k++)
        for (int64_t t = 0; t < nj; t++)
            memcpy((char *)sc.in[1].data + (size_t)(k * nj + t) * ies,
                   (const char *)c->in[1].data + (size_t)(k * N + J[t]) * ies, ies);
    nmo_tensor hc;
    int64_t dc[2] = {1, nj};
    nmo_status s = nmo_tensor_init(&hc, c->plan.out, 2, dc, err);
    if (s == NMO_OK) s = nmo_tensor_alloc(&hc, err);
    if (s != NMO_OK) {
        nmo_case_free(&sc);
        return s;
    }
    for (int64_t t = 0; t < nj; t++)
        memcpy((char *)hc.data + (size_t)t * oes, (const char *)cand_row + (size_t)J[t] * oes, oes);
    nmo_report r;
    s = nmo_check(&r, &sc, &hc, o, err);
    if (s == NMO_OK) {
        mm_add_counts(h, &r);
        for (int64_t t = 0; t < nj; t++) {
            int64_t e = i * N + J[t];
            if (o->keep_verdicts) h->verdicts[0][e] = r.verdicts[0][t];
            if (o->keep_bounds) {
                h->rlo[0][e] = r.rlo[0][t];
                h->rhi[0][e] = r.rhi[0][t];
                h->bflags[0][e] = r.bflags[0][t];
            }
        }
        if (r.has_worst) {
            nmo_elem_info w = r.worst;
            w.index = i * N + J[w.index];
            if (!h->has_worst || nmo__elem_worse(&w, &h->worst)) h->worst = w, h->has_worst = 1;
        }
        nmo_report_free(&r);
    }
    nmo_tensor_free(&hc);
    nmo_case_free(&sc);
    return s;
}

/* One function for the same reason as nmo_gpu_check: the scratch buffers under one
 * mutex and one cleanup path. */
nmo_status nmo_gpu_check_matmul(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                                const void *const *in_dev, const nmo_check_opts *opts,
                                nmo_gpu_check_info *info, nmo_err *err)
{
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    nmo_gpu_check_info inf = {0};
    const char *why = NULL;
    if (!nmo_gpu_mm_supported(c, &why)) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: %s", why);
    if (o.mode == NMO_MODE_CERT || o.keep_enc)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                           "gpu oracle: the device tier is the fast engine (no certified-only mode, no enclosures kept)");
    NMO_RETURN_IF_ERR(nmo_op_check_plan(c->op, &c->plan, err));
    double t0 = mm_now_ms();
    const int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2], numel = M * N;
    const size_t ies = nmo_fmt_bytes(c->plan.in), oes = nmo_fmt_bytes(c->plan.out);
    const int out_bf16 = c->plan.out == NMO_BF16;
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = o.max_ulps > 0 ? o.max_ulps : nmo_plan_max_ulps(&c->plan);
    rep->n_out = 1;
    rep->out_n[0] = numel;
    rep->n = numel;
    rep->units = M;
    nmo_status s = NMO_OK;
    nmo_fctx fc;
    int fc_ok = 0, hrep_ok = 0;
    nmo_report hrep;
    memset(&hrep, 0, sizeof hrep);
    double *kt = NULL;
    int64_t *list = NULL, nl = 0;
    char *crow = NULL;
    nmo_go_acc acc;
    nmo_go_mm_ctr ctr;
    void *A, *B, *Bt, *verd, *rlo = NULL, *rhi = NULL, *ref, *xl, *redo, *accd, *ctrd, *ktd, *zd;
    const int64_t rcap = numel / 4 + 4096, xcap = numel / 16 + 4096, hcap = numel / 64 + 4096;
    double t1 = t0, t2 = t0;
    pthread_mutex_lock(&mm_scr.mu);
#define TRY(x) do { if ((s = (x)) != NMO_OK) goto done; } while (0)
    TRY(nmo_fctx_init(&fc, &c->plan, err));
    fc_ok = 1;
    if (fc.force_unc) {
        s = nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: the fast engine certifies nothing for this plan");
        goto done;
    }
    if (!(kt = malloc((size_t)(K + 1) * sizeof(double)))) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the k table");
        goto done;
    }
    for (int64_t m = 0; m <= K; m++) kt[m] = nmo_fe_dot_k(&fc, K, m);
    if (fc.geo_over) {
        s = nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                        "gpu oracle: plan field 'sum' holds fewer terms than matmul reduces at this "
                        "shape (%lld); the CPU oracle names the geometry to declare",
                        (long long)fc.geo_over);
        goto done;
    }
    if (in_dev) {
        A = (void *)in_dev[0], B = (void *)in_dev[1];
    } else {
        TRY(mm_get(&A, M_A, (size_t)(M * K) * ies, err));
        TRY(mm_get(&B, M_B, (size_t)(K * N) * ies, err));
        TRY(nmo_gpu_h2d(A, c->in[0].data, (size_t)(M * K) * ies, err));
        TRY(nmo_gpu_h2d(B, c->in[1].data, (size_t)(K * N) * ies, err));
    }
    TRY(mm_get(&Bt, M_BT, (size_t)(K * N) * ies, err));
    TRY(mm_get(&verd, M_VERD, (size_t)numel, err));
    if (o.keep_bounds) {
        TRY(mm_get(&rlo, M_RLO, (size_t)numel * sizeof(double), err));
        TRY(mm_get(&rhi, M_RHI, (size_t)numel * sizeof(double), err));
    }
    TRY(mm_get(&ref, M_REF, (size_t)rcap * sizeof(int64_t), err));
    TRY(mm_get(&xl, M_XL, (size_t)xcap * sizeof(int64_t), err));
    TRY(mm_get(&redo, M_REDO, (size_t)hcap * sizeof(int64_t), err));
    TRY(mm_get(&accd, M_ACC, sizeof(nmo_go_acc), err));
    TRY(mm_get(&ctrd, M_CTR, sizeof(nmo_go_mm_ctr), err));
    TRY(mm_get(&ktd, M_KTAB, (size_t)(K + 1) * sizeof(double), err));
    TRY(mm_get(&zd, M_Z, sizeof(unsigned long long), err));
    TRY(nmo_gpu_h2d(ktd, kt, (size_t)(K + 1) * sizeof(double), err));
    /* the counts only when a zero exists (else every count is K: gemm_counts' rule) */
    unsigned long long za = 0, zb = 0;
    TRY(nmo_go_mm_zeros(A, c->plan.in == NMO_BF16, M * K, zd, &za, err));
    TRY(nmo_go_mm_zeros(B, c->plan.in == NMO_BF16, K * N, zd, &zb, err));
    nmo_go_mm_args ga = {A, B, cand_dev, Bt, c->plan.in == NMO_BF16, out_bf16, M, N, K, ktd, kt[K], fc.ua,
                         (double)K * fc.etaa, fc.maxfin_a, rep->max_ulps, verd, rlo, rhi, ref, rcap, xl, xcap, redo, hcap,
                         ctrd, accd, nmo_gpu_mm_host_every};
    TRY(nmo_go_mm_judge(&ga, za + zb > 0, &acc, &ctr, err));
    t1 = mm_now_ms();
    nl = (int64_t)acc.n_redo;
    if (ctr.n_refine > (unsigned long long)rcap || ctr.n_exact > (unsigned long long)xcap || nl > hcap) {
        /* lists too long: the CPU checker on all */
        nmo_tensor hc;
        TRY(nmo_tensor_init(&hc, c->plan.out, 2, (int64_t[2]){M, N}, err));
        TRY(nmo_tensor_alloc(&hc, err));
        s = nmo_gpu_d2h(hc.data, cand_dev, (size_t)numel * oes, err);
        if (s == NMO_OK) s = nmo_check(rep, c, &hc, &o, err);
        nmo_tensor_free(&hc);
        inf.rows_host = numel;
        goto done;
    }
    if (!(list = malloc((size_t)(nl + 1) * sizeof(int64_t))) || !(crow = malloc((size_t)N * oes))) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the list");
        goto done;
    }
    if (nl > 0) TRY(nmo_gpu_d2h(list, redo, (size_t)nl * sizeof(int64_t), err));
    qsort(list, (size_t)nl, sizeof(int64_t), mm_cmp);
    inf.rows_host = nl;
    inf.rows_device = numel - nl;
    inf.elems_scaled = (int64_t)acc.n_scaled;
    nmo_gpu_mm_refined += (int64_t)ctr.n_refine - (int64_t)ctr.n_redo_refine - (int64_t)ctr.n_exact;
    nmo_gpu_mm_exact += (int64_t)ctr.n_exact - (int64_t)ctr.n_redo_exact;
    /* the CPU checker on the listed elements, a row at a time */
    hrep.n_out = 1;
    if (nl > 0) {
        if (o.keep_verdicts) hrep.verdicts[0] = calloc((size_t)numel, 1);
        if (o.keep_bounds) {
            hrep.rlo[0] = malloc((size_t)numel * sizeof(double));
            hrep.rhi[0] = malloc((size_t)numel * sizeof(double));
            hrep.bflags[0] = calloc((size_t)numel, 1);
        }
        hrep_ok = 1;
        if ((o.keep_verdicts && !hrep.verdicts[0]) ||
            (o.keep_bounds && (!hrep.rlo[0] || !hrep.rhi[0] || !hrep.bflags[0]))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the host's elements");
            goto done;
        }
        int64_t *J = malloc((size_t)N * sizeof(int64_t));
        if (!J) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the list");
            goto done;
        }
        for (int64_t a = 0; a < nl && s == NMO_OK;) {
            int64_t i = list[a] / N, nj = 0;
            while (a < nl && list[a] / N == i) J[nj++] = list[a++] % N;
            s = nmo_gpu_d2h(crow, (const char *)cand_dev + (size_t)(i * N) * oes, (size_t)N * oes, err);
            if (s == NMO_OK) s = mm_host_row(&hrep, c, &o, i, J, nj, crow, err);
        }
        free(J);
        TRY(s);
    }
    /* the worst element of the device's: its details by the CPU checker on it alone */
    nmo_elem_info wi;
    int has_wi = 0;
    if (acc.n_pass + acc.n_fail > 0) {
        int64_t idx = 0x3fffffff - (int64_t)(acc.worst & 0x3fffffffull), j = idx % N;
        nmo_report w;
        memset(&w, 0, sizeof w);
        nmo_check_opts wo = {0};
        wo.mode = NMO_MODE_ESCALATE;
        wo.max_ulps = o.max_ulps;
        TRY(nmo_gpu_d2h(crow, (const char *)cand_dev + (size_t)((idx / N) * N) * oes, (size_t)N * oes, err));
        TRY(mm_host_row(&w, c, &wo, idx / N, &j, 1, crow, err));
        if (!w.has_worst || w.worst.index != idx) {
            s = nmo_err_set(err, NMO_ERR_GENERIC, "gpu oracle: no details for the worst element %lld", (long long)idx);
            goto done;
        }
        wi = w.worst;
        has_wi = 1;
    }
    t2 = mm_now_ms();
    TRY(nmo_go_merge_report(rep, &o, &acc, hrep_ok ? &hrep : NULL, has_wi ? &wi : NULL, list, nl, 1, numel, verd,
                            rlo, rhi, err));
    if (o.keep_bounds) nmo_go_mark_scaled(rep, out_bf16, list, nl, 1);
    inf.ms_device = t1 - t0;
    inf.ms_host_redo = t2 - t1;
    rep->seconds = (mm_now_ms() - t0) * 1e-3;
done:
#undef TRY
    if (fc_ok) nmo_fctx_clear(&fc);
    if (hrep_ok) nmo_report_free(&hrep);
    pthread_mutex_unlock(&mm_scr.mu);
    free(kt), free(list), free(crow);
    if (s != NMO_OK) nmo_report_free(rep);
    if (info) *info = inf;
    return s;
}
