/* numoracle: tests for number formats (oracle/fmt.c against oracle/fmt_mpfr.c, gcc's
 * _Float16 / float conversions, and hand-written constants). Every format of 16 bits or
 * fewer is checked exhaustively (DESIGN §3). */
#include <criterion/criterion.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/fmt.h"
#include "engine/fmt_mpfr.h" /* the MPFR rounding (private) */

#define NMO_MAXFAIL 30 /* detailed messages per test; the rest are counted */

static const nmo_fmt small_fmts[] = {NMO_BF16, NMO_FP16, NMO_FP8_E4M3, NMO_FP8_E5M2,
                                     NMO_FP8_E4M3FNUZ, NMO_FP8_E5M2FNUZ};
#define NSMALL ((int)(sizeof small_fmts / sizeof small_fmts[0]))

static const char *ovf_name(nmo_ovf o)
{
    return o == NMO_OVF_IEEE ? "ieee" : o == NMO_OVF_SAT ? "sat" : "nan";
}

/* Same value, same sign of zero, or both NaN. */
static int same(double a, double b)
{
    if (a != a || b != b) return a != a && b != b;
    return a == b && signbit(a) == signbit(b);
}

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Random double with binade exponent in [elo, ehi], random sign and significand. */
static double rng_double(uint64_t *s, int elo, int ehi)
{
    uint64_t r = rng_next(s);
    int e = elo + (int)(rng_next(s) % (uint64_t)(ehi - elo + 1));
    double m = 1.0 + (double)(r >> 12) * 0x1p-52;
    double x = ldexp(m, e);
    return (r & 1) ? -x : x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct finite values of a format of at most 16 bits (one zero). */
static double *all_values(nmo_fmt f, int *n)
{
    int bits = nmo_fmt_get(f)->bits, k = 0;
    double *v = malloc(sizeof(double) << bits);
    cr_assert_not_null(v);
    for (uint64_t b = 0; b < (1ULL << bits); b++) {
        double x = nmo_fmt_decode(f, b);
        if (isfinite(x) && !(x == 0 && signbit(x))) v[k++] = x;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    for (int i = 1; i < k; i++) cr_assert(v[i - 1] < v[i], "%s: duplicate value %a", nmo_fmt_name(f), v[i]);
    *n = k;
    return v;
}

/* Fast rounding (nmo_fmt_round and decode(encode)) against MPFR at x, every rounding
 * mode, ftz off and on; every overflow mode where overflow is possible. */
static void check_point(nmo_fmt f, double x, mpfr_t mx, long *nfail)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    int all_ovf = !(fabs(x) < fi->max_finite * 0.5);
    mpfr_set_d(mx, x, MPFR_RNDN);
    for (int r = 0; r < NMO_RND_COUNT; r++) {
        for (int ftz = 0; ftz < 2; ftz++) {
            double want = nmo_fmt_round_mpfr(f, mx, (nmo_rnd)r, ftz);
            double got = nmo_fmt_round(f, x, (nmo_rnd)r, ftz);
            uint64_t bits = nmo_fmt_encode(f, x, (nmo_rnd)r, ftz, fi->ovf_default);
            double gotb = nmo_fmt_decode(f, bits);
            if (!same(got, want) || !same(gotb, want)) {
                if ((*nfail)++ < NMO_MAXFAIL)
                    cr_expect(0, "%s %s ftz=%d x=%a: round=%a encode=0x%llx (%a), mpfr=%a",
                              fi->name, nmo_rnd_name((nmo_rnd)r), ftz, x, got,
                              (unsigned long long)bits, gotb, want);
            }
            for (int o = 0; all_ovf && o < 3; o++) {
                want = nmo_fmt_round_mpfr_ovf(f, mx, (nmo_rnd)r, ftz, (nmo_ovf)o);
                bits = nmo_fmt_encode(f, x, (nmo_rnd)r, ftz, (nmo_ovf)o);
                gotb = nmo_fmt_decode(f, bits);
                if (!same(gotb, want) && (*nfail)++ < NMO_MAXFAIL)
                    cr_expect(0, "%s %s ftz=%d ovf=%s x=%a: encode=0x%llx (%a), mpfr=%a",
                              fi->name, nmo_rnd_name((nmo_rnd)r), ftz, ovf_name((nmo_ovf)o), x,
                              (unsigned long long)bits, gotb, want);
            }
        }
    }
}

/* Points around and between the lattice values a < b. */
static void check_pair(nmo_fmt f, double a, double b, mpfr_t mx, long *nfail)
{
    double mid = a + (b - a) * 0.5, q = (b - a) * 0.25;
    const double pts[] = {a, mid, nextafter(mid, -INFINITY), nextafter(mid, INFINITY),
                          a + q, b - q, a + q * 0.5, nextafter(a, b), nextafter(b, a)};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) check_point(f, pts[i], mx, nfail);
}

/* Beyond max, around 0 and around min_normal, plus specials (both signs). */
static void check_edges(nmo_fmt f, mpfr_t mx, long *nfail)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    double mx_ = fi->max_finite, u = nmo_fmt_ulp(f, mx_), mn = fi->min_normal,
           ms = fi->min_subnormal;
    double pts[256];
    int k = 0;
    for (int i = 1; i <= 16; i++) pts[k++] = mx_ + u * 0.25 * i;
    pts[k++] = nextafter(mx_ + u * 0.5, INFINITY);
    pts[k++] = nextafter(mx_ + u * 0.5, -INFINITY);
    pts[k++] = nextafter(mx_ + u, -INFINITY);
    pts[k++] = 2 * mx_;
    pts[k++] = 1e30;
    pts[k++] = 1e300;
    pts[k++] = DBL_MAX;
    pts[k++] = INFINITY;
    pts[k++] = NAN;
    pts[k++] = 0.0;
    pts[k++] = 0x1p-1074;
    pts[k++] = DBL_MIN;
    pts[k++] = 1e-300;
    for (int i = 1; i <= 40; i++) pts[k++] = ms * ldexp(1.0, -i);
    pts[k++] = nextafter(ms * 0.5, INFINITY);
    pts[k++] = nextafter(ms * 0.5, 0);
    pts[k++] = ms * 0.75;
    pts[k++] = ms * 1.5;
    for (int i = 1; i <= 60; i++) {
        pts[k++] = mn * (1 - ldexp(1.0, -i));
        pts[k++] = mn * (1 + ldexp(1.0, -i));
    }
    cr_assert(k <= 256);
    for (int i = 0; i < k; i++) {
        check_point(f, pts[i], mx, nfail);
        check_point(f, -pts[i], mx, nfail);
    }
}

/* ---- format table and names -------------------------------------------------------- */

Test(fmt, info)
{
    static const struct {
        nmo_fmt f;
        int bits, ebits, mbits, bias, emin, emax;
        double max, mn, ms;
        int inf, neg0;
        nmo_ovf ovf;
    } want[] = {
        {NMO_FP64, 64, 11, 52, 1023, -1022, 1023, DBL_MAX, DBL_MIN, 0x1p-1074, 1, 1, NMO_OVF_IEEE},
        {NMO_FP32, 32, 8, 23, 127, -126, 127, FLT_MAX, FLT_MIN, 0x1p-149, 1, 1, NMO_OVF_IEEE},
        {NMO_TF32, 32, 8, 10, 127, -126, 127, 0x1.ffcp127, 0x1p-126, 0x1p-136, 1, 1, NMO_OVF_IEEE},
        {NMO_BF16, 16, 8, 7, 127, -126, 127, 0x1.fep127, 0x1p-126, 0x1p-133, 1, 1, NMO_OVF_IEEE},
        {NMO_FP16, 16, 5, 10, 15, -14, 15, 65504, 0x1p-14, 0x1p-24, 1, 1, NMO_OVF_IEEE},
        {NMO_FP8_E4M3, 8, 4, 3, 7, -6, 8, 448, 0x1p-6, 0x1p-9, 0, 1, NMO_OVF_NAN},
        {NMO_FP8_E5M2, 8, 5, 2, 15, -14, 15, 57344, 0x1p-14, 0x1p-16, 1, 1, NMO_OVF_IEEE},
        {NMO_FP8_E4M3FNUZ, 8, 4, 3, 8, -7, 7, 240, 0x1p-7, 0x1p-10, 0, 0, NMO_OVF_NAN},
        {NMO_FP8_E5M2FNUZ, 8, 5, 2, 16, -15, 15, 57344, 0x1p-15, 0x1p-17, 0, 0, NMO_OVF_NAN},
    };
    cr_assert_eq(sizeof want / sizeof want[0], NMO_FMT_COUNT);
    for (size_t i = 0; i < NMO_FMT_COUNT; i++) {
        const nmo_fmt_info *fi = nmo_fmt_get(want[i].f);
        cr_assert_not_null(fi);
        cr_expect_eq(fi->bits, want[i].bits, "%s bits", fi->name);
        cr_expect_eq(fi->ebits, want[i].ebits, "%s ebits", fi->name);
        cr_expect_eq(fi->mbits, want[i].mbits, "%s mbits", fi->name);
        cr_expect_eq(fi->prec, want[i].mbits + 1, "%s prec", fi->name);
        cr_expect_eq(fi->bias, want[i].bias, "%s bias", fi->name);
        cr_expect_eq(fi->emin, want[i].emin, "%s emin", fi->name);
        cr_expect_eq(fi->emax, want[i].emax, "%s emax", fi->name);
        cr_expect_eq(fi->max_finite, want[i].max, "%s max %a", fi->name, fi->max_finite);
        cr_expect_eq(fi->min_normal, want[i].mn, "%s min_normal", fi->name);
        cr_expect_eq(fi->min_subnormal, want[i].ms, "%s min_sub", fi->name);
        cr_expect_eq(fi->has_inf, want[i].inf, "%s has_inf", fi->name);
        cr_expect_eq(fi->has_neg_zero, want[i].neg0, "%s has_neg_zero", fi->name);
        cr_expect_eq(fi->ovf_default, want[i].ovf, "%s ovf_default", fi->name);
        /* the extreme values are what the patterns decode to */
        uint64_t sh = want[i].f == NMO_TF32 ? 13 : 0;
        cr_expect_eq(nmo_fmt_decode(want[i].f, 1ULL << sh), fi->min_subnormal, "%s", fi->name);
        cr_expect_eq(nmo_fmt_decode(want[i].f, 1ULL << (fi->mbits + sh)), fi->min_normal, "%s", fi->name);
        /* the pattern after max is inf (IEEE-like) or NaN (no inf) */
        uint64_t mb = nmo_fmt_encode(want[i].f, fi->max_finite, NMO_RNE, 0, NMO_OVF_IEEE);
        cr_expect_eq(nmo_fmt_decode(want[i].f, mb), fi->max_finite, "%s max pattern", fi->name);
        double after = nmo_fmt_decode(want[i].f, mb + (1ULL << sh));
        cr_expect(fi->has_inf ? after == INFINITY : isnan(after), "%s after max: %a", fi->name, after);
    }
    cr_expect_null(nmo_fmt_get(NMO_FMT_COUNT));
    cr_expect_null(nmo_fmt_get((nmo_fmt)-1));
}

Test(fmt, names)
{
    static const struct {
        const char *s;
        nmo_fmt f;
    } ok[] = {
        {"fp64", NMO_FP64}, {"DOUBLE", NMO_FP64}, {"double", NMO_FP64}, {"float64", NMO_FP64},
        {"fp32", NMO_FP32}, {"FLOAT", NMO_FP32}, {"float", NMO_FP32}, {"float32", NMO_FP32},
        {"tf32", NMO_TF32}, {"bf16", NMO_BF16}, {"BFLOAT16", NMO_BF16}, {"bfloat16", NMO_BF16},
        {"fp16", NMO_FP16}, {"HALF", NMO_FP16}, {"half", NMO_FP16}, {"float16", NMO_FP16},
        {"fp8_e4m3", NMO_FP8_E4M3}, {"FP8_E4M3", NMO_FP8_E4M3}, {"e4m3", NMO_FP8_E4M3},
        {"e4m3fn", NMO_FP8_E4M3}, {"float8_e4m3fn", NMO_FP8_E4M3},
        {"fp8_e5m2", NMO_FP8_E5M2}, {"FP8_E5M2", NMO_FP8_E5M2}, {"e5m2", NMO_FP8_E5M2},
        {"fp8_e4m3fnuz", NMO_FP8_E4M3FNUZ}, {"FP8_E4M3_FNUZ", NMO_FP8_E4M3FNUZ},
        {"e4m3fnuz", NMO_FP8_E4M3FNUZ}, {"fp8_e5m2fnuz", NMO_FP8_E5M2FNUZ},
        {"FP8_E5M2_FNUZ", NMO_FP8_E5M2FNUZ}, {"e5m2fnuz", NMO_FP8_E5M2FNUZ},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        nmo_fmt f = NMO_FMT_COUNT;
        cr_expect_eq(nmo_fmt_from_name(&f, ok[i].s), NMO_OK, "%s", ok[i].s);
        cr_expect_eq(f, ok[i].f, "%s -> %d", ok[i].s, (int)f);
    }
    static const char *const hip[NMO_FMT_COUNT] = {"DOUBLE", "FLOAT", "", "BFLOAT16", "HALF",
                                                    "FP8_E4M3", "FP8_E5M2", "FP8_E4M3_FNUZ",
                                                    "FP8_E5M2_FNUZ"};
    for (int i = 0; i < NMO_FMT_COUNT; i++) {
        nmo_fmt f = NMO_FMT_COUNT;
        cr_expect_str_eq(nmo_fmt_get((nmo_fmt)i)->hipdnn, hip[i]);
        cr_expect_eq(nmo_fmt_from_name(&f, nmo_fmt_name((nmo_fmt)i)), NMO_OK);
        cr_expect_eq(f, (nmo_fmt)i, "name round trip %s", nmo_fmt_name((nmo_fmt)i));
    }
    static const char *const bad[] = {"", "fp7", "fp8", "bf17", "FLOAT8", "int8", "fp16x",
                                      " fp16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nmo_fmt f = NMO_FP32;
        cr_expect_eq(nmo_fmt_from_name(&f, bad[i]), NMO_ERR_UNKNOWN_DTYPE, "'%s'", bad[i]);
        cr_expect_eq(f, NMO_FP32, "output untouched on error");
    }
    cr_expect_eq(nmo_fmt_from_name(NULL, NULL), NMO_ERR_UNKNOWN_DTYPE);
    cr_expect_str_eq(nmo_fmt_name(NMO_FMT_COUNT), "unknown");

    static const char *const rn[NMO_RND_COUNT] = {"rne", "rz", "rd", "ru"};
    for (int i = 0; i < NMO_RND_COUNT; i++) {
        nmo_rnd r = NMO_RND_COUNT;
        cr_expect_str_eq(nmo_rnd_name((nmo_rnd)i), rn[i]);
        cr_expect_eq(nmo_rnd_from_name(&r, rn[i]), NMO_OK);
        cr_expect_eq(r, (nmo_rnd)i);
    }
    nmo_rnd r;
    cr_expect_neq(nmo_rnd_from_name(&r, "rn"), NMO_OK);
    cr_expect_neq(nmo_rnd_from_name(&r, "sr"), NMO_OK);
    cr_expect_str_eq(nmo_rnd_name(NMO_RND_COUNT), "unknown");
}

/* ---- decode ------------------------------------------------------------------------ */

Test(fmt, decode)
{
    long nfail = 0;
    for (int k = 0; k < NSMALL; k++) {
        nmo_fmt f = small_fmts[k];
        int bits = nmo_fmt_get(f)->bits;
        for (uint64_t b = 0; b < (1ULL << bits); b++) {
            double got = nmo_fmt_decode(f, b), want = nmo_fmt_decode_mpfr(f, b);
            if (!same(got, want) && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "%s decode 0x%llx: %a, mpfr %a", nmo_fmt_name(f),
                          (unsigned long long)b, got, want);
        }
    }
    /* known patterns: specials of each style */
    cr_expect(isnan(nmo_fmt_decode(NMO_FP8_E4M3, 0x7f)) && isnan(nmo_fmt_decode(NMO_FP8_E4M3, 0xff)));
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E4M3, 0x7e), 448.0);
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E4M3, 0x78), 256.0, "no inf in E4M3FN");
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E5M2, 0x7c), INFINITY);
    cr_expect(isnan(nmo_fmt_decode(NMO_FP8_E5M2, 0x7d)));
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E5M2, 0x7b), 57344.0);
    cr_expect(isnan(nmo_fmt_decode(NMO_FP8_E4M3FNUZ, 0x80)));
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E4M3FNUZ, 0x7f), 240.0);
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E4M3FNUZ, 0xff), -240.0);
    cr_expect(isnan(nmo_fmt_decode(NMO_FP8_E5M2FNUZ, 0x80)));
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E5M2FNUZ, 0x7f), 57344.0);
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E5M2FNUZ, 0x01), 0x1p-17);
    cr_expect_eq(nmo_fmt_decode(NMO_BF16, 0x3f80), 1.0);
    cr_expect_eq(nmo_fmt_decode(NMO_FP16, 0x3c00), 1.0);
    cr_expect(signbit(nmo_fmt_decode(NMO_FP16, 0x8000)) && nmo_fmt_decode(NMO_FP16, 0x8000) == 0);
    cr_expect_eq(nmo_fmt_decode(NMO_FP8_E4M3, 0x100 | 0x38), 1.0, "only the low 8 bits count");

    /* fp32 / tf32 / fp64: random patterns and every exponent field */
    uint64_t s = 1;
    for (int i = 0; i < 300000; i++) {
        uint64_t b = rng_next(&s);
        uint32_t b32 = (uint32_t)b;
        if (i < 512) b32 = (uint32_t)((i & 0xff) << 23) | (i & 256 ? 0x80000000u : 0) | (uint32_t)(b & 0x7fffff);
        float fl;
        memcpy(&fl, &b32, 4);
        const nmo_fmt fs[] = {NMO_FP32, NMO_TF32, NMO_FP64};
        const uint64_t bs[] = {b32, b32, b};
        for (int j = 0; j < 3; j++) {
            double got = nmo_fmt_decode(fs[j], bs[j]), want = nmo_fmt_decode_mpfr(fs[j], bs[j]);
            if (!same(got, want) && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "%s decode 0x%llx: %a, mpfr %a", nmo_fmt_name(fs[j]),
                          (unsigned long long)bs[j], got, want);
        }
        if (!same(nmo_fmt_decode(NMO_FP32, b32), (double)fl) && nfail++ < NMO_MAXFAIL)
            cr_expect(0, "fp32 decode 0x%08x vs the float", b32);
        uint32_t t32 = b32 & ~0x1fffu;
        if (!same(nmo_fmt_decode(NMO_TF32, b32), nmo_fmt_decode(NMO_FP32, t32)) && !isnan(nmo_fmt_decode(NMO_FP32, t32)) && nfail++ < NMO_MAXFAIL)
            cr_expect(0, "tf32 decode 0x%08x ignores the low 13 bits", b32);
    }
    cr_assert_eq(nfail, 0, "%ld decode mismatches", nfail);
}

/* ---- encode round trip ------------------------------------------------------------- */

Test(fmt, encode_roundtrip)
{
    long nfail = 0;
    for (int k = 0; k < NSMALL; k++) {
        nmo_fmt f = small_fmts[k];
        const nmo_fmt_info *fi = nmo_fmt_get(f);
        for (uint64_t b = 0; b < (1ULL << fi->bits); b++) {
            double v = nmo_fmt_decode(f, b);
            for (int r = 0; r < NMO_RND_COUNT; r++) {
                for (int o = 0; o < 3; o++) {
                    uint64_t e = nmo_fmt_encode(f, v, (nmo_rnd)r, 0, (nmo_ovf)o);
                    int ok = isnan(v) ? isnan(nmo_fmt_decode(f, e))
                           : isinf(v) && o == NMO_OVF_SAT ? nmo_fmt_decode(f, e) == copysign(fi->max_finite, v)
                           : e == b;
                    if (!ok && nfail++ < NMO_MAXFAIL)
                        cr_expect(0, "%s %s ovf=%s: encode(decode(0x%llx) = %a) = 0x%llx",
                                  fi->name, nmo_rnd_name((nmo_rnd)r), ovf_name((nmo_ovf)o),
                                  (unsigned long long)b, v, (unsigned long long)e);
                }
            }
            /* ftz keeps normals and zeros, flushes subnormals */
            uint64_t e = nmo_fmt_encode(f, v, NMO_RNE, 1, fi->ovf_default);
            double w = nmo_fmt_decode(f, e);
            int ok = isnan(v) ? isnan(w)
                   : fabs(v) >= fi->min_normal || v == 0 ? e == b
                   : w == 0 && (fi->has_neg_zero ? signbit(w) == signbit(v) : e == 0);
            if (!ok && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "%s ftz: encode(0x%llx = %a) = 0x%llx", fi->name,
                          (unsigned long long)b, v, (unsigned long long)e);
        }
    }
    /* canonical NaN patterns and NaN inputs */
    static const uint64_t nanb[NMO_FMT_COUNT] = {0x7ff8000000000000ULL, 0x7fc00000, 0x7fc00000,
                                                 0x7fc0, 0x7e00, 0x7f, 0x7e, 0x80, 0x80};
    for (int f = 0; f < NMO_FMT_COUNT; f++) {
        cr_expect_eq(nmo_fmt_encode((nmo_fmt)f, NAN, NMO_RNE, 0, NMO_OVF_IEEE), nanb[f], "%s NaN", nmo_fmt_name((nmo_fmt)f));
        cr_expect_eq(nmo_fmt_encode((nmo_fmt)f, -NAN, NMO_RU, 1, NMO_OVF_SAT), nanb[f]);
        cr_expect(isnan(nmo_fmt_round((nmo_fmt)f, NAN, NMO_RZ, 0)));
    }
    /* -0 into fnuz is +0 in every mode */
    for (int r = 0; r < NMO_RND_COUNT; r++) {
        cr_expect_eq(nmo_fmt_encode(NMO_FP8_E4M3FNUZ, -0.0, (nmo_rnd)r, 0, NMO_OVF_NAN), 0);
        cr_expect_eq(nmo_fmt_encode(NMO_FP8_E5M2FNUZ, -0x1p-30, (nmo_rnd)r, 0, NMO_OVF_NAN),
                     r == NMO_RD ? 0x81 : 0, "%s", nmo_rnd_name((nmo_rnd)r));
        cr_expect_eq(nmo_fmt_encode(NMO_FP8_E4M3, -0.0, (nmo_rnd)r, 0, NMO_OVF_NAN), 0x80);
    }
    cr_assert_eq(nfail, 0, "%ld round-trip mismatches", nfail);
}

/* ---- rounding against MPFR, exhaustively ------------------------------------------ */

static void round_exhaustive(nmo_fmt f)
{
    int n;
    long nfail = 0;
    double *v = all_values(f, &n);
    mpfr_t mx;
    mpfr_init2(mx, 53);
    for (int i = 0; i + 1 < n; i++) check_pair(f, v[i], v[i + 1], mx, &nfail);
    check_point(f, v[n - 1], mx, &nfail);
    check_edges(f, mx, &nfail);
    mpfr_clear(mx);
    free(v);
    cr_assert_eq(nfail, 0, "%s: %ld rounding mismatches", nmo_fmt_name(f), nfail);
}

Test(fmt_round, bf16) { round_exhaustive(NMO_BF16); }
Test(fmt_round, fp16) { round_exhaustive(NMO_FP16); }
Test(fmt_round, fp8)
{
    round_exhaustive(NMO_FP8_E4M3);
    round_exhaustive(NMO_FP8_E5M2);
    round_exhaustive(NMO_FP8_E4M3FNUZ);
    round_exhaustive(NMO_FP8_E5M2FNUZ);
}

/* Hand-checked overflow and tie cases (the MPFR side could share a misreading). */
Test(fmt_round, spots)
{
    const nmo_fmt E4 = NMO_FP8_E4M3, E5 = NMO_FP8_E5M2, U4 = NMO_FP8_E4M3FNUZ;
    cr_expect_eq(nmo_fmt_round(E4, 464, NMO_RNE, 0), 448, "tie to even below the NaN slot");
    cr_expect(isnan(nmo_fmt_round(E4, 464.5, NMO_RNE, 0)));
    cr_expect(isnan(nmo_fmt_round(E4, 449, NMO_RU, 0)));
    cr_expect_eq(nmo_fmt_round(E4, 479, NMO_RZ, 0), 448);
    cr_expect(isnan(nmo_fmt_round(E4, 480, NMO_RZ, 0)), "480 is an overflow even toward zero");
    cr_expect_eq(nmo_fmt_encode(E4, 1e9, NMO_RNE, 0, NMO_OVF_SAT), 0x7e);
    cr_expect_eq(nmo_fmt_encode(E4, -INFINITY, NMO_RNE, 0, NMO_OVF_SAT), 0xfe);
    cr_expect_eq(nmo_fmt_encode(E4, 1e9, NMO_RZ, 0, NMO_OVF_IEEE), 0x7e);
    cr_expect_eq(nmo_fmt_encode(E4, 1e9, NMO_RNE, 0, NMO_OVF_IEEE), 0x7f, "no inf: NaN");
    cr_expect_eq(nmo_fmt_round(E5, 61440, NMO_RNE, 0), INFINITY, "tie at max + ulp/2 goes up");
    cr_expect_eq(nmo_fmt_round(E5, 61439, NMO_RNE, 0), 57344);
    cr_expect_eq(nmo_fmt_round(E5, 1e6, NMO_RD, 0), 57344);
    cr_expect_eq(nmo_fmt_round(E5, -1e6, NMO_RD, 0), -INFINITY);
    cr_expect_eq(nmo_fmt_round(E5, -1e6, NMO_RU, 0), -57344);
    cr_expect_eq(nmo_fmt_round(E5, INFINITY, NMO_RZ, 0), INFINITY, "inf input is exact");
    cr_expect(isnan(nmo_fmt_round(E4, INFINITY, NMO_RZ, 0)));
    cr_expect_eq(nmo_fmt_round(U4, 247.9, NMO_RNE, 0), 240);
    cr_expect(isnan(nmo_fmt_round(U4, 248, NMO_RNE, 0)), "240 is odd: the tie goes to 256");
    cr_expect_eq(nmo_fmt_encode(U4, -1e-9, NMO_RNE, 0, NMO_OVF_NAN), 0x00);
    cr_expect_eq(nmo_fmt_encode(U4, -0x1p-11, NMO_RNE, 0, NMO_OVF_NAN), 0x00, "tie to even: zero");
    cr_expect_eq(nmo_fmt_encode(U4, -0x1.0001p-11, NMO_RNE, 0, NMO_OVF_NAN), 0x81);
    cr_expect_eq(nmo_fmt_encode(U4, -0x1p-10, NMO_RNE, 1, NMO_OVF_NAN), 0x00, "ftz in fnuz: +0");
    cr_expect_eq(nmo_fmt_encode(NMO_FP16, -0x1p-24, NMO_RNE, 1, NMO_OVF_IEEE), 0x8000);
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.ff8p-15, NMO_RNE, 1), 0, "largest subnormal flushed");
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.ff8p-15, NMO_RNE, 0), 0x1.ff8p-15);
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.ffcp-15, NMO_RNE, 1), 0x1p-14, "tie up to min_normal: kept");
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.ffcp-15, NMO_RZ, 1), 0);
    cr_expect_eq(nmo_fmt_round(NMO_FP16, -0x1.ffcp-15, NMO_RU, 1), -0.0);
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.8p-25, NMO_RNE, 0), 0x1p-24);
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1p-25, NMO_RNE, 0), 0, "half of min_sub ties to 0");
    cr_expect_eq(nmo_fmt_round(NMO_FP16, 0x1.8p-24, NMO_RNE, 0), 0x1p-23, "1.5 min_sub ties to 2");
    cr_expect_eq(nmo_fmt_round(NMO_BF16, 1 + 0x1p-8, NMO_RNE, 0), 1.0);
    cr_expect_eq(nmo_fmt_round(NMO_BF16, 1 + 0x1.8p-7, NMO_RNE, 0), 1 + 0x1p-6);
    cr_expect_eq(nmo_fmt_round(NMO_BF16, -(1 + 0x1p-20), NMO_RD, 0), -(1 + 0x1p-7));
}

/* MPFR rounding of values that are not doubles, and exponent-range restoration. */
Test(fmt_round, mpfr_wide)
{
    long nfail = 0;
    mpfr_t y;
    mpfr_init2(y, 300);
    mpfr_set_emin(-5000);
    mpfr_set_emax(5000);
    for (int k = 0; k < NSMALL; k++) {
        nmo_fmt f = small_fmts[k];
        int n;
        double *v = all_values(f, &n);
        for (int i = 0; i + 1 < n; i++) {
            /* y = v[i] + 2^-200 |gap|: strictly inside (v[i], v[i+1]), not a double */
            for (int side = 0; side < 2; side++) {
                double a = v[i], b = v[i + 1];
                mpfr_set_d(y, side ? b : a, MPFR_RNDN);
                if (side) mpfr_sub_d(y, y, ldexp(b - a, -200), MPFR_RNDN);
                else mpfr_add_d(y, y, ldexp(b - a, -200), MPFR_RNDN);
                double near = side ? b : a;
                double rd = nmo_fmt_round_mpfr(f, y, NMO_RD, 0), ru = nmo_fmt_round_mpfr(f, y, NMO_RU, 0);
                double rn = nmo_fmt_round_mpfr(f, y, NMO_RNE, 0), rz = nmo_fmt_round_mpfr(f, y, NMO_RZ, 0);
                double az = fabs(a) < fabs(b) ? a : b;
                if (!(rd == a && ru == b && rn == near && rz == az) && nfail++ < NMO_MAXFAIL)
                    cr_expect(0, "%s mpfr wide between %a and %a side %d: rd %a ru %a rn %a rz %a",
                              nmo_fmt_name(f), a, b, side, rd, ru, rn, rz);
            }
        }
        free(v);
    }
    cr_expect_eq(mpfr_get_emin(), -5000, "exponent range restored");
    cr_expect_eq(mpfr_get_emax(), 5000);
    /* fp64 and fp32 of a wide value */
    mpfr_set_d(y, 1.0, MPFR_RNDN);
    mpfr_add_d(y, y, 0x1p-60, MPFR_RNDN);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RU, 0), 1 + 0x1p-52);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RNE, 0), 1.0);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP32, y, NMO_RU, 0), 1 + 0x1p-23);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_TF32, y, NMO_RU, 0), 1 + 0x1p-10);
    mpfr_set_d(y, 0x1p-1074, MPFR_RNDN);
    mpfr_mul_d(y, y, 0.75, MPFR_RNDN); /* below binary64's range */
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RNE, 0), 0x1p-1074);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RZ, 0), 0);
    mpfr_set_d(y, DBL_MAX, MPFR_RNDN);
    mpfr_mul_d(y, y, 1.5, MPFR_RNDN);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RNE, 0), INFINITY);
    cr_expect_eq(nmo_fmt_round_mpfr(NMO_FP64, y, NMO_RZ, 0), DBL_MAX);
    mpfr_clear(y);
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    cr_assert_eq(nfail, 0, "%ld mismatches", nfail);
}

/* ---- neighbours, ulp, ordinal ------------------------------------------------------ */

Test(fmt, neighbours)
{
    long nfail = 0;
#define NB_CHECK(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond) && nfail++ < NMO_MAXFAIL) cr_expect(0, __VA_ARGS__);                   \
    } while (0)
    for (int k = 0; k < NSMALL; k++) {
        nmo_fmt f = small_fmts[k];
        const nmo_fmt_info *fi = nmo_fmt_get(f);
        const char *nm = fi->name;
        int n, z = -1;
        double *v = all_values(f, &n);
        for (int i = 0; i < n; i++)
            if (v[i] == 0) z = i;
        cr_assert(z >= 0 && v[0] == -fi->max_finite && v[n - 1] == fi->max_finite);
        for (int i = 0; i < n; i++) {
            double x = v[i], up = i + 1 < n ? v[i + 1] : INFINITY, dn = i ? v[i - 1] : -INFINITY;
            NB_CHECK(same(nmo_fmt_next_up(f, x) + 0.0, up + 0.0) && nmo_fmt_next_up(f, x) == up,
                     "%s next_up(%a) = %a, want %a", nm, x, nmo_fmt_next_up(f, x), up);
            NB_CHECK(nmo_fmt_next_down(f, x) == dn, "%s next_down(%a) = %a, want %a", nm, x,
                     nmo_fmt_next_down(f, x), dn);
            NB_CHECK(nmo_fmt_ordinal(f, x) == i - z, "%s ordinal(%a) = %lld, want %d", nm, x,
                     (long long)nmo_fmt_ordinal(f, x), i - z);
            NB_CHECK(nmo_fmt_is_repr(f, x), "%s is_repr(%a)", nm, x);
            if (i + 1 < n) {
                double mid = x + (up - x) * 0.5, a = x + (up - x) * 0.125;
                NB_CHECK(nmo_fmt_next_up(f, mid) == up && nmo_fmt_next_down(f, mid) == x,
                         "%s neighbours of %a", nm, mid);
                NB_CHECK(nmo_fmt_next_up(f, a) == up && nmo_fmt_next_down(f, a) == x,
                         "%s neighbours of %a", nm, a);
                NB_CHECK(!nmo_fmt_is_repr(f, mid) && !nmo_fmt_is_repr(f, a), "%s is_repr(%a)", nm, mid);
                int64_t om = nmo_fmt_ordinal(f, mid), want = x >= 0 ? i - z : i + 1 - z;
                NB_CHECK(om == want, "%s ordinal(%a) = %lld (toward zero), want %lld", nm, mid,
                         (long long)om, (long long)want);
            }
            if (x >= 0) {
                /* ulp: the spacing above |x|, same for -x and inside the gap */
                double u = i + 1 < n ? up - x : x - dn;
                NB_CHECK(nmo_fmt_ulp(f, x) == u && nmo_fmt_ulp(f, -x) == u,
                         "%s ulp(%a) = %a, want %a", nm, x, nmo_fmt_ulp(f, x), u);
                if (i + 1 < n)
                    NB_CHECK(nmo_fmt_ulp(f, x + u * 0.5) == u, "%s ulp(%a)", nm, x + u * 0.5);
            }
        }
        /* signs of zero from stepping, specials */
        double z1 = nmo_fmt_next_up(f, -fi->min_subnormal), z2 = nmo_fmt_next_down(f, fi->min_subnormal);
        NB_CHECK(z1 == 0 && signbit(z1) == fi->has_neg_zero, "%s next_up(-min_sub) = %a", nm, z1);
        NB_CHECK(z2 == 0 && !signbit(z2), "%s next_down(min_sub) = %a", nm, z2);
        NB_CHECK(nmo_fmt_next_up(f, -0.0) == fi->min_subnormal, "%s next_up(-0)", nm);
        NB_CHECK(nmo_fmt_next_up(f, -INFINITY) == -fi->max_finite, "%s next_up(-inf)", nm);
        NB_CHECK(nmo_fmt_next_up(f, INFINITY) == INFINITY, "%s next_up(inf)", nm);
        NB_CHECK(nmo_fmt_next_down(f, INFINITY) == fi->max_finite, "%s next_down(inf)", nm);
        NB_CHECK(nmo_fmt_next_up(f, 1e300) == INFINITY && nmo_fmt_next_down(f, 1e300) == fi->max_finite,
                 "%s beyond max", nm);
        NB_CHECK(isnan(nmo_fmt_next_up(f, NAN)) && isnan(nmo_fmt_next_down(f, NAN)), "%s NaN", nm);
        NB_CHECK(nmo_fmt_ordinal(f, -0.0) == 0 && nmo_fmt_ordinal(f, 0.0) == 0, "%s ord(0)", nm);
        NB_CHECK(nmo_fmt_ordinal(f, INFINITY) == n - z && nmo_fmt_ordinal(f, -1e300) == -(n - z),
                 "%s ord(inf)", nm);
        NB_CHECK(nmo_fmt_ordinal(f, NAN) == INT64_MIN, "%s ord(NaN)", nm);
        NB_CHECK(nmo_fmt_is_repr(f, INFINITY) == fi->has_inf && nmo_fmt_is_repr(f, NAN), "%s is_repr", nm);
        NB_CHECK(nmo_fmt_ulp(f, 0x1p-300) == fi->min_subnormal, "%s ulp tiny", nm);
        free(v);
    }
    /* fp32 against nextafterf, fp64 against nextafter (random values of every binade) */
    uint64_t s = 7;
    for (int i = 0; i < 200000; i++) {
        uint32_t b = (uint32_t)rng_next(&s);
        float x;
        memcpy(&x, &b, 4);
        if (!isfinite(x)) continue;
        NB_CHECK(nmo_fmt_next_up(NMO_FP32, x) == (double)nextafterf(x, INFINITY) || fabsf(x) == FLT_MAX,
                 "fp32 next_up(%a)", (double)x);
        NB_CHECK(nmo_fmt_next_down(NMO_FP32, x) == (double)nextafterf(x, -INFINITY) || fabsf(x) == FLT_MAX,
                 "fp32 next_down(%a)", (double)x);
        NB_CHECK(nmo_fmt_ulp(NMO_FP32, x) == (double)nextafterf(fabsf(x), INFINITY) - fabsf(x),
                 "fp32 ulp(%a)", (double)x);
        int64_t o = nmo_fmt_ordinal(NMO_FP32, x), want = (int64_t)(b & 0x7fffffff);
        NB_CHECK(o == (x < 0 ? -want : want), "fp32 ordinal(%a) = %lld", (double)x, (long long)o);
        double d;
        uint64_t b64 = rng_next(&s);
        memcpy(&d, &b64, 8);
        if (!isfinite(d) || fabs(d) == DBL_MAX) continue;
        NB_CHECK(nmo_fmt_next_up(NMO_FP64, d) == nextafter(d, INFINITY), "fp64 next_up(%a)", d);
        NB_CHECK(nmo_fmt_next_down(NMO_FP64, d) == nextafter(d, -INFINITY), "fp64 next_down(%a)", d);
        NB_CHECK(nmo_fmt_ordinal(NMO_FP64, nextafter(d, INFINITY)) == nmo_fmt_ordinal(NMO_FP64, d) + 1 || d == 0,
                 "fp64 ordinal(%a)", d);
    }
    cr_expect_eq(nmo_fmt_next_up(NMO_FP64, -0x1p-1074), 0);
    cr_expect_eq(nmo_fmt_ulp(NMO_FP64, 1.0), 0x1p-52);
    cr_expect_eq(nmo_fmt_ulp(NMO_FP64, 0.0), 0x1p-1074);
    cr_expect_eq(nmo_fmt_ulp(NMO_TF32, 1.5), 0x1p-10);
    cr_expect_eq(nmo_fmt_next_up(NMO_TF32, 1.0), 1 + 0x1p-10);
    cr_expect_eq(nmo_fmt_next_down(NMO_TF32, 1.0), 1 - 0x1p-11);
    cr_expect_eq(nmo_fmt_ordinal(NMO_TF32, 1.0) - nmo_fmt_ordinal(NMO_TF32, 0.5), 1024);
    cr_assert_eq(nfail, 0, "%ld neighbour/ordinal mismatches", nfail);
#undef NB_CHECK
}

/* ---- against the compiler's own conversions ---------------------------------------- */

Test(fmt, fp16_native)
{
#ifdef __FLT16_MAX__
    long nfail = 0;
    /* every pattern decodes as _Float16 does */
    for (uint32_t b = 0; b < 65536; b++) {
        uint16_t h = (uint16_t)b;
        _Float16 y;
        memcpy(&y, &h, 2);
        if (!same(nmo_fmt_decode(NMO_FP16, b), (double)y) && nfail++ < NMO_MAXFAIL)
            cr_expect(0, "fp16 decode 0x%04x: %a vs _Float16 %a", b, nmo_fmt_decode(NMO_FP16, b), (double)y);
    }
    /* random doubles over the whole range, and every midpoint +- one double step */
    uint64_t s = 11;
    int n;
    double *v = all_values(NMO_FP16, &n);
    for (int i = 0; i < 2000000 + 3 * n; i++) {
        double x;
        if (i < 2000000) {
            x = rng_double(&s, -30, 18);
        } else {
            int j = (i - 2000000) / 3, t = (i - 2000000) % 3;
            double a = v[j], b = j + 1 < n ? v[j + 1] : 2 * v[j] - v[j - 1];
            double mid = a + (b - a) * 0.5;
            x = t == 0 ? mid : t == 1 ? nextafter(mid, INFINITY) : nextafter(mid, -INFINITY);
        }
        _Float16 y = (_Float16)x;
        uint16_t hb;
        memcpy(&hb, &y, 2);
        double got = nmo_fmt_round(NMO_FP16, x, NMO_RNE, 0);
        uint64_t gb = nmo_fmt_encode(NMO_FP16, x, NMO_RNE, 0, NMO_OVF_IEEE);
        if ((!same(got, (double)y) || gb != hb) && nfail++ < NMO_MAXFAIL)
            cr_expect(0, "fp16 rne x=%a: %a (0x%04llx), _Float16 %a (0x%04x)", x, got,
                      (unsigned long long)gb, (double)y, hb);
    }
    free(v);
    cr_assert_eq(nfail, 0, "%ld fp16 mismatches", nfail);
#else
    cr_skip_test("no _Float16 in this compiler");
#endif
}

/* (float)x under each rounding direction; volatile keeps the conversion between the
 * fesetround calls (gcc does not honour FENV_ACCESS). */
static double native_f32(double x, int mode)
{
    volatile double vx = x;
    volatile float y;
    fesetround(mode);
    y = (float)vx;
    fesetround(FE_TONEAREST);
    return y;
}

Test(fmt, fp32_native)
{
    long nfail = 0;
    static const int modes[NMO_RND_COUNT] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    uint64_t s = 13;
    mpfr_t mx;
    mpfr_init2(mx, 53);
    for (int i = 0; i < 400000; i++) {
        double x;
        int kind = i % 4;
        if (kind == 0) { /* whole range incl. float subnormals and overflow */
            x = rng_double(&s, -160, 130);
        } else if (kind == 1) { /* float subnormal range */
            x = rng_double(&s, -150, -126);
        } else { /* near a float value or a float midpoint */
            uint32_t b = (uint32_t)rng_next(&s) & 0x7f7fffffu;
            float fa, fb;
            uint32_t b1 = b + 1;
            memcpy(&fa, &b, 4);
            memcpy(&fb, &b1, 4);
            double a = fa, m = a + ((double)fb - a) * 0.5;
            int t = (int)(rng_next(&s) % 5);
            x = t == 0 ? m : t == 1 ? nextafter(m, INFINITY) : t == 2 ? nextafter(m, 0) : t == 3 ? nextafter(a, INFINITY) : a;
            if (rng_next(&s) & 1) x = -x;
        }
        for (int r = 0; r < NMO_RND_COUNT; r++) {
            double want = native_f32(x, modes[r]), got = nmo_fmt_round(NMO_FP32, x, (nmo_rnd)r, 0);
            if (!same(got, want) && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "fp32 %s x=%a: %a, (float)x %a", nmo_rnd_name((nmo_rnd)r), x, got, want);
        }
        if (i % 4 == 0) check_point(NMO_FP32, x, mx, &nfail); /* ftz and overflow modes */
    }
    const double edges[] = {FLT_MAX, 0x1.ffffffp127, 0x1.fffffeffffffp127, 0x1p128, FLT_MIN,
                            0x1p-149, 0x1p-150, 0x1.000001p-150, 0x1.fffffcp-127, 0x1.fffffep-127,
                            0x1.ffffffp-127, 0, INFINITY, NAN, 1e300, 1e-300};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        check_point(NMO_FP32, edges[i], mx, &nfail);
        check_point(NMO_FP32, -edges[i], mx, &nfail);
        for (int r = 0; r < NMO_RND_COUNT; r++)
            if (!same(nmo_fmt_round(NMO_FP32, edges[i], (nmo_rnd)r, 0), native_f32(edges[i], modes[r])) && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "fp32 edge %a %s", edges[i], nmo_rnd_name((nmo_rnd)r));
    }
    mpfr_clear(mx);
    cr_assert_eq(nfail, 0, "%ld fp32 mismatches", nfail);
}

/* ---- tf32 and fp64 ----------------------------------------------------------------- */

Test(fmt, tf32_fp64)
{
    long nfail = 0;
    mpfr_t mx;
    mpfr_init2(mx, 53);
    uint64_t s = 17;
    for (int i = 0; i < 100000; i++) {
        double x;
        if (i % 2) {
            x = rng_double(&s, -145, 130);
        } else { /* around tf32 midpoints */
            uint32_t b = ((uint32_t)rng_next(&s) & 0x7f7fe000u), b1 = b + 0x2000;
            double a = nmo_fmt_decode(NMO_TF32, b), c = nmo_fmt_decode(NMO_TF32, b1), m = a + (c - a) * 0.5;
            int t = (int)(rng_next(&s) % 3);
            x = t == 0 ? m : t == 1 ? nextafter(m, INFINITY) : nextafter(m, 0);
            if (i & 2) x = -x;
        }
        check_point(NMO_TF32, x, mx, &nfail);
        uint64_t e = nmo_fmt_encode(NMO_TF32, x, NMO_RNE, 0, NMO_OVF_IEEE);
        if ((e & 0x1fff) != 0 && nfail++ < NMO_MAXFAIL)
            cr_expect(0, "tf32 encode(%a) = 0x%llx has low bits", x, (unsigned long long)e);
    }
    check_edges(NMO_TF32, mx, &nfail);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, 1.0, NMO_RNE, 0, NMO_OVF_IEEE), 0x3f800000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, 1 + 0x1p-10, NMO_RNE, 0, NMO_OVF_IEEE), 0x3f802000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, 1 + 0x1p-11, NMO_RNE, 0, NMO_OVF_IEEE), 0x3f800000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, 1 + 0x3p-11, NMO_RNE, 0, NMO_OVF_IEEE), 0x3f804000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, -(1 + 0x1p-30), NMO_RD, 0, NMO_OVF_IEEE), 0xbf802000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, 0x1p-136, NMO_RNE, 0, NMO_OVF_IEEE), 0x00002000);
    cr_expect_eq(nmo_fmt_encode(NMO_TF32, INFINITY, NMO_RNE, 0, NMO_OVF_IEEE), 0x7f800000);
    cr_expect_eq(nmo_fmt_decode(NMO_TF32, 0x3f801fff), 1.0, "low 13 bits ignored");
    cr_expect_eq(nmo_fmt_round(NMO_TF32, 0x1.ffep127, NMO_RNE, 0), INFINITY);
    cr_expect_eq(nmo_fmt_round(NMO_TF32, 0x1.ffdfffp127, NMO_RNE, 0), 0x1.ffcp127);

    /* fp64: every double is a value; ftz flushes binary64 subnormals */
    for (int i = 0; i < 100000; i++) {
        double x;
        uint64_t b = rng_next(&s);
        memcpy(&x, &b, 8);
        for (int r = 0; r < NMO_RND_COUNT; r++) {
            double want0 = x, want1 = (fabs(x) < DBL_MIN) ? copysign(0.0, x) : x;
            if (!same(nmo_fmt_round(NMO_FP64, x, (nmo_rnd)r, 0), want0) ||
                !same(nmo_fmt_round(NMO_FP64, x, (nmo_rnd)r, 1), want1)) {
                if (nfail++ < NMO_MAXFAIL) cr_expect(0, "fp64 %s round(%a)", nmo_rnd_name((nmo_rnd)r), x);
            }
            uint64_t e = nmo_fmt_encode(NMO_FP64, x, (nmo_rnd)r, 0, NMO_OVF_IEEE);
            if (!(isnan(x) ? e == 0x7ff8000000000000ULL : e == b) && nfail++ < NMO_MAXFAIL)
                cr_expect(0, "fp64 encode(%a)", x);
        }
        if (i % 8 == 0) check_point(NMO_FP64, x, mx, &nfail);
        if (i % 8 == 1) check_point(NMO_FP64, ldexp(x, -1060) , mx, &nfail); /* subnormals */
    }
    check_edges(NMO_FP64, mx, &nfail);
    cr_expect_eq(nmo_fmt_encode(NMO_FP64, INFINITY, NMO_RNE, 0, NMO_OVF_SAT), 0x7fefffffffffffffULL);
    cr_expect(nmo_fmt_is_repr(NMO_FP64, 0x1p-1074) && nmo_fmt_is_repr(NMO_FP64, DBL_MAX));
    cr_expect(!nmo_fmt_is_repr(NMO_FP32, 1 + 0x1p-30) && nmo_fmt_is_repr(NMO_FP32, 1 + 0x1p-23));
    cr_expect(!nmo_fmt_is_repr(NMO_TF32, 1 + 0x1p-23) && nmo_fmt_is_repr(NMO_TF32, 1 + 0x1p-10));
    mpfr_clear(mx);
    cr_assert_eq(nfail, 0, "%ld tf32/fp64 mismatches", nfail);
}

/* ---- status ------------------------------------------------------------------------ */

Test(status, strerror_err_set)
{
    for (int i = 0; i < NMO_STATUS_COUNT; i++) {
        const char *s = nmo_strerror((nmo_status)i);
        cr_assert_not_null(s);
        cr_expect(strlen(s) > 0 && strcmp(s, "unknown status") != 0, "status %d has a string", i);
        for (int j = 0; j < i; j++) cr_expect_str_neq(s, nmo_strerror((nmo_status)j));
    }
    cr_expect_str_eq(nmo_strerror(NMO_STATUS_COUNT), "unknown status");
    cr_expect_str_eq(nmo_strerror((nmo_status)-3), "unknown status");
    nmo_err e;
    cr_expect_eq(nmo_err_set(&e, NMO_ERR_PARSE, "bad token '%s' at %d", "x=", 7), NMO_ERR_PARSE);
    cr_expect_str_eq(e.msg, "bad token 'x=' at 7");
    cr_expect_eq(nmo_err_set(NULL, NMO_ERR_IO, "ignored %d", 1), NMO_ERR_IO);
    char big[2000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    nmo_err_set(&e, NMO_ERR_IO, "%s", big);
    cr_expect_eq(strlen(e.msg), sizeof e.msg - 1, "truncated, terminated");
}
