/* Tests for oracle/gen.c: counter-based generator and input families. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/gen.h"

static nmo_tensor mk(nmo_fmt f, int nd, const int64_t *dims)
{
    nmo_tensor t;
    cr_assert_eq(nmo_tensor_init(&t, f, nd, dims, NULL), NMO_OK);
    cr_assert_eq(nmo_tensor_alloc(&t, NULL), NMO_OK);
    return t;
}

/* ---- names ------------------------------------------------------------------------- */

Test(family, names_round_trip)
{
    for (int f = 0; f < NMO_FAM_COUNT; f++) {
        nmo_family g = NMO_FAM_COUNT;
        cr_expect_eq(nmo_family_from_name(&g, nmo_family_name((nmo_family)f)), NMO_OK);
        cr_expect_eq(g, f);
    }
    cr_expect_str_eq(nmo_family_name(NMO_FAM_NEAR_DEGENERATE), "near_degenerate");
    cr_expect_str_eq(nmo_family_name(NMO_FAM_OUTLIER), "outlier");
    nmo_family g;
    cr_expect_eq(nmo_family_from_name(&g, "gauss"), NMO_ERR_UNKNOWN_FAMILY);
    cr_expect_eq(nmo_family_from_name(&g, "Gaussian"), NMO_ERR_UNKNOWN_FAMILY);
    cr_expect_eq(nmo_family_from_name(&g, ""), NMO_ERR_UNKNOWN_FAMILY);
}

/* ---- raw generator ----------------------------------------------------------------- */

/* Pinned outputs: a change here changes every seeded input and golden bundle. */
Test(gen, u64_pinned)
{
    cr_expect_eq(nmo_gen_u64(0, 0, 0), 0xf89d2c8083e79beeULL);
    cr_expect_eq(nmo_gen_u64(1, 0, 0), 0x3753ff07721c5708ULL);
    cr_expect_eq(nmo_gen_u64(0, 1, 0), 0x24b754d3c636d15eULL);
    cr_expect_eq(nmo_gen_u64(0, 0, 1), 0x7f30cc14e85adefeULL);
    cr_expect_eq(nmo_gen_u64(42, 7, 123456789), 0xb8e224e301ea938eULL);
    /* the normal uses libm log/cos: pinned to 1e-15 relative, not bit-exact */
    cr_expect(fabs(nmo_gen_normal(1, 2, 3) - -1.7960187156533725) < 2e-15);
}

Test(gen, deterministic_and_key_sensitive)
{
    for (uint64_t i = 0; i < 1000; i++) {
        cr_expect_eq(nmo_gen_u64(5, 9, i), nmo_gen_u64(5, 9, i));
        cr_expect_neq(nmo_gen_u64(5, 9, i), nmo_gen_u64(6, 9, i));
        cr_expect_neq(nmo_gen_u64(5, 9, i), nmo_gen_u64(5, 10, i));
        cr_expect_neq(nmo_gen_u64(5, 9, i), nmo_gen_u64(5, 9, i + 1));
    }
}

/* Bit balance: each output bit is set about half the time, and flipping one input bit
 * of i flips about half of the output bits (avalanche). */
Test(gen, bit_balance_and_avalanche)
{
    enum { N = 20000 };
    int ones[64] = {0};
    double flips = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t u = nmo_gen_u64(3, 1, i);
        for (int b = 0; b < 64; b++) ones[b] += (int)((u >> b) & 1);
        flips += __builtin_popcountll(u ^ nmo_gen_u64(3, 1, i ^ (1ULL << (i % 64))));
    }
    for (int b = 0; b < 64; b++)
        cr_expect(fabs(ones[b] / (double)N - 0.5) < 0.02, "bit %d: %d", b, ones[b]);
    cr_expect(fabs(flips / N - 32.0) < 0.5, "avalanche %.3f", flips / N);
}

Test(gen, uniform01_open_interval)
{
    double mn = 1, mx = 0, s = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        double u = nmo_gen_uniform01(11, 0, i);
        cr_assert(u > 0.0 && u < 1.0);
        if (u < mn) mn = u;
        if (u > mx) mx = u;
        s += u;
    }
    cr_expect(fabs(s / 100000 - 0.5) < 0.01);
    cr_expect(mn < 1e-3 && mx > 1 - 1e-3);
    /* the extreme values the construction can produce are strictly inside (0,1) */
    cr_expect(((double)((1ULL << 52) - 1) + 0.5) * 0x1p-52 < 1.0);
    cr_expect((0.0 + 0.5) * 0x1p-52 > 0.0);
}

Test(gen, normal_moments)
{
    enum { N = 100000 };
    double s = 0, s2 = 0, s4 = 0;
    for (uint64_t i = 0; i < N; i++) {
        double z = nmo_gen_normal(2024, 5, i);
        cr_assert(isfinite(z) && fabs(z) < 8.6);
        s += z;
        s2 += z * z;
        s4 += z * z * z * z;
    }
    double mean = s / N, var = s2 / N - mean * mean;
    cr_expect(fabs(mean) < 0.02, "mean %g", mean);
    cr_expect(fabs(sqrt(var) - 1) < 0.02, "std %g", sqrt(var));
    cr_expect(fabs(s4 / N - 3) < 0.15, "kurtosis %g", s4 / N);
}

/* ---- families ---------------------------------------------------------------------- */

static void stats(const nmo_tensor *t, double *mean, double *sd)
{
    int64_t n = nmo_tensor_numel(t);
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = nmo_tensor_get(t, i);
        s += v;
        s2 += v * v;
    }
    *mean = s / n;
    *sd = sqrt(s2 / n - *mean * *mean);
}

Test(family, deterministic_fill)
{
    for (int fam = 0; fam < NMO_FAM_COUNT; fam++) {
        nmo_tensor a = mk(NMO_BF16, 2, (int64_t[]){16, 64});
        nmo_tensor b = mk(NMO_BF16, 2, (int64_t[]){16, 64});
        nmo_gen_fill(&a, (nmo_family)fam, 99, 4, 64);
        nmo_gen_fill(&b, (nmo_family)fam, 99, 4, 64);
        cr_expect_eq(memcmp(a.data, b.data, 16 * 64 * 2), 0, "%s", nmo_family_name(fam));
        nmo_gen_fill(&b, (nmo_family)fam, 99, 5, 64);
        cr_expect_neq(memcmp(a.data, b.data, 16 * 64 * 2), 0, "%s: stream", nmo_family_name(fam));
        nmo_gen_fill(&b, (nmo_family)fam, 100, 4, 64);
        cr_expect_neq(memcmp(a.data, b.data, 16 * 64 * 2), 0, "%s: seed", nmo_family_name(fam));
        nmo_tensor_free(&a);
        nmo_tensor_free(&b);
    }
}

/* Element i of gaussian does not depend on the shape or on the storage layout. */
Test(family, gaussian_independent_of_shape)
{
    nmo_tensor a = mk(NMO_FP32, 1, (int64_t[]){1200});
    nmo_tensor b = mk(NMO_FP32, 2, (int64_t[]){30, 40});
    nmo_tensor c = mk(NMO_FP32, 3, (int64_t[]){2, 3, 200});
    nmo_tensor d;
    nmo_tensor_init(&d, NMO_FP32, 2, (int64_t[]){30, 40}, NULL);
    d.strides[0] = 1; /* column-major storage of the same logical 30x40 */
    d.strides[1] = 30;
    nmo_tensor_alloc(&d, NULL);
    nmo_gen_fill(&a, NMO_FAM_GAUSSIAN, 17, 2, 1200);
    nmo_gen_fill(&b, NMO_FAM_GAUSSIAN, 17, 2, 40);
    nmo_gen_fill(&c, NMO_FAM_GAUSSIAN, 17, 2, 200);
    nmo_gen_fill(&d, NMO_FAM_GAUSSIAN, 17, 2, 40);
    for (int64_t i = 0; i < 1200; i++) {
        uint64_t bits = nmo_tensor_get_bits(&a, i);
        cr_expect_eq(nmo_tensor_get_bits(&b, i), bits);
        cr_expect_eq(nmo_tensor_get_bits(&c, i), bits);
        cr_expect_eq(nmo_tensor_get_bits(&d, i), bits);
        /* and it is the RNE quantization of the generator's normal */
        cr_expect_eq(nmo_tensor_get(&a, i), nmo_fmt_round(NMO_FP32, nmo_gen_normal(17, 2, (uint64_t)i),
                                                          NMO_RNE, 0));
    }
    nmo_tensor_free(&a);
    nmo_tensor_free(&b);
    nmo_tensor_free(&c);
    nmo_tensor_free(&d);
}

/* Per-row families depend on the row length, not on how the rows are arranged. */
Test(family, per_row_families_depend_only_on_row_len)
{
    const nmo_family fams[] = {NMO_FAM_SMALL, NMO_FAM_NEAR_DEGENERATE, NMO_FAM_OUTLIER};
    for (int k = 0; k < 3; k++) {
        nmo_tensor a = mk(NMO_FP32, 2, (int64_t[]){12, 50});
        nmo_tensor b = mk(NMO_FP32, 3, (int64_t[]){3, 4, 50});
        nmo_gen_fill(&a, fams[k], 8, 1, 50);
        nmo_gen_fill(&b, fams[k], 8, 1, 0); /* row_len <= 0: the last dim */
        cr_expect_eq(memcmp(a.data, b.data, 600 * 4), 0, "%s", nmo_family_name(fams[k]));
        nmo_tensor_free(&a);
        nmo_tensor_free(&b);
    }
}

Test(family, statistics)
{
    enum { R = 100, H = 1000 };
    nmo_tensor t = mk(NMO_FP64, 2, (int64_t[]){R, H});
    double m, sd;

    nmo_gen_fill(&t, NMO_FAM_GAUSSIAN, 1, 0, H);
    stats(&t, &m, &sd);
    cr_expect(fabs(m) < 0.02 && fabs(sd - 1) < 0.02, "gaussian %g %g", m, sd);

    nmo_gen_fill(&t, NMO_FAM_UNIFORM, 1, 0, H);
    stats(&t, &m, &sd);
    cr_expect(fabs(m) < 0.02 && fabs(sd - sqrt(1.0 / 3)) < 0.02, "uniform %g %g", m, sd);
    for (int64_t i = 0; i < R * H; i++) {
        double v = nmo_tensor_get(&t, i);
        cr_assert(v > -1 && v < 1);
    }

    nmo_gen_fill(&t, NMO_FAM_SMALL, 1, 0, H);
    stats(&t, &m, &sd);
    cr_expect(fabs(m * 2 * H) < 0.02 && fabs(sd * 2 * H - 1) < 0.02, "small %g %g", m, sd);

    nmo_gen_fill(&t, NMO_FAM_LARGE, 1, 0, H);
    stats(&t, &m, &sd);
    cr_expect(fabs(m / 300) < 0.02 && fabs(sd / 300 - 1) < 0.02, "large %g %g", m, sd);

    nmo_gen_fill(&t, NMO_FAM_SHIFTED, 1, 0, H);
    stats(&t, &m, &sd);
    cr_expect(fabs(m + 1.25) < 0.04 && fabs(sd - 2) < 0.04, "shifted %g %g", m, sd);

    nmo_tensor_free(&t);
}

Test(family, near_degenerate_rows)
{
    enum { R = 200, H = 256 };
    const nmo_fmt fs[] = {NMO_FP64, NMO_FP32};
    for (int k = 0; k < 2; k++) {
        nmo_tensor t = mk(fs[k], 2, (int64_t[]){R, H});
        nmo_gen_fill(&t, NMO_FAM_NEAR_DEGENERATE, 3, 0, H);
        double cs = 0, cs2 = 0;
        for (int r = 0; r < R; r++) {
            double mn = INFINITY, mx = -INFINITY, s = 0;
            for (int j = 0; j < H; j++) {
                double v = nmo_tensor_get(&t, (int64_t)r * H + j);
                mn = fmin(mn, v);
                mx = fmax(mx, v);
                s += v;
            }
            cr_expect(mx - mn < 0.02, "row %d spread %g", r, mx - mn);
            cr_expect(mx - mn > 0, "row %d is exactly constant", r);
            double c = nmo_gen_normal(3, 0 ^ 0x5eed, (uint64_t)r);
            cr_expect(fabs(s / H - c) < 1e-3, "row %d mean %g vs c_r %g", r, s / H, c);
            cs += s / H;
            cs2 += (s / H) * (s / H);
        }
        /* the row constants themselves are spread like randn */
        double sd = sqrt(cs2 / R - (cs / R) * (cs / R));
        cr_expect(sd > 0.7 && sd < 1.3, "row constants sd %g", sd);
        nmo_tensor_free(&t);
    }
}

Test(family, outlier_one_per_row)
{
    enum { R = 300, H = 97 };
    const nmo_fmt fs[] = {NMO_FP64, NMO_FP32, NMO_BF16, NMO_FP16, NMO_FP8_E4M3, NMO_FP8_E5M2,
                          NMO_FP8_E4M3FNUZ, NMO_FP8_E5M2FNUZ};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        /* the outlier after saturating RNE quantization: 1000, 1024 (e5m2), 448, 240 */
        double big = nmo_fmt_decode(fs[k], nmo_fmt_encode(fs[k], 1000.0, NMO_RNE, 0, NMO_OVF_SAT));
        nmo_tensor t = mk(fs[k], 2, (int64_t[]){R, H});
        nmo_gen_fill(&t, NMO_FAM_OUTLIER, 12, 3, H);
        int pos = 0, neg = 0, col_hist[H] = {0};
        for (int r = 0; r < R; r++) {
            int cnt = 0;
            for (int j = 0; j < H; j++) {
                double v = nmo_tensor_get(&t, (int64_t)r * H + j);
                if (fabs(v) == big) {
                    cnt++;
                    col_hist[j]++;
                    if (v > 0) pos++;
                    else neg++;
                } else {
                    cr_expect(fabs(v) < 9, "%s row %d col %d: %g", nmo_fmt_name(fs[k]), r, j, v);
                }
            }
            cr_expect_eq(cnt, 1, "%s row %d has %d outliers", nmo_fmt_name(fs[k]), r, cnt);
        }
        cr_expect(pos > R / 4 && neg > R / 4, "%s signs %d/%d", nmo_fmt_name(fs[k]), pos, neg);
        int used = 0;
        for (int j = 0; j < H; j++) used += col_hist[j] > 0;
        cr_expect(used > H / 2, "outlier positions spread: %d columns", used);
        nmo_tensor_free(&t);
    }
    cr_expect_eq(nmo_fmt_decode(NMO_FP32, nmo_fmt_encode(NMO_FP32, 1000.0, NMO_RNE, 0, NMO_OVF_SAT)),
                 1000.0);
    cr_expect_eq(nmo_fmt_decode(NMO_BF16, nmo_fmt_encode(NMO_BF16, 1000.0, NMO_RNE, 0, NMO_OVF_SAT)),
                 1000.0);
}

/* Every generated value is a finite value of the dtype (saturating quantization). */
Test(family, values_representable_in_dtype)
{
    for (int f = 0; f < NMO_FMT_COUNT; f++)
        for (int fam = 0; fam < NMO_FAM_COUNT; fam++) {
            nmo_tensor t = mk((nmo_fmt)f, 2, (int64_t[]){40, 64});
            nmo_gen_fill(&t, (nmo_family)fam, 5, 6, 64);
            int bad = 0;
            for (int64_t i = 0; i < 40 * 64 && bad < 3; i++) {
                double v = nmo_tensor_get(&t, i);
                if (!isfinite(v) || !nmo_fmt_is_repr((nmo_fmt)f, v) ||
                    nmo_fmt_encode((nmo_fmt)f, v, NMO_RNE, 0, NMO_OVF_IEEE) !=
                        nmo_tensor_get_bits(&t, i)) {
                    bad++;
                    cr_expect_fail("%s/%s element %lld: %a", nmo_fmt_name(f),
                                   nmo_family_name(fam), (long long)i, v);
                }
            }
            nmo_tensor_free(&t);
        }
}

/* The quantization is RNE of the family's double (checked where no saturation occurs). */
Test(family, quantization_is_rne)
{
    const int64_t H = 64;
    for (int f = 0; f < NMO_FMT_COUNT; f++) {
        nmo_tensor t = mk((nmo_fmt)f, 2, (int64_t[]){8, H});
        nmo_gen_fill(&t, NMO_FAM_SHIFTED, 21, 0, H);
        for (int64_t i = 0; i < 8 * H; i++) {
            double x = 2.0 * nmo_gen_normal(21, 0, (uint64_t)i) - 1.25;
            cr_expect_eq(nmo_tensor_get(&t, i), nmo_fmt_round((nmo_fmt)f, x, NMO_RNE, 0),
                         "%s element %lld", nmo_fmt_name(f), (long long)i);
        }
        nmo_tensor_free(&t);
    }
}
