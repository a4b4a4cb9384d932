/* numoracle: CPU candidates for reduction — emulations of GPU row-reduction kernels
 * (sum / mean / max over the last axis).
 *
 *   in  x[..., N]   dtype plan->in
 *   out y[...]      dtype plan->out (one value per row)
 *   param[0] kind: 0 sum, 1 mean, 2 max
 *
 * Rounding points of every kernel here (fp32): each addition of the kernel's reduction
 * tree; for the mean either s/N, s*(1/N), or every term scaled by (1/N) before the
 * reduction; the max is exact; the final store into plan->out.
 * Correct variants differ in reduction tree and in where the mean divides; the first
 * (block256) is the default. Mutants are the default kernel with one bug each and are
 * detectable with the default kind (sum); tests/test_linalg_params.c adds the
 * kind-specific bugs (mean by N-1, max initialised with 0). */
#include "cand_util.h"

typedef enum { RD_MEAN_DIV = 0, RD_MEAN_RCP, RD_MEAN_PRESCALE } rd_mean;

typedef struct {
    nmo_cu_red red;     /* reduction shape (the max uses the same lanes) */
    rd_mean mean;       /* how the mean divides */
    /* mutant knobs */
    int acc16;          /* sequential bf16 running sum */
    int skip_last;      /* loop bound N-1 */
    int warp0_only;     /* block reduction returns warp 0's partial only */
    int store_rz;       /* truncating store */
} rd_cfg;

static float rd_max(const float *x, int64_t n, nmo_cu_red red) {
    int lanes = red == NMO_CU_RED_BLOCK256 ? 256 : red == NMO_CU_RED_WARP32 ? 32 :
                red == NMO_CU_RED_VEC4 ? 4 : 1;
    float v[256] = {0};
    for (int l = 0; l < lanes; l++) {
        v[l] = -INFINITY;
        for (int64_t j = l; j < n; j += lanes) v[l] = fmaxf(v[l], x[j]);
    }
    float m = v[0];
    for (int l = 1; l < lanes; l++) m = fmaxf(m, v[l]);
    return m;
}

static float rd_sum(const float *x, int64_t n, const rd_cfg *c) {
    if (c->acc16) return nmo_cu_sum_acc16(x, NULL, n, NMO_BF16, 0);
    if (c->warp0_only && c->red == NMO_CU_RED_BLOCK256) {
        float v[256];
        for (int t = 0; t < 256; t++) v[t] = nmo_cu_sum_seq(x, NULL, t, n, 256, 0);
        return nmo_cu_warp_sum32(v); /* warps 1..7 never combined */
    }
    return nmo_cu_reduce(x, NULL, n, c->red, 0);
}

static nmo_status rd_run(const nmo_cand_args *a, nmo_err *err, const rd_cfg *c) {
    static const char op[] = "reduction";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 1, 1, err));
    const nmo_tensor *x = &a->in[0];
    nmo_tensor *y = &a->out[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "reduction candidate: x has %d dims", x->ndims);
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    int64_t N = x->dims[x->ndims - 1];
    int64_t M = nmo_cu_numel(x) / N;
    if (nmo_cu_numel(y) != M || y->dtype != a->plan->out)
        return nmo_err_set(err, NMO_ERR_USAGE, "reduction candidate: y must hold %lld %s values",
                           (long long)M, nmo_cu_fmt_name(a->plan->out));
    if (N < 2) return nmo_err_set(err, NMO_ERR_USAGE, "reduction candidate: row length %lld too short", (long long)N);
    int kind = a->n_param >= 1 && a->param ? (int)a->param[0] : 0;
    float *xv = nmo_cu_load(x);
    float *yv = (float *)malloc((size_t)M * sizeof(float));
    float *t = (float *)malloc((size_t)N * sizeof(float));
    if (!xv || !yv || !t) {
        free(xv), free(yv), free(t);
        return nmo_err_set(err, NMO_ERR_NOMEM, "reduction candidate: out of memory");
    }
    const int64_t nred = c->skip_last ? N - 1 : N;
    const float nf = (float)N, inv_n = 1.0f / nf;
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N;
        float r;
        if (kind == 2) {
            r = rd_max(xr, nred, c->red);
        } else if (kind == 1 && c->mean == RD_MEAN_PRESCALE) {
            for (int64_t j = 0; j < N; j++) t[j] = xr[j] * inv_n;
            r = rd_sum(t, nred, c);
        } else {
            r = rd_sum(xr, nred, c);
            if (kind == 1) r = c->mean == RD_MEAN_RCP ? r * inv_n : r / nf;
        }
        yv[i] = r;
    }
    nmo_cu_store(y, yv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(yv), free(t);
    return NMO_OK;
}

#define RD_DEFAULT .red = NMO_CU_RED_BLOCK256, .mean = RD_MEAN_DIV

#define RD_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const rd_cfg c = {__VA_ARGS__};                                        \
        return rd_run(a, err, &c);                                                    \
    }

RD_CAND(rd_block256, RD_DEFAULT)
RD_CAND(rd_warp32, .red = NMO_CU_RED_WARP32, .mean = RD_MEAN_RCP)
RD_CAND(rd_vec4_prescale, .red = NMO_CU_RED_VEC4, .mean = RD_MEAN_PRESCALE)
RD_CAND(rd_seq, .red = NMO_CU_RED_SEQ, .mean = RD_MEAN_RCP)
RD_CAND(rd_pairwise, .red = NMO_CU_RED_PAIRWISE, .mean = RD_MEAN_PRESCALE)

RD_CAND(rd_mut_acc_bf16, RD_DEFAULT, .acc16 = 1)
RD_CAND(rd_mut_skip_last, RD_DEFAULT, .skip_last = 1)
RD_CAND(rd_mut_warp0_only, RD_DEFAULT, .warp0_only = 1)
RD_CAND(rd_mut_store_rz, RD_DEFAULT, .store_rz = 1)

const nmo_cand nmo_cand_reduction[] = {
    {"reduction", "block256", 1,
     "256-thread block: strided partials, 8 warp xor-butterflies + warp 0; mean s/N", rd_block256, NULL},
    {"reduction", "warp32", 1, "one warp per row: 32 lane-strided partials + xor butterfly; mean s*(1/N)",
     rd_warp32, NULL},
    {"reduction", "vec4_prescale", 1,
     "float4 loads, 4 accumulators (a0+a1)+(a2+a3); mean: every term times (1/N) before the sum",
     rd_vec4_prescale, NULL},
    {"reduction", "seq", 1, "one thread per row, sequential; mean s*(1/N)", rd_seq, NULL},
    {"reduction", "pairwise", 1, "pairwise tree; mean: terms times (1/N) first", rd_pairwise, NULL},
    {"reduction", "mut_acc_bf16", 0, "MUTANT: running sum in a bf16 accumulator (rounded after every add)",
     rd_mut_acc_bf16, NULL},
    {"reduction", "mut_skip_last", 0, "MUTANT: loop bound N-1 (last element of the row ignored)",
     rd_mut_skip_last, NULL},
    {"reduction", "mut_warp0_only", 0,
     "MUTANT: block reduction returns warp 0's butterfly (warps 1..7 never combined through smem)",
     rd_mut_warp0_only, NULL},
    {"reduction", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", rd_mut_store_rz, NULL},
};
const int nmo_cand_reduction_n = (int)(sizeof nmo_cand_reduction / sizeof nmo_cand_reduction[0]);
