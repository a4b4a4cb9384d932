/* numoracle: helpers of the pointwise CPU candidates (silu, gelu, swiglu, geglu, their
 * backward passes, rope, broadcasting add/mul).
 *
 * Emulations of library functions that are not correctly rounded on the GPU: the
 * correctly rounded value (long double libm, then one rounding to float) moved by 0 or 1
 * fp32 ulp in a deterministic, input-dependent direction, never across an exact or
 * saturated result (0, +-1, the subnormal range). Error <= 1.5 ulp, inside CUDA's
 * documented tanhf 2, erff 2 and the plan's sigmoid 3 ulp.
 *
 * pw_cand_same runs an elementwise kernel over operators whose inputs and outputs all
 * have one shape: every element's outputs come from an element function of the inputs
 * at that index. pw_cand_cols runs one over x[..., N] plus per-column vectors [N]
 * (add, mul, dyt). */
#ifndef NMO_PW_CAND_UTIL_H
#define NMO_PW_CAND_UTIL_H

#include <stdio.h>

#include "cand_util.h"
#include "numoracle/op.h"

static inline float pw_nudge_fn(float r, float x, uint32_t salt) {
    if (!isfinite(r) || r == 0.0f || fabsf(r) == 1.0f || fabsf(r) < FLT_MIN) return r;
    float q = nmo_cu_nudge(r, nmo_cu_dir(x, salt));
    if (fabsf(q) > 1.0f) return r; /* never leave [-1, 1] */
    return q;
}

static inline float pw_tanhf_cr(float x) { return isnan(x) ? x : (float)tanhl((long double)x); }
static inline float pw_erff_cr(float x) { return isnan(x) ? x : (float)erfl((long double)x); }
static inline float pw_sigmoidf_cr(float x) {
    if (isnan(x)) return x;
    return (float)(1.0L / (1.0L + expl(-(long double)x)));
}
/* CUDA tanhf / erff emulations (<= 1.5 ulp) and a library sigmoid (<= 1.5 ulp). */
static inline float pw_tanhf(float x) { return pw_nudge_fn(pw_tanhf_cr(x), x, 0x54414e48U); }
static inline float pw_erff(float x) { return pw_nudge_fn(pw_erff_cr(x), x, 0x45524646U); }
static inline float pw_sigmoidf(float x) { return pw_nudge_fn(pw_sigmoidf_cr(x), x, 0x5349474dU); }

/* Elementwise kernel body: outputs out[0..n_out) of one element from its inputs. kind
 * selects the variant, param are the operator parameters, dt is the storage dtype
 * (plan->in: what an eager kernel rounds its intermediates to). */
typedef void (*pw_elem_fn)(int kind, const double *param, const float *in, float *out,
                           nmo_fmt dt);

#define PW_MAX_IO 4

static inline nmo_status pw_cand_same(const nmo_cand_args *a, nmo_err *err, const char *op,
                                      int n_in, int n_out, pw_elem_fn fn, int kind,
                                      int store_rz) {
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, n_in, n_out, err));
    if (n_in > PW_MAX_IO || n_out > PW_MAX_IO)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: too many tensors", op);
    const nmo_tensor *x0 = &a->in[0];
    if (x0->ndims < 1 || x0->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: input has %d dims", op, x0->ndims);
    char what[32];
    for (int k = 0; k < n_in; k++) {
        snprintf(what, sizeof what, "input %d", k);
        NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[k], op, what, a->plan->in, x0->ndims,
                                              x0->dims, err));
    }
    for (int k = 0; k < n_out; k++) {
        snprintf(what, sizeof what, "output %d", k);
        NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[k], op, what, a->plan->out, x0->ndims,
                                              x0->dims, err));
    }
    if (a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad parameter block", op);
    static const double no_param[8] = {0};
    const double *param = a->n_param > 0 ? a->param : no_param;
    int64_t n = nmo_cu_numel(x0);
    float *iv[PW_MAX_IO] = {0}, *ov[PW_MAX_IO] = {0};
    int ok = 1;
    for (int k = 0; k < n_in; k++) ok &= (iv[k] = nmo_cu_load(&a->in[k])) != NULL;
    for (int k = 0; k < n_out; k++)
        ok &= (ov[k] = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float))) != NULL;
    if (ok) {
        for (int64_t i = 0; i < n; i++) {
            float in[PW_MAX_IO], o[PW_MAX_IO];
            for (int k = 0; k < n_in; k++) in[k] = iv[k][i];
            fn(kind, param, in, o, a->plan->in);
            for (int k = 0; k < n_out; k++) ov[k][i] = o[k];
        }
        for (int k = 0; k < n_out; k++)
            nmo_cu_store(&a->out[k], ov[k], store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    }
    for (int k = 0; k < PW_MAX_IO; k++) free(iv[k]), free(ov[k]);
    return ok ? NMO_OK : nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
}

/* One candidate function per variant of an elementwise operator. */
#define PW_CAND(fname, op, nin, nout, fn, kind, rz)                                       \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                       \
        return pw_cand_same(a, err, op, nin, nout, fn, kind, rz);                         \
    }

/* ---------------------------------------------------------------- rope */

/* Rotary embedding kernels (forward and backward), refs/rope_common.h's layout:
 * x[B,H,S,D], cos/sin[S,D], param layout (0 NeoX rotate_half, 1 GPT-J interleaved). */
enum {
    PW_ROPE_LIGER = 0, /* both products rounded, then the add/sub; cos/sin of the first
                          element of the pair (Liger loads the first half of the row) */
    PW_ROPE_FMA_A,     /* fmaf(x, cos, x_p*sin): nvcc contracting the first product */
    PW_ROPE_FMA_B,     /* fmaf(x_p, sin, x*cos): the second product contracted */
    PW_ROPE_EAGER,     /* HF eager in the storage dtype: each product rounded to dt */
    PW_ROPE_M_LAYOUT,  /* MUTANT: the other pairing (GPT-J for NeoX and vice versa) */
    PW_ROPE_M_SIGN,    /* MUTANT: rotation sign flipped (forward: by -theta; backward:
                          the forward rotation instead of its transpose) */
    PW_ROPE_M_COS_HEAD,/* MUTANT: cos/sin row indexed by the head, not the position */
    PW_ROPE_M_OFF1     /* MUTANT: partner index off by one */
};

static inline nmo_status pw_rope_run(const nmo_cand_args *a, nmo_err *err, const char *op,
                                     int bwd, int kind, int store_rz) {
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims != 4 || x->dims[3] < 2 || x->dims[3] % 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: x must be [B,H,S,D], D even", op);
    int64_t H = x->dims[1], S = x->dims[2], D = x->dims[3], h = D / 2, sd[2] = {S, D};
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, 4, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "cos", a->plan->in, 2, sd, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "sin", a->plan->in, 2, sd, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, 4, x->dims, err));
    if (a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad parameter block", op);
    int gptj = a->n_param > 0 && a->param[0] != 0;
    if (kind == PW_ROPE_M_LAYOUT) gptj = !gptj;
    nmo_fmt dt = a->plan->in;
    int64_t n = nmo_cu_numel(x), rows = n / D;
    float *xv = nmo_cu_load(x), *cv = nmo_cu_load(&a->in[1]), *sv = nmo_cu_load(&a->in[2]);
    float *yv = (float *)malloc((size_t)n * sizeof(float));
    if (!xv || !cv || !sv || !yv) {
        free(xv), free(cv), free(sv), free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t s = r % S, head = (r / S) % H;
        const float *xr = xv + r * D;
        const float *cr = cv + (kind == PW_ROPE_M_COS_HEAD ? head % S : s) * D;
        const float *sr = sv + (kind == PW_ROPE_M_COS_HEAD ? head % S : s) * D;
        for (int64_t j = 0; j < D; j++) {
            int64_t p, q;
            float sg;
            if (gptj) p = j ^ 1, q = j & ~(int64_t)1, sg = (j & 1) ? 1.0f : -1.0f;
            else p = j < h ? j + h : j - h, q = j % h, sg = j < h ? -1.0f : 1.0f;
            if (kind == PW_ROPE_M_OFF1) p = gptj ? (p + 2) % D : (j + h + 1) % D;
            if (bwd) sg = -sg;
            if (kind == PW_ROPE_M_SIGN) sg = -sg;
            float c = cr[j], sn = bwd ? sr[p] : sr[j];
            if (kind == PW_ROPE_LIGER) c = cr[q], sn = sr[q];
            float u = xr[j], v = sg * xr[p], y;
            switch (kind) {
            case PW_ROPE_FMA_A: y = fmaf(u, c, v * sn); break;
            case PW_ROPE_FMA_B: y = fmaf(v, sn, u * c); break;
            case PW_ROPE_EAGER: y = nmo_cu_round_to(dt, u * c) + nmo_cu_round_to(dt, v * sn); break;
            default: y = u * c + v * sn; break;
            }
            yv[r * D + j] = y;
        }
    }
    nmo_cu_store(&a->out[0], yv, store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(cv), free(sv), free(yv);
    return NMO_OK;
}

#define PW_ROPE_CAND(fname, op, bwd, kind, rz)                                            \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                       \
        return pw_rope_run(a, err, op, bwd, kind, rz);                                    \
    }

/* ---------------------------------------------------------------- per-column operators */

/* pw_cand_cols runs any operator of the form "x[..., N] plus per-column parameters":
 *   out_k[r, j] = f_k(x[r, j], v_1[j], ..., v_m[j]; param)
 * in[0] = x of any shape, in[1..n_in) column vectors [N] (weights, biases, broadcast
 * operands: refs/bcast_common.h's pw_cols_setup), every output of x's shape. The element
 * function gets in[] = {x[r, j], v_1[jc], ...} where jc is the column the kernel reads
 * (`col`: the right one, or a broadcast-stride bug), the parameters, the plan and the
 * store rounding the runner applies. Tensor names in errors are the operator's own. */
typedef struct {
    const double *param;     /* the operator's parameters (zeros when it has none) */
    const nmo_plan *plan;
    nmo_cu_store_mode store; /* the store rounding applied to every output */
} pw_col_ctx;
typedef void (*pw_col_fn)(int kind, const pw_col_ctx *cx, const float *in, float *out);

enum {
    PW_COL_J = 0,  /* v[j]: the right column */
    PW_COL_ROW,    /* MUTANT: wrong broadcast stride, v[r mod N] (the row index) */
    PW_COL_ZERO,   /* MUTANT: stride 0 on the last dim, v[0] */
    PW_COL_OFF1,   /* MUTANT: v[(j+1) mod N] */
    PW_COL_NO_TAIL /* MUTANT: a 4-wide kernel that never writes the N mod 4 tail */
};

static inline nmo_status pw_cand_cols(const nmo_cand_args *a, nmo_err *err, const char *op,
                                      int n_in, int n_out, pw_col_fn fn, int kind, int col,
                                      int store_rz) {
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, n_in, n_out, err));
    if (n_in > PW_MAX_IO || n_out > PW_MAX_IO)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: too many tensors", op);
    const nmo_op *d = nmo_op_find(op);
    const char *iname[PW_MAX_IO], *oname[PW_MAX_IO];
    for (int k = 0; k < PW_MAX_IO; k++) {
        iname[k] = d && k < d->n_in ? d->in[k].name : "input";
        oname[k] = d && k < d->n_out ? d->out[k].name : "output";
    }
    const nmo_tensor *x = &a->in[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: %s has %d dims", op, iname[0], x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, iname[0], a->plan->in, x->ndims, x->dims, err));
    for (int k = 1; k < n_in; k++)
        NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[k], op, iname[k], a->plan->in, 1, &N, err));
    for (int k = 0; k < n_out; k++)
        NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[k], op, oname[k], a->plan->out, x->ndims,
                                              x->dims, err));
    if (a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad parameter block", op);
    static const double no_param[NMO_MAX_PARAMS] = {0};
    pw_col_ctx cx = {a->n_param > 0 ? a->param : no_param, a->plan,
                     store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan)};
    int64_t n = nmo_cu_numel(x), rows = N > 0 ? n / N : 0, body = N / 4 * 4;
    float *iv[PW_MAX_IO] = {0}, *ov[PW_MAX_IO] = {0};
    int ok = 1;
    for (int k = 0; k < n_in; k++) ok &= (iv[k] = nmo_cu_load(&a->in[k])) != NULL;
    for (int k = 0; k < n_out; k++)
        ok &= (ov[k] = (float *)calloc((size_t)(n > 0 ? n : 1), sizeof(float))) != NULL;
    if (ok) {
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < (col == PW_COL_NO_TAIL ? body : N); j++) {
                int64_t jc = col == PW_COL_ROW ? r % N : col == PW_COL_ZERO ? 0 :
                             col == PW_COL_OFF1 ? (j + 1) % N : j;
                float in[PW_MAX_IO], o[PW_MAX_IO];
                in[0] = iv[0][r * N + j];
                for (int k = 1; k < n_in; k++) in[k] = iv[k][jc];
                fn(kind, &cx, in, o);
                for (int k = 0; k < n_out; k++) ov[k][r * N + j] = o[k];
            }
        for (int k = 0; k < n_out; k++) nmo_cu_store(&a->out[k], ov[k], cx.store);
    }
    for (int k = 0; k < PW_MAX_IO; k++) free(iv[k]), free(ov[k]);
    return ok ? NMO_OK : nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
}

/* One candidate function per variant of a per-column operator. */
#define PW_COLS_CAND(fname, op, nin, nout, fn, kind, col, rz)                             \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                       \
        return pw_cand_cols(a, err, op, nin, nout, fn, kind, col, rz);                    \
    }

/* ---------------------------------------------------------------- broadcasting add/mul */

/* v rounded RNE into bf16 or fp16 in one step (numoracle/conv16.h). */
static inline double pw_round16(double v, nmo_fmt f) { return nmo_f64_round16(v, f == NMO_BF16); }

/* y[r, j] = a[r, j] op b[j] through pw_cand_cols: the arithmetic variants (a float4 body
 * computes the same values as one thread per element; the column bugs are PW_COL_*). */
enum {
    PW_BC_SCALAR = 0, /* fp32 op, store rounding */
    PW_BC_NATIVE16,   /* native 16-bit arithmetic: the exact result rounded once into
                         the storage dtype (binary64 holds it exactly or rounds
                         innocuously); RNE stores only, otherwise as PW_BC_SCALAR */
    PW_BC_FMA,        /* mul as fmaf(a, b, +0) (sign of a zero product may differ),
                         add as fmaf(b, 1, a) */
    PW_BC_MUL = 8     /* or-ed in: the product instead of the sum */
};

static inline void pw_bcast_elem(int kind, const pw_col_ctx *cx, const float *in, float *out) {
    int mul = (kind & PW_BC_MUL) != 0;
    kind &= ~PW_BC_MUL;
    float x0 = in[0], b = in[1];
    if (kind == PW_BC_NATIVE16 && cx->store == NMO_CU_ST_RNE && cx->plan->out != NMO_FP32) {
        double e = mul ? (double)x0 * (double)b : (double)x0 + (double)b;
        out[0] = (float)pw_round16(e, cx->plan->out); /* exact in float: the store keeps it */
    } else if (kind == PW_BC_FMA) {
        out[0] = mul ? fmaf(x0, b, 0.0f) : fmaf(b, 1.0f, x0);
    } else {
        out[0] = mul ? x0 * b : x0 + b;
    }
}

#define PW_BCAST_CAND(fname, op, mul, kind, col, rz)                                      \
    PW_COLS_CAND(fname, op, 2, 1, pw_bcast_elem, (kind) | ((mul) ? PW_BC_MUL : 0), col, rz)

#endif
