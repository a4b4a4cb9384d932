/* numoracle: private helpers of the bundle files (bundle_*.c); not installed. */
#ifndef NMO_BUNDLE_PRIV_H
#define NMO_BUNDLE_PRIV_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nmo_internal.h"
#include "numoracle/bundle.h"
#include "numoracle/check.h"
#include "numoracle/fmt.h"

/* bundle_names.c */
const char *nmo__dt_known_list(void);
static inline int nmo__dt_is_float(int dt) { return dt >= 0 && dt < (int)NMO_FMT_COUNT; }

/* bundle_hipdnn.c: bind a hipDNN node type (g->node_type) to its operator, wiring the
 * node's keys (used[] marks tensors taken). *bound = 0: not a hipDNN type it knows. */
nmo_status nmo__hipdnn_bind(nmo_graph *g, const cJSON *node, int *used, const char *src, int *bound, nmo_err *err);
const nmo_op *nmo__hipdnn_op(const char *type, const cJSON *node);
/* Is type (with the node, for pointwise) a hipDNN node type the binding knows? */
int nmo__hipdnn_type(const char *type, const cJSON *node);
/* g's node in hipDNN's vocabulary (value tensors appended to ts); NULL: not expressible. */
cJSON *nmo__hipdnn_node_json(const nmo_graph *g, cJSON *ts);

/* bundle_graph.c */
cJSON *nmo__int_array(int n, const int64_t *v);

static inline const char *nmo__jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Packed row-major, size-1 dims with any stride. */
static inline int nmo__is_rowmajor(const nmo_gtensor *t)
{
    int64_t s = 1;
    for (int k = t->ndims - 1; k >= 0; k--) {
        if (t->dims[k] != 1 && t->strides[k] != s) return 0;
        s *= t->dims[k];
    }
    return 1;
}

static inline int64_t nmo__gspan(const nmo_gtensor *t)
{
    int64_t s = 1;
    for (int k = 0; k < t->ndims; k++) s += (t->dims[k] - 1) * t->strides[k];
    return s;
}

static inline int64_t nmo__goffset(const nmo_gtensor *t, int64_t i)
{
    int64_t off = 0;
    for (int k = t->ndims - 1; k >= 0; k--) {
        off += (i % t->dims[k]) * t->strides[k];
        i /= t->dims[k];
    }
    return off;
}

static inline int64_t nmo__gnumel(const nmo_gtensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndims; k++) n *= t->dims[k];
    return n;
}

static inline void nmo__file_path(char *out, size_t n, const char *dir, const char *base, int64_t uid, const char *suffix)
{
    char leaf[400];
    snprintf(leaf, sizeof leaf, "%s.tensor%lld%s.bin", base, (long long)uid, suffix);
    nmo__join(out, n, dir, leaf);
}

/* Ordinals from bit patterns: every supported format orders its non-NaN values by
 * sign-magnitude, with +-inf one step beyond +-max (the checker's extended ordinal) and
 * -0, +0 both at 0; tf32 ignores its 13 low bits. NaN: a magnitude above inf's (or
 * above max's in formats without inf), or the fnuz NaN 0x80 (sign bit alone). */
typedef struct {
    int bits, tf32, fnuz;
    uint64_t mask, signbit, nan_above;
} nmo__ordfmt;

static inline void nmo__ordfmt_init(nmo__ordfmt *o, nmo_fmt f)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    o->bits = (int)nmo_fmt_bytes(f) * 8;
    o->tf32 = f == NMO_TF32;
    o->fnuz = !fi->has_neg_zero;
    o->signbit = 1ull << (o->bits - 1);
    o->mask = o->signbit - 1;
    uint64_t top = fi->has_inf ? nmo_fmt_encode(f, INFINITY, NMO_RNE, 0, NMO_OVF_IEEE)
                               : nmo_fmt_encode(f, fi->max_finite, NMO_RNE, 0, NMO_OVF_SAT);
    o->nan_above = top & o->mask;
}

static inline int64_t nmo__ord_of(const nmo__ordfmt *o, uint64_t b)
{
    int64_t mag = (int64_t)(b & o->mask);
    if (o->tf32) mag >>= 13;
    return (b & o->signbit) ? -mag : mag;
}

static inline int nmo__is_nan_bits(const nmo__ordfmt *o, uint64_t b)
{
    return (b & o->mask) > o->nan_above || (o->fnuz && b == o->signbit);
}

/* Raw bit pattern of element i of a packed tensor. */
static inline uint64_t nmo__bits_at(const nmo_tensor *t, int64_t i)
{
    const unsigned char *p = t->data;
    switch (nmo_fmt_bytes(t->dtype)) {
    case 1: return p[i];
    case 2: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    default: { uint64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    }
}

#endif
