/* Tests for oracle/tensor.c: shapes, element access, strides, fast decode, .bin I/O. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numoracle/gen.h"
#include "numoracle/tensor.h"

/* ---- shape text -------------------------------------------------------------------- */

static void shape_ok(const char *text, int nd, const int64_t *want)
{
    int got_nd = -1;
    int64_t d[NMO_MAX_DIMS];
    nmo_err e = {{0}};
    cr_assert_eq(nmo_shape_parse(&got_nd, d, text, &e), NMO_OK, "'%s': %s", text, e.msg);
    cr_assert_eq(got_nd, nd, "'%s'", text);
    for (int k = 0; k < nd; k++) cr_expect_eq(d[k], want[k], "'%s' dim %d", text, k);
}

Test(shape_parse, good)
{
    shape_ok("4096x4096", 2, (int64_t[]){4096, 4096});
    shape_ok("2x3x5", 3, (int64_t[]){2, 3, 5});
    shape_ok("2X3,5", 3, (int64_t[]){2, 3, 5});
    shape_ok("7", 1, (int64_t[]){7});
    shape_ok("  8 x 16 ", 2, (int64_t[]){8, 16});
    shape_ok("007x1", 2, (int64_t[]){7, 1});
    shape_ok("1x2x1x2x1x2x1x2", 8, (int64_t[]){1, 2, 1, 2, 1, 2, 1, 2});
    shape_ok("131072x131072", 2, (int64_t[]){131072, 131072}); /* exactly NMO_MAX_ELEMS */
    shape_ok("17179869184", 1, (int64_t[]){17179869184LL});
}

Test(shape_parse, bad_pinned_messages)
{
    static const struct {
        const char *text;
        nmo_status st;
        const char *msg;
    } cases[] = {
        {"", NMO_ERR_PARSE, "shape: empty shape in ''"},
        {"   ", NMO_ERR_PARSE, "shape: empty shape in '   '"},
        {"4096xx", NMO_ERR_PARSE, "shape: bad dimension 'x' in '4096xx'"},
        {"x4096", NMO_ERR_PARSE, "shape: bad dimension 'x' in 'x4096'"},
        {"4096x", NMO_ERR_PARSE, "shape: missing dimension at end in '4096x'"},
        {"4xabc", NMO_ERR_PARSE, "shape: bad dimension 'abc' in '4xabc'"},
        {"3.5x2", NMO_ERR_PARSE, "shape: bad dimension '3.5' in '3.5x2'"},
        {"+5", NMO_ERR_PARSE, "shape: bad dimension '+5' in '+5'"},
        {"-", NMO_ERR_PARSE, "shape: bad dimension '-' in '-'"},
        {"4 096", NMO_ERR_PARSE, "shape: bad dimension '4 096' in '4 096'"},
        {"4096;4096", NMO_ERR_PARSE, "shape: bad dimension '4096;4096' in '4096;4096'"},
        {"0x5", NMO_ERR_SHAPE, "shape: dimension '0' must be at least 1 in '0x5'"},
        {"4x-3", NMO_ERR_SHAPE, "shape: dimension '-3' must be at least 1 in '4x-3'"},
        {"1x1x1x1x1x1x1x1x1", NMO_ERR_SHAPE,
         "shape: more than 8 dimensions in '1x1x1x1x1x1x1x1x1'"},
        {"99999999999999999999", NMO_ERR_SHAPE,
         "shape: more than 17179869184 elements in '99999999999999999999'"},
        {"131072x131073", NMO_ERR_SHAPE, "shape: more than 17179869184 elements in '131072x131073'"},
        {"65536x65536x65536x65536", NMO_ERR_SHAPE,
         "shape: more than 17179869184 elements in '65536x65536x65536x65536'"},
        {"17179869185", NMO_ERR_SHAPE, "shape: more than 17179869184 elements in '17179869185'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int nd = 42;
        int64_t d[NMO_MAX_DIMS] = {0};
        nmo_err e = {{0}};
        cr_expect_eq(nmo_shape_parse(&nd, d, cases[k].text, &e), cases[k].st, "'%s'",
                     cases[k].text);
        cr_expect_str_eq(e.msg, cases[k].msg);
        cr_expect_eq(nd, 42, "'%s': outputs untouched on error", cases[k].text);
    }
}

/* ---- init / alloc ------------------------------------------------------------------ */

Test(tensor, init_and_bytes)
{
    nmo_tensor t;
    nmo_err e = {{0}};
    cr_assert_eq(nmo_tensor_init(&t, NMO_BF16, 3, (int64_t[]){2, 3, 4}, &e), NMO_OK);
    cr_expect_eq(t.strides[0], 12);
    cr_expect_eq(t.strides[1], 4);
    cr_expect_eq(t.strides[2], 1);
    cr_expect_eq(nmo_tensor_numel(&t), 24);
    cr_expect_eq(nmo_tensor_span(&t), 24);
    cr_expect(nmo_tensor_is_packed(&t));
    cr_expect_null(t.data);
    cr_assert_eq(nmo_tensor_alloc(&t, &e), NMO_OK);
    for (int64_t i = 0; i < 24; i++) cr_expect_eq(nmo_tensor_get_bits(&t, i), 0u);
    nmo_tensor_free(&t);
    cr_expect_null(t.data);

    cr_expect_eq(nmo_fmt_bytes(NMO_FP64), 8);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP32), 4);
    cr_expect_eq(nmo_fmt_bytes(NMO_TF32), 4);
    cr_expect_eq(nmo_fmt_bytes(NMO_BF16), 2);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP16), 2);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP8_E4M3), 1);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP8_E5M2), 1);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP8_E4M3FNUZ), 1);
    cr_expect_eq(nmo_fmt_bytes(NMO_FP8_E5M2FNUZ), 1);
}

Test(tensor, init_rejects_absurd_shapes)
{
    nmo_tensor t;
    nmo_err e = {{0}};
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 0, (int64_t[]){1}, &e), NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &e),
                 NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 2, (int64_t[]){4, 0}, &e), NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 2, (int64_t[]){4, -1}, &e), NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 2, (int64_t[]){1 << 20, 1 << 20}, &e),
                 NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FP32, 3, (int64_t[]){INT64_MAX, INT64_MAX, 2}, &e),
                 NMO_ERR_SHAPE);
    cr_expect_eq(nmo_tensor_init(&t, NMO_FMT_COUNT, 1, (int64_t[]){4}, &e),
                 NMO_ERR_UNKNOWN_DTYPE);
}

/* ---- get / set / strides ----------------------------------------------------------- */

Test(tensor, set_rounds_rne_with_default_overflow)
{
    nmo_tensor t;
    nmo_tensor_init(&t, NMO_BF16, 1, (int64_t[]){4}, NULL);
    nmo_tensor_alloc(&t, NULL);
    nmo_tensor_set(&t, 0, 1.0 + 0x1p-8);       /* tie: to even -> 1.0 */
    nmo_tensor_set(&t, 1, 1.0 + 3 * 0x1p-8);   /* tie: to even -> 1 + 2^-6 */
    nmo_tensor_set(&t, 2, -0.0);
    nmo_tensor_set(&t, 3, 1e300);              /* bf16 overflow under RNE -> inf */
    cr_expect_eq(nmo_tensor_get(&t, 0), 1.0);
    cr_expect_eq(nmo_tensor_get(&t, 1), 1.0 + 0x1p-6);
    cr_expect_eq(nmo_tensor_get_bits(&t, 2), 0x8000u);
    cr_expect(isinf(nmo_tensor_get(&t, 3)) && nmo_tensor_get(&t, 3) > 0);
    nmo_tensor_free(&t);

    nmo_tensor_init(&t, NMO_FP8_E4M3, 1, (int64_t[]){2}, NULL);
    nmo_tensor_alloc(&t, NULL);
    nmo_tensor_set(&t, 0, 450.0); /* rounds to 448 */
    nmo_tensor_set(&t, 1, 1000.0); /* E4M3FN default overflow: NaN */
    cr_expect_eq(nmo_tensor_get(&t, 0), 448.0);
    cr_expect(isnan(nmo_tensor_get(&t, 1)));
    nmo_tensor_free(&t);
}

Test(tensor, strided_views)
{
    /* 3x4 logical view over a column-major 3x4 buffer: strides {1, 3}. */
    nmo_tensor t;
    nmo_tensor_init(&t, NMO_FP32, 2, (int64_t[]){3, 4}, NULL);
    t.strides[0] = 1;
    t.strides[1] = 3;
    cr_expect_not(nmo_tensor_is_packed(&t));
    cr_expect_eq(nmo_tensor_span(&t), 12);
    cr_assert_eq(nmo_tensor_alloc(&t, NULL), NMO_OK);
    for (int64_t i = 0; i < 12; i++) nmo_tensor_set(&t, i, (double)i);
    const float *raw = t.data;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            cr_expect_eq(nmo_tensor_offset(&t, r * 4 + c), r + 3 * c);
            cr_expect_eq(raw[r + 3 * c], (float)(r * 4 + c));
        }
    double *d = NULL;
    cr_assert_eq(nmo_tensor_to_f64(&d, &t, NULL), NMO_OK);
    for (int64_t i = 0; i < 12; i++) cr_expect_eq(d[i], (double)i);
    free(d);
    /* load_f64 along a column (stride 3 in storage) */
    double col[4];
    nmo_tensor_load_f64(col, &t, 1, 4, 3);
    for (int c = 0; c < 4; c++) cr_expect_eq(col[c], (double)(4 + c));
    nmo_tensor_free(&t);

    /* broadcast: stride 0 on the outer dim */
    nmo_tensor_init(&t, NMO_BF16, 2, (int64_t[]){4, 5}, NULL);
    t.strides[0] = 0;
    cr_expect_eq(nmo_tensor_span(&t), 5);
    cr_expect_eq(nmo_tensor_numel(&t), 20);
    nmo_tensor_alloc(&t, NULL);
    for (int64_t j = 0; j < 5; j++) nmo_tensor_set(&t, j, (double)(j + 1));
    for (int64_t i = 0; i < 20; i++) cr_expect_eq(nmo_tensor_get(&t, i), (double)(i % 5 + 1));
    nmo_tensor_free(&t);

    /* size-1 dims do not break packedness whatever their stride */
    nmo_tensor_init(&t, NMO_FP16, 3, (int64_t[]){1, 4, 1}, NULL);
    t.strides[0] = 999;
    t.strides[2] = 7;
    cr_expect(nmo_tensor_is_packed(&t));
}

/* Fill storage with the bit patterns patt(k) for every storage slot k. */
static void fill_bits(nmo_tensor *t, uint64_t (*patt)(uint64_t))
{
    int64_t span = nmo_tensor_span(t);
    size_t eb = nmo_fmt_bytes(t->dtype);
    unsigned char *p = t->data;
    for (int64_t k = 0; k < span; k++) {
        uint64_t b = patt((uint64_t)k);
        memcpy(p + k * eb, &b, eb); /* little-endian host */
    }
}

static uint64_t patt_index(uint64_t k) { return k; }
static uint64_t patt_random(uint64_t k) { return nmo_gen_u64(7, 3, k); }

static int same_value(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

Test(tensor, load_f64_equals_get_all_dtypes)
{
    for (int f = 0; f < NMO_FMT_COUNT; f++) {
        size_t eb = nmo_fmt_bytes((nmo_fmt)f);
        /* every pattern for <= 16 bits; 2^16 random patterns for 32/64 bits */
        int64_t n = 65536;
        nmo_tensor t;
        cr_assert_eq(nmo_tensor_init(&t, (nmo_fmt)f, 1, (int64_t[]){n}, NULL), NMO_OK);
        cr_assert_eq(nmo_tensor_alloc(&t, NULL), NMO_OK);
        fill_bits(&t, eb <= 2 ? patt_index : patt_random);
        double *d = malloc(sizeof(double) * (size_t)n);
        nmo_tensor_load_f64(d, &t, 0, n, 1);
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 5; i++) {
            double g = nmo_tensor_get(&t, i);
            double ref = nmo_fmt_decode((nmo_fmt)f, nmo_tensor_get_bits(&t, i));
            if (!same_value(d[i], g) || !same_value(g, ref)) {
                bad++;
                cr_expect_fail("%s: element %lld bits %llx load %a get %a", nmo_fmt_name(f),
                               (long long)i, (unsigned long long)nmo_tensor_get_bits(&t, i), d[i],
                               g);
            }
        }
        /* strided and offset loads */
        int64_t cnt = (n - 5) / 3;
        nmo_tensor_load_f64(d, &t, 5, cnt, 3);
        for (int64_t j = 0; j < cnt && bad < 10; j++)
            if (!same_value(d[j], nmo_tensor_get(&t, 5 + 3 * j))) {
                bad++;
                cr_expect_fail("%s: strided element %lld", nmo_fmt_name(f), (long long)j);
            }
        double *all = NULL;
        cr_assert_eq(nmo_tensor_to_f64(&all, &t, NULL), NMO_OK);
        for (int64_t i = 0; i < n && bad < 15; i++)
            if (!same_value(all[i], nmo_tensor_get(&t, i))) {
                bad++;
                cr_expect_fail("%s: to_f64 element %lld", nmo_fmt_name(f), (long long)i);
            }
        free(all);
        free(d);
        nmo_tensor_free(&t);
    }
}

Test(tensor, tf32_low_bits_ignored)
{
    nmo_tensor t;
    nmo_tensor_init(&t, NMO_TF32, 1, (int64_t[]){1}, NULL);
    nmo_tensor_alloc(&t, NULL);
    uint32_t u = 0x3f801fffu; /* 1.0 with all 13 low bits set */
    memcpy(t.data, &u, 4);
    double d;
    nmo_tensor_load_f64(&d, &t, 0, 1, 1);
    cr_expect_eq(d, 1.0);
    cr_expect_eq(nmo_tensor_get(&t, 0), 1.0);
    nmo_tensor_free(&t);
}

/* ---- .bin I/O ---------------------------------------------------------------------- */

static char tmpdir[256];

static void mk_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/nmo_test_tensor.XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *de;
    char p[512];
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", tmpdir, de->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(tmpdir);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    return n;
}

TestSuite(bin, .init = mk_tmpdir, .fini = rm_tmpdir);

Test(bin, round_trip_all_dtypes)
{
    for (int f = 0; f < NMO_FMT_COUNT; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/t%d.bin", tmpdir, f);
        nmo_tensor a, b;
        nmo_err e = {{0}};
        nmo_tensor_init(&a, (nmo_fmt)f, 2, (int64_t[]){33, 17}, NULL);
        nmo_tensor_alloc(&a, NULL);
        nmo_gen_fill(&a, NMO_FAM_GAUSSIAN, 1, 2, 17);
        cr_assert_eq(nmo_tensor_write_bin(&a, path, &e), NMO_OK, "%s", e.msg);
        FILE *fp = fopen(path, "rb");
        cr_assert_not_null(fp);
        fseek(fp, 0, SEEK_END);
        cr_expect_eq(ftell(fp), 33 * 17 * (long)nmo_fmt_bytes((nmo_fmt)f));
        fclose(fp);
        nmo_tensor_init(&b, (nmo_fmt)f, 2, (int64_t[]){33, 17}, NULL);
        cr_assert_eq(nmo_tensor_read_bin(&b, path, &e), NMO_OK, "%s", e.msg);
        cr_expect_eq(memcmp(a.data, b.data, 33 * 17 * nmo_fmt_bytes((nmo_fmt)f)), 0, "%s",
                     nmo_fmt_name(f));
        nmo_tensor_free(&a);
        nmo_tensor_free(&b);
    }
    /* no temporary files left behind */
    cr_expect_eq(count_entries(tmpdir), NMO_FMT_COUNT);
}

Test(bin, little_endian_layout_and_overwrite)
{
    char path[512];
    snprintf(path, sizeof path, "%s/le.bin", tmpdir);
    nmo_tensor t;
    nmo_tensor_init(&t, NMO_BF16, 1, (int64_t[]){2}, NULL);
    nmo_tensor_alloc(&t, NULL);
    nmo_tensor_set(&t, 0, 1.0);  /* 0x3f80 */
    nmo_tensor_set(&t, 1, -2.0); /* 0xc000 */
    cr_assert_eq(nmo_tensor_write_bin(&t, path, NULL), NMO_OK);
    nmo_tensor_set(&t, 0, 3.0);  /* 0x4040: overwriting replaces atomically */
    cr_assert_eq(nmo_tensor_write_bin(&t, path, NULL), NMO_OK);
    unsigned char buf[8];
    FILE *fp = fopen(path, "rb");
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    cr_assert_eq(n, 4);
    cr_expect_eq(buf[0], 0x40);
    cr_expect_eq(buf[1], 0x40);
    cr_expect_eq(buf[2], 0x00);
    cr_expect_eq(buf[3], 0xc0);
    cr_expect_eq(count_entries(tmpdir), 1);
    nmo_tensor_free(&t);
}

Test(bin, truncated_file_is_size_error)
{
    char path[512], want[768];
    snprintf(path, sizeof path, "%s/x.bin", tmpdir);
    FILE *fp = fopen(path, "wb");
    static unsigned char zeros[8190];
    fwrite(zeros, 1, sizeof zeros, fp);
    fclose(fp);
    nmo_tensor t;
    nmo_err e = {{0}};
    nmo_tensor_init(&t, NMO_BF16, 2, (int64_t[]){64, 64}, NULL);
    cr_expect_eq(nmo_tensor_read_bin(&t, path, &e), NMO_ERR_SIZE);
    snprintf(want, sizeof want, "%s: size 8190 bytes, expected 8192 (4096 elements of bf16)", path);
    cr_expect_str_eq(e.msg, want);
    cr_expect_null(t.data);
    /* too long is the same error */
    nmo_tensor_init(&t, NMO_FP8_E4M3, 1, (int64_t[]){8000}, NULL);
    cr_expect_eq(nmo_tensor_read_bin(&t, path, &e), NMO_ERR_SIZE);
    snprintf(want, sizeof want, "%s: size 8190 bytes, expected 8000 (8000 elements of fp8_e4m3)",
             path);
    cr_expect_str_eq(e.msg, want);
}

Test(bin, missing_file_is_io_error)
{
    char path[512], want[768];
    snprintf(path, sizeof path, "%s/nope.bin", tmpdir);
    nmo_tensor t;
    nmo_err e = {{0}};
    nmo_tensor_init(&t, NMO_FP32, 1, (int64_t[]){4}, NULL);
    cr_expect_eq(nmo_tensor_read_bin(&t, path, &e), NMO_ERR_IO);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    cr_expect_str_eq(e.msg, want);
    /* a directory is not a tensor file */
    cr_expect_eq(nmo_tensor_read_bin(&t, tmpdir, &e), NMO_ERR_IO);
    /* writing into a missing directory fails cleanly */
    snprintf(path, sizeof path, "%s/no/such/dir.bin", tmpdir);
    nmo_tensor_alloc(&t, NULL);
    cr_expect_eq(nmo_tensor_write_bin(&t, path, &e), NMO_ERR_IO);
    cr_expect(strstr(e.msg, "No such file or directory") != NULL, "%s", e.msg);
    nmo_tensor_free(&t);
}

Test(bin, strided_tensor_writes_its_span)
{
    char path[512];
    snprintf(path, sizeof path, "%s/s.bin", tmpdir);
    nmo_tensor t, u;
    nmo_tensor_init(&t, NMO_FP16, 2, (int64_t[]){3, 4}, NULL);
    t.strides[0] = 1;
    t.strides[1] = 3;
    nmo_tensor_alloc(&t, NULL);
    for (int64_t i = 0; i < 12; i++) nmo_tensor_set(&t, i, (double)i);
    cr_assert_eq(nmo_tensor_write_bin(&t, path, NULL), NMO_OK);
    u = t;
    u.data = NULL;
    u.own = 0;
    cr_assert_eq(nmo_tensor_read_bin(&u, path, NULL), NMO_OK);
    for (int64_t i = 0; i < 12; i++) cr_expect_eq(nmo_tensor_get(&u, i), (double)i);
    nmo_tensor_free(&t);
    nmo_tensor_free(&u);
}

/* nmo_tensor_read_bin_as: a file of another storage type, converted exactly or refused */
static void write_raw(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    cr_assert_eq(fwrite(p, 1, n, fp), n);
    fclose(fp);
}

Test(bin, read_as_int32_int64_labels)
{
    char p32[512], p64[512], want[768];
    snprintf(p32, sizeof p32, "%s/l32.bin", tmpdir);
    snprintf(p64, sizeof p64, "%s/l64.bin", tmpdir);
    int32_t a[4] = {0, -100, 16777216, 7};
    int64_t b[4] = {3, -100, (int64_t)1 << 40, 0};
    write_raw(p32, a, sizeof a);
    write_raw(p64, b, sizeof b);
    nmo_tensor t;
    nmo_err e = {{0}};
    nmo_tensor_init(&t, NMO_FP32, 1, (int64_t[]){4}, NULL);
    cr_assert_eq(nmo_tensor_read_bin_as(&t, NMO_DT_INT32, p32, &e), NMO_OK, "%s", e.msg);
    for (int i = 0; i < 4; i++) cr_expect_eq(nmo_tensor_get(&t, i), (double)a[i]);
    cr_assert_eq(nmo_tensor_read_bin_as(&t, NMO_DT_INT64, p64, &e), NMO_OK, "%s", e.msg);
    for (int i = 0; i < 4; i++) cr_expect_eq(nmo_tensor_get(&t, i), (double)b[i]);
    /* fp32 holds integers up to 2^24 exactly: 2^24 + 1 is refused, not rounded */
    a[2] = 16777217;
    write_raw(p32, a, sizeof a);
    cr_expect_eq(nmo_tensor_read_bin_as(&t, NMO_DT_INT32, p32, &e), NMO_ERR_DATA);
    snprintf(want, sizeof want, "%s: element 2 is 16777217 (int32), not representable in fp32", p32);
    cr_expect_str_eq(e.msg, want);
    /* an int64 beyond 2^53 does not even convert to a double exactly */
    b[1] = ((int64_t)1 << 53) + 1;
    write_raw(p64, b, sizeof b);
    cr_expect_eq(nmo_tensor_read_bin_as(&t, NMO_DT_INT64, p64, &e), NMO_ERR_DATA);
    snprintf(want, sizeof want, "%s: element 1 is 9007199254740993 (int64), not representable in fp32", p64);
    cr_expect_str_eq(e.msg, want);
    /* the size is that of the file's type */
    cr_expect_eq(nmo_tensor_read_bin_as(&t, NMO_DT_INT32, p64, &e), NMO_ERR_SIZE);
    snprintf(want, sizeof want, "%s: size 32 bytes, expected 16 (4 elements of int32)", p64);
    cr_expect_str_eq(e.msg, want);
    nmo_tensor_free(&t);
}

Test(bin, read_as_float_formats_exact_only)
{
    char path[512], want[768];
    snprintf(path, sizeof path, "%s/f.bin", tmpdir);
    float v[3] = {1.5f, -0.00390625f, 3.0f};
    write_raw(path, v, sizeof v);
    nmo_tensor t;
    nmo_err e = {{0}};
    nmo_tensor_init(&t, NMO_BF16, 1, (int64_t[]){3}, NULL);
    cr_assert_eq(nmo_tensor_read_bin_as(&t, NMO_FP32, path, &e), NMO_OK, "%s", e.msg);
    for (int i = 0; i < 3; i++) cr_expect_eq(nmo_tensor_get(&t, i), (double)v[i]);
    v[2] = 1.0f + 0x1p-10f; /* not a bf16 value */
    write_raw(path, v, sizeof v);
    cr_expect_eq(nmo_tensor_read_bin_as(&t, NMO_FP32, path, &e), NMO_ERR_DATA);
    snprintf(want, sizeof want, "%s: element 2 is 1.0009765625 (fp32), not representable in bf16", path);
    cr_expect_str_eq(e.msg, want);
    /* the tensor's own type is nmo_tensor_read_bin */
    nmo_tensor_free(&t);
    nmo_tensor_init(&t, NMO_FP32, 1, (int64_t[]){3}, NULL);
    cr_expect_eq(nmo_tensor_read_bin_as(&t, NMO_FP32, path, &e), NMO_OK);
    cr_expect_eq(nmo_tensor_get(&t, 2), (double)v[2]);
    nmo_tensor_free(&t);
}
