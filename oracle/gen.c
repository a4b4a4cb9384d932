/* numoracle: input families from a counter-based generator (DESIGN §10).
 *
 * nmo_gen_u64(seed, stream, i) is a pure function: a chain of splitmix64 finalizers
 * (Stafford's "Mix13" variant, the finalizer of splitmix64) keyed by seed, then stream,
 * then the counter i, each absorbed with its own odd multiplier, and one more finalizer
 * at the end. For fixed (seed, stream) it is a bijection of i (every step is), and
 * different (seed, stream) pairs give unrelated sequences. Element i of a family never
 * depends on the tensor's shape (except through row_len for per-row families), on
 * threads or on generation order.
 *
 * The bit-exact outputs are pinned by tests/test_gen.c: changing this file changes every
 * generated input and every golden bundle built from a seed.
 *
 * Reproducibility across machines: u64 and uniform01 are pure integer/IEEE arithmetic.
 * nmo_gen_normal uses libm log, sqrt, cos: sqrt is correctly rounded everywhere; glibc's
 * log and cos are accurate to < 1 ulp and, in practice, identical across x86-64/aarch64
 * builds of the same glibc, but C does not promise it. The values are then quantized to
 * the storage format (at most fp32 precision for the usual dtypes), so a last-bit
 * difference in binary64 changes a stored input only when it straddles a rounding
 * boundary. Golden bundles store the inputs themselves, so they never depend on this. */
#include <math.h>
#include <string.h>

#include "numoracle/gen.h"

static const char *const fam_names[NMO_FAM_COUNT] = {
    "gaussian", "uniform", "small", "large", "shifted", "near_degenerate", "outlier",
};

const char *nmo_family_name(nmo_family f)
{
    if ((int)f < 0 || f >= NMO_FAM_COUNT) return "unknown";
    return fam_names[f];
}

nmo_status nmo_family_from_name(nmo_family *out, const char *name)
{
    if (name)
        for (int i = 0; i < NMO_FAM_COUNT; i++)
            if (strcmp(name, fam_names[i]) == 0) {
                *out = (nmo_family)i;
                return NMO_OK;
            }
    return NMO_ERR_UNKNOWN_FAMILY;
}

/* splitmix64 finalizer (bijective on 64-bit words). */
static inline uint64_t mix64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z;
}

uint64_t nmo_gen_u64(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t h = mix64(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
    h = mix64(h ^ (stream * 0xc2b2ae3d27d4eb4fULL + 0x165667b19e3779f9ULL));
    h = mix64(h ^ (i * 0xff51afd7ed558ccdULL));
    return mix64(h + 0xd6e8feb86659fd93ULL);
}

/* (k + 1/2) / 2^52 with k the top 52 bits: exact, symmetric about 1/2, in
 * [2^-53, 1 - 2^-53]. (With 53 bits, k + 1/2 needs 54 significant bits and the top value
 * would round to 1.0.) */
double nmo_gen_uniform01(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t k = nmo_gen_u64(seed, stream, i) >> 12;
    return ((double)k + 0.5) * 0x1p-52;
}

/* Box-Muller on two independent counters 2i and 2i+1 (one normal per i, the cosine
 * branch). |result| <= sqrt(2*53*ln 2) ~= 8.57. */
double nmo_gen_normal(uint64_t seed, uint64_t stream, uint64_t i)
{
    double u1 = nmo_gen_uniform01(seed, stream, 2 * i);
    double u2 = nmo_gen_uniform01(seed, stream, 2 * i + 1);
    double r = sqrt(-2.0 * log(u1));
    return r * cos(6.283185307179586 * u2);
}

/* Stream offsets of the per-row draws (kept away from small user stream numbers only by
 * xor; documented so that nobody reuses them for another purpose). */
#define NMO_GEN_ROWCONST_XOR 0x5eedULL          /* near_degenerate: c_row */
#define NMO_GEN_OUTLIER_XOR 0x6f75746c69657221ULL /* "outlier!": outlier position/sign */

/* The family's real value for logical element i (before quantization). */
static double fam_value(nmo_family fam, uint64_t seed, uint64_t stream, int64_t i,
                        int64_t row_len)
{
    switch (fam) {
    case NMO_FAM_GAUSSIAN: return nmo_gen_normal(seed, stream, (uint64_t)i);
    case NMO_FAM_UNIFORM: return 2.0 * nmo_gen_uniform01(seed, stream, (uint64_t)i) - 1.0;
    case NMO_FAM_SMALL: return nmo_gen_normal(seed, stream, (uint64_t)i) / (2.0 * (double)row_len);
    case NMO_FAM_LARGE: return nmo_gen_normal(seed, stream, (uint64_t)i) * 300.0;
    case NMO_FAM_SHIFTED: return 2.0 * nmo_gen_normal(seed, stream, (uint64_t)i) - 1.25;
    case NMO_FAM_NEAR_DEGENERATE: {
        uint64_t r = (uint64_t)(i / row_len);
        double c = nmo_gen_normal(seed, stream ^ NMO_GEN_ROWCONST_XOR, r);
        return c + 1e-3 * nmo_gen_normal(seed, stream, (uint64_t)i);
    }
    case NMO_FAM_OUTLIER: {
        int64_t r = i / row_len;
        uint64_t u = nmo_gen_u64(seed, stream ^ NMO_GEN_OUTLIER_XOR, (uint64_t)r);
        int64_t pos = (int64_t)(u % (uint64_t)row_len);
        if (i - r * row_len == pos) return (u >> 63) ? -1000.0 : 1000.0;
        return nmo_gen_normal(seed, stream, (uint64_t)i);
    }
    default: return 0.0;
    }
}

/* Quantization: RNE into t->dtype, subnormals kept, and out-of-range values saturate to
 * +-max_finite (NMO_OVF_SAT) so that generated inputs are always finite, also in the
 * narrow fp8 formats (e.g. `large` or the +-1000 outlier in fp8_e4m3, max 448). */
void nmo_gen_fill(nmo_tensor *t, nmo_family fam, uint64_t seed, uint64_t stream,
                  int64_t row_len)
{
    if (!t || !t->data) return;
    int64_t n = nmo_tensor_numel(t);
    if (row_len <= 0) row_len = t->dims[t->ndims - 1];
    int packed = nmo_tensor_is_packed(t);
    for (int64_t i = 0; i < n; i++) {
        double v = fam_value(fam, seed, stream, i, row_len);
        uint64_t b = nmo_fmt_encode(t->dtype, v, NMO_RNE, 0, NMO_OVF_SAT);
        if (packed) {
            unsigned char *p = (unsigned char *)t->data;
            switch (nmo_fmt_bytes(t->dtype)) {
            case 8: memcpy(p + i * 8, &b, 8); break;
            case 4: { uint32_t w = (uint32_t)b; memcpy(p + i * 4, &w, 4); break; }
            case 2: { uint16_t w = (uint16_t)b; memcpy(p + i * 2, &w, 2); break; }
            default: p[i] = (unsigned char)b; break;
            }
        } else {
            nmo_tensor_set_bits(t, i, b);
        }
    }
}
