/* numoracle: the certified enclosure engine (DESIGN §5) — MPFR, outward rounding.
 * Same primitives and the same semantics as enc_fast.h (read its header comment): each
 * primitive evaluates its formula at NMO_CERT_PREC bits, rounded outward, and snaps to
 * the lattice. This engine is the definition of truth. */
#ifndef NUMORACLE_ENC_CERT_H
#define NUMORACLE_ENC_CERT_H

#include <mpfr.h>
#include "numoracle/op.h"
#include "engine/fmt_mpfr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_CERT_PREC 128
#define NMO_CSCRATCH 8

typedef struct {
    mpfr_t lo, hi;
    uint32_t flags;
    double mag; /* error scale: the same binary64 formulas as the fast engine (enc_fast.h) */
} nmo_cenc;

typedef struct nmo_cctx {
    nmo_plan plan;
    nmo_fmt cf, af;
    mpfr_prec_t prec;
    int ftz;
    double uc, ua, etac, etaa, minnorm_c, maxfin_a, minsub_c;
    mpfr_t t[6];                 /* temporaries */
    double *dbuf[NMO_CSCRATCH];
    int64_t dcap[NMO_CSCRATCH];
    nmo_cenc *ebuf[NMO_CSCRATCH];
    int64_t ecap[NMO_CSCRATCH];
    mpfr_ptr *pbuf;              /* pointer arrays for mpfr_sum */
    int64_t pcap;
    int gemm_partials;           /* as nmo_fctx's (nmo_gemm_partials_k) */
    int64_t geo_over;            /* as nmo_fctx's: a reduction beyond the geometry */
    int exp_flat;                /* as nmo_fctx's */
} nmo_cctx;

nmo_status nmo_cctx_init(nmo_cctx *c, const nmo_plan *p, nmo_err *err);
void nmo_cctx_clear(nmo_cctx *c);
double *nmo_cctx_dvec(nmo_cctx *c, int slot, int64_t n);
nmo_cenc *nmo_cctx_evec(nmo_cctx *c, int slot, int64_t n);

void nmo_cenc_init(nmo_cctx *c, nmo_cenc *x);
void nmo_cenc_clear(nmo_cctx *c, nmo_cenc *x);
void nmo_cenc_set(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_set_d(nmo_cctx *c, nmo_cenc *r, double v);
void nmo_cenc_set_fenc(nmo_cctx *c, nmo_cenc *r, const nmo_fenc *a);
void nmo_cenc_const(nmo_cctx *c, nmo_cenc *r, double v);
void nmo_cenc_add(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_sub(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_neg(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_mul(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_div(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_div_si(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, int64_t n);
void nmo_cenc_fma(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, const nmo_cenc *d);
void nmo_cenc_sqrt(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_rsqrt(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_exp(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_log(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_tanh(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_erf(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_sigmoid(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a);
void nmo_cenc_max(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_min(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_mul3(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, const nmo_cenc *d);
/* Row i of C = A B (nmo_fenc_gemm_row): out[j] = gemm_elem(i, j) exported. */
void nmo_cenc_gemm_row(nmo_cctx *c, nmo_fenc *out, const nmo_tensor *A, const nmo_tensor *B, int64_t i);
/* Softmax rows (nmo_fenc_exp_sub_row, nmo_fenc_divmul_row): ee[j] = exp(x_j - m);
 * out[j] = hull(e_j / s, e_j * rcp) exported. */
void nmo_cenc_exp_sub_row(nmo_cctx *c, nmo_cenc *ee, const double *x, const nmo_cenc *m, int64_t n);
void nmo_cenc_divmul_row(nmo_cctx *c, nmo_fenc *out, const nmo_cenc *e, const nmo_cenc *s,
                         const nmo_cenc *rcp, int64_t n);
/* Row form of mul3 (nmo_fenc_mul3_row): out[j] = mul3(x_j, r, w_j) exported. */
void nmo_cenc_mul3_row(nmo_cctx *c, nmo_fenc *out, const double *x, const nmo_cenc *r,
                       const double *w, int64_t n);
void nmo_cenc_round(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, nmo_fmt f, nmo_rnd rnd, int sr);
void nmo_cenc_sum(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n);
void nmo_cenc_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n);
void nmo_cenc_sumsq_d(nmo_cctx *c, nmo_cenc *r, const double *x, int64_t n);
void nmo_cenc_max_v(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n);
void nmo_cenc_hull(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b);
void nmo_cenc_gemm_elem(nmo_cctx *c, nmo_cenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j);
void nmo_cenc_gemm_partials(nmo_cctx *c, int pf);
/* Endpoints are lattice values: exactly doubles. */
void nmo_cenc_export(nmo_cctx *c, nmo_fenc *dst, const nmo_cenc *src);
/* Sharpened any-order sum / dot product (enc_fast.h: nonzero-term count, dominant term). */
void nmo_cenc_sum_sharp(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n);
void nmo_cenc_dot_sharp_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n);

/* norms group: see nmo_fenc_prodk / nmo_fenc_dotk in enc_fast.h */
void nmo_cenc_prodk(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *const *f, int k, int fused);
void nmo_cenc_dotk(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *const *f, int k, int64_t n, int rounds);
void nmo_cenc_scale_shift(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, const nmo_cenc *a,
                          const nmo_cenc *m, const nmo_cenc *b);
/* linear algebra and attention (numoracle issue 3): see enc_fast.h */
void nmo_cenc_dot_ed(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, const double *y, int64_t n,
                     double k);
void nmo_cenc_widen(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, double rel, double abs);
void nmo_cenc_gemm_elem_t(nmo_cctx *c, nmo_cenc *r, const nmo_tensor *X, int tx,
                          const nmo_tensor *Y, int ty, int64_t i, int64_t j);

#ifdef __cplusplus
}
#endif
#endif
