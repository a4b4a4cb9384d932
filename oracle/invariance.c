/* numoracle: invariance judgments (numoracle/invariance.h) — one candidate, the same
 * rows in several batch compositions, raw output bits compared with the reference
 * composition (the whole batch, packed, in order). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/invariance.h"

/* ---- configurations ------------------------------------------------------------------ */

static const struct {
    const char *name;
    int has_arg;
} kinds[NMO_INV_KIND_COUNT] = {
    [NMO_INV_SIZES] = {"sizes", 0},   [NMO_INV_CHUNKS] = {"chunks", 1},
    [NMO_INV_REVERSE] = {"reverse", 0}, [NMO_INV_ROTATE] = {"rotate", 1},
    [NMO_INV_PAD] = {"pad", 1},       [NMO_INV_STRIDE] = {"stride", 1},
    [NMO_INV_REPEAT] = {"repeat", 0},
};

#define KNOWN_FORMS "sizes, chunks:K, reverse, rotate:K, pad:P, stride:S, repeat"

nmo_status nmo_inv_config_parse(nmo_inv_config *cfg, const char *text, nmo_err *err)
{
    if (!text) return nmo_err_set(err, NMO_ERR_PARSE, "missing invariance configuration");
    const char *colon = strchr(text, ':');
    size_t nl = colon ? (size_t)(colon - text) : strlen(text);
    for (int k = 0; k < NMO_INV_KIND_COUNT; k++) {
        if (strlen(kinds[k].name) != nl || strncmp(kinds[k].name, text, nl) != 0) continue;
        cfg->kind = (nmo_inv_kind)k;
        cfg->arg = 0;
        if (!kinds[k].has_arg) {
            if (colon)
                return nmo_err_set(err, NMO_ERR_PARSE, "invariance configuration '%s': %s takes no argument",
                                   text, kinds[k].name);
            return NMO_OK;
        }
        char *end;
        long v = colon ? strtol(colon + 1, &end, 10) : 0;
        if (!colon || !colon[1] || *end || v < 1 || v > 4096)
            return nmo_err_set(err, NMO_ERR_PARSE,
                               "invariance configuration '%s': expected %s:N with N in [1, 4096]", text,
                               kinds[k].name);
        cfg->arg = (int)v;
        return NMO_OK;
    }
    return nmo_err_set(err, NMO_ERR_PARSE, "unknown invariance configuration '%s' (known: " KNOWN_FORMS ")",
                       text);
}

char *nmo_inv_config_name(const nmo_inv_config *cfg, char *buf, size_t n)
{
    const char *name = (unsigned)cfg->kind < NMO_INV_KIND_COUNT ? kinds[cfg->kind].name : "?";
    if ((unsigned)cfg->kind < NMO_INV_KIND_COUNT && kinds[cfg->kind].has_arg)
        snprintf(buf, n, "%s:%d", name, cfg->arg);
    else
        snprintf(buf, n, "%s", name);
    return buf;
}

int nmo_inv_config_keeps_order(const nmo_inv_config *cfg)
{
    return cfg->kind == NMO_INV_REPEAT || cfg->kind == NMO_INV_STRIDE;
}

/* ---- the CPU candidate runner ---------------------------------------------------------- */

nmo_status nmo_inv_run_cand(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err)
{
    const nmo_cand *cd = ctx;
    nmo_cand_args a = {
        .in = c->in, .n_in = c->n_in, .out = out, .n_out = c->n_out,
        .param = c->param, .n_param = c->op->n_param, .plan = &c->plan,
    };
    return cd->run(&a, err);
}

/* ---- layout ------------------------------------------------------------------------------ */

static int same_dims(const nmo_tensor *a, const nmo_tensor *b)
{
    if (a->ndims != b->ndims) return 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

/* ROW when t (batch B) and t2 (batch B+1) differ exactly in their leading dim, which
 * follows the batch; SHARED/SUMMED (2nd role) when they are equal; -1 otherwise. */
static int role_of(const nmo_tensor *t, const nmo_tensor *t2, int64_t B, int fixed_role)
{
    if (same_dims(t, t2)) return fixed_role;
    if (t->ndims != t2->ndims || t->dims[0] != B || t2->dims[0] != B + 1) return -1;
    for (int d = 1; d < t->ndims; d++)
        if (t->dims[d] != t2->dims[d]) return -1;
    return NMO_INV_ROW;
}

static int all_set[NMO_MAX_PARAMS] = {1, 1, 1, 1, 1, 1, 1, 1};

static nmo_status case_at_batch(nmo_case *sc, const nmo_case *c, int64_t b, nmo_err *err)
{
    int64_t shape[NMO_MAX_DIMS];
    memcpy(shape, c->shape, sizeof shape);
    shape[0] = b;
    return nmo_case_init_params(sc, c->op, &c->plan, c->nshape, shape, c->param, all_set, err);
}

nmo_status nmo_inv_layout_find(nmo_inv_layout *lay, const nmo_case *c, nmo_err *err)
{
    memset(lay, 0, sizeof *lay);
    const int64_t B = c->shape[0];
    nmo_case c2;
    nmo_status s = case_at_batch(&c2, c, B + 1, err);
    if (s != NMO_OK) return s;
    for (int k = 0; k < c->n_in && s == NMO_OK; k++) {
        lay->in_role[k] = role_of(&c->in[k], &c2.in[k], B, NMO_INV_SHARED);
        if (lay->in_role[k] < 0)
            s = nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                            "%s: input %s neither follows the batch (shape[0]) along its leading dim nor "
                            "stays the same: no batch axis for invariance",
                            c->op->name, c->op->in[k].name);
    }
    for (int k = 0; k < c->n_out && s == NMO_OK; k++) {
        lay->out_role[k] = role_of(&c->out[k], &c2.out[k], B, NMO_INV_SUMMED);
        if (lay->out_role[k] < 0)
            s = nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                            "%s: output %s neither follows the batch (shape[0]) along its leading dim nor "
                            "stays the same: no batch axis for invariance",
                            c->op->name, c->op->out[k].name);
        else if (lay->out_role[k] == NMO_INV_ROW) lay->n_row_out++;
        else lay->n_sum_out++;
    }
    nmo_case_free(&c2);
    return s;
}

/* ---- compositions -------------------------------------------------------------------------- */

static int64_t row_size(const nmo_tensor *t) { return nmo_tensor_numel(t) / t->dims[0]; }

/* Give per-row tensor t S unused elements after each row (its leading stride grows),
 * storage poisoned with 0xFF bytes so that a kernel reading the gaps shows it. */
static nmo_status restride(nmo_tensor *t, int S, int alloc, nmo_err *err)
{
    t->strides[0] += S; /* dim 0 is the outermost: the rows themselves keep their layout */
    if (!alloc) return NMO_OK;
    nmo_tensor_free(t);
    NMO_RETURN_IF_ERR(nmo_tensor_alloc(t, err));
    memset(t->data, 0xFF, (size_t)nmo_tensor_span(t) * nmo_fmt_bytes(t->dtype));
    return NMO_OK;
}

/* Case of b rows: row i is reference row src[i] (>= 0) or padding row -1-src[i]. */
static nmo_status build_call(nmo_case *sc, const nmo_case *c, const nmo_case *pad,
                             const nmo_inv_layout *lay, int64_t b, const int64_t *src, int S,
                             nmo_err *err)
{
    NMO_RETURN_IF_ERR(case_at_batch(sc, c, b, err));
    sc->absent = c->absent;
    nmo_status s = NMO_OK;
    for (int k = 0; k < c->n_in && s == NMO_OK; k++) {
        nmo_tensor *t = &sc->in[k];
        if (lay->in_role[k] != NMO_INV_ROW) {
            int64_t n = nmo_tensor_numel(t);
            for (int64_t e = 0; e < n; e++) nmo_tensor_set_bits(t, e, nmo_tensor_get_bits(&c->in[k], e));
            continue;
        }
        if (S && (s = restride(t, S, 1, err)) != NMO_OK) break;
        int64_t inner = row_size(t);
        for (int64_t i = 0; i < b; i++) {
            const nmo_tensor *from = src[i] >= 0 ? &c->in[k] : &pad->in[k];
            int64_t r = src[i] >= 0 ? src[i] : -1 - src[i];
            for (int64_t e = 0; e < inner; e++)
                nmo_tensor_set_bits(t, i * inner + e, nmo_tensor_get_bits(from, r * inner + e));
        }
    }
    for (int k = 0; k < c->n_out && s == NMO_OK; k++)
        if (S && lay->out_role[k] == NMO_INV_ROW) s = restride(&sc->out[k], S, 0, err);
    if (s != NMO_OK) nmo_case_free(sc);
    return s;
}

static void free_outs(nmo_tensor *out, int n)
{
    for (int k = 0; k < n; k++) nmo_tensor_free(&out[k]);
}

static nmo_status run_call(nmo_tensor *out, const nmo_case *sc, nmo_inv_run_fn run, void *ctx,
                           nmo_err *err)
{
    memset(out, 0, sizeof(nmo_tensor) * NMO_MAX_TENSORS);
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(sc, out, 1, err));
    nmo_status s = run(ctx, sc, out, err);
    if (s != NMO_OK) free_outs(out, sc->n_out);
    return s;
}

static void note_diff(nmo_inv_result *r, int k, int64_t row, int64_t elem, const nmo_tensor *ref,
                      int64_t ri, const nmo_tensor *got, int64_t gi)
{
    if (!r->identical) return; /* keep the first */
    r->identical = 0;
    r->k = k;
    r->row = row;
    r->elem = elem;
    r->ref = nmo_tensor_get(ref, ri);
    r->got = nmo_tensor_get(got, gi);
    r->ref_bits = nmo_tensor_get_bits(ref, ri);
    r->got_bits = nmo_tensor_get_bits(got, gi);
}

/* Compare one call's outputs with the reference's: per-row outputs row by row (padding
 * rows skipped), or the summed outputs whole. */
static void compare(nmo_inv_result *r, const nmo_case *c, const nmo_inv_layout *lay,
                    const nmo_tensor *ref, const nmo_tensor *got, int64_t b, const int64_t *src)
{
    for (int k = 0; k < c->n_out; k++) {
        if (r->summed) {
            if (lay->out_role[k] != NMO_INV_SUMMED) continue;
            int64_t n = nmo_tensor_numel(&ref[k]);
            for (int64_t e = 0; e < n; e++) {
                r->compared++;
                if (nmo_tensor_get_bits(&ref[k], e) != nmo_tensor_get_bits(&got[k], e))
                    note_diff(r, k, -1, e, &ref[k], e, &got[k], e);
            }
            continue;
        }
        if (lay->out_role[k] != NMO_INV_ROW) continue;
        int64_t inner = row_size(&ref[k]);
        for (int64_t i = 0; i < b; i++) {
            if (src[i] < 0) continue;
            for (int64_t e = 0; e < inner; e++) {
                int64_t ri = src[i] * inner + e, gi = i * inner + e;
                r->compared++;
                if (nmo_tensor_get_bits(&ref[k], ri) != nmo_tensor_get_bits(&got[k], gi))
                    note_diff(r, k, src[i], e, &ref[k], ri, &got[k], gi);
            }
        }
    }
}

/* Run every call of configuration r->cfg and compare. */
static nmo_status judge_config(nmo_inv_result *r, const nmo_case *c, const nmo_case *pad,
                               const nmo_inv_layout *lay, const nmo_tensor *ref,
                               nmo_inv_run_fn run, void *ctx, nmo_err *err)
{
    const int64_t B = c->shape[0];
    const int arg = r->cfg.arg;
    int64_t *src = malloc(sizeof(int64_t) * (size_t)(B + 2 * (int64_t)arg + 1));
    if (!src) return nmo_err_set(err, NMO_ERR_NOMEM, "invariance: out of memory");
    nmo_status s = NMO_OK;
    /* calls: (first row, rows) windows for sizes and chunks, else one call */
    int64_t ncalls = r->cfg.kind == NMO_INV_SIZES ? B
                     : r->cfg.kind == NMO_INV_CHUNKS ? (B + arg - 1) / arg : 1;
    for (int64_t call = 0; call < ncalls && s == NMO_OK; call++) {
        int64_t b = B;
        int S = 0;
        switch (r->cfg.kind) {
        case NMO_INV_SIZES:
            b = call + 1;
            for (int64_t i = 0; i < b; i++) src[i] = i;
            break;
        case NMO_INV_CHUNKS:
            b = B - call * arg < arg ? B - call * arg : arg;
            for (int64_t i = 0; i < b; i++) src[i] = call * arg + i;
            break;
        case NMO_INV_REVERSE:
            for (int64_t i = 0; i < B; i++) src[i] = B - 1 - i;
            break;
        case NMO_INV_ROTATE:
            for (int64_t i = 0; i < B; i++) src[i] = (i + arg) % B;
            break;
        case NMO_INV_PAD:
            b = B + 2 * (int64_t)arg;
            for (int64_t i = 0; i < b; i++)
                src[i] = i < arg ? -1 - i : i < arg + B ? i - arg : -1 - (i - B);
            break;
        case NMO_INV_STRIDE:
            S = arg;
            /* fall through */
        default:
            for (int64_t i = 0; i < B; i++) src[i] = i;
            break;
        }
        nmo_case sc;
        if ((s = build_call(&sc, c, pad, lay, b, src, S, err)) != NMO_OK) break;
        nmo_tensor got[NMO_MAX_TENSORS];
        if ((s = run_call(got, &sc, run, ctx, err)) == NMO_OK) {
            r->calls++;
            compare(r, c, lay, ref, got, b, src);
            free_outs(got, sc.n_out);
        } else if (s == NMO_ERR_UNSUPPORTED) {
            r->skipped = 1;
            snprintf(r->why, sizeof r->why, "%.250s", err ? err->msg : "declined");
            s = NMO_OK;
            nmo_case_free(&sc);
            break;
        }
        nmo_case_free(&sc);
    }
    free(src);
    return s;
}

nmo_status nmo_inv_judge(nmo_inv_report *rep, const nmo_case *c, const nmo_inv_config *row_cfg,
                         int n_row, const nmo_inv_config *sum_cfg, int n_sum, nmo_inv_run_fn run,
                         void *ctx, int family, uint64_t pad_seed, nmo_err *err)
{
    memset(rep, 0, sizeof *rep);
    if (n_row < 0 || n_sum < 0 || n_row + n_sum > NMO_INV_MAX_CONFIGS || c->nshape < 1 ||
        c->shape[0] < 1 || !run)
        return nmo_err_set(err, NMO_ERR_USAGE, "invariance: bad arguments (at most %d configurations)",
                           NMO_INV_MAX_CONFIGS);
    char nb[32];
    for (int i = 0; i < n_sum; i++)
        if (!nmo_inv_config_keeps_order(&sum_cfg[i]))
            return nmo_err_set(err, NMO_ERR_USAGE,
                               "invariance: configuration %s changes the rows or their order: batch-summed "
                               "outputs are judged only across repeat and stride:S",
                               nmo_inv_config_name(&sum_cfg[i], nb, sizeof nb));
    NMO_RETURN_IF_ERR(nmo_inv_layout_find(&rep->layout, c, err));
    const nmo_inv_layout *lay = &rep->layout;
    if (n_row > 0 && lay->n_row_out == 0)
        return nmo_err_set(err, NMO_ERR_USAGE,
                           "invariance: %s has no per-row output (every output is summed over the batch): "
                           "per-row configurations do not apply",
                           c->op->name);
    if (n_sum > 0 && lay->n_sum_out == 0)
        return nmo_err_set(err, NMO_ERR_USAGE,
                           "invariance: %s has no batch-summed output: batch-summed configurations do not apply",
                           c->op->name);
    rep->batch = c->shape[0];

    /* padding rows: another draw of the same family (2P rows for the widest pad) */
    int64_t maxpad = 0;
    for (int i = 0; i < n_row; i++)
        if (row_cfg[i].kind == NMO_INV_PAD && row_cfg[i].arg > maxpad) maxpad = row_cfg[i].arg;
    nmo_case pad;
    memset(&pad, 0, sizeof pad);
    if (maxpad) {
        NMO_RETURN_IF_ERR(case_at_batch(&pad, c, 2 * maxpad, err));
        nmo_case_fill(&pad, family, pad_seed);
    }

    /* the reference composition */
    int64_t *id = malloc(sizeof(int64_t) * (size_t)rep->batch);
    nmo_tensor ref[NMO_MAX_TENSORS];
    nmo_case rc;
    nmo_status s = id ? NMO_OK : nmo_err_set(err, NMO_ERR_NOMEM, "invariance: out of memory");
    for (int64_t i = 0; s == NMO_OK && i < rep->batch; i++) id[i] = i;
    int have_rc = 0, have_ref = 0;
    if (s == NMO_OK && (s = build_call(&rc, c, &pad, lay, rep->batch, id, 0, err)) == NMO_OK) have_rc = 1;
    if (s == NMO_OK && (s = run_call(ref, &rc, run, ctx, err)) == NMO_OK) have_ref = 1;

    rep->invariant = 1;
    for (int i = 0; s == NMO_OK && i < n_row + n_sum; i++) {
        nmo_inv_result *r = &rep->res[rep->n++];
        r->cfg = i < n_row ? row_cfg[i] : sum_cfg[i - n_row];
        r->summed = i >= n_row;
        r->identical = 1;
        s = judge_config(r, &rc, &pad, lay, ref, run, ctx, err);
        if (!r->identical) rep->invariant = 0;
        if (r->skipped) rep->n_skipped++;
    }
    if (have_ref) free_outs(ref, rc.n_out);
    if (have_rc) nmo_case_free(&rc);
    if (maxpad) nmo_case_free(&pad);
    free(id);
    return s;
}

void nmo_inv_result_text(char *buf, size_t n, const nmo_inv_result *r, const nmo_op *op)
{
    char nb[32];
    nmo_inv_config_name(&r->cfg, nb, sizeof nb);
    const char *what = r->summed ? " (batch-summed outputs)" : "";
    if (r->skipped) {
        snprintf(buf, n, "%s%s: skipped (%s)", nb, what, r->why);
        return;
    }
    if (r->identical) {
        snprintf(buf, n, "%s%s: identical (%" PRId64 " call%s, %" PRId64 " elements)", nb, what, r->calls,
                 r->calls == 1 ? "" : "s", r->compared);
        return;
    }
    const char *oname = op && r->k >= 0 && r->k < op->n_out ? op->out[r->k].name : "?";
    char where[64];
    if (r->row >= 0) snprintf(where, sizeof where, " row %" PRId64, r->row);
    else where[0] = '\0';
    snprintf(buf, n, "%s%s: differs at %s%s element %" PRId64 ": %.9g (0x%" PRIx64 ") vs reference %.9g (0x%" PRIx64 ")",
             nb, what, oname, where, r->elem, r->got, r->got_bits, r->ref, r->ref_bits);
}
