/* numoracle GPU tier (issue 22): softmax's rows on the device. Part of hip/gpu_oracle.hip's
 * translation unit (included at its end, not a public header): it uses that file's device
 * helpers (the binary64 RN operations dmul/dadd/ddiv, the fp32 snaps snap32 / rnd32, the
 * exp enclosure exp2e, the quotient div2 and the judge judge_elem), one copy of each.
 *
 * softmax (refs/softmax.c, fused plans, compute and acc fp32 without ftz): one block a row.
 *   pass 1: m = max_j x_j (exact), a non-finite input sends the row to the host;
 *   pass 2: e_j = exp(RN32(x_j - m)) as nmo_fenc_exp_sub_row encloses it (exp2e: the
 *           transcription of nmo_fenc_exp for a point argument, fn_side's radius
 *           2^-51 |v|), and the binary64 sums slo = sum e_lo, shi = sum e_hi,
 *           a = sum max(|e_lo|, |e_hi|) in a fixed tree;
 *   then    s = nmo_fenc_sum's enclosure (nmo_fe_red_finish for an fp32 acc: RU of
 *           slo - em, RD of shi + em, em = k u_a a, radius err (1 + k u_a) + em 2^-51
 *           with err = n 2^-53 a), rcp = RN(1 / s) (nmo_fenc_div of the point 1);
 *   pass 3: e_j again (the same operations: the same values), y_j = hull(e_j / s, e_j rcp)
 *           as nmo_fe_divmul_row_kernel forms it, snapped by the (float) cast, judged.
 * Why the device's values are the CPU's: every step above is a snap that the device
 * declares decided only when the fp32 rounding is constant over [v - e, v + e], e a bound
 * on the binary64 error of v that holds for the device's evaluation too: the sums in any
 * order are within (n - 1) 2^-53 a of the exact ones (Jeannerod & Rump 2013, Thm 4.1),
 * which is the err nmo_fenc_sum allows for its own index-order sums; the exp is the
 * device's: CUDA Math API, "Double Precision Mathematical Functions", exp: maximum error
 * 1 ulp (<= 2^-52 |v|), inside fn_side's 2^-51 |v| radius (ROCm OCML's f64 exp: 1 ulp,
 * the same margin; the simulator: glibc's exp, < 1 ulp); the divisions and products are
 * correctly rounded binary64 (0 ulp) then RN32 (innocuous double rounding). So a decided
 * snap is the fp32 rounding of the exact quantity, which is the CPU fast engine's value
 * wherever the CPU decides too, and the certified engine's where the CPU escalates: the
 * verdicts are the certified ones. Anything else (an undecided snap, a non-finite value,
 * s or rcp outside the fast path of nmo_fenc_divmul_row, a wide or non-finite R) sends
 * the whole row to the CPU checker. hip/gpu_oracle_test.c compares every element. */

namespace {

constexpr int SMX_NWIDE = 4; /* widths >= 8 a thread holds for its row before the fold */

/* e_j of nmo_fenc_exp_sub_row for the input point x and the row's max m (finite): 1 when
 * decided (unflagged, finite) */
NMO_D int smx_exp(double x, double m, int nexp, int ftzx, double *lo, double *hi)
{
    double d = (double)fcast(dadd(x, -m)); /* nmo_fenc_sub of points: RN32(x + -m) */
    if (!finite_d(d)) return 0;
    int unc = 0, bad = 0;
    double ev = d == 0 ? 1.0 : dexp(d); /* exp(0) = 1 exactly */
    ienc e = exp2e(ienc{d, d}, ev, nexp, &unc, &bad);
    if (ftzx && e.lo < 0x1p-126) e.lo = 0; /* nmo_fenc_exp under exp ftz (fn=fast, triton) */
    *lo = e.lo, *hi = e.hi;
    return !unc && !bad && finite_d(e.lo) && finite_d(e.hi);
}

/* nmo_fe_red_finish for an fp32 acc without ftz (keta = 0: nmo_fenc_sum's n - 1
 * additions lose nothing to gradual underflow) and nmo_fenc_sum's err = n 2^-53 a;
 * 1 when s = [*sl, *sh] is unflagged and bounded */
NMO_D int smx_sum_finish(const nmo_go_smx_args &A, double slo, double shi, double a, double *sl, double *sh)
{
    if (!(dabs(slo) <= 0x1p1000 && dabs(shi) <= 0x1p1000 && a <= 0x1p1000) || !(A.k < 0x1p1023)) return 0;
    double err = dmul(A.en, a);
    double kua = dmul(A.k, A.ua);
    double em = dmul(kua, a);
    double e = dadd(dmul(err, dadd(1, kua)), dmul(em, 0x1p-51));
    int unc = 0;
    *sl = snap32(2, dsub(slo, em), e, &unc); /* RU */
    *sh = snap32(1, dadd(shi, em), e, &unc); /* RD */
    if (*sl != *sl || *sh != *sh) return 0;
    double top = dmul(a, dadd(1, kua));
    if (dabs(dsub(top, A.maxfin_a)) <= dmul(A.maxfin_a, 0x1p-30)) unc = 1;
    if (top >= A.maxfin_a) return 0;
    return !unc;
}

__global__ void __launch_bounds__(BLK) k_smx(nmo_go_smx_args A)
{
    __shared__ double s_lo[BLK], s_hi[BLK], s_a[BLK];
    __shared__ int s_bad[BLK];
    __shared__ double s_st[4]; /* sl, sh, rl, rh of the row */
    __shared__ int s_ok;
    __shared__ unsigned long long s_pass[BLK], s_fail[BLK], s_wmax[BLK], s_worst[BLK];
    __shared__ unsigned s_w[8][BLK];
    __shared__ unsigned s_hist[NMO_GO_HIST + 1];
    const int t = (int)threadIdx.x;
    const int64_t n = A.n;
    for (int i = t; i <= NMO_GO_HIST; i += BLK) s_hist[i] = 0;
    unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0;
    unsigned wc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t row = blockIdx.x; row < A.rows; row += gridDim.x) {
        if (A.skip && A.skip[row]) continue; /* uniform over the block */
        const int64_t base = row * n;
        /* pass 1: the max (exact), non-finite inputs */
        double m = -0x1.fffffffffffffp1023;
        int bad = 0;
        for (int64_t j = t; j < n; j += BLK) {
            double v = load_in(A.x, A.in_bf16, base + j);
            bad |= !(dabs(v) <= 0x1p1000);
            m = v > m ? v : m;
        }
        s_lo[t] = m, s_bad[t] = bad;
        __syncthreads();
        for (int h = BLK / 2; h > 0; h >>= 1) {
            if (t < h) s_lo[t] = s_lo[t + h] > s_lo[t] ? s_lo[t + h] : s_lo[t], s_bad[t] |= s_bad[t + h];
            __syncthreads();
        }
        m = s_lo[0];
        bad = s_bad[0];
        __syncthreads();
        /* pass 2: e_j and the sums */
        double slo = 0, shi = 0, sa = 0;
        if (!bad)
            for (int64_t j = t; j < n; j += BLK) {
                double l, h;
                if (!smx_exp(load_in(A.x, A.in_bf16, base + j), m, A.nexp, A.ftzx, &l, &h)) { bad = 1; break; }
                slo = dadd(slo, l), shi = dadd(shi, h), sa = dadd(sa, dmax(dabs(l), dabs(h)));
            }
        s_lo[t] = slo, s_hi[t] = shi, s_a[t] = sa, s_bad[t] = bad;
        __syncthreads();
        for (int h = BLK / 2; h > 0; h >>= 1) {
            if (t < h) {
                s_lo[t] = dadd(s_lo[t], s_lo[t + h]), s_hi[t] = dadd(s_hi[t], s_hi[t + h]);
                s_a[t] = dadd(s_a[t], s_a[t + h]), s_bad[t] |= s_bad[t + h];
            }
            __syncthreads();
        }
        if (t == 0) {
            double sl = 0, sh = 0;
            int ok = !s_bad[0] && smx_sum_finish(A, s_lo[0], s_hi[0], s_a[0], &sl, &sh);
            /* rcp = nmo_fenc_div(1, s), correctly rounded; the fast path of
             * nmo_fenc_divmul_row: s and rcp positive, bounded and unflagged */
            ienc r{0, 0};
            if (ok && sl > 0) { /* div2 of the point 1 by 0 < sl <= sh: min 1/sh, max 1/sl */
                r.lo = rnd32(ddiv(1.0, sh), 0), r.hi = rnd32(ddiv(1.0, sl), 0);
                ok = sh <= 0x1p1000 && r.lo > 0 && r.hi <= 0x1p1000;
            } else {
                ok = 0;
            }
            s_st[0] = sl, s_st[1] = sh, s_st[2] = r.lo, s_st[3] = r.hi;
            s_ok = ok;
            if (A.rstat) {
                A.rstat[4 * row] = m, A.rstat[4 * row + 1] = ok ? sl : 0;
                A.rstat[4 * row + 2] = ok ? sh : 0, A.rstat[4 * row + 3] = ok ? r.lo : 0;
            }
        }
        __syncthreads();
        const int ok = s_ok;
        const double sl = s_st[0], sh = s_st[1], rl = s_st[2], rh = s_st[3];
        __syncthreads(); /* s_st, s_ok are rewritten by the next row */
        if (!ok) {
            if (t == 0) A.redo[at_inc(&A.acc->n_redo)] = row;
            continue;
        }
        /* pass 3: y_j, snapped and judged */
        int redo = 0;
        unsigned long long rpass = 0, rfail = 0, rwmax = 0, rworst = 0;
        unsigned rw[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t wide[SMX_NWIDE];
        int nw = 0;
        for (int64_t j = t; j < n; j += BLK) {
            const int64_t i = base + j;
            double el, eh;
            if (!smx_exp(load_in(A.x, A.in_bf16, i), m, A.nexp, A.ftzx, &el, &eh)) { redo = 1; break; }
            /* nmo_fe_divmul_row_kernel */
            if (!((el >= 0) & (el <= eh) & (eh <= 0x1p1000))) { redo = 1; break; }
            double a = (double)fcast(ddiv(el, sh)), b = (double)fcast(dmul(el, rl));
            double c = (double)fcast(ddiv(eh, sl)), d = (double)fcast(dmul(eh, rh));
            double l = a < b ? a : b, h = c > d ? c : d;
            int fl = 0;
            unsigned long long key = 0;
            int64_t wd = 0;
            if (!judge_elem(A.cand, A.out_bf16, i, l, h, A.max_ulps, A.verd, A.rlo, A.rhi, &fl, &key, &wd)) {
                redo = 1;
                break;
            }
            if (fl) rfail++; else rpass++;
            rworst = key > rworst ? key : rworst;
            rwmax = (unsigned long long)wd > rwmax ? (unsigned long long)wd : rwmax;
            if (wd < 8) rw[wd]++;
            else if (nw < SMX_NWIDE) wide[nw++] = wd;
            else { redo = 1; break; } /* more wide widths than registers: the host's row */
        }
        s_bad[t] = redo;
        __syncthreads();
        for (int h = BLK / 2; h > 0; h >>= 1) {
            if (t < h) s_bad[t] |= s_bad[t + h];
            __syncthreads();
        }
        const int any = s_bad[0];
        __syncthreads();
        if (any) {
            if (t == 0) A.redo[at_inc(&A.acc->n_redo)] = row;
            continue;
        }
        pass += rpass, fail += rfail;
        wmax = rwmax > wmax ? rwmax : wmax;
        worst = rworst > worst ? rworst : worst;
        for (int q = 0; q < 8; q++) wc[q] += rw[q];
        for (int q = 0; q < nw; q++) at_add32(&s_hist[wide[q] < NMO_GO_HIST ? wide[q] : NMO_GO_HIST], 1);
    }
    /* one fold a block */
    s_pass[t] = pass, s_fail[t] = fail, s_wmax[t] = wmax, s_worst[t] = worst;
    for (int q = 0; q < 8; q++) s_w[q][t] = wc[q];
    __syncthreads();
    for (int hh = BLK / 2; hh > 0; hh >>= 1) {
        if (t < hh) {
            s_pass[t] += s_pass[t + hh], s_fail[t] += s_fail[t + hh];
            for (int q = 0; q < 8; q++) s_w[q][t] += s_w[q][t + hh];
            s_wmax[t] = s_wmax[t] > s_wmax[t + hh] ? s_wmax[t] : s_wmax[t + hh];
            s_worst[t] = s_worst[t] > s_worst[t + hh] ? s_worst[t] : s_worst[t + hh];
        }
        __syncthreads();
    }
    if (t == 0) {
        at_add(&A.acc->n_pass, s_pass[0]);
        at_add(&A.acc->n_fail, s_fail[0]);
        for (int q = 0; q < 8; q++)
            if (s_w[q][0]) at_add(&A.acc->hist[q], s_w[q][0]);
        at_max(&A.acc->wmax, s_wmax[0]);
        at_max(&A.acc->worst, s_worst[0]);
    }
    for (int i = t; i <= NMO_GO_HIST; i += BLK)
        if (s_hist[i]) at_add(&A.acc->hist[i], s_hist[i]);
}

} // namespace

extern "C" nmo_status nmo_go_smx_judge(const nmo_go_smx_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    NMO_RETURN_IF_ERR(nmo_gpu_fill_async(a->acc, 0, sizeof(nmo_go_acc), err));
    /* at most 16 blocks an SM's worth (132 SMs); the simulator takes 3 blocks, so that
     * every block walks several rows */
#if defined(NMO_HIP_SIM)
    const int64_t gmax = 3;
#else
    const int64_t gmax = 132 * 16;
#endif
    nmo_launch(k_smx, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, *a);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(acc_host, a->acc, sizeof(nmo_go_acc), err));
    return nmo_gpu_sync_check("gpu oracle: k_smx", err);
}
