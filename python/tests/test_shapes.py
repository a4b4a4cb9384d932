"""The problem shape is inferred from the dims for every operator (setup probed, then the
dims verified), at both of its test shapes, with the parameters that move dims."""
import numpy as np
import pytest

import numoracle

OPS = numoracle.ops()


def _shape(s):
    return tuple(int(x) for x in s.split("x"))


@pytest.mark.parametrize("op", list(OPS))
def test_inferred_shape_is_the_generated_one(op):
    info = OPS[op]
    dt = "bf16" if "bf16" in info["dtypes"] else next(iter(info["dtypes"]))
    for shape in info["test_shapes"]:
        inp = numoracle.inputs(op, shape, dt, "gaussian", 1)
        inp = {k: v for k, v in inp.items()
               if not next(t for t in info["inputs"] if t["name"] == k)["source_only"]}
        lo, hi, fl = numoracle.bounds(op, inp, dtype=dt)
        outs = lo if isinstance(lo, dict) else {info["outputs"][0]["name"]: lo}
        rep = numoracle.check(op, inp, outs, dtype=dt)
        assert rep.shape == _shape(shape), (op, shape)
        assert rep.n_fail == 0, (op, shape, rep.to_dict())
        # the same with the shape given
        assert numoracle.check(op, inp, outs, dtype=dt, shape=shape).counts == rep.counts


@pytest.mark.parametrize("op,shape,params", [
    ("group_norm", "2x32x3x3", {"groups": 16}),
    ("group_norm", "2x12x5x21", {"groups": 3}),
    ("conv2d", "2x3x8x9x4x3x3", {"layout": 1, "padding": 0}),
    ("conv2d", "1x4x9x9x2x3x3", {"stride": 2, "dilation": 2}),
    ("batchnorm_inference", "2x6x7x9", {"layout": 1}),
    ("sdpa", "1x8x2x10x6", {"causal": 0}),
    ("cross_entropy", "5x30", {"reduction": 0}),
    ("kl_div", "3x7", {"reduction": 0}),
    ("reduction", "2x3x50", {}),
    ("rms_norm", "2x3x4x33", {}),
])
def test_inferred_shape_with_params(op, shape, params):
    info = OPS[op]
    inp = numoracle.inputs(op, shape, "fp32", "gaussian", 2, params=params)
    inp = {k: v for k, v in inp.items()
           if not next(t for t in info["inputs"] if t["name"] == k)["source_only"]}
    lo, hi, fl = numoracle.bounds(op, inp, params=params)
    outs = lo if isinstance(lo, dict) else {info["outputs"][0]["name"]: lo}
    rep = numoracle.check(op, inp, outs, params=params)
    assert rep.shape == _shape(shape) and rep.n_fail == 0


def test_ambiguous_dims_are_verified():
    """matmul with M = K: the inference must still read N from B, not guess."""
    A = np.ones((8, 8), np.float32)
    B = np.ones((8, 3), np.float32)
    C = np.full((8, 3), 8, np.float32)
    rep = numoracle.check("matmul", {"A": A, "B": B}, C)
    assert rep.shape == (8, 3, 8) and rep.verdict == "PASS"
