"""NumPy kernels written here, as a kernel author would: correct ones PASS, mutated ones
(realistic bugs) FAIL. bf16 travels as uint16 bits with dtype="bf16"."""
import numpy as np
import pytest

import numoracle
from numoracle.testing import assert_certified

from conftest import bf16_round, bf16_to_f32, f32_to_bf16

F32 = np.float32


def to_values(a, dtype):
    return bf16_to_f32(a) if dtype == "bf16" else np.asarray(a, dtype=np.float32)


def store(y, dtype):
    """The kernel's final store into the output dtype."""
    return f32_to_bf16(y) if dtype == "bf16" else np.asarray(y, dtype=np.float32)


# ---- rms_norm: y = x * rsqrt(mean(x^2) + eps) * w, in fp32 ---------------------------

def rms_norm_np(x, w, eps, mutant=None):
    x2 = x * x
    if mutant == "acc_bf16":  # the sum of squares accumulated in bf16, left to right
        acc = np.zeros(x.shape[:-1], dtype=F32)
        for j in range(x.shape[-1]):
            acc = bf16_round(acc + x2[..., j])
        ms = (acc / F32(x.shape[-1]))[..., None]
    else:
        ms = np.mean(x2, axis=-1, keepdims=True, dtype=F32)  # pairwise sum in fp32, / N
    r = F32(1) / np.sqrt(ms + F32(eps))
    if mutant == "rstd_bf16":  # the statistic stored narrow between two kernels
        r = bf16_round(r)
    if mutant == "no_weight":
        return x * r
    return x * r * w


@pytest.fixture(scope="module", params=["fp32", "bf16"])
def rms_case(request):
    dt = request.param
    inp = numoracle.inputs("rms_norm", "32x1024", dt, "gaussian", 7)
    return dt, inp, to_values(inp["x"], dt), to_values(inp["w"], dt)


def test_rms_norm_numpy_passes(rms_case):
    dt, inp, x, w = rms_case
    y = store(rms_norm_np(x, w, 1e-6), dt)
    rep = numoracle.check("rms_norm", inp, y, dtype=dt)
    assert rep.verdict == "PASS", rep.to_dict()
    assert (rep.n, rep.n_pass, rep.n_fail) == (32 * 1024, 32 * 1024, 0)
    assert_certified(y, op="rms_norm", inputs=inp, dtype=dt, params={"eps": 1e-6})


@pytest.mark.parametrize("mutant", ["acc_bf16", "no_weight", "rstd_bf16"])
def test_rms_norm_numpy_mutants_fail(rms_case, mutant):
    dt, inp, x, w = rms_case
    y = store(rms_norm_np(x, w, 1e-6, mutant), dt)
    rep = numoracle.check("rms_norm", inp, y, dtype=dt, details=True)
    assert rep.verdict == "FAIL" and rep.n_fail > 0, rep.to_dict()
    bad = rep.failing()
    assert len(bad) == rep.n_fail
    assert rep.worst.verdict == "FAIL" and rep.worst.index in set(int(i) for i in bad)
    with pytest.raises(AssertionError, match="FAIL"):
        assert_certified(y, op="rms_norm", inputs=inp, dtype=dt, reproduce=False)


def test_rms_norm_eps_is_honoured():
    """eps matters when the mean square is tiny: the kernel's eps must be the check's."""
    inp = numoracle.inputs("rms_norm", "16x256", "fp32", "small", 3)
    x, w = inp["x"], inp["w"]
    y = rms_norm_np(x, w, 1e-2).astype(F32)
    assert numoracle.check("rms_norm", inp, y, params={"eps": 1e-2}).verdict == "PASS"
    assert numoracle.check("rms_norm", inp, y).verdict == "FAIL"  # default eps 1e-6


# ---- softmax: y = exp(x - max) / sum exp(x - max) -------------------------------------

def softmax_np(x, mutant=None):
    m = x.max(axis=-1, keepdims=True)
    d = x - m
    # exp in double, rounded once to fp32: within 1 ulp (the default plan allows CUDA's 2)
    e = np.exp(d.astype(np.float64)).astype(F32)
    if mutant == "exp_bf16":  # exponentials stored in bf16 before the sum
        e = bf16_round(e)
    if mutant == "sum_bf16":
        s = np.zeros(x.shape[:-1], dtype=F32)
        for j in range(x.shape[-1]):
            s = bf16_round(s + e[..., j])
        s = s[..., None]
    else:
        s = e.sum(axis=-1, keepdims=True, dtype=F32)
    if mutant == "drop_last":  # an off-by-one in the reduction loop
        s = e[..., :-1].sum(axis=-1, keepdims=True, dtype=F32)
    return e / s


@pytest.fixture(scope="module", params=["fp32", "bf16"])
def sm_case(request):
    dt = request.param
    inp = numoracle.inputs("softmax", "16x1024", dt, "gaussian", 11)
    return dt, inp, to_values(inp["x"], dt)


def test_softmax_numpy_passes(sm_case):
    dt, inp, x = sm_case
    y = store(softmax_np(x), dt)
    rep = numoracle.check("softmax", [inp["x"]], [y], dtype=dt)  # in order, not by name
    assert rep.verdict == "PASS", rep.to_dict()
    assert rep.n_pass == 16 * 1024
    assert_certified(y, op="softmax", inputs=inp, dtype=dt)


@pytest.mark.parametrize("mutant", ["sum_bf16", "drop_last", "exp_bf16"])
def test_softmax_numpy_mutants_fail(sm_case, mutant):
    dt, inp, x = sm_case
    y = store(softmax_np(x, mutant), dt)
    rep = numoracle.check("softmax", inp, y, dtype=dt)
    assert rep.verdict == "FAIL" and rep.n_fail > 0, rep.to_dict()


def test_bf16_as_uint16_roundtrip():
    """bf16 bits in uint16: the values the check sees are the bits' values."""
    inp = numoracle.inputs("softmax", "4x64", "bf16", "uniform", 2)
    assert inp["x"].dtype == np.uint16
    x = bf16_to_f32(inp["x"])
    assert np.all(np.abs(x) <= 1) and np.array_equal(f32_to_bf16(x), inp["x"])
    y = f32_to_bf16(softmax_np(x))
    assert numoracle.check("softmax", inp, y, dtype="bf16").verdict == "PASS"
    # the same bits read as fp16 are other values: the check must see that
    with pytest.raises(numoracle.Error):
        numoracle.check("softmax", inp, y, dtype="fp32")


def test_fp16_numpy_native():
    inp = numoracle.inputs("softmax", "8x128", "fp16", "gaussian", 5)
    assert inp["x"].dtype == np.float16
    y = softmax_np(inp["x"].astype(F32)).astype(np.float16)
    assert numoracle.check("softmax", inp, y).verdict == "PASS"  # dtype from the arrays
    y[0, 0] = np.float16(0.5)
    assert numoracle.check("softmax", inp, y).verdict == "FAIL"
