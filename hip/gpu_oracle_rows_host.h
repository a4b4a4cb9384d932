/* numoracle GPU tier (issue 22): the host side of softmax and layer_norm on the device. Part of
 * hip/gpu_oracle.c's translation unit (included at its end, not a public header): it
 * shares that file's device scratch (dev_get under scratch.mu), the candidate copies
 * (cand_alloc, cand_rows) and the report merge (gpu_oracle.c nmo_go_merge_report), one copy of each.
 * The kernel and why its verdicts are the certified engine's: hip/gpu_oracle_rows_dev.h. */

/* The plans softmax and layer_norm need on the device beyond nmo_gpu_check_supported's
 * common conditions (fused, fp32 compute without ftz, RNE, bf16/fp32, packed); NULL when
 * the case is supported. */
static const char *rows_why(const nmo_case *c)
{
    const nmo_plan *p = &c->plan;
    int ln = strcmp(c->op->name, "layer_norm") == 0;
    if (p->acc != NMO_FP32)
        return ln ? "layer_norm on the device needs acc=fp32 (the exact-sum test of nmo_fe_dotk_exact on fp32 terms)"
                  : "softmax on the device needs acc=fp32 (the sum snaps to the fp32 lattice)";
    if (p->fn_ulps[NMO_FN_DIV] != 0 || p->fn_ulps[NMO_FN_RCP] != 0)
        return ln ? "layer_norm on the device needs correctly rounded division (fn=cuda, ocml, cr: d/s and w/s)"
                  : "softmax on the device needs correctly rounded division (fn=cuda, ocml, cr: the fast path of "
                    "nmo_fenc_divmul_row)";
    /* the device's exp takes one figure per plan: fn=triton's argument-dependent exp
     * (nmo_plan_exp_ulps) is declined by the division check above (div.full, 2 ulps) */
    if (c->shape[c->nshape - 1] < 1) return "rows must not be empty";
    if (ln && (!nmo_tensor_is_packed(&c->in[2]) || nmo_tensor_numel(&c->in[2]) != c->shape[c->nshape - 1]))
        return "layer_norm's b must be packed, of the row's length";
    return NULL;
}

/* The binary64 error of v = RN(s + c) for a Sum2 sum of n terms (k_ln_sums: sum2_add per
 * term, TwoSum at each tree node; T <= n + 1024 TwoSums for blocks of at most 1024
 * threads), va the compensated sum of the terms' magnitudes: the exact sum is s + (the
 * exact sum of the T TwoSum errors E_i); each |E_i| <= 2^-53 of a computed partial sum,
 * whose magnitude is at most the computed magnitude sum (|RN(a + b)| <= RN(|a| + |b|)),
 * <= 1.01 A; c sums the E_i in some order, within (T - 1) 2^-53 sum |E_i| of their sum
 * (Jeannerod & Rump 2013, Thm 4.1), so |s + c - exact| <= 1.01 T^2 2^-106 A; RN(s + c)
 * adds 2^-53 |v| <= 1.01 2^-53 A; and A <= va (1 + 2^-50). The same bound holds for the
 * sums of lo, hi (each term at most its magnitude). */
double nmo_go_ln_comp_err(int64_t n, double va)
{
    double T = (double)n + 1024;
    return (1.03 * T * T * 0x1p-106 + 0x1p-51) * va;
}
#define ln_comp_err nmo_go_ln_comp_err

/* A layer_norm row sum closed by the fast engine's code (nmo_fenc_dotk with k factors,
 * rounds = 0) from the device's sums q (k_ln_sums: slo, shi, A, Q, exact-path ok,
 * non-finite): the exact sum when nmo_fe_dotk_exact's conditions hold (the device
 * checked them term by term; the binary64 sum is then exact in any order), else
 * nmo_fenc_dotk_finish: with no summation radius when the point terms' binary64 sums are
 * exact, else from the compensated sums with theirs (ln_comp_err). 0 when the row goes to the CPU checker. */
static int ln_close(nmo_fctx *fc, const double *q, int k, int64_t n, nmo_fenc *r)
{
    if (q[5] != 0) return 0;
    double Q = q[3] >= 0x1p1023 ? INFINITY : q[3];
    if (q[4] != 0 && nmo_fe_sum_exact_ok(fc->af, fc->ftz, Q, q[2])) {
        r->lo = r->hi = Q == INFINITY ? 0 : q[0];
        r->flags = fc->force_unc;
    } else if (q[4] != 0 && nmo_fe_sum_exact64(Q, q[2])) {
        /* point terms whose binary64 sums are exact in any order (the device's tree too) */
        nmo_fenc_dotk_finish(fc, r, q[0], q[1], q[2], 0, 0, k, n, 0, 0, 0);
    } else if (nmo_gpu_check_ln_plain) { /* testing: the plain sums, any-order radius */
        nmo_fenc_dotk_finish(fc, r, q[0], q[1], q[2], 0, 0, k, n, 0, 0, -1);
    } else { /* the compensated sums, within ln_comp_err of the exact ones */
        double va = q[2] + q[10];
        nmo_fenc_dotk_finish(fc, r, q[0] + q[8], q[1] + q[9], va, 0, 0, k, n, 0, 0, ln_comp_err(n, va));
    }
    /* the error scale: the sum of the terms' scales (nmo_fenc_dotk_finish's mg), summed on
     * the device in another order than the CPU's index order: k_ln_judge's rel covers it */
    r->mag = q[6];
    return r->flags == 0 && isfinite(r->lo) && isfinite(r->hi);
}

/* The statistics of row r by the certified engine (nmo_ref_layer_norm_stats: the
 * reference's norm_two_pass): what the CPU checker's escalation of a row computes when
 * the fast engine's closing of a row sum is flagged (the binary64 sum cannot decide its
 * snap). The device then judges the row's elements from them as from the fast engine's (a
 * decided snap is the certified engine's value for the same operands). mean_only: the mean
 * alone (a flagged first sum: the variance is then the device's second pass from it,
 * closed by the fast engine's code, whose decided snaps are the certified ones). 0 when a
 * statistic is flagged or not finite. */
static int ln_stats_cert(nmo_cctx *cc, const nmo_case *c, int64_t r, int mean_only, nmo_fenc *mu, nmo_fenc *rs,
                         nmo_fenc *sd)
{
    nmo_ref_layer_norm_stats_cert(cc, c, r, mean_only, mu, rs, sd);
    int k = mean_only ? 1 : 3;
    const nmo_fenc *o[3] = {mu, rs, sd};
    for (int i = 0; i < k; i++)
        if (o[i]->flags != 0 || !isfinite(o[i]->lo) || !isfinite(o[i]->hi)) return 0;
    return 1;
}

/* ln_stats_cert over a list of rows, nmo__threads() threads (each its own certified
 * context; rows are independent): ok[i] for list[i], mu[list[i]], st[6 list[i]..] */
typedef struct {
    const nmo_case *c;
    const int64_t *list;
    int64_t nl;
    int mean_only, nt, t;
    nmo_fenc *mu;
    double *st;
    uint8_t *ok;
} ln_cert_job;

static void *ln_cert_worker(void *arg)
{
    ln_cert_job *j = arg;
    nmo_cctx cc;
    nmo_err e;
    if (nmo_cctx_init(&cc, &j->c->plan, &e) != NMO_OK) return NULL; /* its rows stay not ok */
    for (int64_t i = j->t; i < j->nl; i += j->nt) {
        int64_t r = j->list[i];
        nmo_fenc rs, sd;
        j->ok[i] = (uint8_t)ln_stats_cert(&cc, j->c, r, j->mean_only, &j->mu[r], &rs, &sd);
        if (j->ok[i] && !j->mean_only) {
            double *h6 = j->st + 6 * r;
            h6[0] = rs.lo, h6[1] = rs.hi, h6[2] = sd.lo, h6[3] = sd.hi, h6[4] = rs.mag, h6[5] = sd.mag;
        }
    }
    nmo_cctx_clear(&cc);
    return NULL;
}

static void ln_cert_rows(const nmo_case *c, const int64_t *list, int64_t nl, int mean_only, nmo_fenc *mu, double *st,
                         uint8_t *ok)
{
    memset(ok, 0, (size_t)nl);
    if (nl == 0) return;
    int nt = nmo__threads();
    if (nt > nl) nt = (int)nl;
    ln_cert_job jobs[64];
    pthread_t th[64];
    if (nt > 64) nt = 64;
    int started[64] = {0};
    for (int t = 0; t < nt; t++) {
        jobs[t] = (ln_cert_job){c, list, nl, mean_only, nt, t, mu, st, ok};
        started[t] = t > 0 && pthread_create(&th[t], NULL, ln_cert_worker, &jobs[t]) == 0;
    }
    for (int t = 0; t < nt; t++)
        if (!started[t]) { /* this thread's share, or a share no thread took */
            ln_cert_worker(&jobs[t]);
        }
    for (int t = 1; t < nt; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

/* layer_norm's single elements on the host, nmo__threads() threads: task k < ng is the
 * group of el[g[k] .. g[k+1]) (one row's listed elements, each result into een at its
 * index), task ng (when widx >= 0) the worst element alone (into *wout). Each task is
 * nmo_ref_layer_norm_eval_unc_cert on its row with its elements flagged (the row's fast
 * statistics, ~1 ms a row of 8192 on one core, then the elements): independent rows,
 * each thread its own fast and certified contexts and row buffer. */
typedef struct {
    const nmo_case *c;
    const int64_t *el, *g;
    int64_t ng, n, widx;
    nmo_fenc *een, *wout;
    int nt, t, ok;
} ln_elem_job;

static void *ln_elem_worker(void *arg)
{
    ln_elem_job *j = arg;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_err e;
    nmo_fenc *rowbuf = calloc((size_t)j->n, sizeof(nmo_fenc));
    if (!rowbuf) return NULL;
    if (nmo_fctx_init(&fc, &j->c->plan, &e) != NMO_OK) {
        free(rowbuf);
        return NULL;
    }
    if (nmo_cctx_init(&cc, &j->c->plan, &e) != NMO_OK) {
        nmo_fctx_clear(&fc);
        free(rowbuf);
        return NULL;
    }
    const int64_t n = j->n, nt = j->ng + (j->widx >= 0);
    nmo_fenc *ob[1] = {rowbuf};
    for (int64_t k = j->t; k < nt; k += j->nt) {
        if (k < j->ng) {
            const int64_t a = j->g[k], b = j->g[k + 1], row = j->el[a] / n;
            for (int64_t i = a; i < b; i++) rowbuf[j->el[i] % n].flags = NMO_EF_UNC;
            nmo_ref_layer_norm_eval_unc_cert(&fc, &cc, j->c, row, ob);
            for (int64_t i = a; i < b; i++) {
                j->een[i] = rowbuf[j->el[i] % n];
                rowbuf[j->el[i] % n] = (nmo_fenc){0};
            }
        } else {
            rowbuf[j->widx % n].flags = NMO_EF_UNC;
            nmo_ref_layer_norm_eval_unc_cert(&fc, &cc, j->c, j->widx / n, ob);
            *j->wout = rowbuf[j->widx % n];
            rowbuf[j->widx % n] = (nmo_fenc){0};
        }
    }
    nmo_cctx_clear(&cc);
    nmo_fctx_clear(&fc);
    free(rowbuf);
    j->ok = 1;
    return NULL;
}

/* 0: out of memory somewhere (the caller reports it) */
static int ln_elems_host(const nmo_case *c, const int64_t *el, const int64_t *g, int64_t ng, int64_t n, int64_t widx,
                         nmo_fenc *een, nmo_fenc *wout)
{
    const int64_t tasks = ng + (widx >= 0);
    if (tasks == 0) return 1;
    int nt = nmo__threads();
    if (nt > tasks) nt = (int)tasks;
    if (nt > 64) nt = 64;
    ln_elem_job jobs[64];
    pthread_t th[64];
    int started[64] = {0}, ok = 1;
    for (int t = 0; t < nt; t++) {
        jobs[t] = (ln_elem_job){c, el, g, ng, n, widx, een, wout, nt, t, 0};
        started[t] = t > 0 && pthread_create(&th[t], NULL, ln_elem_worker, &jobs[t]) == 0;
    }
    for (int t = 0; t < nt; t++)
        if (!started[t]) ln_elem_worker(&jobs[t]);
    for (int t = 1; t < nt; t++)
        if (started[t]) pthread_join(th[t], NULL);
    for (int t = 0; t < nt; t++) ok &= jobs[t].ok;
    return ok;
}

/* layer_norm's statistics: the two passes of row sums on the device, each row closed
 * on the host (norm_two_pass's steps: the sum, mean = sum / N, the sum of d^2,
 * var = ss / N, v = var + RN(eps), rstd = rsqrt(v), s = sqrt(v), by the fast engine's
 * primitives, which carry the error scales too: the judge's scale rule); a row whose
 * closing is flagged: the certified engine's statistics (ln_stats_cert); a row with a
 * non-finite value, or flagged there too: hskip[r] = 1 (the host's). */
static nmo_status ln_stats(nmo_go_ln_args *ga, nmo_fctx *fc, const nmo_case *c, uint8_t *hskip, int64_t *ncert,
                           double *ms_host, nmo_err *err)
{
    const int64_t rows = ga->rows, n = ga->n;
    void *part, *mean, *stat;
    NMO_RETURN_IF_ERR(dev_get(&part, B_S, (size_t)rows * NMO_GO_LN_PART * sizeof(double), err));
    NMO_RETURN_IF_ERR(dev_get(&mean, B_M, (size_t)rows * 3 * sizeof(double), err));
    NMO_RETURN_IF_ERR(dev_get(&stat, B_RROW, (size_t)rows * 6 * sizeof(double), err));
    ga->part = part, ga->mean = mean, ga->stat = stat;
    double *hp = malloc((size_t)rows * NMO_GO_LN_PART * sizeof(double)), *hm = malloc((size_t)rows * 3 * sizeof(double)),
           *hs = calloc((size_t)rows * 6, sizeof(double));
    nmo_status s = NMO_OK;
    nmo_fenc *mu = malloc((size_t)rows * sizeof(nmo_fenc));
    int64_t *fl = malloc((size_t)rows * sizeof(int64_t)), nf = 0; /* rows for the certified engine */
    uint8_t *ok = malloc((size_t)rows), *byc = calloc((size_t)rows, 1); /* byc: counted in *ncert */
    nmo_fenc *m2 = NULL;
    if (!hp || !hm || !hs || !mu || !fl || !ok || !byc) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
        goto out;
    }
    if ((s = nmo_go_ln_sums(ga, 1, err)) != NMO_OK) goto out;
    if ((s = nmo_gpu_d2h(hp, part, (size_t)rows * NMO_GO_LN_PART * sizeof(double), err)) != NMO_OK) goto out;
    double h0 = now_ms();
    for (int64_t r = 0; r < rows; r++) {
        if (hskip[r]) continue;
        nmo_fenc sum;
        int k = ln_close(fc, hp + NMO_GO_LN_PART * r, 1, n, &sum);
        if (k) nmo_fenc_div_si(fc, &mu[r], &sum, n);
        if (k && mu[r].flags == 0 && isfinite(mu[r].lo) && isfinite(mu[r].hi)) continue;
        if (hp[NMO_GO_LN_PART * r + 5] == 0) fl[nf++] = r; /* flagged, finite: the certified mean */
        else hskip[r] = 1;
    }
    ln_cert_rows(c, fl, nf, 1, mu, hs, ok);
    for (int64_t i = 0; i < nf; i++) {
        if (!ok[i]) hskip[fl[i]] = 1;
        byc[fl[i]] = ok[i];
    }
    for (int64_t r = 0; r < rows; r++) {
        int k = !hskip[r];
        hm[3 * r] = k ? mu[r].lo : 0, hm[3 * r + 1] = k ? mu[r].hi : 0, hm[3 * r + 2] = k ? mu[r].mag : 0;
    }
    *ms_host += now_ms() - h0;
    if ((s = nmo_gpu_h2d(mean, hm, (size_t)rows * 3 * sizeof(double), err)) != NMO_OK) goto out;
    if ((s = nmo_go_ln_sums(ga, 2, err)) != NMO_OK) goto out;
    if ((s = nmo_gpu_d2h(hp, part, (size_t)rows * NMO_GO_LN_PART * sizeof(double), err)) != NMO_OK) goto out;
    h0 = now_ms();
    nmo_fenc ep;
    nmo_fenc_const(fc, &ep, c->param[0]);
    nf = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (hskip[r]) continue;
        double *h6 = hs + 6 * r;
        nmo_fenc ss, var, v, rs, sd;
        int k = ln_close(fc, hp + NMO_GO_LN_PART * r, 2, n, &ss);
        if (k) {
            nmo_fenc_div_si(fc, &var, &ss, n);
            nmo_fenc_add(fc, &v, &var, &ep);
            nmo_fenc_rsqrt(fc, &rs, &v);
            nmo_fenc_sqrt(fc, &sd, &v);
            k = (rs.flags | sd.flags) == 0 && isfinite(rs.lo) && isfinite(rs.hi) && isfinite(sd.lo) && isfinite(sd.hi);
        }
        if (k) {
            h6[0] = rs.lo, h6[1] = rs.hi, h6[2] = sd.lo, h6[3] = sd.hi, h6[4] = rs.mag, h6[5] = sd.mag;
        } else if (hp[NMO_GO_LN_PART * r + 5] == 0) {
            fl[nf++] = r; /* flagged: every statistic by the certified engine */
        } else {
            hskip[r] = 1;
        }
    }
    /* the mean computed again (m2): it must be the one the device's second pass used */
    if (nf > 0 && !(m2 = malloc((size_t)rows * sizeof(nmo_fenc)))) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
        goto out;
    }
    ln_cert_rows(c, fl, nf, 0, m2, hs, ok);
    for (int64_t i = 0; i < nf; i++) {
        int64_t r = fl[i];
        if (ok[i] && m2[r].lo == mu[r].lo && m2[r].hi == mu[r].hi) byc[r] = 1;
        else hskip[r] = 1;
    }
    for (int64_t r = 0; r < rows; r++) *ncert += byc[r] && !hskip[r];
    *ms_host += now_ms() - h0;
    s = nmo_gpu_h2d(stat, hs, (size_t)rows * 6 * sizeof(double), err);
out:
    free(hp), free(hm), free(hs), free(mu), free(fl), free(ok), free(byc), free(m2);
    return s;
}

/* softmax (one kernel, k_smx) or layer_norm (ln_stats, then k_ln_judge) on the device, the rows it left and the worst element's row
 * by the CPU checker (nmo__check_units, as nmo_check runs them), the merge. */
static nmo_status check_rows(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                             const void *const *in_dev, const nmo_check_opts *opts,
                             nmo_gpu_check_info *info, nmo_err *err)
{
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    nmo_gpu_check_info inf = {0};
    const char *why = NULL;
    if (!nmo_gpu_check_supported(c, &why)) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: %s", why);
    if (o.mode == NMO_MODE_CERT || o.keep_enc)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                           "gpu oracle: the device tier is the fast engine (no certified-only mode, no enclosures kept)");
    NMO_RETURN_IF_ERR(nmo_op_check_plan(c->op, &c->plan, err));
    double t0 = now_ms();
    const int64_t n = c->shape[c->nshape - 1], rows = c->op->units(c), numel = rows * n;
    if (nmo_tensor_numel(&c->in[0]) != numel || nmo_tensor_numel(&c->out[0]) != numel)
        return nmo_err_set(err, NMO_ERR_SIZE, "gpu oracle: %s shape mismatch", c->op->name);
    const size_t ies = nmo_fmt_bytes(c->plan.in);
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = o.max_ulps > 0 ? o.max_ulps : nmo_plan_max_ulps(&c->plan);
    rep->n_out = 1;
    rep->out_n[0] = numel;
    rep->n = numel;
    rep->units = rows;
    nmo_status s = NMO_OK;
    void *x, *verd, *rlo = NULL, *rhi = NULL, *redo, *accd, *skipd = NULL, *eredo = NULL;
    int64_t *list = NULL, *el = NULL, ecap = 0, ne = 0, nk = 0, ngroups = 0;
    nmo_fenc *een = NULL;
    int64_t *gstart = NULL;
    double *ev = NULL;
    uint8_t *hskip = NULL;
    nmo_tensor hc = {0};
    nmo_report hrep, wrep;
    int hrep_ok = 0, wrep_ok = 0, fc_ok = 0;
    memset(&hrep, 0, sizeof hrep);
    memset(&wrep, 0, sizeof wrep);
    nmo_go_acc acc;
    nmo_fctx fc;
    pthread_mutex_lock(&scratch.mu);
#define TRY(x) do { if ((s = (x)) != NMO_OK) goto done; } while (0)
    TRY(nmo_fctx_init(&fc, &c->plan, err));
    fc_ok = 1;
    /* the sum's multiplier from the plan (sum=any: n - 1; a declared geometry: its own);
     * a row longer than the geometry holds is refused, as nmo_check refuses it */
    const int ln = strcmp(c->op->name, "layer_norm") == 0;
    const double k = nmo_fe_red_k(&fc, n, n, 0);
    if (ln) (void)nmo_fe_red_k(&fc, n, n, 1); /* its second sum is a dot product */
    if (fc.geo_over) {
        s = nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                        "gpu oracle: plan field 'sum' holds fewer terms than %s reduces at this shape (%lld); the "
                        "CPU oracle names the geometry to declare",
                        c->op->name, (long long)fc.geo_over);
        goto done;
    }
    if (!(list = malloc((size_t)rows * sizeof(int64_t)))) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
        goto done;
    }
    if (in_dev) {
        x = (void *)in_dev[0];
    } else {
        TRY(dev_get(&x, B_X, (size_t)numel * ies, err));
        TRY(nmo_gpu_h2d(x, c->in[0].data, (size_t)numel * ies, err));
    }
    TRY(dev_get(&verd, B_VERD, (size_t)numel, err));
    if (o.keep_bounds) {
        TRY(dev_get(&rlo, B_RLO, (size_t)numel * sizeof(double), err));
        TRY(dev_get(&rhi, B_RHI, (size_t)numel * sizeof(double), err));
    }
    TRY(dev_get(&redo, B_REDO, (size_t)rows * sizeof(int64_t), err));
    TRY(dev_get(&accd, B_ACC, sizeof(nmo_go_acc), err));
    void *wid, *roww; /* the widths for the histogram (k_row_hist) */
    TRY(dev_get(&wid, B_PM, (size_t)numel * sizeof(uint16_t), err));
    TRY(dev_get(&roww, B_BAD, (size_t)rows, err));
    /* the host's rows: all of them under force_unc (every fast value flagged), every
     * k-th one when testing the merge (nmo_gpu_check_host_every); layer_norm's rows whose
     * statistics are flagged (ln_stats) */
    if (fc.force_unc || nmo_gpu_check_host_every > 0 || ln) {
        if (!(hskip = calloc((size_t)rows, 1))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
            goto done;
        }
        for (int64_t r = 0; r < rows; r++)
            hskip[r] = fc.force_unc ||
                       (nmo_gpu_check_host_every > 0 && r % nmo_gpu_check_host_every == 0);
        TRY(dev_get(&skipd, B_SKIP, (size_t)rows, err));
    }
    if (ln) {
        const void *w = in_dev ? in_dev[1] : NULL, *b = in_dev ? in_dev[2] : NULL;
        if (!in_dev) {
            void *wd, *bd;
            TRY(dev_get(&wd, B_W, (size_t)n * ies, err));
            TRY(dev_get(&bd, B_PS, (size_t)n * ies, err));
            TRY(nmo_gpu_h2d(wd, c->in[1].data, (size_t)n * ies, err));
            TRY(nmo_gpu_h2d(bd, c->in[2].data, (size_t)n * ies, err));
            w = wd, b = bd;
        }
        ecap = nmo_gpu_check_elem_cap > 0 ? nmo_gpu_check_elem_cap : numel / 64 + 4096;
        TRY(dev_get(&eredo, B_EREDO, (size_t)ecap * sizeof(int64_t), err));
        nmo_go_ln_args la = {x, w, b, cand_dev, c->plan.in == NMO_BF16, c->plan.out == NMO_BF16, rows, n,
                             fc.uc, fc.etac, NULL, NULL, skipd, NULL, rep->max_ulps, verd, rlo, rhi, redo, accd,
                             wid, roww, eredo, ecap, nmo_gpu_check_elem_every};
        TRY(ln_stats(&la, &fc, c, hskip, &inf.rows_stats_cert, &inf.ms_host_stats, err));
        TRY(nmo_gpu_h2d(skipd, hskip, (size_t)rows, err));
        TRY(nmo_go_ln_judge(&la, &acc, err));
    } else {
        if (skipd) TRY(nmo_gpu_h2d(skipd, hskip, (size_t)rows, err));
        nmo_go_smx_args ga = {x, cand_dev, c->plan.in == NMO_BF16, c->plan.out == NMO_BF16, rows, n,
                              c->plan.fn_ulps[NMO_FN_EXP], nmo_plan_exp_ftz(&c->plan), k, fc.ua,
                              (double)n * 0x1p-53, fc.maxfin_a, skipd, rep->max_ulps, verd, rlo, rhi, NULL,
                              redo, accd, wid, roww, nmo_gpu_check_comp_all};
        TRY(nmo_go_smx_judge(&ga, &acc, err));
        inf.rows_comp = (int64_t)acc.n_comp;
    }
    double t1 = now_ms();
    int64_t nl = (int64_t)acc.n_redo;
    if (nl > rows) {
        s = nmo_err_set(err, NMO_ERR_GENERIC, "gpu oracle: %lld rows sent back of %lld", (long long)nl, (long long)rows);
        goto done;
    }
    if (nl > 0) TRY(nmo_gpu_d2h(list, redo, (size_t)nl * sizeof(int64_t), err));
    if (hskip)
        for (int64_t r = 0; r < rows; r++)
            if (hskip[r]) list[nl++] = r;
    qsort(list, (size_t)nl, sizeof(int64_t), cmp_i64);
    ne = (int64_t)acc.n_eredo;
    if (ne > ecap) { /* more single elements than the list holds: the CPU checker on everything */
        TRY(check_all_host(rep, c, cand_dev, &hc, &o, err));
        inf.rows_host = rows;
        goto done;
    }
    inf.rows_host = nl;
    inf.rows_device = rows - nl;
    /* layer_norm's single elements (k_ln_judge lists them; rows it decided, never a host
     * row): each as the CPU checker's escalation of single elements computes it, from the
     * row's statistics (nmo_ref_layer_norm_eval_unc_cert: the fast engine's where it
     * decides them, else the certified engine's; the element by the fast formula where it
     * decides, else certified), so with the CPU's own values and error scales */
    int64_t wrow = -1, widx = -1;
    if (acc.n_pass + acc.n_fail > 0) widx = 0x3fffffff - (int64_t)(acc.worst & 0x3fffffffull), wrow = widx / n;
    nmo_fenc wenc = {0};
    if (ne > 0) {
        TRY(elems_fetch(eredo, ne, &el, &een, &ev, err));
        nk = ne;
        TRY(elems_cand(&hc, c, cand_dev, el, nk, ev, err));
        if (!(gstart = malloc((size_t)(nk + 1) * sizeof(int64_t)))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the element groups");
            goto done;
        }
        for (int64_t g0 = 0, g1; g0 < nk; g0 = g1) { /* one group a row (el is sorted) */
            for (g1 = g0; g1 < nk && el[g1] / n == el[g0] / n; g1++) {}
            gstart[ngroups++] = g0;
        }
        gstart[ngroups] = nk;
    }
    /* the single elements, and layer_norm's worst element (that element alone, as the CPU
     * checker computes it: the single elements' function), in one parallel batch */
    if ((ne > 0 || (wrow >= 0 && ln)) &&
        !ln_elems_host(c, el, gstart, ngroups, n, wrow >= 0 && ln ? widx : -1, een, &wenc)) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for layer_norm's single elements");
        goto done;
    }
    inf.elems_host = nk;
    inf.elems_scaled = (int64_t)acc.n_scaled;
    if (nl > 0 || wrow >= 0) {
        if (!hc.data) TRY(cand_alloc(&hc, c, err));
        TRY(cand_rows(&hc, cand_dev, list, nl, n, err));
        if (wrow >= 0 && ln) TRY(cand_rows(&hc, cand_dev, &widx, 1, 1, err));
        else if (wrow >= 0) TRY(cand_rows(&hc, cand_dev, &wrow, 1, n, err));
    }
    if (nl > 0) {
        TRY(nmo__check_units(&hrep, c, &hc, &o, list, nl, err));
        hrep_ok = 1;
    }
    nmo_elem_info wi;
    int has_wi = 0;
    if (wrow >= 0 && ln) { /* layer_norm's worst element, judged */
        nmo_judge(&wi, &wenc, nmo_tensor_get(&hc, widx), &c->plan, rep->max_ulps, NULL);
        wi.k = 0;
        wi.index = widx;
        has_wi = 1;
    } else if (wrow >= 0) { /* the worst element's details: its row by the CPU checker (the
                             * row's worst is the device's worst: the same order, nmo__elem_worse) */
        nmo_check_opts wo = {0};
        wo.mode = NMO_MODE_ESCALATE;
        wo.max_ulps = o.max_ulps;
        TRY(nmo__check_units(&wrep, c, &hc, &wo, &wrow, 1, err));
        wrep_ok = 1;
    }
    double t2 = now_ms();
    const nmo_elem_info *wip = has_wi ? &wi : wrep_ok && wrep.has_worst ? &wrep.worst : NULL;
    TRY(nmo_go_merge_report(rep, &o, &acc, hrep_ok ? &hrep : NULL, wip, list, nl, n, numel, verd, rlo, rhi, err));
    /* layer_norm's elements the scale rule decided on the device (k_ln_judge), before the
     * single elements' own marks */
    if (o.keep_bounds && ln) nmo_go_mark_scaled(rep, c->plan.out == NMO_BF16, list, nl, n);
    elems_judge(rep, c, een, el, nk, ev, ngroups, &o);
    inf.ms_device = t1 - t0;
    inf.ms_host_redo = t2 - t1;
    rep->seconds = (now_ms() - t0) * 1e-3;
done:
#undef TRY
    if (fc_ok) nmo_fctx_clear(&fc);
    if (hrep_ok) nmo_report_free(&hrep);
    if (wrep_ok) nmo_report_free(&wrep);
    nmo_tensor_free(&hc);
    pthread_mutex_unlock(&scratch.mu);
    free(list), free(hskip), free(el), free(een), free(ev), free(gstart);
    if (s != NMO_OK) nmo_report_free(rep);
    if (info) *info = inf;
    return s;
}
