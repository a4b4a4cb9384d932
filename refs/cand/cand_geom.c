/* numoracle: the reduction geometry each CPU candidate declares (issue 17) — the order its
 * emulation really reduces in (refs/cand/cand_util.h's nmo_cu_reduce shapes), as a
 * sum=tree/blocked plan field (oracle/sum_geom.c). The soundness sweep
 * (tests/test_soundness.c) checks every correct candidate under it as well as under its
 * plan; bench/nmo_geom_width prints how much narrower R gets.
 *
 * A candidate listed here must reduce EVERY reduction of its operator in that geometry
 * (the plan has one geometry per operator). Text: plan text over nmo_cand_plan's plan,
 * with "n/T" (runs of ceil(n/T) for a reduction of n terms: sum_geom.c) and these
 * tokens, from the case's shape (L = the last dimension, R = the product of the others):
 *   {L/k}     ceil(L / k)           {R}      R (the rows, when row partials are added)
 *   {log2L}   ceil(log2 L)          {log2RL} ceil(log2 (R L))
 * Candidates not listed declare `sum=any`: a sequential run (seq_*) is any order already;
 * the others (backward operators whose dx and dw reductions differ, group_norm's groups,
 * conv2d's taps, the batch-variant splits) are not described by one geometry. */
#include <stdio.h>
#include <string.h>

#include "numoracle/cand.h"

typedef struct {
    const char *op, *name, *geom;
} cand_geom;

/* Shapes (the emulations in refs/cand/<op>_cand.c):
 *   block256  256 threads strided (j = t, t + 256, ...), 8 warp butterflies + warp 0's
 *             butterfly: runs of ceil(L/256), a tree of depth 5 + 3 = 8;
 *   warp32    32 lanes strided + a xor butterfly: runs ceil(L/32), depth 5;
 *   vec4      4 accumulators j mod 4, (a0 + a1) + (a2 + a3): runs ceil(L/4), depth 2;
 *   pairwise  recursive halving over the rounded terms: depth ceil(log2 L);
 *   ktile32   tiles of 32 from 0, tile partials added in order: runs of 32, any order;
 *   splitk4   4 contiguous chunks of ceil(L/4), added in order: 4 runs, no tree;
 *   rows      (kl_div, jsd, cross_entropy) each row reduced as above, then the R row
 *             partials added (in order or pairwise: any order here, P = R). */
static const cand_geom table[] = {
    {"rms_norm", "block256", "sum=blocked:n/256:8"},
    {"rms_norm", "warp32", "sum=blocked:n/32:5"},
    {"rms_norm", "vec4", "sum=blocked:n/4:2"},
    {"rms_norm", "pairwise", "sum=tree:{log2L}"},
    {"fused_add_rms_norm", "block256", "sum=blocked:n/256:8"},
    {"fused_add_rms_norm", "flashinfer", "sum=blocked:n/32:5"},
    {"fused_add_rms_norm", "vec4", "sum=blocked:n/4:2"},
    {"layer_norm", "liger", "sum=tree:{log2L}"},
    {"layer_norm", "warp32", "sum=blocked:n/32:5"},
    {"layer_norm", "block256_div", "sum=blocked:n/256:8"},
    {"layer_norm", "vec4", "sum=blocked:n/4:2"},
    {"softmax", "block256", "sum=blocked:n/256:8"},
    {"softmax", "warp32", "sum=blocked:n/32:5"},
    {"softmax", "vec4", "sum=blocked:n/4:2"},
    {"softmax", "pairwise", "sum=tree:{log2L}"},
    {"log_softmax", "block256", "sum=blocked:n/256:8"},
    {"log_softmax", "warp32", "sum=blocked:n/32:5"},
    {"log_softmax", "vec4", "sum=blocked:n/4:2"},
    {"log_softmax", "pairwise", "sum=tree:{log2L}"},
    {"softmax_bwd", "block256", "sum=blocked:n/256:8"},
    {"softmax_bwd", "warp32", "sum=blocked:n/32:5"},
    {"softmax_bwd", "vec4", "sum=blocked:n/4:2"},
    {"softmax_bwd", "pairwise", "sum=tree:{log2L}"},
    {"reduction", "block256", "sum=blocked:n/256:8"},
    {"reduction", "warp32", "sum=blocked:n/32:5"},
    {"reduction", "vec4_prescale", "sum=blocked:n/4:2"},
    {"reduction", "pairwise", "sum=tree:{log2L}"},
    {"kl_div", "liger", "sum=blocked:{L/256}:8:{R}"},
    {"kl_div", "warp32", "sum=blocked:{L/32}:5:{R}"},
    {"kl_div", "torch", "sum=tree:{log2RL}"},
    {"jsd", "liger", "sum=blocked:{L/256}:8:{R}"},
    {"jsd", "warp32", "sum=blocked:{L/32}:5:{R}"},
    {"cross_entropy", "liger", "sum=blocked:{L/256}:8:{R}"},
    {"cross_entropy", "warp32", "sum=blocked:{L/32}:5:{R}"},
    {"cross_entropy", "vec4", "sum=blocked:{L/4}:2:{R}"},
    {"matmul", "ktile32", "sum=blocked:32"},
    {"matmul", "splitk4", "sum=blocked:n/4:0:4"},
    {"matmul", "warp32", "sum=blocked:n/32:5"},
    {"matmul", "vec4", "sum=blocked:n/4:2"},
    {"matmul", "pairwise", "sum=tree:{log2L}"},
};
#define NTABLE ((int)(sizeof table / sizeof table[0]))

const char *nmo_cand_geom(const nmo_cand *c)
{
    if (!c) return NULL;
    for (int i = 0; i < NTABLE; i++)
        if (strcmp(table[i].op, c->op) == 0 && strcmp(table[i].name, c->name) == 0) return table[i].geom;
    return NULL;
}

int nmo_cand_geom_count(void) { return NTABLE; }

static long long ceil_log2(long long v)
{
    long long d = 0;
    while (d < 62 && ((long long)1 << d) < v) d++;
    return d;
}

nmo_status nmo_cand_geom_text(char *buf, size_t len, const char *geom, int ns, const int64_t *shape, nmo_err *err)
{
    long long L = ns > 0 ? (long long)shape[ns - 1] : 1, R = 1;
    for (int i = 0; i + 1 < ns; i++) R *= (long long)shape[i];
    size_t o = 0;
    for (const char *q = geom; *q;) {
        long long v = -1, k = 0;
        int used = 0;
        if (*q == '{') {
            if (strncmp(q, "{log2RL}", 8) == 0) v = ceil_log2(R * L), used = 8;
            else if (strncmp(q, "{log2L}", 7) == 0) v = ceil_log2(L), used = 7;
            else if (strncmp(q, "{R}", 3) == 0) v = R, used = 3;
            else if (sscanf(q, "{L/%lld}%n", &k, &used) == 1 && used > 0 && q[used - 1] == '}' && k > 0)
                v = (L + k - 1) / k;
            else
                return nmo_err_set(err, NMO_ERR_PARSE, "candidate geometry '%s': unknown token at '%s'", geom, q);
            if (v < 1) v = 1; /* an empty shape: a geometry of one term */
            int w = snprintf(buf + o, len - o, "%lld", v);
            if (w < 0 || (size_t)w >= len - o) break;
            o += (size_t)w;
            q += used;
        } else {
            if (o + 1 >= len) break;
            buf[o++] = *q++;
        }
    }
    if (o + 1 >= len) return nmo_err_set(err, NMO_ERR_PARSE, "candidate geometry '%s' too long", geom);
    buf[o] = 0;
    return NMO_OK;
}

nmo_status nmo_cand_geom_plan(nmo_plan *p, const nmo_cand *c, nmo_fmt dt, int ns, const int64_t *shape,
                              int *declared, nmo_err *err)
{
    nmo_status s = nmo_cand_plan(p, c, dt, err);
    if (s != NMO_OK) return s;
    const char *g = nmo_cand_geom(c);
    if (declared) *declared = g != NULL;
    if (!g) return NMO_OK;
    char text[128];
    if ((s = nmo_cand_geom_text(text, sizeof text, g, ns, shape, err)) != NMO_OK) return s;
    return nmo_plan_parse(p, text, err);
}
