/* numoracle: self-test of the CPU candidates (refs/cand/).
 *
 * Standalone: needs only the candidate sources, the public headers and nmo_err_set.
 * Checks the registry; the storage helpers against independent references (binary
 * search over all 16-bit patterns); the CUDA math emulations' error and determinism;
 * the warp butterfly order; and, for every candidate on small shapes, bf16/fp16/fp32
 * and seven input families from the test's own counter-based generator:
 *   - every output element is written (two different poisons give the same output),
 *   - runs are deterministic,
 *   - correct variants are within a loose error bound of a double-precision reference
 *     (a sanity check only: the certified oracle is the real judge),
 *   - every mutant differs bitwise from the default correct variant on some family,
 *   - correct variants are not aliases of the default (they differ somewhere in fp32). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../refs/cand/cand_util.h" /* the candidates' own helpers (static inline) */
#include "numoracle/cand.h"
#include "numoracle/op.h"
#include "harness.h"

/* ------------------------------------------------------------------ generator */

static uint64_t t_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
static uint64_t t_u64(uint64_t seed, uint64_t stream, uint64_t i) {
    return t_mix64(t_mix64(seed ^ t_mix64(stream * 0x632be59bd9b4e019ULL)) ^ i);
}
static double t_unif(uint64_t seed, uint64_t stream, uint64_t i) { /* (0,1) */
    return ((double)(t_u64(seed, stream, i) >> 11) + 0.5) * 0x1p-53;
}
static double t_normal(uint64_t seed, uint64_t stream, uint64_t i) {
    double u1 = t_unif(seed, stream, 2 * i), u2 = t_unif(seed, stream, 2 * i + 1);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

enum { F_GAUSS, F_UNIF, F_SMALL, F_LARGE, F_SHIFTED, F_NEARDEG, F_OUTLIER, F_COUNT };
static const char *const fam_name[F_COUNT] = {"gaussian", "uniform", "small", "large",
                                              "shifted", "near_degenerate", "outlier"};

/* Family value of element i of a tensor whose reduction rows have length H. */
static double t_family(int fam, uint64_t seed, uint64_t stream, int64_t i, int64_t H) {
    double z = t_normal(seed, stream, (uint64_t)i);
    int64_t row = i / H, col = i % H;
    switch (fam) {
    case F_UNIF: return 2.0 * t_unif(seed, stream + 1000, (uint64_t)i) - 1.0;
    case F_SMALL: return z / (2.0 * (double)H);
    case F_LARGE: return 300.0 * z;
    case F_SHIFTED: return 2.0 * z - 1.25;
    case F_NEARDEG: return t_normal(seed, stream + 2000, (uint64_t)row) + 1e-3 * z;
    case F_OUTLIER: {
        uint64_t h = t_u64(seed, stream + 3000, (uint64_t)row);
        if (col == (int64_t)(h % (uint64_t)H)) return (h >> 40) & 1 ? 1000.0 : -1000.0;
        return z;
    }
    default: return z;
    }
}

/* ------------------------------------------------------------------ tensors */

static size_t t_bytes(nmo_fmt f) {
    switch (f) {
    case NMO_FP64: return 8;
    case NMO_FP32: case NMO_TF32: return 4;
    case NMO_BF16: case NMO_FP16: return 2;
    default: return 1;
    }
}

/* Packed tensor with zeroed storage (span elements + 0). */
static void t_make(nmo_tensor *t, nmo_fmt f, int nd, const int64_t *dims) {
    memset(t, 0, sizeof *t);
    t->dtype = f;
    t->ndims = nd;
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        t->dims[d] = dims[d];
        t->strides[d] = s;
        s *= dims[d];
    }
    t->data = calloc((size_t)s, t_bytes(f));
    cr_assert_not_null(t->data);
}
static void t_free(nmo_tensor *t) {
    free(t->data);
    t->data = NULL;
}

/* Nearest fp8 pattern (ties to the even pattern), for test inputs only. */
static uint8_t t_fp8_enc(nmo_fmt f, double v) {
    int best = -1;
    double bd = INFINITY;
    for (int b = 0; b < 256; b++) {
        double d = nmo_cu_fp8_to_f(f, (uint8_t)b);
        if (isnan(d) || isinf(d)) continue;
        double e = fabs(d - v);
        if (e < bd || (e == bd && (b & 1) == 0)) bd = e, best = b;
    }
    return (uint8_t)best;
}

static void t_set(nmo_tensor *t, int64_t i, double v) {
    if (t->dtype == NMO_FP32 || t->dtype == NMO_BF16 || t->dtype == NMO_FP16)
        nmo_cu_encode(t->dtype, t->data, i, (float)v, NMO_CU_ST_RNE, i);
    else
        ((uint8_t *)t->data)[i] = t_fp8_enc(t->dtype, v);
}
static double t_get(const nmo_tensor *t, int64_t i) { return nmo_cu_decode(t->dtype, t->data, i); }
static uint32_t t_bits(const nmo_tensor *t, int64_t i) {
    uint32_t b = 0;
    memcpy(&b, (const char *)t->data + i * (int64_t)t_bytes(t->dtype), t_bytes(t->dtype));
    return b;
}

static void t_fill(nmo_tensor *t, int fam, uint64_t seed, uint64_t stream, int64_t H) {
    int64_t n = nmo_cu_numel(t);
    for (int64_t i = 0; i < n; i++) t_set(t, i, t_family(fam, seed, stream, i, H));
}
/* Norm weights: 1 + 0.1 randn. */
static void t_fill_weight(nmo_tensor *t, uint64_t seed, uint64_t stream) {
    int64_t n = nmo_cu_numel(t);
    for (int64_t i = 0; i < n; i++) t_set(t, i, 1.0 + 0.1 * t_normal(seed, stream, (uint64_t)i));
}

/* ------------------------------------------------------------------ cases */

typedef struct {
    const char *op;
    nmo_plan plan;
    int64_t M, N, K; /* K only for matmul */
    int n_in;
    nmo_tensor in[2];
    int64_t odims[2];
    double param[1];
    int n_param;
} t_case;

static void t_plan(nmo_plan *p, nmo_fmt in, nmo_fmt out) {
    memset(p, 0, sizeof *p);
    p->in = in;
    p->out = out;
    p->compute = p->acc = p->inter = NMO_FP32;
    p->sum = NMO_SUM_ANY;
    p->round = NMO_RNE;
}

static void t_case_init(t_case *c, const char *op, nmo_fmt in, nmo_fmt out, int64_t M, int64_t N,
                        int64_t K, int fam, uint64_t seed) {
    memset(c, 0, sizeof *c);
    c->op = op;
    t_plan(&c->plan, in, out);
    c->M = M, c->N = N, c->K = K;
    if (strcmp(op, "matmul") == 0) {
        int64_t da[2] = {M, K}, db[2] = {K, N};
        c->n_in = 2;
        t_make(&c->in[0], in, 2, da);
        t_make(&c->in[1], in, 2, db);
        t_fill(&c->in[0], fam, seed, 0, K); /* rows of A: length K */
        t_fill(&c->in[1], fam, seed, 1, N);
    } else {
        int64_t dx[2] = {M, N};
        t_make(&c->in[0], in, 2, dx);
        t_fill(&c->in[0], fam, seed, 0, N);
        c->n_in = 1;
        if (strcmp(op, "rms_norm") == 0) {
            c->n_in = 2;
            t_make(&c->in[1], in, 1, &N);
            t_fill_weight(&c->in[1], seed, 1);
            c->param[0] = 1e-6;
            c->n_param = 1;
        }
    }
    c->odims[0] = M, c->odims[1] = N;
}
static void t_case_free(t_case *c) {
    for (int k = 0; k < c->n_in; k++) t_free(&c->in[k]);
}

/* Run candidate into a fresh output tensor (poisoned with `poison` bytes). */
static nmo_status t_run(const nmo_cand *cand, const t_case *c, nmo_tensor *out, int poison, nmo_err *err) {
    t_make(out, c->plan.out, 2, c->odims);
    memset(out->data, poison, (size_t)(c->M * c->N) * t_bytes(c->plan.out));
    nmo_cand_args a = {c->in, c->n_in, out, 1, c->param, c->n_param, &c->plan};
    return cand->run(&a, err);
}
static int t_same_bits(const nmo_tensor *a, const nmo_tensor *b) {
    int64_t n = nmo_cu_numel(a);
    return memcmp(a->data, b->data, (size_t)n * t_bytes(a->dtype)) == 0;
}

/* ------------------------------------------------------------------ double reference */

static int t_prec(nmo_fmt f) { return f == NMO_FP32 ? 24 : f == NMO_BF16 ? 8 : 11; }
static double t_maxfin(nmo_fmt f) { return f == NMO_FP32 ? FLT_MAX : f == NMO_BF16 ? 0x1.fep127 : 65504.0; }
static double t_minsub(nmo_fmt f) { return f == NMO_FP32 ? 0x1p-149 : f == NMO_BF16 ? 0x1p-133 : 0x1p-24; }

/* Loose sanity bound: 4 output ulps + the model's fp32 error term + underflow slack. */
static void t_check_ref(const nmo_cand *cand, const t_case *c, const nmo_tensor *y, const char *what) {
    const int64_t M = c->M, N = c->N, K = c->K;
    const double u = 0x1p-24, ulp_out = ldexp(1.0, 1 - t_prec(c->plan.out));
    const double abs_slack = 4.0 * t_minsub(c->plan.out) + 0x1p-140;
    int bad = 0;
    for (int64_t i = 0; i < M && bad < 3; i++) {
        double rowmax = -INFINITY, s = 0.0, ss = 0.0, dmax = 0.0;
        if (strcmp(c->op, "softmax") == 0) {
            for (int64_t j = 0; j < N; j++) rowmax = fmax(rowmax, t_get(&c->in[0], i * N + j));
            for (int64_t j = 0; j < N; j++) {
                double d = t_get(&c->in[0], i * N + j) - rowmax;
                s += exp(d);
                dmax = fmax(dmax, fabs(d));
            }
        } else if (strcmp(c->op, "rms_norm") == 0) {
            for (int64_t j = 0; j < N; j++) {
                double x = t_get(&c->in[0], i * N + j);
                ss += x * x;
            }
        }
        for (int64_t j = 0; j < N && bad < 3; j++) {
            double ref, tol;
            if (strcmp(c->op, "softmax") == 0) {
                double d = t_get(&c->in[0], i * N + j) - rowmax;
                ref = exp(d) / s;
                tol = fabs(ref) * (4 * ulp_out + (N + 16 + fabs(d) + dmax) * 2 * u);
            } else if (strcmp(c->op, "rms_norm") == 0) {
                double eps = (double)(float)c->param[0];
                double r = 1.0 / sqrt(ss / (double)N + eps);
                ref = t_get(&c->in[0], i * N + j) * r * t_get(&c->in[1], j);
                tol = fabs(ref) * (4 * ulp_out + (N + 16) * 2 * u);
            } else {
                double acc = 0.0, aabs = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    double p = t_get(&c->in[0], i * K + k) * t_get(&c->in[1], k * N + j);
                    acc += p;
                    aabs += fabs(p);
                }
                ref = acc;
                tol = 4 * ulp_out * fabs(ref) + (K + 2) * 2 * u * aabs;
            }
            tol += abs_slack;
            double got = t_get(y, i * N + j);
            /* overflow of the output format: inf of the right sign is the right answer */
            double omax = t_maxfin(c->plan.out);
            int ovf_ok = isinf(got) && signbit(got) == signbit(ref) && fabs(ref) + tol >= omax;
            if (!(fabs(got - ref) <= tol) && !ovf_ok) {
                bad++;
                cr_expect(0, "%s/%s %s: element [%lld,%lld] = %.9g, reference %.9g, tolerance %.3g",
                          cand->op, cand->name, what, (long long)i, (long long)j, got, ref, tol);
            }
        }
    }
}

/* ------------------------------------------------------------------ registry */

static const char *const OPS[] = {"rms_norm", "softmax", "matmul"};
#define NOPS 3

/* This self-test builds cases for the three operators above only; candidates of other
 * operators are exercised by the registry-driven tests (soundness, detection, engines). */
static int t_known_op(const char *op) {
    for (int o = 0; o < NOPS; o++)
        if (strcmp(op, OPS[o]) == 0) return 1;
    return 0;
}

Test(cand_registry, counts_and_lookup) {
    int n = nmo_cand_count();
    cr_assert_gt(n, 0);
    cr_expect_null(nmo_cand_at(-1));
    cr_expect_null(nmo_cand_at(n));
    for (int i = 0; i < n; i++) {
        const nmo_cand *c = nmo_cand_at(i);
        cr_assert_not_null(c);
        cr_expect(c->op && c->name && c->desc && c->run);
        cr_expect(c->desc[0] != 0 && strchr(c->desc, '\n') == NULL, "%s/%s: desc must be one line",
                  c->op, c->name);
        for (const char *p = c->name; *p; p++)
            cr_expect(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_',
                      "%s/%s: name not lower_snake", c->op, c->name);
        cr_expect_eq(nmo_cand_find(c->op, c->name), c, "find(%s, %s)", c->op, c->name);
        /* a mut_ name is always a mutant; a few kernels are correct only under a non-default
         * plan (eager inter=bf16 variants) and count as mutants of the default plan */
        if (strncmp(c->name, "mut_", 4) == 0)
            cr_expect(!c->correct, "%s/%s: mut_ prefix on a correct variant", c->op, c->name);
        /* a plan of its own: a mutant of the default plan whose plan parses for every
         * test dtype and is one the operator models (not rejected) */
        if (c->plan) {
            cr_expect(!c->correct, "%s/%s: a correct variant with a plan of its own", c->op, c->name);
            static const nmo_fmt pdt[3] = {NMO_FP32, NMO_BF16, NMO_FP16};
            for (int d = 0; d < 3; d++) {
                nmo_plan pl;
                nmo_err e = {{0}};
                cr_expect_eq(nmo_cand_plan(&pl, c, pdt[d], &e), NMO_OK, "%s/%s: %s", c->op,
                             c->name, e.msg);
                cr_expect_eq(nmo_op_check_plan(nmo_op_find(c->op), &pl, &e), NMO_OK, "%s/%s: %s", c->op,
                             c->name, e.msg);
            }
        }
        for (int j = 0; j < i; j++) {
            const nmo_cand *d = nmo_cand_at(j);
            cr_expect(strcmp(c->op, d->op) != 0 || strcmp(c->name, d->name) != 0, "duplicate %s/%s",
                      c->op, c->name);
        }
    }
    for (int o = 0; o < NOPS; o++) {
        const nmo_cand *def = nmo_cand_find(OPS[o], NULL);
        cr_assert_not_null(def, "%s has no default", OPS[o]);
        cr_expect(def->correct);
        cr_expect_eq(nmo_cand_find(OPS[o], ""), def);
        int n_ok = 0, n_mut = 0, first_correct = -1;
        for (int i = 0; i < n; i++) {
            const nmo_cand *c = nmo_cand_at(i);
            if (strcmp(c->op, OPS[o]) != 0) continue;
            if (c->correct && first_correct < 0) first_correct = i;
            n_ok += c->correct, n_mut += !c->correct;
        }
        cr_expect_eq(nmo_cand_at(first_correct), def, "%s: default is the first correct", OPS[o]);
        cr_expect_geq(n_ok, 3, "%s: %d correct variants", OPS[o], n_ok);
        cr_expect_geq(n_mut, 4, "%s: %d mutants", OPS[o], n_mut);
    }
    cr_expect_null(nmo_cand_find("no_such_op", NULL));
    cr_expect_null(nmo_cand_find("rms_norm", "no_such_candidate"));
    cr_expect_null(nmo_cand_find(NULL, NULL));
}

/* ------------------------------------------------------------------ helpers */

/* Independent 16-bit rounding reference: binary search over the positive finite
 * patterns (decode is monotone in the pattern), then pick per mode. */
static uint16_t t_ref16(nmo_fmt f, float v, int rz) {
    double x = v;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double ax = fabs(x);
    uint16_t maxp = f == NMO_BF16 ? 0x7f7f : 0x7bff;
#define DEC(p) ((double)(f == NMO_BF16 ? nmo_cu_bf16_to_f(p) : nmo_cu_fp16_to_f(p)))
    if (ax >= DEC(maxp)) {
        if (rz || ax == DEC(maxp)) return sign | maxp;
        /* RNE: overflow threshold is max + ulp(max)/2 */
        double lim = DEC(maxp) + (DEC(maxp) - DEC((uint16_t)(maxp - 1))) / 2;
        return sign | (ax >= lim ? (uint16_t)(maxp + 1) : maxp);
    }
    uint16_t lo = 0, hi = maxp; /* find largest p with DEC(p) <= ax */
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (DEC(mid) <= ax) lo = mid;
        else hi = (uint16_t)(mid - 1);
    }
    if (rz || DEC(lo) == ax) return sign | lo;
    double dl = ax - DEC(lo), dh = DEC((uint16_t)(lo + 1)) - ax;
    uint16_t p = dl < dh ? lo : dh < dl ? (uint16_t)(lo + 1) : ((lo & 1) ? (uint16_t)(lo + 1) : lo);
    return sign | p;
#undef DEC
}

/* nmo_op_dtypes / nmo_op_has_dtype, the one reader of an operator's dtypes list, against
 * an independent strtok parse of the same text, for every operator and format. */
Test(op_registry, dtypes_list) {
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        nmo_fmt want[NMO_FMT_COUNT], got[NMO_FMT_COUNT];
        int nw = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", op->dtypes ? op->dtypes : "");
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            nmo_fmt f;
            cr_assert_eq(nmo_fmt_from_name(&f, tok), NMO_OK, "%s: dtype '%s' unknown", op->name, tok);
            want[nw++] = f;
        }
        int ng = nmo_op_dtypes(op, got, NMO_FMT_COUNT);
        cr_assert_eq(ng, nw, "%s: %d dtypes, expected %d", op->name, ng, nw);
        for (int k = 0; k < nw; k++) cr_expect_eq(got[k], want[k], "%s: dtype %d", op->name, k);
        if (nw > 1) cr_expect_eq(nmo_op_dtypes(op, got, 1), 1, "%s: max is honoured", op->name);
        for (int f = 0; f < NMO_FMT_COUNT; f++) {
            int listed = 0;
            for (int k = 0; k < nw; k++) listed |= want[k] == (nmo_fmt)f;
            cr_expect_eq(nmo_op_has_dtype(op, (nmo_fmt)f), listed, "%s: has %s", op->name, nmo_fmt_name((nmo_fmt)f));
        }
    }
    const nmo_op *rms = nmo_op_find("rms_norm");
    cr_assert(rms);
    cr_expect(nmo_op_has_dtype(rms, NMO_BF16));
}

static int all_bytes(const void *p, size_t n, unsigned char v)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v) return 0;
    return 1;
}

/* nmo_case_alloc_outputs, the one allocation of a run's outputs, for every operator (first
 * test shape and dtype): descriptions copied from the case, own storage, every byte 0xFF
 * when poisoned (zero when not), entries past n_out untouched; free_outputs releases them.
 * Failure path: an unallocatable last output returns the error and leaves every earlier
 * output freed. */
Test(op_registry, case_alloc_outputs) {
    int nops = 0;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (!nmo_test_op_selected(op->name)) continue;
        nmo_test_shape sh[4];
        cr_assert_gt(nmo_test_shapes(op, sh, 0), 0, "%s: no test shape", op->name);
        nmo_fmt dts[8];
        nmo_test_op_dtypes(op, dts);
        nmo_plan p;
        nmo_plan_default(&p, dts[0]);
        nmo_case c;
        nmo_err err;
        cr_assert_eq(nmo_case_init(&c, op, &p, sh[0].nshape, sh[0].shape, &err), NMO_OK, "%s: %s", op->name, err.msg);
        cr_assert(c.n_out >= 1 && c.n_out <= NMO_MAX_TENSORS, "%s: n_out %d", op->name, c.n_out);
        for (int poison = 0; poison < 2; poison++) {
            nmo_tensor out[NMO_MAX_TENSORS];
            memset(out, 0x5A, sizeof out);
            cr_assert_eq(nmo_case_alloc_outputs(&c, out, poison, &err), NMO_OK, "%s: %s", op->name, err.msg);
            for (int k = 0; k < c.n_out; k++) {
                cr_expect_eq(out[k].dtype, c.out[k].dtype, "%s out %d dtype", op->name, k);
                cr_expect_eq(out[k].ndims, c.out[k].ndims, "%s out %d ndims", op->name, k);
                cr_expect(!memcmp(out[k].dims, c.out[k].dims, sizeof out[k].dims) &&
                              !memcmp(out[k].strides, c.out[k].strides, sizeof out[k].strides),
                          "%s out %d dims/strides", op->name, k);
                cr_assert(out[k].data && out[k].own && out[k].data != c.out[k].data, "%s out %d storage", op->name, k);
                size_t nb = (size_t)nmo_tensor_span(&out[k]) * nmo_fmt_bytes(out[k].dtype);
                cr_expect(all_bytes(out[k].data, nb, poison ? 0xFF : 0x00), "%s out %d: not every byte %s", op->name,
                          k, poison ? "0xFF (poison)" : "zero");
            }
            for (int k = c.n_out; k < NMO_MAX_TENSORS; k++)
                cr_expect(all_bytes(&out[k], sizeof out[k], 0x5A), "%s: entry %d past n_out touched", op->name, k);
            nmo_case_free_outputs(&c, out);
            for (int k = 0; k < c.n_out; k++) cr_expect(!out[k].data && !out[k].own, "%s out %d not freed", op->name, k);
        }
        /* failure: the last output's span over the limit (nothing is allocated for it) */
        nmo_case bad = c;
        bad.out[c.n_out - 1].dims[0] = (int64_t)1 << 45;
        nmo_tensor out[NMO_MAX_TENSORS];
        memset(out, 0x5A, sizeof out);
        err.msg[0] = 0;
        cr_expect_neq(nmo_case_alloc_outputs(&bad, out, 1, &err), NMO_OK, "%s: an unallocatable output passed", op->name);
        cr_expect(err.msg[0], "%s: no error message", op->name);
        for (int k = 0; k < c.n_out; k++)
            cr_expect(!out[k].data && !out[k].own, "%s out %d: not freed after the failure", op->name, k);
        for (int k = c.n_out; k < NMO_MAX_TENSORS; k++)
            cr_expect(all_bytes(&out[k], sizeof out[k], 0x5A), "%s: entry %d past n_out touched (failure)", op->name, k);
        nmo_case_free(&c);
        nops++;
    }
    cr_assert_gt(nops, 0, "no operator selected");
    if (!nmo_test_filtered()) cr_expect_eq(nops, nmo_op_count());
}

Test(cand_util, rounding_16bit) {
    int n = 0;
    for (uint64_t i = 0; i < 400000; i++) {
        uint32_t u = (uint32_t)t_u64(7, 0, i);
        if (i % 4 == 1) u = (u & 0xffff0000U) | 0x8000U;              /* bf16 ties */
        if (i % 4 == 2) u = (u & 0x8fffffffU) | 0x38000000U;          /* fp16 range */
        if (i % 4 == 3) u = (u & 0x8fffe000U) | 0x38001000U;          /* fp16 ties */
        float v = nmo_cu_u2f(u);
        if (isnan(v)) continue;
        if (isinf(v)) continue;
        n++;
        cr_expect_eq(nmo_cu_f_to_bf16_rne(v), t_ref16(NMO_BF16, v, 0), "bf16 rne %a", (double)v);
        cr_expect_eq(nmo_cu_f_to_bf16_rz(v), t_ref16(NMO_BF16, v, 1), "bf16 rz %a", (double)v);
        cr_expect_eq(nmo_cu_f_to_fp16_rne(v), t_ref16(NMO_FP16, v, 0), "fp16 rne %a", (double)v);
        cr_expect_eq(nmo_cu_f_to_fp16_rz(v), t_ref16(NMO_FP16, v, 1), "fp16 rz %a", (double)v);
    }
    cr_expect_gt(n, 300000);
    /* Edges: NaN stays NaN, inf stays inf, RZ never overflows. */
    cr_expect(isnan(nmo_cu_bf16_to_f(nmo_cu_f_to_bf16_rne(NAN))));
    cr_expect(isnan(nmo_cu_bf16_to_f(nmo_cu_f_to_bf16_rz(nmo_cu_u2f(0x7f800001U)))));
    cr_expect(isnan(nmo_cu_fp16_to_f(nmo_cu_f_to_fp16_rz(NAN))));
    cr_expect_eq(nmo_cu_f_to_bf16_rz(FLT_MAX), 0x7f7f);
    cr_expect_eq(nmo_cu_f_to_bf16_rne(FLT_MAX), 0x7f80);
    cr_expect_eq(nmo_cu_f_to_fp16_rz(1e6f), 0x7bff);
    cr_expect_eq(nmo_cu_f_to_fp16_rne(1e6f), 0x7c00);
    cr_expect_eq(nmo_cu_f_to_fp16_rz(-INFINITY), 0xfc00);
    cr_expect_eq(nmo_cu_f_to_fp16_rz(-1e6f), 0xfbff);
    /* directed stores */
    cr_expect_eq(nmo_cu_enc16(NMO_BF16, 1.00390625f + 0x1p-20f, NMO_CU_ST_RD, 0), 0x3f80);
    cr_expect_eq(nmo_cu_enc16(NMO_BF16, 1.00390625f + 0x1p-20f, NMO_CU_ST_RU, 0), 0x3f81);
    cr_expect_eq(nmo_cu_enc16(NMO_BF16, -(1.00390625f + 0x1p-20f), NMO_CU_ST_RD, 0), 0xbf81);
    cr_expect_eq(nmo_cu_enc16(NMO_BF16, -(1.00390625f + 0x1p-20f), NMO_CU_ST_RU, 0), 0xbf80);
    cr_expect_eq(nmo_cu_enc16(NMO_FP16, 1.0f, NMO_CU_ST_RU, 0), 0x3c00);
    cr_expect_eq(nmo_cu_enc16(NMO_FP16, 65504.5f, NMO_CU_ST_RU, 0), 0x7c00);
}

/* All 16-bit patterns decode as the format definition says, and re-encode to themselves. */
Test(cand_util, decode16_exhaustive) {
    for (uint32_t b = 0; b < 65536; b++) {
        uint16_t p = (uint16_t)b;
        int s = p >> 15;
        int e = (p >> 10) & 0x1f, m = p & 0x3ff;
        double ref = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
        if (s) ref = -ref;
        float h = nmo_cu_fp16_to_f(p);
        if (isnan(ref)) {
            cr_expect(isnan(h), "fp16 %04x", b);
            continue;
        }
        cr_expect_eq((double)h, ref, "fp16 %04x", b);
        cr_expect_eq(signbit(h) != 0, s, "fp16 %04x sign", b);
        cr_expect_eq(nmo_cu_f_to_fp16_rne(h), p, "fp16 %04x round trip", b);
        cr_expect_eq(nmo_cu_f_to_fp16_rz(h), p, "fp16 %04x rz round trip", b);
        float g = nmo_cu_bf16_to_f(p);
        if (!isnan(g)) {
            cr_expect_eq(nmo_cu_f_to_bf16_rne(g), p, "bf16 %04x round trip", b);
            cr_expect_eq(nmo_cu_f_to_bf16_rz(g), p, "bf16 %04x rz round trip", b);
        }
    }
}

Test(cand_util, fp8_decode) {
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3, 0x7e), 448.0f);
    cr_expect(isnan(nmo_cu_fp8_to_f(NMO_FP8_E4M3, 0x7f)));
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3, 0x01), 0x1p-9f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3, 0x38), 1.0f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E5M2, 0x7b), 57344.0f);
    cr_expect(isinf(nmo_cu_fp8_to_f(NMO_FP8_E5M2, 0x7c)));
    cr_expect(isnan(nmo_cu_fp8_to_f(NMO_FP8_E5M2, 0x7d)));
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E5M2, 0x3c), 1.0f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E5M2, 0x01), 0x1p-16f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3FNUZ, 0x7f), 240.0f);
    cr_expect(isnan(nmo_cu_fp8_to_f(NMO_FP8_E4M3FNUZ, 0x80)));
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3FNUZ, 0x40), 1.0f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E5M2FNUZ, 0x7f), 57344.0f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E5M2FNUZ, 0x40), 1.0f);
    cr_expect_eq(nmo_cu_fp8_to_f(NMO_FP8_E4M3, 0xb8), -1.0f);
}

/* Error of r against the exact value e (long double) in ulps of r's binade. */
static double t_ulps(float r, long double e) {
    int ex;
    frexpl(e, &ex);
    long double ulp = ldexpl(1.0L, ex - 24);
    if (fabsl(e) < 0x1p-126L) ulp = 0x1p-149L;
    return (double)(fabsl((long double)r - e) / ulp);
}

Test(cand_util, cuda_math_emulation) {
    int dirs[3] = {0, 0, 0}, dirs_e[3] = {0, 0, 0};
    for (uint64_t i = 0; i < 200000; i++) {
        /* rsqrt over positive floats incl. subnormals */
        float x = nmo_cu_u2f((uint32_t)(t_u64(3, 0, i) % 0x7f800000U));
        float r = nmo_cu_rsqrtf(x), rc = nmo_cu_rsqrtf_cr(x);
        long double ex = 1.0L / sqrtl((long double)x);
        cr_assert(t_ulps(rc, ex) <= 0.5 + 1e-6, "rsqrt cr %a", (double)x);
        cr_assert(t_ulps(r, ex) <= 1.5 + 1e-6, "rsqrt emul %a: %.3f ulp", (double)x, t_ulps(r, ex));
        cr_assert_eq(nmo_cu_f2u(r), nmo_cu_f2u(nmo_cu_rsqrtf(x)), "rsqrt deterministic");
        dirs[(r > rc) ? 2 : (r < rc) ? 0 : 1]++;
        /* exp over [-104, 89] */
        float d = (float)(-104.0 + 193.0 * t_unif(3, 1, i));
        float e = nmo_cu_expf(d), ec = nmo_cu_expf_cr(d);
        long double ee = expl((long double)d);
        if (ee >= 0x1p-126L && ee <= FLT_MAX) {
            cr_assert(t_ulps(ec, ee) <= 0.5 + 1e-6, "exp cr %a", (double)d);
            cr_assert(t_ulps(e, ee) <= 1.5 + 1e-6, "exp emul %a: %.3f ulp", (double)d, t_ulps(e, ee));
            dirs_e[(e > ec) ? 2 : (e < ec) ? 0 : 1]++;
        }
    }
    for (int k = 0; k < 3; k++) {
        cr_expect_gt(dirs[k], 1000, "rsqrt emulation direction %d used %d times", k - 1, dirs[k]);
        cr_expect_gt(dirs_e[k], 1000, "exp emulation direction %d used %d times", k - 1, dirs_e[k]);
    }
    /* exact cases stay exact; specials */
    cr_expect_eq(nmo_cu_rsqrtf(4.0f), 0.5f);
    cr_expect_eq(nmo_cu_rsqrtf(0x1p-148f), 0x1p74f);
    cr_expect_eq(nmo_cu_rsqrtf(0.0f), INFINITY);
    cr_expect_eq(nmo_cu_rsqrtf(-0.0f), -INFINITY);
    cr_expect(isnan(nmo_cu_rsqrtf(-1.0f)));
    cr_expect_eq(nmo_cu_rsqrtf(INFINITY), 0.0f);
    cr_expect_eq(nmo_cu_expf(0.0f), 1.0f);
    cr_expect_eq(nmo_cu_expf(-INFINITY), 0.0f);
    cr_expect_eq(nmo_cu_expf(100.0f), INFINITY);
}

Test(cand_util, reduction_orders) {
    /* xor butterfly: lanes 8 and 24 meet first, then join lane 0's chain. */
    float v[32] = {0};
    v[0] = 1.0f, v[8] = 0x1p-24f, v[24] = 0x1p-24f;
    float w[32];
    memcpy(w, v, sizeof v);
    cr_expect_eq(nmo_cu_warp_sum32(w), 1.0f + 0x1p-23f);
    for (int l = 1; l < 32; l++) cr_expect_eq(w[l], w[0], "all lanes agree");
    float seq = 0.0f;
    for (int l = 0; l < 32; l++) seq += v[l];
    cr_expect_eq(seq, 1.0f);
    /* block of 256: warp totals joined by warp 0's butterfly over 8 partials. */
    float b[256] = {0};
    b[0] = 1.0f, b[32 * 4] = 0x1p-24f, b[32 * 5] = 0x1p-24f; /* warps 4 and 5 */
    cr_expect_eq(nmo_cu_block_sum256(b), 1.0f); /* 1+w4 first, then +w5: both ties to 1 */
    float b2[256] = {0};
    b2[0] = 1.0f, b2[32 * 1] = 0x1p-24f, b2[32 * 5] = 0x1p-24f; /* warps 1 and 5 meet first */
    cr_expect_eq(nmo_cu_block_sum256(b2), 1.0f + 0x1p-23f);
    /* every reduction shape sums small integers exactly */
    float a[100];
    for (int j = 0; j < 100; j++) a[j] = (float)(j + 1);
    for (int r = NMO_CU_RED_SEQ; r <= NMO_CU_RED_PAIRWISE; r++)
        for (int f = 0; f < 2; f++) {
            cr_expect_eq(nmo_cu_reduce(a, NULL, 100, (nmo_cu_red)r, f), 5050.0f, "shape %d", r);
            cr_expect_eq(nmo_cu_reduce(a, a, 100, (nmo_cu_red)r, f), 338350.0f, "shape %d", r);
        }
    /* bf16 accumulator loses what fp32 keeps */
    float ones[300];
    for (int j = 0; j < 300; j++) ones[j] = 1.0f;
    cr_expect_eq(nmo_cu_sum_acc16(ones, NULL, 300, NMO_BF16, 0), 256.0f);
    cr_expect_eq(nmo_cu_sum_acc16(ones, NULL, 300, NMO_FP16, 0), 300.0f);
}

/* ------------------------------------------------------------------ candidates */

typedef struct {
    int64_t M, N, K;
} t_shape;
static const t_shape SH_ROW[] = {{4, 33, 0}, {3, 64, 0}, {2, 300, 0}, {48, 17, 0}};
static const t_shape SH_MM[] = {{5, 7, 33}, {3, 4, 64}, {2, 3, 100}, {9, 9, 40}};
static const nmo_fmt DTS[] = {NMO_FP32, NMO_BF16, NMO_FP16};

static void t_shapes(const char *op, const t_shape **sh, int *n) {
    int mm = strcmp(op, "matmul") == 0;
    *sh = mm ? SH_MM : SH_ROW;
    *n = 4;
}

/* Every candidate: writes every element, deterministic; correct ones near the reference. */
Test(cand_run, all_candidates_all_families, .timeout = 120) {
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cand = nmo_cand_at(ci);
        if (!t_known_op(cand->op)) continue;
        const t_shape *sh;
        int nsh;
        t_shapes(cand->op, &sh, &nsh);
        for (int s = 0; s < nsh; s++)
            for (int d = 0; d < 3; d++)
                for (int fam = 0; fam < F_COUNT; fam++) {
                    t_case c;
                    t_case_init(&c, cand->op, DTS[d], DTS[d], sh[s].M, sh[s].N, sh[s].K, fam, 11);
                    nmo_tensor y1, y2;
                    nmo_err err = {{0}};
                    cr_assert_eq(t_run(cand, &c, &y1, 0xff, &err), NMO_OK, "%s/%s: %s", cand->op,
                                 cand->name, err.msg);
                    cr_assert_eq(t_run(cand, &c, &y2, 0x5a, &err), NMO_OK);
                    char what[96];
                    snprintf(what, sizeof what, "%s %lldx%lldx%lld %s", nmo_cu_fmt_name(DTS[d]),
                             (long long)sh[s].M, (long long)sh[s].N, (long long)sh[s].K, fam_name[fam]);
                    cr_expect(t_same_bits(&y1, &y2), "%s/%s %s: not every element written, or not deterministic",
                              cand->op, cand->name, what);
                    if (cand->correct) t_check_ref(cand, &c, &y1, what);
                    t_free(&y1), t_free(&y2);
                    t_case_free(&c);
                }
    }
}

/* Every mutant differs bitwise from its operator's default on some family; report where. */
Test(cand_run, mutants_differ_from_default, .timeout = 120) {
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cand = nmo_cand_at(ci);
        if (!t_known_op(cand->op)) continue;
        if (cand->correct) continue;
        const nmo_cand *def = nmo_cand_find(cand->op, NULL);
        const t_shape *sh;
        int nsh;
        t_shapes(cand->op, &sh, &nsh);
        char where[256] = "";
        int any = 0;
        for (int d = 0; d < 3; d++) {
            int here = 0;
            for (int s = 0; s < nsh; s++)
                for (int fam = 0; fam < F_COUNT; fam++) {
                    t_case c;
                    t_case_init(&c, cand->op, DTS[d], DTS[d], sh[s].M, sh[s].N, sh[s].K, fam, 11);
                    nmo_tensor y0, y1;
                    nmo_err err = {{0}};
                    cr_assert_eq(t_run(def, &c, &y0, 0, &err), NMO_OK);
                    cr_assert_eq(t_run(cand, &c, &y1, 0, &err), NMO_OK);
                    here += !t_same_bits(&y0, &y1);
                    t_free(&y0), t_free(&y1);
                    t_case_free(&c);
                }
            any += here;
            size_t l = strlen(where);
            snprintf(where + l, sizeof where - l, " %s:%d/%d", nmo_cu_fmt_name(DTS[d]), here, nsh * F_COUNT);
        }
        cr_log_info("%s/%s differs from %s on%s", cand->op, cand->name, def->name, where);
        cr_expect_gt(any, 0, "%s/%s never differs from %s", cand->op, cand->name, def->name);
    }
}

/* Correct variants really differ in arithmetic: each differs from the default in fp32 on
 * a longer row somewhere. */
Test(cand_run, correct_variants_not_aliases, .timeout = 60) {
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cand = nmo_cand_at(ci);
        if (!t_known_op(cand->op)) continue;
        const nmo_cand *def = nmo_cand_find(cand->op, NULL);
        if (!cand->correct || cand == def) continue;
        int mm = strcmp(cand->op, "matmul") == 0, diff = 0;
        for (int fam = 0; fam < F_COUNT && !diff; fam++) {
            t_case c;
            if (mm) t_case_init(&c, cand->op, NMO_FP32, NMO_FP32, 8, 8, 777, fam, 5);
            else t_case_init(&c, cand->op, NMO_FP32, NMO_FP32, 8, 777, 0, fam, 5);
            nmo_tensor y0, y1;
            cr_assert_eq(t_run(def, &c, &y0, 0, NULL), NMO_OK);
            cr_assert_eq(t_run(cand, &c, &y1, 0, NULL), NMO_OK);
            diff = !t_same_bits(&y0, &y1);
            t_free(&y0), t_free(&y1);
            t_case_free(&c);
        }
        cr_expect(diff, "%s/%s is bitwise identical to %s on every family", cand->op, cand->name, def->name);
    }
}

/* Mixed dtypes and fp8 inputs (matmul), bf16 in -> fp32 out, fp16 in -> bf16 out. */
Test(cand_run, mixed_dtypes, .timeout = 60) {
    static const nmo_fmt ins[] = {NMO_FP8_E4M3, NMO_FP8_E5M2, NMO_FP8_E4M3FNUZ, NMO_FP8_E5M2FNUZ, NMO_BF16, NMO_FP16};
    static const nmo_fmt outs[] = {NMO_BF16, NMO_FP32, NMO_FP16, NMO_BF16, NMO_FP32, NMO_BF16};
    for (int k = 0; k < 6; k++)
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cand = nmo_cand_at(ci);
            if (!t_known_op(cand->op)) continue;
            if (!cand->correct) continue;
            if (k < 4 && strcmp(cand->op, "matmul") != 0) continue;
            for (int fam = 0; fam < F_COUNT; fam++) {
                if (k < 4 && fam == F_LARGE) continue; /* beyond fp8 ranges */
                t_case c;
                t_case_init(&c, cand->op, ins[k], outs[k], 5, 7, 33, fam, 9);
                nmo_tensor y;
                nmo_err err = {{0}};
                cr_assert_eq(t_run(cand, &c, &y, 0xff, &err), NMO_OK, "%s", err.msg);
                char what[64];
                snprintf(what, sizeof what, "%s->%s %s", nmo_cu_fmt_name(ins[k]), nmo_cu_fmt_name(outs[k]),
                         fam_name[fam]);
                t_check_ref(cand, &c, &y, what);
                t_free(&y);
                t_case_free(&c);
            }
        }
}

/* plan->round: the default kernel stores under round=rz exactly as mut_store_rz does;
 * under round=sr every element is the RD or the RU rounding. */
Test(cand_run, plan_store_rounding) {
    for (int o = 0; o < NOPS; o++) {
        const nmo_cand *def = nmo_cand_find(OPS[o], NULL), *rz = nmo_cand_find(OPS[o], "mut_store_rz");
        cr_assert_not_null(rz);
        t_case c;
        t_case_init(&c, OPS[o], NMO_BF16, NMO_BF16, 4, 33, 33, F_GAUSS, 2);
        nmo_tensor y_rz, y_def, y_sr, y_f;
        cr_assert_eq(t_run(rz, &c, &y_rz, 0, NULL), NMO_OK);
        c.plan.round = NMO_RZ;
        cr_assert_eq(t_run(def, &c, &y_def, 0, NULL), NMO_OK);
        cr_expect(t_same_bits(&y_rz, &y_def), "%s: round=rz plan store", OPS[o]);
        c.plan.round = NMO_RNE;
        c.plan.round_sr = 1;
        cr_assert_eq(t_run(def, &c, &y_sr, 0, NULL), NMO_OK);
        /* the fp32 value before the store */
        c.plan.round_sr = 0;
        nmo_plan p32 = c.plan;
        p32.out = NMO_FP32;
        t_case c32 = c;
        c32.plan = p32;
        cr_assert_eq(t_run(def, &c32, &y_f, 0, NULL), NMO_OK);
        int n_up = 0, n_down = 0;
        for (int64_t i = 0; i < c.M * c.N; i++) {
            float v = (float)t_get(&y_f, i);
            uint16_t got = (uint16_t)t_bits(&y_sr, i);
            uint16_t rd = nmo_cu_enc16(NMO_BF16, v, NMO_CU_ST_RD, 0), ru = nmo_cu_enc16(NMO_BF16, v, NMO_CU_ST_RU, 0);
            cr_expect(got == rd || got == ru, "%s: sr element %lld", OPS[o], (long long)i);
            n_down += got == rd && rd != ru, n_up += got == ru && rd != ru;
        }
        cr_expect(n_up > 0 && n_down > 0, "%s: sr uses both directions (%d up, %d down)", OPS[o], n_up, n_down);
        t_free(&y_rz), t_free(&y_def), t_free(&y_sr), t_free(&y_f);
        t_case_free(&c);
    }
}

/* Non-packed tensors: a transposed B view and a column-major output give the same
 * values as the packed layout. */
Test(cand_run, strided_tensors) {
    const nmo_cand *def = nmo_cand_find("matmul", NULL);
    t_case c;
    t_case_init(&c, "matmul", NMO_BF16, NMO_BF16, 5, 7, 33, F_GAUSS, 4);
    nmo_tensor y_ref;
    cr_assert_eq(t_run(def, &c, &y_ref, 0, NULL), NMO_OK);
    /* B as a [K,N] view of an [N,K] buffer */
    nmo_tensor bt = c.in[1];
    int64_t K = c.K, N = c.N, M = c.M;
    bt.data = calloc((size_t)(K * N), 2);
    bt.strides[0] = 1, bt.strides[1] = K;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            memcpy((char *)bt.data + (j * K + k) * 2, (char *)c.in[1].data + (k * N + j) * 2, 2);
    nmo_tensor ins[2] = {c.in[0], bt};
    nmo_tensor y;
    t_make(&y, NMO_BF16, 2, c.odims);
    y.strides[0] = 1, y.strides[1] = M; /* column-major output */
    nmo_cand_args a = {ins, 2, &y, 1, NULL, 0, &c.plan};
    cr_assert_eq(def->run(&a, NULL), NMO_OK);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            cr_expect_eq(((uint16_t *)y.data)[j * M + i], ((uint16_t *)y_ref.data)[i * N + j]);
    free(bt.data);
    t_free(&y), t_free(&y_ref);
    t_case_free(&c);
}

/* Argument validation: dtype or dims mismatches are NMO_ERR_USAGE, output formats the
 * candidates cannot store are NMO_ERR_UNSUPPORTED. Nothing crashes. */
Test(cand_run, validation) {
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cand = nmo_cand_at(ci);
        if (!t_known_op(cand->op)) continue;
        t_case c;
        t_case_init(&c, cand->op, NMO_BF16, NMO_BF16, 3, 40, 40, F_GAUSS, 1);
        nmo_tensor y;
        nmo_err err = {{0}};
        /* output dtype differs from plan->out */
        nmo_plan p = c.plan;
        t_make(&y, NMO_FP16, 2, c.odims);
        nmo_cand_args a = {c.in, c.n_in, &y, 1, c.param, c.n_param, &p};
        cr_expect_eq(cand->run(&a, &err), NMO_ERR_USAGE, "%s/%s out dtype", cand->op, cand->name);
        cr_expect(err.msg[0] != 0);
        t_free(&y);
        /* wrong output dims */
        int64_t bad[2] = {c.odims[0], c.odims[1] + 1};
        t_make(&y, NMO_BF16, 2, bad);
        cr_expect_eq(cand->run(&a, &err), NMO_ERR_USAGE, "%s/%s out dims", cand->op, cand->name);
        /* input count */
        a.n_in = c.n_in + 1;
        cr_expect_eq(cand->run(&a, &err), NMO_ERR_USAGE, "%s/%s n_in", cand->op, cand->name);
        a.n_in = c.n_in;
        t_free(&y);
        /* input dtype differs from plan->in */
        t_make(&y, NMO_BF16, 2, c.odims);
        p.in = NMO_FP16;
        cr_expect_eq(cand->run(&a, &err), NMO_ERR_USAGE, "%s/%s in dtype", cand->op, cand->name);
        p.in = NMO_BF16;
        /* inner dims disagree (second input for two-input ops) */
        if (c.n_in == 2) {
            c.in[1].dims[0] += 1; /* w[N+1] / B[K+1,N] (storage untouched: rejected first) */
            cr_expect_eq(cand->run(&a, &err), NMO_ERR_USAGE, "%s/%s in dims", cand->op, cand->name);
            c.in[1].dims[0] -= 1;
        }
        /* unsupported output format */
        p.out = NMO_FP8_E4M3;
        cr_expect_eq(cand->run(&a, &err), NMO_ERR_UNSUPPORTED, "%s/%s fp8 out", cand->op, cand->name);
        p.out = NMO_BF16;
        cr_expect_eq(cand->run(NULL, &err), NMO_ERR_USAGE);
        cr_expect_eq(cand->run(&a, NULL), NMO_OK, "%s/%s restored args", cand->op, cand->name);
        t_free(&y);
        t_case_free(&c);
    }
}
