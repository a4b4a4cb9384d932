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

/* The counts of one row's elements in one thread (judge_elem's results), kept until the
 * block knows the row is decided. Widths 0..7 are counted here; every width goes to
 * wid[i] too, and k_row_hist adds the widths >= 8 of the decided rows to the histogram
 * afterwards (a row may hold any number of them: R of layer_norm is often wide). */
struct row_tally {
    unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0, scaled = 0;
    /* widths 0..7: an array with a variable index (local memory); wpack's registers cost
     * k_smx occupancy (76 -> 99 registers, softmax 8-17% slower on the H200) */
    unsigned w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int wide = 0, redo = 0;
    /* judge one element, with the scale rule for R wider than max_ulps values (check.c: R
     * is informative when its width in ulps of out at the element's error scale is at most
     * max_ulps): mg is the scale within relative rel of the CPU's (only its binade is
     * used; NO_SCALE: none known here). 1 (nothing counted) for an element that is not
     * finite, or wide where the device cannot decide the rule: the caller sends it or its
     * row to the host. */
    NMO_D int judge(const void *cand, int out_bf16, int64_t i, double l, double h, int64_t max_ulps,
                    double mg, double rel, uint8_t *verd, double *rlo, double *rhi, uint16_t *wid)
    {
        int fl = 0;
        unsigned long long key = 0;
        int64_t wd = 0;
        if (!judge_elem(cand_bits(cand, out_bf16, i), out_bf16, i, l, h, INT64_MAX / 4, verd, rlo, rhi, &fl, &key, &wd))
            return 1;
        if (wd + 1 > max_ulps) {
            if (!(scale_width(out_bf16, l, h, mg, rel) <= (double)max_ulps)) return 1;
            scaled++;
        }
        if (fl) fail++; else pass++;
        worst = key > worst ? key : worst;
        wmax = (unsigned long long)wd > wmax ? (unsigned long long)wd : wmax;
        wid[i] = (uint16_t)(wd < NMO_GO_HIST ? wd : NMO_GO_HIST);
        if (wd < 8) w[wd]++;
        else wide = 1;
        return 0;
    }
};

/* 1 when any thread of the block has v set (s: BLK ints of shared memory); every thread
 * gets the answer */
NMO_D int block_any(int v, int *s)
{
    const int t = (int)threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int h = BLK / 2; h > 0; h >>= 1) {
        if (t < h) s[t] |= s[t + h];
        __syncthreads();
    }
    const int any = s[0];
    __syncthreads();
    return any;
}

/* A thread's counts over the rows its block decided, folded once a block into acc. */
struct block_tally {
    unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0, scaled = 0;
    unsigned w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    NMO_D void add(const row_tally &r)
    {
        pass += r.pass, fail += r.fail, scaled += r.scaled;
        wmax = r.wmax > wmax ? r.wmax : wmax;
        worst = r.worst > worst ? r.worst : worst;
        for (int q = 0; q < 8; q++) w[q] += r.w[q];
    }
    NMO_D void fold(nmo_go_acc *acc, unsigned long long *s_pass, unsigned long long *s_fail,
                    unsigned long long *s_wmax, unsigned long long *s_worst, unsigned (*s_w)[BLK])
    {
        const int t = (int)threadIdx.x;
        if (scaled) at_add(&acc->n_scaled, scaled); /* rare: no shared fold */
        s_pass[t] = pass, s_fail[t] = fail, s_wmax[t] = wmax, s_worst[t] = worst;
        for (int q = 0; q < 8; q++) s_w[q][t] = w[q];
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
            at_add(&acc->n_pass, s_pass[0]);
            at_add(&acc->n_fail, s_fail[0]);
            for (int q = 0; q < 8; q++)
                if (s_w[q][0]) at_add(&acc->hist[q], s_w[q][0]);
            at_max(&acc->wmax, s_wmax[0]);
            at_max(&acc->worst, s_worst[0]);
        }
    }
};

/* The widths >= 8 of the rows decided on the device (roww[row] = 1) into acc->hist:
 * one block a row (grid-stride), a shared histogram, one fold a block. */
__global__ void __launch_bounds__(BLK) k_row_hist(const uint16_t *wid, const uint8_t *roww, int64_t rows,
                                                  int64_t n, nmo_go_acc *acc)
{
    __shared__ unsigned s_hist[NMO_GO_HIST + 1];
    const int t = (int)threadIdx.x;
    for (int i = t; i <= NMO_GO_HIST; i += BLK) s_hist[i] = 0;
    __syncthreads();
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        if (!roww[row]) continue;
        for (int64_t j = t; j < n; j += BLK) {
            unsigned w = wid[row * n + j];
            if (w >= 8) at_add32(&s_hist[w], 1);
        }
    }
    __syncthreads();
    for (int i = t; i <= NMO_GO_HIST; i += BLK)
        if (s_hist[i]) at_add(&acc->hist[i], s_hist[i]);
}

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
 * additions lose nothing to gradual underflow), err bounding the binary64 error of slo,
 * shi and a (nmo_fenc_sum's n 2^-53 a for plain sums; smx_comp_err for compensated ones).
 * 0: s = [*sl, *sh] unflagged and bounded; 1: a snap undecided; 2: outside the fast path */
NMO_D int smx_sum_finish(const nmo_go_smx_args &A, double slo, double shi, double a, double err, double *sl,
                         double *sh)
{
    if (!(dabs(slo) <= 0x1p1000 && dabs(shi) <= 0x1p1000 && a <= 0x1p1000) || !(A.k < 0x1p1023)) return 2;
    double kua = dmul(A.k, A.ua);
    double em = dmul(kua, a);
    double e = dadd(dmul(err, dadd(1, kua)), dmul(em, 0x1p-51));
    int unc = 0;
    *sl = snap32(2, dsub(slo, em), e, &unc); /* RU */
    *sh = snap32(1, dadd(shi, em), e, &unc); /* RD */
    if (*sl != *sl || *sh != *sh) return 2;
    double top = dmul(a, dadd(1, kua));
    if (dabs(dsub(top, A.maxfin_a)) <= dmul(A.maxfin_a, 0x1p-30)) unc = 1;
    if (top >= A.maxfin_a) return 2;
    return unc;
}

/* sum2_add and smx_comp_err: gpu_oracle.hip (rms_norm's rows use them too) */

__global__ void __launch_bounds__(BLK) k_smx(nmo_go_smx_args A)
{
    __shared__ double s_lo[BLK], s_hi[BLK], s_a[BLK], s_c[3][BLK];
    __shared__ int s_bad[BLK];
    __shared__ double s_st[4]; /* sl, sh, rl, rh of the row */
    __shared__ int s_ok, s_again;
    __shared__ unsigned long long s_pass[BLK], s_fail[BLK], s_wmax[BLK], s_worst[BLK];
    __shared__ unsigned s_w[8][BLK];
    const int t = (int)threadIdx.x;
    const int64_t n = A.n;
    block_tally tot;
    for (int64_t row = blockIdx.x; row < A.rows; row += gridDim.x) {
        if (A.skip && A.skip[row]) { /* uniform over the block */
            if (t == 0) A.roww[row] = 0;
            continue;
        }
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
        /* pass 2: e_j and the sums; again with compensated sums (Sum2) when the plain
         * binary64 sums leave the snap of s undecided (about 1 row in 3,000 of 8192 bf16
         * columns, which the host then checked whole: ~90 ms each) */
        for (int comp = 0; comp < 2; comp++) {
            double slo = 0, shi = 0, sa = 0, clo = 0, chi = 0, ca = 0;
            if (!bad)
                for (int64_t j = t; j < n; j += BLK) {
                    double l, h;
                    if (!smx_exp(load_in(A.x, A.in_bf16, base + j), m, A.nexp, A.ftzx, &l, &h) || !(l >= 0)) {
                        bad = 1;
                        break;
                    }
                    if (comp) {
                        sum2_add(&slo, &clo, l), sum2_add(&shi, &chi, h), sum2_add(&sa, &ca, dmax(dabs(l), dabs(h)));
                    } else {
                        slo = dadd(slo, l), shi = dadd(shi, h), sa = dadd(sa, dmax(dabs(l), dabs(h)));
                    }
                }
            s_lo[t] = slo, s_hi[t] = shi, s_a[t] = sa, s_bad[t] = bad;
            s_c[0][t] = clo, s_c[1][t] = chi, s_c[2][t] = ca;
            __syncthreads();
            for (int h = BLK / 2; h > 0; h >>= 1) {
                if (t < h) {
                    if (comp) { /* TwoSum of the two s, the error into c with both c */
                        double *sv[3] = {s_lo, s_hi, s_a};
                        for (int q = 0; q < 3; q++) {
                            double a1 = sv[q][t], a2 = sv[q][t + h], x = dadd(a1, a2);
                            s_c[q][t] = dadd(dadd(s_c[q][t], s_c[q][t + h]), two_sum_err(a1, a2, x));
                            sv[q][t] = x;
                        }
                    } else {
                        s_lo[t] = dadd(s_lo[t], s_lo[t + h]), s_hi[t] = dadd(s_hi[t], s_hi[t + h]);
                        s_a[t] = dadd(s_a[t], s_a[t + h]);
                    }
                    s_bad[t] |= s_bad[t + h];
                }
                __syncthreads();
            }
            if (t == 0) {
                double sl = 0, sh = 0, vlo = s_lo[0], vhi = s_hi[0], va = s_a[0], err = dmul(A.en, va);
                if (comp) {
                    vlo = dadd(vlo, s_c[0][0]), vhi = dadd(vhi, s_c[1][0]), va = dadd(va, s_c[2][0]);
                    err = smx_comp_err((double)n + BLK, va);
                }
                int st = s_bad[0] ? 2 : smx_sum_finish(A, vlo, vhi, va, err, &sl, &sh);
                int ok = st == 0;
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
                s_again = !comp && (st == 1 || (A.comp_all && st == 0));
                if (A.rstat && !s_again) {
                    A.rstat[4 * row] = m, A.rstat[4 * row + 1] = ok ? sl : 0;
                    A.rstat[4 * row + 2] = ok ? sh : 0, A.rstat[4 * row + 3] = ok ? r.lo : 0;
                }
                if (s_again) at_inc(&A.acc->n_comp);
            }
            __syncthreads();
            if (!s_again) break; /* uniform: read after the barrier, rewritten after the next */
            __syncthreads();
        }
        __syncthreads();
        const int ok = s_ok;
        const double sl = s_st[0], sh = s_st[1], rl = s_st[2], rh = s_st[3];
        __syncthreads(); /* s_st, s_ok are rewritten by the next row */
        if (!ok) {
            if (t == 0) A.redo[at_inc(&A.acc->n_redo)] = row, A.roww[row] = 0;
            continue;
        }
        /* pass 3: y_j, snapped and judged */
        row_tally rt;
        for (int64_t j = t; j < n && !rt.redo; j += BLK) {
            const int64_t i = base + j;
            double el, eh;
            if (!smx_exp(load_in(A.x, A.in_bf16, i), m, A.nexp, A.ftzx, &el, &eh)) { rt.redo = 1; break; }
            /* nmo_fe_divmul_row_kernel */
            if (!((el >= 0) & (el <= eh) & (eh <= 0x1p1000))) { rt.redo = 1; break; }
            double a = (double)fcast(ddiv(el, sh)), b = (double)fcast(dmul(el, rl));
            double c = (double)fcast(ddiv(eh, sl)), d = (double)fcast(dmul(eh, rh));
            if (rt.judge(A.cand, A.out_bf16, i, a < b ? a : b, c > d ? c : d, A.max_ulps, NO_SCALE, 0, A.verd, A.rlo,
                         A.rhi, A.wid))
                rt.redo = 1;
        }
        if (block_any(rt.redo, s_bad)) {
            if (t == 0) A.redo[at_inc(&A.acc->n_redo)] = row, A.roww[row] = 0;
            continue;
        }
        const int anyw = block_any(rt.wide, s_bad);
        if (t == 0) A.roww[row] = (uint8_t)anyw;
        tot.add(rt);
    }
    tot.fold(A.acc, s_pass, s_fail, s_wmax, s_worst, s_w);
}


/* ---- layer_norm (refs/layer_norm.c: norm_two_pass, norm_affine; fused plans, compute and
 * acc fp32 without ftz, correctly rounded division). The row sums here, the statistics
 * closed on the host by the fast engine's own functions (hip/gpu_oracle_rows_host.h), the
 * elements here. Every element step is a transcription of the fast engine's primitive
 * (engine/elem_fast.h nmo_fenc_add / nmo_fenc_mul / nmo_fenc_div, engine/prodk_fast.h
 * nmo_fenc_prodk / nmo_fenc_scale_shift) in the same binary64 operations and order, with
 * the same radii; no exp or log. A snap the device cannot decide, a non-finite value, a
 * partial product near fp32's overflow: the row goes to the CPU checker. */

/* nmo_fe_lowbit for a nonzero finite normal double: 2^(e - 52 + trailing zeros of the
 * 53-bit significand) */
NMO_D double lowbit(double v)
{
    uint64_t u = d2u(v), e = (u >> 52) & 0x7ff, m = (u & 0xfffffffffffffull) | (1ull << 52);
#if defined(__CUDA_ARCH__)
    int tz = __ffsll((long long)m) - 1;
#else
    int tz = __builtin_ctzll(m);
#endif
    return u2d((e - 52 + (uint64_t)tz) << 52);
}

/* pass 1: terms x_j (points); pass 2: d_j^2 over d_j = [RN(x_j - mh), RN(x_j - ml)]
 * (nmo_fenc_sub of the point x_j and the mean), the interval square as nmo_fenc_dotk
 * forms it. Per row: slo, shi, A = sum max(|lo|, |hi|) (binary64, a fixed tree: within
 * the (n + k) 2^-53 A that nmo_fenc_dotk_finish allows for any order), Q = the smallest
 * lowbit of a nonzero term and whether nmo_fe_dotk_exact's conditions hold term by term
 * (points, exact products, compute and acc values), and a non-finite flag. The three sums
 * are Sum2's (sum2_add, TwoSum in the tree): the s track is the plain binary64 sum (the
 * exact-sum tests read it), the c track its compensation (o[8..10]: the host's closing
 * uses s + c with ln_comp_err's radius where the sum is not exact). */
__global__ void __launch_bounds__(BLK) k_ln_sums(nmo_go_ln_args A, int pass)
{
    __shared__ double s_lo[BLK], s_hi[BLK], s_a[BLK], s_q[BLK], s_m[BLK], s_c[3][BLK];
    __shared__ int s_ok[BLK], s_bad[BLK];
    const int t = (int)threadIdx.x;
    const int64_t n = A.n;
    for (int64_t row = blockIdx.x; row < A.rows; row += gridDim.x) {
        double slo = 0, shi = 0, sa = 0, clo = 0, chi = 0, ca = 0, q = 0x1p1023;
        int ok = 1, bad = 0;
        double ml = 0, mh = 0, mm = 0, sm = 0;
        if (pass == 2) ml = A.mean[3 * row], mh = A.mean[3 * row + 1], mm = A.mean[3 * row + 2];
        for (int64_t j = t; j < n; j += BLK) {
            double v = load_in(A.x, A.in_bf16, row * n + j), lo, hi;
            bad |= !(dabs(v) <= 0x1p1000);
            if (pass == 1) {
                lo = hi = v; /* an fp32 / bf16 value: a compute and acc value */
            } else {
                double dl = rnd32(dadd(v, -mh), 0), dh = rnd32(dadd(v, -ml), 0);
                bad |= !(finite_d(dl) & finite_d(dh));
                double p1 = dmul(dl, dl), p2 = dmul(dl, dh), p3 = dmul(dh, dl), p4 = dmul(dh, dh);
                lo = dmin(dmin(p1, p2), dmin(p3, p4)), hi = dmax(dmax(p1, p2), dmax(p3, p4));
                /* the exact case: points whose squares (exact in binary64: 48 bits) are fp32 values */
                ok &= (dl == dh) & (rnd32(p1, 0) == p1);
                /* nmo_mag_prodk of d_j d_j: mag(d_j) |d_j|, mag(d_j) = |x_j| + mag(mean) */
                sm = dadd(sm, mag_prod(dadd(dabs(v), mm), dmax(dabs(dl), dabs(dh))));
            }
            sum2_add(&slo, &clo, lo), sum2_add(&shi, &chi, hi), sum2_add(&sa, &ca, dmax(dabs(lo), dabs(hi)));
            if (lo != 0 && lo == hi && finite_d(lo)) q = dmin(q, lowbit(lo));
        }
        s_lo[t] = slo, s_hi[t] = shi, s_a[t] = sa, s_q[t] = q, s_ok[t] = ok, s_bad[t] = bad, s_m[t] = sm;
        s_c[0][t] = clo, s_c[1][t] = chi, s_c[2][t] = ca;
        __syncthreads();
        for (int h = BLK / 2; h > 0; h >>= 1) {
            if (t < h) {
                double *sv[3] = {s_lo, s_hi, s_a};
                for (int k = 0; k < 3; k++) { /* TwoSum of the two s, the error into c with both c */
                    double a1 = sv[k][t], a2 = sv[k][t + h], x = dadd(a1, a2);
                    s_c[k][t] = dadd(dadd(s_c[k][t], s_c[k][t + h]), two_sum_err(a1, a2, x));
                    sv[k][t] = x;
                }
                s_q[t] = dmin(s_q[t], s_q[t + h]);
                s_m[t] = dadd(s_m[t], s_m[t + h]);
                s_ok[t] &= s_ok[t + h], s_bad[t] |= s_bad[t + h];
            }
            __syncthreads();
        }
        if (t == 0) {
            double *o = A.part + NMO_GO_LN_PART * row;
            o[0] = s_lo[0], o[1] = s_hi[0], o[2] = s_a[0], o[3] = s_q[0];
            o[4] = s_ok[0], o[5] = s_bad[0], o[6] = pass == 1 ? s_a[0] : s_m[0], o[7] = 0;
            o[8] = s_c[0][0], o[9] = s_c[1][0], o[10] = s_c[2][0], o[11] = 0;
        }
        __syncthreads();
    }
}

/* nmo_fenc_prodk(f, k, fused = 1) for k = 2, 3 finite factors (no ftz: cs = c); 0 when
 * the CPU would flag it or leave the paths transcribed here */
NMO_D int prodk_fused(const ienc *f, int k, double uc, double etac, ienc *r)
{
    for (int i = 0; i < k; i++)
        if (f[i].lo == 0 && f[i].hi == 0) { *r = ienc{0, 0}; return 1; } /* an exact 0 */
    double lo = f[0].lo, hi = f[0].hi, R = dmax(1, dmax(dabs(lo), dabs(hi)));
    int exact = 1;
    for (int i = 1; i < k; i++) {
        double bl = f[i].lo, bh = f[i].hi;
        double p1 = dmul(lo, bl), p2 = dmul(lo, bh), p3 = dmul(hi, bl), p4 = dmul(hi, bh);
        if (exact)
            exact = dfma(lo, bl, -p1) == 0 && dfma(lo, bh, -p2) == 0 && dfma(hi, bl, -p3) == 0 &&
                    dfma(hi, bh, -p4) == 0;
        lo = dmin(dmin(p1, p2), dmin(p3, p4));
        hi = dmax(dmax(p1, p2), dmax(p3, p4));
        R = dmul(R, dmax(1, dmax(dabs(bl), dabs(bh))));
    }
    const int nr = k > 2 ? k - 2 : 0;
    double g = dmul(dmul((double)nr, uc), dadd(1, dmul((double)(2 * nr), uc))); /* nmo_fe_gamma */
    double eta = dmul(dmul(2.0 * nr, etac), R);
    /* nmo_fe_partial_ovf */
    const double mf = 0x1.fffffep127;
    double top = dadd(dmul(R, dadd(1, g)), eta);
    if (dabs(dsub(top, mf)) <= dmul(mf, 0x1p-30) || !(top < mf)) return 0;
    double vlo = dsub(dsub(lo, dmul(dabs(lo), g)), eta), vhi = dadd(dadd(hi, dmul(dabs(hi), g)), eta);
    if (!finite_d(vlo) || !finite_d(vhi)) return 0;
    if (exact && nr == 0) { /* the exact product: directed roundings, no radius */
        *r = ienc{rnd32(vlo, 1), rnd32(vhi, 2)};
        return 1;
    }
    double el = dmul(dmul(dadd(dabs(vlo), eta), (double)(k + 3)), 0x1p-52);
    double eh = dmul(dmul(dadd(dabs(vhi), eta), (double)(k + 3)), 0x1p-52);
    int unc = 0;
    *r = ienc{snap32(1, vlo, el, &unc), snap32(2, vhi, eh, &unc)};
    return !unc && r->lo == r->lo && r->hi == r->hi;
}

/* nmo_fenc_scale_shift of the point x, the scale a, the mean [ml, mh] and the point b */
NMO_D int scale_shift(double x, const ienc &a, double ml, double mh, double b, double uc, double etac, ienc *r)
{
    double dl = dsub(x, mh), dh = dsub(x, ml);
    double p1 = dmul(dl, a.lo), p2 = dmul(dl, a.hi), p3 = dmul(dh, a.lo), p4 = dmul(dh, a.hi);
    double clo = dadd(dmin(dmin(p1, p2), dmin(p3, p4)), b);
    double chi = dadd(dmax(dmax(p1, p2), dmax(p3, p4)), b);
    double Am = dmax(dabs(a.lo), dabs(a.hi)), X = dabs(x), Mv = dmax(dabs(ml), dabs(mh)), B = dabs(b);
    double e0 = dadd(dmul(dmul(uc, dadd(1, dmul(2, uc))), dadd(dadd(dmul(X, Am), B), dmul(dmul(2, Mv), Am))),
                     dmul(4, etac));
    double vlo = dsub(clo, e0), vhi = dadd(chi, e0);
    if (!finite_d(vlo) || !finite_d(vhi)) return 0;
    double e = dadd(dmul(dadd(dmul(dmul(3, dmax(dabs(dl), dabs(dh))), Am), B), 0x1p-52), dmul(e0, 0x1p-50));
    int unc = 0;
    *r = ienc{snap32(0, vlo, e, &unc), snap32(0, vhi, e, &unc)};
    return !unc && r->lo == r->lo && r->hi == r->hi;
}

/* |v| over an enclosure (nmo_mag_abs, no NaN here) */
NMO_D double iabs(const ienc &a) { return dmax(dabs(a.lo), dabs(a.hi)); }

/* nmo_mag_div: the scale of a / b, q = |a/b| max; NO_SCALE at a domain edge */
NMO_D double mag_div(double ma, double q, double mb, const ienc &b)
{
    double bmin = dmin(dabs(b.lo), dabs(b.hi)), bmax = dmax(dabs(b.lo), dabs(b.hi));
    if (!(bmax <= dmul(2, bmin))) return NO_SCALE;
    double num = mag_max(ma, mag_prod(q, mb));
    return num == 0 ? 0 : ddiv(num, bmin);
}

/* refs/norm_common.h norm_affine for the point x, w, b and the row's mean, rstd and
 * s = sqrt(var + eps): y = [*l, *h]; 0 when the host must do it. *mg: y's error scale by
 * the formulas of oracle/engine/fast_priv.h in the CPU's order (nmo_fenc_sub, _prodk,
 * _add, _div, _mul, _hull, _scale_shift), from the statistics' scales mm (mean), rsm,
 * sdm (rstd, s); those carry the row sums' order difference (the host's k_ln_sums in a
 * tree, the CPU in index order), which the caller's rel covers. */
NMO_D int ln_elem(double x, double w, double b, double ml, double mh, double mm, const ienc &rs, double rsm,
                  const ienc &sd, double sdm, double uc, double etac, double *l, double *h, double *mg)
{
    int bad = 0;
    ienc d{rnd32(dadd(x, -mh), 0), rnd32(dadd(x, -ml), 0)}; /* nmo_fenc_sub(x, mean) */
    if (!fin2(d)) return 0;
    const double X = dabs(x), Wm = dabs(w), Bm = dabs(b), dm = dadd(X, mm), D = iabs(d), R = iabs(rs);
    const ienc W{w, w};
    /* direct: prodk(d, rstd, w) + b */
    ienc f3[3] = {d, rs, W}, p;
    if (!prodk_fused(f3, 3, uc, etac, &p)) return 0;
    int z3 = (d.lo == 0 && d.hi == 0) || (rs.lo == 0 && rs.hi == 0) || w == 0; /* prodk's exact 0 */
    double m3 = z3 ? 0
                   : mag_max(mag_max(mag_max(0, mag_prod(mag_prod(dm, R), Wm)), mag_prod(mag_prod(rsm, D), Wm)),
                             mag_prod(mag_prod(Wm, D), R));
    ienc y1{rnd32(dadd(p.lo, b), 0), rnd32(dadd(p.hi, b), 0)};
    double my1 = dadd(m3, Bm);
    /* division: prodk(d / s, w) + b */
    ienc f2[2] = {div2(d, sd, &bad), W};
    if (bad || !fin2(f2[0]) || !prodk_fused(f2, 2, uc, etac, &p)) return 0;
    const double Q = iabs(f2[0]), mq = mag_div(dm, Q, sdm, sd);
    int z2 = (f2[0].lo == 0 && f2[0].hi == 0) || w == 0;
    double m2 = z2 ? 0 : mag_max(mag_max(0, mag_prod(mq, Wm)), mag_prod(Wm, Q));
    y1 = hull2(y1, ienc{rnd32(dadd(p.lo, b), 0), rnd32(dadd(p.hi, b), 0)});
    my1 = mag_max(my1, dadd(m2, Bm));
    /* fused scale and shift: a = hull(w * rstd, w / s) */
    ienc a1 = mul2(W, rs), a2 = div2(W, sd, &bad);
    ienc a = hull2(a1, a2), y2;
    double ma = mag_max(mag_max(mag_prod(Wm, R), mag_prod(Wm, rsm)), mag_div(Wm, iabs(a2), sdm, sd));
    if (bad || !fin2(a) || !scale_shift(x, a, ml, mh, b, uc, etac, &y2)) return 0;
    const double Am = iabs(a), Mv = dmax(dabs(ml), dabs(mh));
    double my2 = dadd(dadd(mag_max(mag_prod(X, Am), mag_prod(X, ma)), mag_max(mag_prod(mm, Am), mag_prod(Mv, ma))), Bm);
    ienc y = hull2(y1, y2);
    *l = y.lo, *h = y.hi;
    *mg = mag_max(my1, my2);
    return fin2(y1) && fin2(y);
}

__global__ void __launch_bounds__(BLK) k_ln_judge(nmo_go_ln_args A)
{
    __shared__ int s_bad[BLK];
    __shared__ unsigned long long s_pass[BLK], s_fail[BLK], s_wmax[BLK], s_worst[BLK];
    __shared__ unsigned s_w[8][BLK];
    const int t = (int)threadIdx.x;
    const int64_t n = A.n;
    /* how far the device's error scale may be from the CPU's, relative: the two row sums
     * of scales in another order (2 (n - 1) 2^-53 each, Jeannerod & Rump 2013, Thm 4.1:
     * nonnegative terms), the first one's error carried into the second's terms, and one
     * rounding per side in each of the <= 40 monotone steps after them (fast_priv.h's
     * formulas: sums, products, max and quotients of nonnegative values): < (4n + 48)
     * 2^-53; twice that */
    const double rel = dmul(NMO_GO_LN_REL_U(n), 0x1p-53); /* tested by nmo_gpu_ln_probe */
    block_tally tot;
    for (int64_t row = blockIdx.x; row < A.rows; row += gridDim.x) {
        if (A.skip[row]) { /* uniform over the block: the host's row */
            if (t == 0) A.roww[row] = 0;
            continue;
        }
        const double ml = A.mean[3 * row], mh = A.mean[3 * row + 1], mm = A.mean[3 * row + 2];
        const double *st = A.stat + 6 * row;
        const ienc rs{st[0], st[1]}, sd{st[2], st[3]};
        row_tally rt;
        for (int64_t j = t; j < n; j += BLK) {
            const int64_t i = row * n + j;
            double l, h, mg;
            int ok = ln_elem(load_in(A.x, A.in_bf16, i), load_in(A.w, A.in_bf16, j), load_in(A.b, A.in_bf16, j), ml,
                             mh, mm, rs, st[4], sd, st[5], A.uc, A.etac, &l, &h, &mg);
            if (ok && A.elem_every > 0 && i % A.elem_every == 0) ok = 0; /* testing: the host's element path */
            if (ok && !rt.judge(A.cand, A.out_bf16, i, l, h, A.max_ulps, mg, rel, A.verd, A.rlo, A.rhi, A.wid))
                continue;
            /* undecided here (a snap, the scale rule, a non-finite value): the element
             * alone to the host, which computes it from the row's statistics */
            unsigned long long slot = at_inc(&A.acc->n_eredo);
            if (slot < (unsigned long long)A.eredo_cap) A.eredo[slot] = i;
            A.wid[i] = 0; /* not in the histogram of the device's widths */
        }
        if (block_any(rt.redo, s_bad)) {
            if (t == 0) A.redo[at_inc(&A.acc->n_redo)] = row, A.roww[row] = 0;
            continue;
        }
        const int anyw = block_any(rt.wide, s_bad);
        if (t == 0) A.roww[row] = (uint8_t)anyw;
        tot.add(rt);
    }
    tot.fold(A.acc, s_pass, s_fail, s_wmax, s_worst, s_w);
}

/* testing: ln_elem on probes (nmo_go_ln_probe) */
__global__ void k_ln_probe(const double *in, double *out, int64_t count, double uc, double etac)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const double *q = in + NMO_GO_LN_PROBE_IN * i;
    double l = 0, h = 0, mg = 0;
    int ok = ln_elem(q[0], q[1], q[2], q[3], q[4], q[5], ienc{q[6], q[7]}, q[8], ienc{q[9], q[10]}, q[11], uc, etac,
                     &l, &h, &mg);
    out[4 * i] = l, out[4 * i + 1] = h, out[4 * i + 2] = mg, out[4 * i + 3] = ok;
}

} // namespace

extern "C" nmo_status nmo_go_ln_probe(const double *in_dev, double *out_dev, int64_t count, double uc, double etac,
                                      nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    int64_t g = (count + BLK - 1) / BLK;
    nmo_launch(k_ln_probe, dim3((int)(g > 0 ? g : 1)), dim3(BLK), 0, st, in_dev, out_dev, count, uc, etac);
    return nmo_gpu_sync_check("gpu oracle: k_ln_probe", err);
}

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
    nmo_launch(k_row_hist, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, a->wid, a->roww,
               a->rows, a->n, a->acc);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(acc_host, a->acc, sizeof(nmo_go_acc), err));
    return nmo_gpu_sync_check("gpu oracle: k_smx", err);
}

extern "C" nmo_status nmo_go_ln_sums(const nmo_go_ln_args *a, int pass, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
#if defined(NMO_HIP_SIM)
    const int64_t gmax = 3;
#else
    const int64_t gmax = 132 * 16;
#endif
    nmo_launch(k_ln_sums, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, *a, pass);
    return nmo_gpu_sync_check("gpu oracle: k_ln_sums", err);
}

extern "C" nmo_status nmo_go_ln_judge(const nmo_go_ln_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    NMO_RETURN_IF_ERR(nmo_gpu_fill_async(a->acc, 0, sizeof(nmo_go_acc), err));
#if defined(NMO_HIP_SIM)
    const int64_t gmax = 3;
#else
    const int64_t gmax = 132 * 16;
#endif
    nmo_launch(k_ln_judge, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, *a);
    nmo_launch(k_row_hist, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, a->wid, a->roww,
               a->rows, a->n, a->acc);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(acc_host, a->acc, sizeof(nmo_go_acc), err));
    return nmo_gpu_sync_check("gpu oracle: k_ln_judge", err);
}
