"""CPU emulations of the Liger-Kernel arithmetic behind slice 3's plan changes
(campaign_liger_s3.json), judged by numoracle: each emulation is PASSed (never FAILed)
under the slice-3 plan, FAILed somewhere under the plan slice 2 declared, and a mutant of
it is FAILed under the slice-3 plan. The emulations follow the kernels' source (Liger at
ead96b61) and Triton's lowering as read there; the evidence for the real kernels is the
H200 campaign (results/triton-h200/), this only pins the plans' meaning.

    PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so \
        /usr/bin/python3 -m pytest -q papers/sound-oracles/triton/test_liger_plans.py
"""
import numpy as np
import pytest

numoracle = pytest.importorskip("numoracle")

SEEDS = (1, 2, 3)
FAMS = ("gaussian", "small", "shifted", "large", "near_degenerate", "outlier")


def rn_bf16(v):
    """Round float64 values to bf16 (RNE), as float64 (normal range)."""
    v = np.asarray(v, dtype=np.float64)
    m, e = np.frexp(v)
    return np.ldexp(np.rint(m * 256.0) / 256.0, e)


def bf16_bits(v):
    return (np.asarray(v, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_bf16(a):
    return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def rn32(v):
    return np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64)


def verdicts(op, ins, outs, dt, plan, params=None):
    return numoracle.check(op, ins, outs, dtype=dt, plan=plan, params=params or {}).verdict


def tl_sum(t, threads, add, zero):
    """tl.sum of a vector over `threads` lanes: runs of ceil(n/threads) consecutive terms
    folded in order from zero, then a pairwise tree over the partials; add: the rounded
    addition (sum=blocked:n/threads:log2(threads))."""
    n = t.shape[-1]
    r = -(-n // threads)
    parts = []
    for k in range(threads):
        s = zero
        for j in range(k * r, min(n, (k + 1) * r)):
            s = add(s, t[j])
        parts.append(s)
    while len(parts) > 1:
        parts = [add(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
    return parts[0]


def tl_sum_bf16(t, threads=128):
    """tl.sum of a bf16 vector in bf16 (sum=blocked:n/128:8)."""
    return tl_sum(t, threads, lambda a, b: rn_bf16(a + b), 0.0)


def tl_sum32(t, threads):
    """tl.sum of an fp32 vector (numpy float32 additions: IEEE fp32)."""
    return tl_sum(np.asarray(t, dtype=np.float32), threads, lambda a, b: np.float32(a + b), np.float32(0))


def geometry_fails(op, shape, params, plan, kernel, mutant, fams):
    """(FAILs of the emulation under plan, of the mutant under plan, of the mutant under
    preset=liger, i.e. sum=any) over fams x SEEDS."""
    f_new = f_mut = f_mut_any = 0
    for fam in fams:
        for s in SEEDS:
            ins = numoracle.inputs(op, shape, "fp32", fam, s, plan=plan, params=params)
            f_new += verdicts(op, ins, kernel(ins), "fp32", plan, params) == "FAIL"
            bad = mutant(ins)
            f_mut += verdicts(op, ins, bad, "fp32", plan, params) == "FAIL"
            f_mut_any += verdicts(op, ins, bad, "fp32", "preset=liger", params) == "FAIL"
    return f_new, f_mut, f_mut_any


def campaign(op, shape, dt, kernel, new, old, mutant, params=None, fams=FAMS):
    """(FAILs under new, FAILs under old, FAILs of the mutant under new) over the grid."""
    f_new = f_old = f_mut = 0
    for fam in fams:
        for s in SEEDS:
            ins = numoracle.inputs(op, shape, dt, fam, s, plan=new, params=params or {})
            outs = kernel(ins, False)
            f_new += verdicts(op, ins, outs, dt, new, params) == "FAIL"
            f_old += verdicts(op, ins, outs, dt, old[0], old[1]) == "FAIL"
            f_mut += verdicts(op, ins, mutant(ins), dt, new, params) == "FAIL"
    return f_new, f_old, f_mut


# ---- softmax_bwd bf16: the whole kernel is bf16 arithmetic --------------------------------

def softmax_bwd_bf16(ins, mutate=False):
    y, dy = from_bf16(ins["y"]), from_bf16(ins["dy"])
    out = np.empty_like(y)
    for i in range(y.shape[0]):
        prod = rn_bf16(dy[i] * y[i])                 # dy * y: bf16 * bf16 -> bf16
        dot = tl_sum_bf16(prod)                      # tl.sum of bf16 returns bf16
        if mutate:
            dot = rn_bf16(dot * 1.0625)
        out[i] = rn_bf16(y[i] * rn_bf16(dy[i] - dot))
    return {"dx": bf16_bits(out)}


def test_softmax_bwd_bf16():
    new = "fn=triton compute=bf16 acc=bf16 inter=bf16 sum=blocked:n/128:8 max_ulps=64"
    fn, fo, fm = campaign("softmax_bwd", "4x1000", "bf16", softmax_bwd_bf16, new, ("fn=triton", None),
                          lambda ins: softmax_bwd_bf16(ins, True))
    print(f"softmax_bwd bf16: {fn} FAIL under slice 3, {fo} under slice 2, mutant {fm}")
    assert fn == 0 and fo > 0 and fm > 0


# ---- rope bf16: bf16 products and sums, one product possibly contracted --------------------

def rope_bf16(ins, mutate=False, seed=0):
    x, cos, sin = from_bf16(ins["x"]), from_bf16(ins["cos"]), from_bf16(ins["sin"])
    h = x.shape[-1] // 2
    c, s = cos[..., :h], sin[..., :h]                # Liger reads the first half of cos/sin
    x1, x2 = x[..., :h], x[..., h:]
    rng = np.random.default_rng(seed)

    def combo(a, b, c_, d, sign):                    # a*b (+/-) c_*d in bf16, FMA or not
        p, q = rn_bf16(a * b), rn_bf16(c_ * d)
        plain = rn_bf16(p + sign * q)
        fma1 = rn_bf16(a * b + sign * q)             # fma.rn.bf16(a, b, +-q): one rounding
        fma2 = rn_bf16(sign * c_ * d + p)
        pick = rng.integers(0, 3, size=np.shape(plain))
        return np.where(pick == 0, plain, np.where(pick == 1, fma1, fma2))

    sgn = 1.0 if mutate else -1.0
    y1 = combo(x1, c, x2, s, sgn)
    y2 = combo(x2, c, x1, s, 1.0)
    return {"y": bf16_bits(np.concatenate([y1, y2], axis=-1))}


def test_rope_bf16():
    new = "fn=triton compute=bf16 inter=bf16"
    fn, fo, fm = campaign("rope", "1x4x8x64", "bf16", rope_bf16, new, ("fn=triton inter=bf16", None),
                          lambda ins: rope_bf16(ins, True))
    print(f"rope bf16: {fn} FAIL under slice 3, {fo} under slice 2 (inter=bf16), mutant {fm}")
    assert fn == 0 and fo > 0 and fm > 0


# ---- group_norm: one-pass variance ---------------------------------------------------------

def group_norm_liger(ins, dt, groups, eps, mutate=False):
    """Liger's _group_norm_forward_kernel: s = sum x, sq = sum x*x (bf16 inputs: bf16
    products and tl.sum in bf16, then fp32), m = s/L, var = sq/L - m*m, rstd =
    rsqrt(var + eps) (rounded rsqrt), y = (x - m) * rstd * w + b in fp32, stored."""
    x = from_bf16(ins["x"]) if dt == "bf16" else ins["x"].astype(np.float64)
    w = from_bf16(ins["w"]) if dt == "bf16" else ins["w"].astype(np.float64)
    b = from_bf16(ins["b"]) if dt == "bf16" else ins["b"].astype(np.float64)
    N, C = x.shape[:2]
    cg = C // groups
    y = np.empty_like(x)
    for n in range(N):
        for g in range(groups):
            blk = x[n, g * cg:(g + 1) * cg].ravel()
            L = blk.size
            if dt == "bf16":
                s, sq = tl_sum_bf16(blk), tl_sum_bf16(rn_bf16(blk * blk))
            else:
                s = sq = 0.0
                for v in blk:
                    s, sq = rn32(s + v), rn32(sq + rn32(v * v))
            m = rn32(s / L)
            var = rn32(rn32(sq / L) - rn32(m * m))
            if mutate:
                var = rn32(var * 1.25)
            rstd = rn32(1.0 / np.sqrt(rn32(var + rn32(eps)))) if var + eps > 0 else np.nan
            ch = np.repeat(np.arange(g * cg, (g + 1) * cg), blk.size // cg)
            yy = rn32(rn32(rn32(rn32(blk - m) * rstd) * w[ch]) + b[ch])
            y[n, g * cg:(g + 1) * cg] = yy.reshape(cg, *x.shape[2:])
    return {"y": bf16_bits(y) if dt == "bf16" else y.astype(np.float32)}


@pytest.mark.parametrize("dt,new", [("fp32", "fn=triton"), ("bf16", "fn=triton acc=bf16 sum=blocked:n/128:8 max_ulps=32")])
def test_group_norm_one_pass(dt, new):
    p1 = {"groups": 4, "eps": 1e-5, "onepass": 1}
    fn, fo, fm = campaign("group_norm", "2x8x4x4", dt, lambda ins, mu: group_norm_liger(ins, dt, 4, 1e-5, mu),
                          new, ("preset=liger", {"groups": 4, "eps": 1e-5}),
                          lambda ins: group_norm_liger(ins, dt, 4, 1e-5, True), params=p1)
    print(f"group_norm {dt}: {fn} FAIL under slice 3 (onepass=1), {fo} under slice 2 (two-pass), mutant {fm}")
    assert fn == 0 and fo > 0 and fm > 0


# ---- cross_entropy_bwd fp32: tl.exp flushes subnormal results (ex2.approx.ftz) -------------

def ce_bwd_ftz(ins, mutate=False):
    """dx = (softmax(x) - onehot(label)) / N (N: non-ignored rows) with exp(x - m) flushed to 0 below 2^-126."""
    x = ins["x"].astype(np.float64)
    lab = ins["labels"].astype(np.int64)
    N = int(np.sum(lab != -100))                   # mean over the non-ignored rows
    out = np.zeros_like(x)                         # ignored rows (label -100): dx = 0
    for i in range(x.shape[0]):
        if lab[i] == -100:
            continue
        m = x[i].max()
        e = rn32(np.exp(rn32(x[i] - m)))
        e[e < 2.0 ** -126] = 0.0                   # ex2.approx.ftz.f32
        d = rn32(np.sum(e))
        p = rn32(e / d)
        g = rn32(p / N) if not mutate else rn32(p / (N + 1))
        g[lab[i]] = rn32(rn32(p[lab[i]] - 1.0) / N)
        out[i] = g
    return {"dx": out.astype(np.float32)}


def test_cross_entropy_bwd_exp_flush():
    fn, fo, fm = campaign("cross_entropy_bwd", "8x1000", "fp32", ce_bwd_ftz, "fn=triton", ("fn=cuda", None),
                          lambda ins: ce_bwd_ftz(ins, True), fams=("large",))
    print(f"cross_entropy_bwd fp32 large: {fn} FAIL under fn=triton (flush), {fo} under fn=cuda, mutant {fm}")
    assert fn == 0 and fo > 0 and fm > 0


# ---- rms_norm_bwd, llama mode: m in fp32, dW terms in bf16 (real fault 7d54ff88) ----------

def rms_bwd_llama_block(ins, fault=False, nsm=132, brow=16):
    """Liger's _block_rms_norm_backward_kernel in llama mode (ead96b61): m = dY * W_row with
    W_row promoted to fp32 (an exact fp32 product of two bf16 values), S and dX in fp32; dW
    terms dY * (X*rstd).to(bf16) in bf16; program p folds the 16-row blocks p, p + nsm, ...
    into an fp32 dW_row, block by block (tl.sum in fp32; before #950 in bf16: a pairwise
    tree, each addition rounded to bf16); _dW.sum(0) adds the nsm partials in fp32."""
    dy, x, w = from_bf16(ins["dy"]), from_bf16(ins["x"]), from_bf16(ins["w"])
    f32 = np.float32
    rstd = ins["rstd"].astype(f32)
    n = x.shape[1]
    m = (dy * w).astype(f32)
    xf = x.astype(f32)
    s = (m * xf).sum(axis=1, dtype=f32)
    r = rstd[:, None]
    dx = r * m + r * ((f32(-(1.0 / n)) * (rstd * rstd * s))[:, None] * xf)
    t = rn_bf16(dy * rn_bf16((xf * r).astype(np.float64)))
    parts = np.zeros((nsm, n), f32)
    for b in range(-(-x.shape[0] // brow)):
        blk = t[b * brow:(b + 1) * brow]
        if fault:
            v = list(blk)
            while len(v) > 1:
                v = [rn_bf16(v[i] + v[i + 1]) for i in range(0, len(v), 2)]
            p = v[0].astype(f32)
        else:
            p = blk.astype(f32).sum(axis=0, dtype=f32)
        parts[b % nsm] = parts[b % nsm] + p
    dw = parts.sum(axis=0, dtype=f32)
    return {"dx": bf16_bits(rn_bf16(dx.astype(np.float64))), "dw": bf16_bits(rn_bf16(dw.astype(np.float64)))}


def test_rms_norm_bwd_llama_m_in_fp32():
    """dx with m = dy*w kept in fp32 is PASSed under inter=bf16 (the model's hull of m
    rounded to inter or not, refs/rms_norm_bwd.c); with m only rounded to bf16 (the model
    before session 6) the cancellation in dx makes it FAIL by thousands of ulps."""
    p = {"eps": 1e-6}
    for fam in ("gaussian", "large", "shifted"):
        ins = numoracle.inputs("rms_norm_bwd", "64x16", "bf16", fam, 1, plan="inter=bf16", params=p)
        out = rms_bwd_llama_block(ins)
        assert verdicts("rms_norm_bwd", ins, out, "bf16", "inter=bf16", p) == "PASS"
        # a mutant: dx scaled by (1 + 2^-7), two bf16 rounding steps off
        bad = dict(out)
        dxm = rn_bf16(from_bf16(out["dx"]) * (1 + 2.0 ** -7))
        bad["dx"] = bf16_bits(dxm)
        assert verdicts("rms_norm_bwd", ins, bad, "bf16", "inter=bf16", p) == "FAIL"


def test_rms_norm_bwd_llama_block_dw_fault():
    """32768 rows of 16 (the block kernel): the fixed kernel PASSes under the fault
    config's plan; the before-#950 bf16 block sums FAIL it; under sum=any (no geometry) the
    fault is not detected (the 32768-term bound is wider than a bf16 ulp of dw)."""
    p = {"eps": 1e-6}
    plan = "inter=bf16 sum=blocked:n/132+16:0:132"
    ins = numoracle.inputs("rms_norm_bwd", "32768x16", "bf16", "gaussian", 1, plan=plan, params=p)
    assert verdicts("rms_norm_bwd", ins, rms_bwd_llama_block(ins), "bf16", plan, p) == "PASS"
    bad = rms_bwd_llama_block(ins, fault=True)
    assert verdicts("rms_norm_bwd", ins, bad, "bf16", plan, p) == "FAIL"
    assert verdicts("rms_norm_bwd", ins, bad, "bf16", "inter=bf16", p) != "FAIL"


# ---- kl_div's loss: Liger's reduction geometry (campaign_liger_s5.json) --------------------

KL_PLAN = "preset=liger sum=blocked:n/256:8:4"


def kl_div_liger(ins, drop_first=False):
    """_kldiv_kernel_forward (log_target=False) then torch's batchmean: per row, in fp32,
    l_j = y_true * (log(max(y_true, eps)) - y); tl.sum over BLOCK = next_pow2(V) lanes with
    4 warps (V <= 2048) or 8 warps: runs of ceil(V/T) terms per thread (T = 128 or 256)
    folded in order, the T partials by a pairwise tree; the rows summed by torch in order,
    then / BT. drop_first: the mutant range(1, n_cols, BLOCK_SIZE) (column 0 dropped)."""
    y = np.asarray(ins["input"], dtype=np.float32)
    t = np.asarray(ins["target"], dtype=np.float32)
    bt, v = y.shape
    eps = np.float32(1e-10)
    lg = np.log(np.maximum(t, eps)).astype(np.float32)    # __nv_logf: within 1 ulp (probe)
    l = (t * (lg - y).astype(np.float32)).astype(np.float32)
    if drop_first:
        l[:, 0] = 0
    threads = 128 if v <= 2048 else 256
    total = np.float32(0)
    for i in range(bt):
        total = np.float32(total + tl_sum32(l[i], threads))
    return {"loss": np.array([np.float32(total / np.float32(bt))], dtype=np.float32)}


@pytest.mark.parametrize("shape", ["4x1000", "3x4096"])
def test_kl_div_liger_geometry(shape):
    """Liger's kl_div loss PASSes under its declared geometry (blocked:n/256:8:4 covers one
    block per row of 128 or 256 threads, runs of <= 8 or 16, a tree of depth 7 or 8, <= 4
    rows summed by torch); the dropped-column mutant FAILs there on some input, and under
    sum=any (slice 4's plan) it is never FAILed: R is ten times wider."""
    f_new, f_mut, f_mut_any = geometry_fails("kl_div", shape, {"reduction": 3, "log_target": 0}, KL_PLAN,
                                             kl_div_liger, lambda ins: kl_div_liger(ins, drop_first=True),
                                             ("gaussian", "small", "shifted"))
    assert f_new == 0
    assert f_mut > 0
    assert f_mut_any == 0


# ---- cross_entropy_bwd fp32: Liger's one-block rows (slice 6) ----------------------------

CE_PLAN = "preset=liger sum=blocked:n/1024:10"


def ce_bwd_liger(ins, fp16_fwd=False):
    """liger_cross_entropy_kernel's gradient (ead96b61, no smoothing, mean): one program per
    row, BLOCK = next_pow2(V) <= 32768 lanes, 32 warps (1024 threads, Hopper): m = max x,
    d = 0 * exp2(..) + tl.sum(exp2(RN(RN(x - m) log2 e))) (runs of ceil(V/1024) terms a
    thread, then a pairwise tree of depth 10), dx = RN(RN(e/d)/N), dx_y = RN(RN(p_y - 1)/N).
    fp16_fwd: the mutant that loads the forward loop's block as fp16 (m and d from the
    logits rounded to fp16; the gradient loop still reads fp32)."""
    x = np.asarray(ins["x"], dtype=np.float32)
    lab = ins["labels"].astype(np.int64)
    n = np.float32(np.sum(lab != -100))
    l2e = np.float32(1.4426950408889634)
    out = np.zeros_like(x)
    bt = x.shape[0]
    for i in range(bt):
        if lab[i] == -100:
            continue
        xf = x[i].astype(np.float16).astype(np.float32) if fp16_fwd else x[i]
        m = xf.max()
        d = tl_sum32(np.exp2((xf - m) * l2e).astype(np.float32), 1024)
        p = (np.exp2((x[i] - m) * l2e).astype(np.float32) / d).astype(np.float32)
        g = (p / n).astype(np.float32)
        g[lab[i]] = np.float32(np.float32(p[lab[i]] - np.float32(1)) / n)
        out[i] = g
    return {"dx": out}


@pytest.mark.parametrize("shape", ["8x1000", "5x4096"])
def test_cross_entropy_bwd_liger_geometry(shape):
    """Liger's cross_entropy gradient PASSes under its one-block geometry
    (sum=blocked:n/1024:10: 1024 threads, runs of ceil(V/1024), a tree of depth 10); the
    fp16-forward mutant (slice 4's G-cross_entropy_bwd-099a9757, inside R under sum=any)
    FAILs there on some input, and not under sum=any."""
    f_new, f_mut, f_mut_any = geometry_fails("cross_entropy_bwd", shape, {"reduction": 1, "ignore_index": -100},
                                             CE_PLAN, ce_bwd_liger, lambda ins: ce_bwd_liger(ins, fp16_fwd=True),
                                             ("gaussian", "small"))
    print(f"cross_entropy_bwd {shape}: emulation {f_new} FAIL, fp16-forward mutant {f_mut} FAIL under the "
          f"geometry, {f_mut_any} under sum=any")
    assert f_new == 0
    assert f_mut > 0
    assert f_mut_any == 0
