/* numoracle: fast engine context and its batched primitives (the scalar primitives are
 * inline in enc_fast.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_config.h"
#include "engine/enc_fast.h"
#include "engine/enc_cert.h"
#include "engine/dot_exact.h"

#if NMO_HAVE_BLAS
#include <cblas.h>
#endif

/* ---- vectorized row kernels ----------------------------------------------------------
 * Loops over whole rows of the common case, in straight-line code the compiler
 * vectorizes (at -O2 as well: GCC's -O2 cost model vectorizes almost nothing). Their
 * selects on comparisons (min/max of two products, the certainty tests) are only
 * if-converted, hence vectorized, without -ftrapping-math: that option only concerns
 * floating-point exceptions being raised as traps, which numoracle never enables nor
 * reads; values are unchanged (-ffp-contract=off, restated in the pragma so that the
 * optimize options cannot drop it; no reassociation; signed zeros and NaNs kept: a
 * vector min of two doubles is used only where it equals the C select). On
 * x86-64 with glibc an AVX2 clone is selected at load time (ifunc), the generic SSE2
 * version otherwise. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#define NMO_VEC_PRAGMA 1
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define NMO_VEC_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NMO_VEC_CLONES
#endif

/* nmo_fe_rn32_try, compiled with this region's options so that it inlines */
static inline int rn32_try_v(double v, double ee, double *res) { NMO_FE_RN32_TRY_BODY }

NMO_VEC_CLONES
void nmo_fe_mul3_row_kernel(double *restrict lo, double *restrict hi, int64_t *restrict ok,
                            const double *restrict x, const double *restrict w, double rl, double rh,
                            double rm, double uc, double etac, int64_t n)
{
    /* exactly nmo_fenc_mul3's operations for a point * [rl, rh] * point */
    for (int64_t j = 0; j < n; j++) {
        double xv = x[j], wv = w[j];
        double ad = xv * wv; /* exact */
        double p1 = ad * rl, p2 = ad * rh;
        double plo = p1 < p2 ? p1 : p2, phi = p1 < p2 ? p2 : p1;
        double ax = fabs(xv), aw = fabs(wv);
        double m = ax > rm ? ax : rm;
        m = m > aw ? m : aw;
        double eta = etac * m;
        double vlo = plo - fabs(plo) * uc - eta;
        double vhi = phi + fabs(phi) * uc + eta;
        /* nmo_fe_snap's radius: e + |v| 2^-50 + 2^-1060, e = (|v| + eta) 2^-50 */
        double elo = fabs(vlo) * 0x1p-50 + eta * 0x1p-50, ehi = fabs(vhi) * 0x1p-50 + eta * 0x1p-50;
        double l, h;
        int64_t k = rn32_try_v(vlo, elo + fabs(vlo) * 0x1p-50 + 0x1p-1060, &l);
        k &= rn32_try_v(vhi, ehi + fabs(vhi) * 0x1p-50 + 0x1p-1060, &h);
        k &= (fabs(xv) <= 0x1p1000) & (fabs(wv) <= 0x1p1000); /* finite (NaN fails too) */
        lo[j] = l;
        hi[j] = h;
        ok[j] = k;
    }
}

/* The common case of nmo_fenc_exp on a point d (d != 0, exp(d) = v computed by libm):
 * the ulp:n sides of nmo_fe_fn_side for n >= 1, with the fast directed snaps of
 * nmo_fe_snap. ok[j] = 0 when any step leaves the common case (v not in
 * [2^-140, 2^100], the ulp of v uncertain, a snap not decided): the caller redoes the
 * element with nmo_fenc_exp. */
NMO_VEC_CLONES
void nmo_fe_exp_row_kernel(double *restrict lo, double *restrict hi, int64_t *restrict ok,
                           const double *restrict v, int64_t n, int nulp)
{
    for (int64_t j = 0; j < n; j++) {
        double vv = v[j];
        double e = fabs(vv) * 0x1p-51;
        /* nmo_fe_ulp(FP32, x) = 2^(max(E(x), -126) - 23), E the binary64 exponent */
        double a = vv - 2 * e, b = vv + 2 * e;
        uint64_t bv, ba, bb;
        memcpy(&bv, &vv, 8);
        memcpy(&ba, &a, 8);
        memcpy(&bb, &b, 8);
        int64_t ev = (int64_t)((bv >> 52) & 0x7ff) - 1023, ea = (int64_t)((ba >> 52) & 0x7ff) - 1023,
                eb = (int64_t)((bb >> 52) & 0x7ff) - 1023;
        ev = ev < -126 ? -126 : ev;
        ea = ea < -126 ? -126 : ea;
        eb = eb < -126 ? -126 : eb;
        uint64_t ub = (uint64_t)(ev - 23 + 1023) << 52;
        double u;
        memcpy(&u, &ub, 8);
        int64_t k = (vv >= 0x1p-140) & (vv <= 0x1p100) & (ea == ev) & (eb == ev);
        double wl = vv - nulp * u, wh = vv + nulp * u;
        /* nmo_fe_snap(RU, wl, e + |wl| 2^-52) and nmo_fe_snap(RD, wh, e + |wh| 2^-52) */
        double eel = (e + fabs(wl) * 0x1p-52) + fabs(wl) * 0x1p-50 + 0x1p-1060;
        double eeh = (e + fabs(wh) * 0x1p-52) + fabs(wh) * 0x1p-50 + 0x1p-1060;
        float yl = (float)wl, yh = (float)wh;
        double dl = yl, dh = yh;
        uint32_t ul, uh;
        memcpy(&ul, &yl, 4);
        memcpy(&uh, &yh, 4);
        k &= (ul - 1u < 0x7f7fffffu) & (uh - 1u < 0x7f7fffffu); /* positive, finite, nonzero */
        k &= (fabs(dl - wl) > eel) & (fabs(dh - wh) > eeh);
        uint32_t ul1 = ul + 1u, uh1 = uh - 1u;
        float yl1, yh1;
        memcpy(&yl1, &ul1, 4);
        memcpy(&yh1, &uh1, 4);
        lo[j] = dl > wl ? dl : (double)yl1;
        hi[j] = dh < wh ? dh : (double)yh1;
        ok[j] = k;
    }
}

/* The common case of softmax's y = hull(e / s, e * rcp) (nmo_fenc_div, nmo_fenc_mul,
 * nmo_fenc_hull) for e = [el, eh] with 0 <= el <= eh finite, s = [sl, sh] with
 * 0 < sl <= sh finite, rcp = [rl, rh] with 0 < rl <= rh finite: RN division and the
 * exact products are monotone, so the minimum of the four quotients is el / sh, the
 * maximum eh / sl, and likewise el rl and eh rh for the products; RN32 of each by the
 * (float) cast (innocuous double rounding, as nmo_fe_round). ok[j] = 0 outside that case
 * (the caller uses the primitives themselves). */
NMO_VEC_CLONES
void nmo_fe_divmul_row_kernel(double *restrict lo, double *restrict hi, int64_t *restrict ok,
                              const nmo_fenc *restrict e, int64_t n, double sl, double sh, double rl,
                              double rh)
{
    for (int64_t j = 0; j < n; j++) {
        double el = e[j].lo, eh = e[j].hi;
        double q2 = el / sh, q3 = eh / sl;
        double p1 = el * rl, p4 = eh * rh;
        double a = (float)q2, b = (float)p1, c = (float)q3, d = (float)p4;
        lo[j] = a < b ? a : b;
        hi[j] = c > d ? c : d;
        ok[j] = (el >= 0) & (el <= eh) & (eh <= 0x1p1000);
    }
}

/* The common case of nmo_fenc_gemm_elem for a row of C (plan sum = any, acc fp32 without
 * ftz): s = mid[j], a = abs[j], k = cnt[j] (the caller passes K's when it keeps no
 * counts: a conditional load here becomes a masked load, very slow on some CPUs when its
 * address is invalid), then exactly the
 * operations of nmo_fe_red_finish with nmo_fe_snap's directed fast tests (RU below, RD
 * above). ok[j] = 0 outside the common case (non-finite or huge values, an overflow
 * margin, a snap not decided): the caller uses nmo_fenc_gemm_elem itself (with its
 * compensated refinement). */
NMO_VEC_CLONES
void nmo_fe_gemm_row_kernel(double *restrict lo, double *restrict hi, int64_t *restrict ok,
                            const double *restrict mid, const double *restrict absv,
                            const double *restrict cnt, double K, double ua, double keta,
                            double maxfin, int64_t n)
{
    double kd = K * 0x1p-53;
    for (int64_t j = 0; j < n; j++) {
        double s = mid[j], a = absv[j], k = cnt[j];
        double err = 2 * kd * a * (1 + 2 * kd);
        double em = k * ua * a + keta;
        double e = err * (1 + k * ua) + em * 0x1p-51;
        double vlo = s - em, vhi = s + em;
        double eel = e + fabs(vlo) * 0x1p-50 + 0x1p-1060, eeh = e + fabs(vhi) * 0x1p-50 + 0x1p-1060;
        float yl = (float)vlo, yh = (float)vhi;
        double dl = yl, dh = yh;
        uint32_t ul, uh;
        memcpy(&ul, &yl, 4);
        memcpy(&uh, &yh, 4);
        double top = a * (1 + k * ua) + keta;
        int64_t q = (fabs(s) <= 0x1p1000) & (a <= 0x1p1000) & (top < maxfin * (1 - 0x1p-29));
        q &= ((ul & 0x7fffffffu) - 1u < 0x7f7fffffu) & ((uh & 0x7fffffffu) - 1u < 0x7f7fffffu);
        q &= (fabs(dl - vlo) > eel) & (fabs(dh - vhi) > eeh);
        uint32_t sl = ul >> 31, sh = uh >> 31;
        uint32_t ul1 = ul + 1u - 2u * sl, uh1 = uh - 1u + 2u * sh; /* one step up, one down */
        float yl1, yh1;
        memcpy(&yl1, &ul1, 4);
        memcpy(&yh1, &uh1, 4);
        lo[j] = dl > vlo ? dl : (double)yl1;
        hi[j] = dh < vhi ? dh : (double)yh1;
        ok[j] = q;
    }
}

#ifdef NMO_VEC_PRAGMA
#pragma GCC pop_options
#endif

nmo_status nmo_fctx_init(nmo_fctx *c, const nmo_plan *p, nmo_err *err)
{
    memset(c, 0, sizeof *c);
    c->plan = *p;
    c->cf = p->compute;
    c->af = p->acc;
    c->ftz = p->ftz;
    const nmo_fmt_info *ci = nmo_fmt_get(c->cf), *ai = nmo_fmt_get(c->af);
    if (!ci || !ai) return nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "plan: bad compute/acc format");
    c->uc = ldexp(1.0, -ci->prec);
    c->ua = ldexp(1.0, -ai->prec);
    /* One RN rounding in the subnormal range errs by at most half the subnormal spacing;
     * a flush to zero by up to min_normal. */
    c->etac = c->ftz ? ci->min_normal : ci->min_subnormal / 2;
    c->etaa = c->ftz ? ai->min_normal : ai->min_subnormal / 2;
    c->minnorm_c = ci->min_normal;
    c->maxfin_a = ai->max_finite;
    c->minsub_c = ci->min_subnormal;
    c->fp32rn = !c->ftz;
    /* binary64 cannot certify snaps into a 53-bit lattice: leave fp64 to the certified
     * engine (and any format too wide for innocuous double rounding, p > 25). */
    c->force_unc = (ci->prec > 25 || ai->prec > 25) ? NMO_EF_UNC : 0;
    c->gemm_partials = -1;
    return NMO_OK;
}

typedef struct {
    const nmo_tensor *A, *B;
    double *mid, *abs, *cnt; /* M x N; cnt: terms with both factors nonzero */
} gemm_prep;

static void gemm_prep_free(void *p)
{
    gemm_prep *g = p;
    if (!g) return;
    free(g->mid);
    free(g->abs);
    free(g->cnt);
    free(g);
}

void nmo_fctx_clear(nmo_fctx *c)
{
    for (int s = 0; s < NMO_SCRATCH; s++) {
        free(c->dbuf[s]);
        free(c->ebuf[s]);
    }
    if (c->prep && c->prep_free && !c->prep_borrowed) c->prep_free(c->prep);
    if (c->cert) {
        nmo_cctx_clear(c->cert);
        free(c->cert);
    }
    memset(c, 0, sizeof *c);
}

nmo_cctx *nmo_fctx_cert(nmo_fctx *c)
{
    if (c->cert) return c->cert;
    nmo_cctx *cc = malloc(sizeof *cc);
    if (!cc) return NULL;
    nmo_err err;
    if (nmo_cctx_init(cc, &c->plan, &err) != NMO_OK) {
        free(cc);
        return NULL;
    }
    cc->exp_flat = c->exp_flat;
    return c->cert = cc;
}

double *nmo_fctx_dvec(nmo_fctx *c, int slot, int64_t n)
{
    if (n > c->dcap[slot]) {
        free(c->dbuf[slot]);
        c->dbuf[slot] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        c->dcap[slot] = c->dbuf[slot] ? n : 0;
    }
    return c->dbuf[slot];
}

nmo_fenc *nmo_fctx_evec(nmo_fctx *c, int slot, int64_t n)
{
    if (n > c->ecap[slot]) {
        free(c->ebuf[slot]);
        c->ebuf[slot] = malloc((size_t)(n > 0 ? n : 1) * sizeof(nmo_fenc));
        c->ecap[slot] = c->ebuf[slot] ? n : 0;
    }
    return c->ebuf[slot];
}

static void gemmt_d(int64_t m, int64_t n, int64_t kk, const double *a, int tx, const double *b,
                    int ty, double *cm);

static void gemm_d(int64_t M, int64_t N, int64_t K, const double *a, const double *b, double *cm)
{
#if NMO_HAVE_BLAS
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0, a, (int)K,
                b, (int)N, 0.0, cm, (int)N);
#else
    memset(cm, 0, (size_t)(M * N) * sizeof(double));
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) {
            double av = a[i * K + k];
            const double *br = b + k * N;
            double *cr = cm + i * N;
            for (int64_t j = 0; j < N; j++) cr[j] += av * br[j];
        }
#endif
}

/* Nonzero-term counts cnt[i,j] = #{k : a[i,k] != 0 and b[k,j] != 0} (NaN counts as
 * nonzero, as in nmo_fenc_dot_d). Returns 0 without touching cnt when neither matrix has
 * a zero (every count is K: the caller keeps no array). Otherwise a product of 0/1
 * indicator matrices: with BLAS in binary32 (sgemm) when K < 2^24, which is exact in
 * any order, FMA or not: every product is 0 or 1 and every partial sum an integer in
 * [0, K], all binary32 values (Higham, ASNA 2nd ed., §2.1: integers below 2^24 are
 * exact); else dgemm (integers below 2^53). a is [M,K] row-major, b is [K,N]; tx/ty:
 * stored transposed as in gemmt_d. */
static int gemm_counts(int64_t M, int64_t N, int64_t K, const double *a, int tx, const double *b,
                       int ty, double *cnt)
{
    int64_t na = M * K, nb = K * N, za = 0, zb = 0;
    for (int64_t i = 0; i < na; i++) za += a[i] == 0;
    for (int64_t i = 0; i < nb; i++) zb += b[i] == 0;
    if (!za && !zb) return 0;
#if NMO_HAVE_BLAS
    if (K < (1 << 24)) {
        float *fa = malloc((size_t)(na > 0 ? na : 1) * sizeof(float));
        float *fb = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(float));
        float *fc = malloc((size_t)(M * N > 0 ? M * N : 1) * sizeof(float));
        if (!fa || !fb || !fc) abort();
        for (int64_t i = 0; i < na; i++) fa[i] = a[i] != 0;
        for (int64_t i = 0; i < nb; i++) fb[i] = b[i] != 0;
        cblas_sgemm(CblasRowMajor, tx ? CblasTrans : CblasNoTrans, ty ? CblasTrans : CblasNoTrans,
                    (int)M, (int)N, (int)K, 1.0f, fa, tx ? (int)M : (int)K, fb, ty ? (int)K : (int)N,
                    0.0f, fc, (int)N);
        for (int64_t i = 0; i < M * N; i++) cnt[i] = fc[i];
        free(fa), free(fb), free(fc);
        return 1;
    }
#endif
    double *ia = malloc((size_t)(na > 0 ? na : 1) * sizeof(double));
    double *ib = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(double));
    if (!ia || !ib) abort();
    for (int64_t i = 0; i < na; i++) ia[i] = a[i] != 0;
    for (int64_t i = 0; i < nb; i++) ib[i] = b[i] != 0;
    gemmt_d(M, N, K, ia, tx, ib, ty, cnt);
    free(ia), free(ib);
    return 1;
}

static gemm_prep *gemm_prepare(nmo_fctx *c, const nmo_tensor *A, const nmo_tensor *B)
{
    gemm_prep *g = c->prep_free == gemm_prep_free ? c->prep : NULL;
    if (g && g->A == A && g->B == B) return g;
    if (c->prep && c->prep_free && !c->prep_borrowed) c->prep_free(c->prep);
    c->prep = NULL;
    c->prep_borrowed = 0;
    int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
    g = calloc(1, sizeof *g);
    double *a = malloc((size_t)(M * K) * sizeof(double));
    double *b = malloc((size_t)(K * N) * sizeof(double));
    g->mid = malloc((size_t)(M * N) * sizeof(double));
    g->abs = malloc((size_t)(M * N) * sizeof(double));
    g->cnt = malloc((size_t)(M * N) * sizeof(double));
    if (!g || !a || !b || !g->mid || !g->abs || !g->cnt) abort();
    for (int64_t i = 0; i < M; i++) nmo_tensor_load_f64(a + i * K, A, i * A->strides[0], K, A->strides[1]);
    for (int64_t k = 0; k < K; k++) nmo_tensor_load_f64(b + k * N, B, k * B->strides[0], N, B->strides[1]);
    gemm_d(M, N, K, a, b, g->mid);
    /* |A| and |B| in place (no second pair of copies to allocate and fault in) */
    for (int64_t i = 0; i < M * K; i++) a[i] = fabs(a[i]);
    for (int64_t i = 0; i < K * N; i++) b[i] = fabs(b[i]);
    gemm_d(M, N, K, a, b, g->abs);
    /* nonzero-term counts (exact: small integers; |x| has the zeros of x, NaN stays NaN);
     * none kept when every count is K */
    if (!gemm_counts(M, N, K, a, 0, b, 0, g->cnt)) {
        free(g->cnt);
        g->cnt = NULL;
    }
    free(a), free(b);
    g->A = A;
    g->B = B;
    c->prep = g;
    c->prep_free = gemm_prep_free;
    return g;
}

/* Still undecided after Dot2: s and sum|xy| exactly on a fixed point, and the endpoints
 * rounded exactly (engine/dot_exact.h: the certified engine's result; a tie, s - k u A on
 * the fp32 lattice, is what small-integer data gives). Only for acc fp32 without ftz and
 * without split-K partials (the certified ce_dot_d + ce_red_finish with these k, keta);
 * anything outside the fixed point stays undecided for the certified engine. */
static void gemm_elem_exact(nmo_fctx *c, nmo_fenc *r, const double *x, const double *y, int64_t K,
                            double k, double keta)
{
    if (c->af != NMO_FP32 || c->ftz || c->gemm_partials >= 0 || K >= (1 << 24)) return;
    nmo_xacc S, A;
    nmo_xacc_zero(&S), nmo_xacc_zero(&A);
    uint64_t ux, uy, uk, uu, ue, lo, hi, mag;
    for (int64_t t = 0; t < K; t++) {
        memcpy(&ux, &x[t], 8), memcpy(&uy, &y[t], 8);
        if (!nmo_xacc_add_prod(&S, &A, ux, uy)) return;
    }
    memcpy(&uk, &k, 8), memcpy(&uu, &c->ua, 8), memcpy(&ue, &keta, 8);
    if (!nmo_xacc_norm(&S) || !nmo_xacc_norm(&A) || !nmo_xd_dot_snap(&S, &A, uk, uu, ue, &lo, &hi, &mag)) return;
    memcpy(&r->lo, &lo, 8), memcpy(&r->hi, &hi, 8), memcpy(&r->mag, &mag, 8);
    r->flags = 0;
}

void nmo_fenc_gemm_elem(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j)
{
    gemm_prep *g = gemm_prepare(c, A, B);
    int64_t K = A->dims[1], N = B->dims[1];
    double s = g->mid[i * N + j], a = g->abs[i * N + j], m = g->cnt ? g->cnt[i * N + j] : (double)K;
    if (s != s || !isfinite(a)) {
        /* a NaN or inf input: decide exactly like the certified engine does */
        double *x = nmo_fctx_dvec(c, NMO_SCRATCH - 1, K), *y = nmo_fctx_dvec(c, NMO_SCRATCH - 2, K);
        nmo_tensor_load_f64(x, A, i * A->strides[0], K, A->strides[1]);
        nmo_tensor_load_f64(y, B, j * B->strides[1], K, B->strides[0]);
        nmo_fenc_dot_d(c, r, x, y, K);
        return;
    }
    double keta = (c->ftz ? 2.0 : 1.0) * (double)K * c->etaa;
    if (c->ftz) { /* DAZ of subnormal inputs (nmo_fe_daz_term): needs the vectors */
        double *x = nmo_fctx_dvec(c, NMO_SCRATCH - 1, K), *y = nmo_fctx_dvec(c, NMO_SCRATCH - 2, K);
        nmo_tensor_load_f64(x, A, i * A->strides[0], K, A->strides[1]);
        nmo_tensor_load_f64(y, B, j * B->strides[1], K, B->strides[0]);
        keta += nmo_fe_daz_term(1, c->minnorm_c, x, y, K);
    }
    double k = nmo_fe_dot_k(c, K, (int64_t)m);
    double rel = 2 * (double)K * 0x1p-53 * (1 + 2 * (double)K * 0x1p-53); /* of a (BLAS) */
    int pk = nmo_gemm_partials_k(&c->plan, c->gemm_partials, K, c->ua, a * (1 - rel), a * (1 + rel), &k, &keta);
    if (pk == 1) { nmo_fenc_set_all(r, 0); return; }
    /* Both binary64 products err by <= K 2^-53 |A||B| (any order: Jeannerod & Rump 2013
     * in binary64); |A||B| itself is computed with that relative error. */
    double kd = (double)K * 0x1p-53;
    double err = 2 * kd * a * (1 + 2 * kd);
    nmo_fe_red_finish(c, r, s, s, a, k, keta, err, 0);
    nmo_fe_dot_mag(c, r, a, 2 * kd * (1 + 2 * kd));
    if (pk == 2) r->flags |= NMO_EF_UNC; /* a partial's overflow undecided: not redone here */
    if (!(r->flags & NMO_EF_UNC) || c->force_unc || pk == 2) return;
    /* Cancellation made the binary64 product too coarse to decide the snap: redo this
     * dot product compensated (Ogita, Rump & Oishi 2005, Dot2: products split exactly by
     * FMA, sums by TwoSum), whose error is <= 2^-106 K^2 sum|xy| + 2^-53 |s| — still the
     * same formula, only a tighter radius. */
    double *x = nmo_fctx_dvec(c, NMO_SCRATCH - 1, K), *y = nmo_fctx_dvec(c, NMO_SCRATCH - 2, K);
    nmo_tensor_load_f64(x, A, i * A->strides[0], K, A->strides[1]);
    nmo_tensor_load_f64(y, B, j * B->strides[1], K, B->strides[0]);
    double hi = 0, lo = 0, ab = 0;
    for (int64_t t = 0; t < K; t++) {
        double p = x[t] * y[t];
        double pe = fma(x[t], y[t], -p);
        double sh = hi + p, bb = sh - hi;
        double se = (hi - (sh - bb)) + (p - bb);
        hi = sh;
        lo += pe + se;
        ab += fabs(p);
    }
    double s2 = hi + lo;
    double a2 = ab * (1 + kd);          /* an upper bound of sum|xy| */
    double err2 = 0x1p-106 * (double)K * (double)K * a2 * 4 + fabs(s2) * 0x1p-52 + kd * a2 * k * c->ua;
    nmo_fe_red_finish(c, r, s2, s2, ab, k, keta, err2, 0);
    nmo_fe_dot_mag(c, r, ab, kd * 1.01); /* ab: sequential, as nmo_fenc_dot_d's */
    if (r->flags & NMO_EF_UNC) gemm_elem_exact(c, r, x, y, K, k, keta);
}

void nmo_fenc_gemm_row(nmo_fctx *c, nmo_fenc *out, const nmo_tensor *A, const nmo_tensor *B, int64_t i)
{
    gemm_prep *g = gemm_prepare(c, A, B);
    int64_t K = A->dims[1], N = B->dims[1];
    int geo = c->plan.sum == NMO_SUM_GEOM;
    int fast = c->af == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc &&
               (c->plan.sum == NMO_SUM_ANY || geo) && c->gemm_partials < 0;
    enum { BL = 256 };
    double lo[BL], hi[BL];
    int64_t ok[BL];
    double keta = (c->ftz ? 2.0 : 1.0) * (double)K * c->etaa;
    double kall[BL];
    for (int64_t j = 0; j < BL; j++) kall[j] = (double)K;
    for (int64_t j0 = 0; j0 < N; j0 += BL) {
        int64_t m = N - j0 < BL ? N - j0 : BL;
        const double *kv = g->cnt ? g->cnt + i * N + j0 : kall;
        double kgeo[BL];
        if (fast && geo) { /* the geometry's k of each element (nmo_fenc_gemm_elem's) */
            for (int64_t j = 0; j < m; j++) kgeo[j] = nmo_fe_dot_k(c, K, (int64_t)kv[j]);
            kv = kgeo;
        }
        if (fast)
            nmo_fe_gemm_row_kernel(lo, hi, ok, g->mid + i * N + j0, g->abs + i * N + j0, kv,
                                   (double)K, c->ua, keta, c->maxfin_a, m);
        double rel = 2 * (double)K * 0x1p-53 * (1 + 2 * (double)K * 0x1p-53);
        for (int64_t j = 0; j < m; j++) {
            double mg = fast && ok[j] ? nmo_mag_pow2_of(g->abs[i * N + j0 + j], rel) : -1;
            if (mg >= 0) { /* the row kernel's enclosure, and nmo_fe_dot_mag's scale */
                out[j0 + j].lo = lo[j];
                out[j0 + j].hi = hi[j];
                out[j0 + j].flags = 0;
                out[j0 + j].mag = mg;
            } else {
                nmo_fenc_gemm_elem(c, &out[j0 + j], A, B, i, j0 + j);
            }
        }
    }
}

/* ---- op(X) op(Y) elements (transposed operands), several products cached ------------- */

#define GEMMT_SLOTS 4

typedef struct {
    const nmo_tensor *X, *Y;
    int tx, ty;
    int64_t m, n, kk;
    double *mid, *abs, *cnt; /* m x n; cnt: terms with both factors nonzero */
} gemmt_entry;

typedef struct {
    gemmt_entry e[GEMMT_SLOTS];
    int next;
} gemmt_cache;

static void gemmt_free(void *p)
{
    gemmt_cache *g = p;
    if (!g) return;
    for (int s = 0; s < GEMMT_SLOTS; s++) {
        free(g->e[s].mid);
        free(g->e[s].abs);
        free(g->e[s].cnt);
    }
    free(g);
}

/* C[m,n] = op(a) op(b); a, b packed row-major as stored ([m,kk] or [kk,m], ...). */
static void gemmt_d(int64_t m, int64_t n, int64_t kk, const double *a, int tx, const double *b,
                    int ty, double *cm)
{
#if NMO_HAVE_BLAS
    cblas_dgemm(CblasRowMajor, tx ? CblasTrans : CblasNoTrans, ty ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)kk, 1.0, a, tx ? (int)m : (int)kk, b, ty ? (int)kk : (int)n,
                0.0, cm, (int)n);
#else
    memset(cm, 0, (size_t)(m * n) * sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = 0; k < kk; k++) {
            double av = tx ? a[k * m + i] : a[i * kk + k];
            double *cr = cm + i * n;
            for (int64_t j = 0; j < n; j++) cr[j] += av * (ty ? b[j * kk + k] : b[k * n + j]);
        }
#endif
}

static double *gemmt_load(const nmo_tensor *T)
{
    int64_t r = T->dims[0], cc = T->dims[1];
    double *d = malloc((size_t)(r * cc > 0 ? r * cc : 1) * sizeof(double));
    if (!d) abort();
    for (int64_t i = 0; i < r; i++) nmo_tensor_load_f64(d + i * cc, T, i * T->strides[0], cc, T->strides[1]);
    return d;
}

static gemmt_entry *gemmt_prepare(nmo_fctx *c, const nmo_tensor *X, int tx, const nmo_tensor *Y,
                                  int ty)
{
    if (c->prep && c->prep_free != gemmt_free) {
        if (c->prep_free && !c->prep_borrowed) c->prep_free(c->prep);
        c->prep = NULL;
        c->prep_borrowed = 0;
    }
    gemmt_cache *g = c->prep;
    if (g && c->prep_borrowed) { /* another worker's cache: look up only */
        for (int s = 0; s < GEMMT_SLOTS; s++) {
            gemmt_entry *e = &g->e[s];
            if (e->mid && e->X == X && e->Y == Y && e->tx == tx && e->ty == ty) return e;
        }
        g = NULL; /* not there: build a cache of our own (the borrowed one stays as is) */
        c->prep = NULL;
        c->prep_borrowed = 0;
    }
    if (!g) {
        g = calloc(1, sizeof *g);
        if (!g) abort();
        c->prep = g;
        c->prep_free = gemmt_free;
    }
    for (int s = 0; s < GEMMT_SLOTS; s++) {
        gemmt_entry *e = &g->e[s];
        if (e->mid && e->X == X && e->Y == Y && e->tx == tx && e->ty == ty) return e;
    }
    gemmt_entry *e = &g->e[g->next];
    g->next = (g->next + 1) % GEMMT_SLOTS;
    free(e->mid);
    free(e->abs);
    free(e->cnt);
    int64_t m = tx ? X->dims[1] : X->dims[0], kk = tx ? X->dims[0] : X->dims[1];
    int64_t n = ty ? Y->dims[0] : Y->dims[1];
    double *a = gemmt_load(X), *b = gemmt_load(Y);
    int64_t na = X->dims[0] * X->dims[1], nb = Y->dims[0] * Y->dims[1];
    double *aa = malloc((size_t)(na > 0 ? na : 1) * sizeof(double));
    double *ba = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(double));
    e->mid = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    e->abs = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    e->cnt = malloc((size_t)(m * n > 0 ? m * n : 1) * sizeof(double));
    if (!aa || !ba || !e->mid || !e->abs || !e->cnt) abort();
    for (int64_t i = 0; i < na; i++) aa[i] = fabs(a[i]);
    for (int64_t i = 0; i < nb; i++) ba[i] = fabs(b[i]);
    gemmt_d(m, n, kk, a, tx, b, ty, e->mid);
    gemmt_d(m, n, kk, aa, tx, ba, ty, e->abs);
    free(aa), free(ba);
    if (!gemm_counts(m, n, kk, a, tx, b, ty, e->cnt)) {
        free(e->cnt);
        e->cnt = NULL;
    }
    free(a), free(b);
    e->X = X, e->Y = Y, e->tx = tx, e->ty = ty, e->m = m, e->n = n, e->kk = kk;
    return e;
}

/* Row i of op(X) and column j of op(Y) as (offset, stride) into their storage. */
static void gemmt_vectors(const nmo_tensor *X, int tx, const nmo_tensor *Y, int ty, int64_t i,
                       int64_t j, int64_t *xo, int64_t *xs, int64_t *yo, int64_t *ys)
{
    *xo = tx ? i * X->strides[1] : i * X->strides[0];
    *xs = tx ? X->strides[0] : X->strides[1];
    *yo = ty ? j * Y->strides[0] : j * Y->strides[1];
    *ys = ty ? Y->strides[1] : Y->strides[0];
}

void nmo_fenc_gemm_elem_t(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *X, int tx,
                          const nmo_tensor *Y, int ty, int64_t i, int64_t j)
{
    gemmt_entry *e = gemmt_prepare(c, X, tx, Y, ty);
    int64_t kk = e->kk;
    double s = e->mid[i * e->n + j], a = e->abs[i * e->n + j];
    double cz = e->cnt ? e->cnt[i * e->n + j] : (double)kk;
    if (s != s || !isfinite(a)) {
        /* a NaN or inf input: decide exactly like the certified engine does */
        int64_t xo, xs, yo, ys;
        gemmt_vectors(X, tx, Y, ty, i, j, &xo, &xs, &yo, &ys);
        double *x = nmo_fctx_dvec(c, NMO_SCRATCH - 1, kk), *y = nmo_fctx_dvec(c, NMO_SCRATCH - 2, kk);
        nmo_tensor_load_f64(x, X, xo, kk, xs);
        nmo_tensor_load_f64(y, Y, yo, kk, ys);
        nmo_fenc_dot_d(c, r, x, y, kk);
        return;
    }
    double keta = (c->ftz ? 2.0 : 1.0) * (double)kk * c->etaa;
    if (c->ftz) { /* DAZ of subnormal inputs (nmo_fe_daz_term) */
        int64_t xo, xs, yo, ys;
        gemmt_vectors(X, tx, Y, ty, i, j, &xo, &xs, &yo, &ys);
        double *x = nmo_fctx_dvec(c, NMO_SCRATCH - 1, kk), *y = nmo_fctx_dvec(c, NMO_SCRATCH - 2, kk);
        nmo_tensor_load_f64(x, X, xo, kk, xs);
        nmo_tensor_load_f64(y, Y, yo, kk, ys);
        keta += nmo_fe_daz_term(1, c->minnorm_c, x, y, kk);
    }
    double kd = (double)kk * 0x1p-53;
    double err = 2 * kd * a * (1 + 2 * kd);
    double k = nmo_fe_dot_k(c, kk, (int64_t)cz), rel = 2 * kd * (1 + 2 * kd);
    int pk = nmo_gemm_partials_k(&c->plan, c->gemm_partials, kk, c->ua, a * (1 - rel), a * (1 + rel), &k, &keta);
    if (pk == 1) { nmo_fenc_set_all(r, 0); return; }
    nmo_fe_red_finish(c, r, s, s, a, k, keta, err, 0);
    nmo_fe_dot_mag(c, r, a, rel);
    if (pk == 2) r->flags |= NMO_EF_UNC;
}
