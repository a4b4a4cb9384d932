/* numoracle: reduction geometry — the sum models `tree:D` and `blocked:B[:D[:P]]`
 * (numoracle issue 17).
 *
 * The model (the evaluations a plan with this geometry allows). The n terms of one
 * reduction are split into chunks; each chunk into at most 2^D runs of at most B terms;
 *   - each run is summed in any order and association, FMA or not (a thread's sequential
 *     loop, or several per-thread accumulators combined at the end);
 *   - the run partials of a chunk are combined by a binary tree of depth <= D (warp
 *     shuffles, then a shared-memory tree over the warps; tl.sum's cross-lane tree);
 *   - the chunk partials are combined in any order (atomics, a second pass, split-K's
 *     reduction): at most P of them; with P = any, the chunks are ceil(n / (B 2^D))
 *     consecutive blocks of B 2^D terms, full but the last (the blocked summation of
 *     Blanchard, Higham & Mary 2020, SISC 42(3), "A class of fast and accurate summation
 *     algorithms", with its block sums added in any order). `any` is NOT "any number of
 *     chunks": a kernel whose chunks are rows, or tails of rows (a per-row loop over
 *     BLOCK-sized chunks, then the rows added), declares P = rows x chunks per row.
 * Relative run length (text n/T or n/T+E in place of B): B = ceil(n / T) + E for a
 * reduction of n terms. T threads (or T accumulators) taking the terms j = t, t + T, ...
 * (or contiguous slices of ceil(n / T)) hold at most ceil(n / T) terms each; E covers
 * what a kernel adds on top (a vector load's group: 4 ceil(n / 4T) <= ceil(n / T) + 3, an
 * alignment head). With explicit P, T <= 2^D P is required (parse): then
 * ceil(n / T) 2^D P >= n and every n fits.
 * Text: tree:D = blocked:1:D (one tree, no runs, one chunk); blocked:B = blocked:B:0:any
 * (consecutive runs of B, full but the last, their partials in any order: Blanchard,
 * Higham & Mary's blocked summation); blocked:B:D = blocked:B:D:1.
 * A reduction of more than B 2^D P terms has no evaluation of this shape: the bound is
 * INFINITY and nmo_check reports the plan as not fitting the operator's shape.
 *
 * The bound, composed level by level (u = u_acc, A = sum |t| over the terms). When a
 * level combines values v_i that err by |v_i - s_i| <= k u A_i (over disjoint sets of
 * terms, sum A_i = A) with |result - sum v_i| <= c u sum |v_i|, then, because
 * sum |v_i| <= (1 + k u) A,
 *     |result - s| <= (k + c (1 + k u)) u A                                          (*)
 * and the levels give (m = the terms not exactly 0; an addition with an operand that is
 * exactly 0 is exact, so dropping those terms keeps every run, tree and chunk inside the
 * model, only smaller):
 *   runs    plain sums (the terms are acc floats): c = r - 1, r = min(B, m)
 *           (Jeannerod & Rump 2013, SIMAX 34(2), Thm 4.1: (r-1) u for any order);
 *           products (each rounded, or fused into its first addition): c = r
 *           (ibid., Thm 4.2: r u for any order, FMA or not);
 *   tree    c = gamma_D / u: every partial passes at most D roundings, the result is
 *           sum v_i (1 + theta_i), |theta_i| <= gamma_D = D u / (1 - D u) (Higham, ASNA
 *           2nd ed., Lemma 3.1, and §4.2: the error of a summation tree is bounded by the
 *           depth of each leaf); gamma_D <= D u (1 + 2 D u) for D u <= 1/4 (nmo_fe_gamma's
 *           form). Also c <= g - 1 (plain sums; Thm 4.1 on the g <= min(2^D, m) partials)
 *           or c <= g (products: a run of one product may reach the tree unrounded, fused
 *           into a tree node; Thm 4.2 then covers floats and fused products alike);
 *   chunks  c = q - 1 (plain sums), q (products: a chunk of one term may be fused into the
 *           combination) with q = min(P, m): Thm 4.1 / 4.2 on the chunk partials.
 * The any-order bound of the whole reduction (m - 1, or m for products) holds for every
 * evaluation the geometry allows too: k = min(any, composition). The underflow terms
 * (eta, ftz flushes, DAZ) count operations and products, not the shape: the callers keep
 * them. The binary64 value of k is rounded up to a multiple of 2^-10 (both engines use
 * this same double).
 *
 * Split-K partials stored in a narrower format (matmul's `inter`): nmo_gemm_partials_k
 * (enc_fast.h) takes the chunk level alone (nmo_plan_geo_chunk) and adds the store and the
 * combination of the stored partials. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/plan.h"

#define GEO_B_MAX (1 << 30)
#define GEO_D_MAX 62
#define GEO_P_MAX ((int64_t)1 << 40)

/* a * b saturated at INT64_MAX (a, b >= 0) */
static int64_t sat_mul(int64_t a, int64_t b)
{
    if (a == 0 || b == 0) return 0;
    if (a > INT64_MAX / b) return INT64_MAX;
    return a * b;
}

int64_t nmo_plan_geo_run(const nmo_plan *p, int64_t n)
{
    if (p->geo_t <= 0) return p->geo_b;
    int64_t r = n > 0 ? (n - 1) / p->geo_t + 1 : 0;
    return r + p->geo_b; /* r <= n / 1, geo_b <= 2^30: no overflow */
}

/* terms of one chunk for a reduction of n terms */
static int64_t chunk_cap(const nmo_plan *p, int64_t n)
{
    return sat_mul(nmo_plan_geo_run(p, n), p->geo_d >= 62 ? INT64_MAX : (int64_t)1 << p->geo_d);
}

int64_t nmo_plan_geo_capacity(const nmo_plan *p)
{
    /* relative runs: T <= 2^D P (parse), so ceil(n/T) 2^D P >= n for every n */
    if (p->sum != NMO_SUM_GEOM || p->geo_p == 0 || p->geo_t > 0) return INT64_MAX;
    return sat_mul(chunk_cap(p, 0), p->geo_p);
}

/* k rounded up onto the multiples of 2^-10 (and its binary64 evaluation error covered) */
static double k_up(double k) { return ceil(k * (1 + 0x1p-40) * 1024) / 1024; }

int nmo_plan_geo_chunk(const nmo_plan *p, int64_t n, int64_t m, int dot, double *kchunk, int64_t *parts)
{
    if (p->sum != NMO_SUM_GEOM || (p->geo_b < 1 && p->geo_t <= 0)) return 0;
    if (n > nmo_plan_geo_capacity(p)) return 0;
    const nmo_fmt_info *ai = nmo_fmt_get(p->acc);
    double u = ldexp(1.0, -(ai ? ai->prec : 24));
    double md = (double)(m > 0 ? m : 0);
    /* runs (relative: of the n terms the kernel distributes, zeros included) */
    double r = fmin((double)nmo_plan_geo_run(p, n), md);
    double k = dot ? r : fmax(r - 1, 0);
    /* the tree over at most min(2^D, m) run partials */
    double g = fmin(ldexp(1.0, p->geo_d), md);
    double c = dot ? g : fmax(g - 1, 0);
    double du = (double)p->geo_d * u;
    if (du <= 0.25) c = fmin(c, (double)p->geo_d * (1 + 2 * du));
    k = k + c * (1 + k * u);
    int64_t cc = chunk_cap(p, n);
    if (cc < 1) cc = 1; /* n = 0 under a relative run */
    int64_t P = p->geo_p ? p->geo_p : (n + cc - 1) / cc; /* cc >= 1 */
    if (P > m) P = m;
    if (P < 1) P = 1;
    *kchunk = k; /* binary64: callers round their final k up (k_up) */
    *parts = P;
    return 1;
}

double nmo_plan_red_k(const nmo_plan *p, int64_t n, int64_t m, int dot)
{
    double any = dot ? (double)m : (m > 1 ? (double)(m - 1) : 0);
    if (p->sum != NMO_SUM_GEOM) return any;
    double k;
    int64_t P;
    if (!nmo_plan_geo_chunk(p, n, m, dot, &k, &P)) return INFINITY;
    const nmo_fmt_info *ai = nmo_fmt_get(p->acc);
    double u = ldexp(1.0, -(ai ? ai->prec : 24));
    /* the chunk partials, any order */
    double c = dot ? (double)P : (double)(P - 1);
    k = k_up(k + c * (1 + k * u));
    return k < any ? k : any;
}

char *nmo_plan_geo_text(const nmo_plan *p, char *buf, size_t n)
{
    char b[40];
    if (p->geo_t > 0 && p->geo_b > 0) snprintf(b, sizeof b, "n/%d+%d", p->geo_t, p->geo_b);
    else if (p->geo_t > 0) snprintf(b, sizeof b, "n/%d", p->geo_t);
    else snprintf(b, sizeof b, "%d", p->geo_b);
    if (p->geo_t <= 0 && p->geo_b == 1 && p->geo_p == 1) snprintf(buf, n, "tree:%d", p->geo_d);
    else if (p->geo_d == 0 && p->geo_p == 0) snprintf(buf, n, "blocked:%s", b);
    else if (p->geo_p == 1) snprintf(buf, n, "blocked:%s:%d", b, p->geo_d);
    else if (p->geo_p == 0) snprintf(buf, n, "blocked:%s:%d:any", b, p->geo_d);
    else snprintf(buf, n, "blocked:%s:%d:%lld", b, p->geo_d, (long long)p->geo_p);
    return buf;
}

/* strict decimal in [lo, hi] */
static int geo_num(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out)
{
    if (len == 0 || len > 19) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        if (v > (INT64_MAX - (s[i] - '0')) / 10) return 0;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

int nmo_plan_geo_parse(nmo_plan *q, const char *val)
{
    int tree = strncmp(val, "tree:", 5) == 0, blocked = strncmp(val, "blocked:", 8) == 0;
    if (!tree && !blocked) return -1;
    const char *s = val + (tree ? 5 : 8);
    const char *f[3];
    size_t fl[3];
    int nf = 0;
    for (;;) {
        if (nf == 3) return 0;
        size_t l = strcspn(s, ":");
        f[nf] = s;
        fl[nf++] = l;
        if (!s[l]) break;
        s += l + 1;
    }
    int64_t b = 1, d = 0, pp = 1, t = 0;
    if (tree) {
        if (nf != 1 || !geo_num(f[0], fl[0], 0, GEO_D_MAX, &d)) return 0;
    } else if (fl[0] > 2 && strncmp(f[0], "n/", 2) == 0) {
        /* relative run length n/T[+E] */
        const char *ts = f[0] + 2;
        size_t tl = fl[0] - 2, pl = 0;
        while (pl < tl && ts[pl] != '+') pl++;
        if (!geo_num(ts, pl, 1, GEO_B_MAX, &t)) return 0;
        b = 0;
        if (pl < tl && !geo_num(ts + pl + 1, tl - pl - 1, 0, GEO_B_MAX, &b)) return 0;
    } else {
        if (!geo_num(f[0], fl[0], 1, GEO_B_MAX, &b)) return 0;
    }
    if (!tree) {
        if (nf == 1) pp = 0; /* blocked:B: the run partials in any order */
        if (nf > 1 && !geo_num(f[1], fl[1], 0, GEO_D_MAX, &d)) return 0;
        if (nf > 2) {
            if (fl[2] == 3 && strncmp(f[2], "any", 3) == 0) pp = 0;
            else if (!geo_num(f[2], fl[2], 1, GEO_P_MAX, &pp)) return 0;
        }
        /* n/T with P partials: fewer than T runs cannot hold n terms of ceil(n/T) */
        if (t > 0 && pp > 0 && d < 62 && (double)pp * ldexp(1.0, (int)d) < (double)t) return 0;
    }
    q->sum = NMO_SUM_GEOM;
    q->mma_k = q->mma_p = 0;
    q->geo_b = (int)b;
    q->geo_d = (int)d;
    q->geo_p = pp;
    q->geo_t = (int)t;
    return 1;
}
