"""The package and the CLI agree: same generated inputs (gen), same listings, and on the same
files the same verdict, counts and worst element (check), same bounds (bounds)."""
import json
import os

import numpy as np
import pytest

import numoracle

from conftest import comparable, run_cli, run_command


def test_library_and_version():
    where = numoracle.library_path()
    assert "libnumoracle" in where and where.endswith(")")
    if os.environ.get("NUMORACLE_LIB"):
        assert where.endswith("(NUMORACLE_LIB)")
    assert numoracle.version() == numoracle.__version__
    rc, out, _ = run_cli(["--version"], 0)
    assert out.startswith(f"numoracle {numoracle.version()} ")


def test_ops_match_cli():
    ops = numoracle.ops()
    rc, out, _ = run_cli(["ops"], 0)
    heads = [line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert list(ops) == heads
    r = ops["rms_norm"]
    assert [t["name"] for t in r["inputs"]] == ["x", "w"] and r["outputs"][0]["name"] == "y"
    assert {p["name"]: p["default"] for p in r["params"]} == {"eps": 1e-6, "offset": 0}
    assert "bf16" in r["dtypes"] and r["dtypes"]["bf16"] in out
    assert r["test_shapes"][0] == "3x1025"
    assert [t["optional"] for t in ops["rms_norm_bwd"]["inputs"]] == [False, False, False, True]
    assert ops["kl_div"]["inputs"][2]["source_only"]


def test_candidates_match_cli():
    c = numoracle.candidates("rms_norm")
    rc, out, _ = run_cli(["candidates", "--op", "rms_norm"], 0)
    lines = out.splitlines()
    assert len(c) == len(lines) and c[0]["correct"]
    for cand, line in zip(c, lines):
        assert line.split()[0] == cand["name"]
        assert line.split()[1] == ("correct" if cand["correct"] else "mutant")
    assert any(not x["correct"] for x in c)


def test_plans_match_cli():
    p = numoracle.plans()
    rc, out, _ = run_cli(["plans"], 0)
    assert p and all(f"{x['name']}: " in out for x in p)
    po = numoracle.plans("rms_norm", "fp16")
    rc, out, _ = run_cli(["plans", "--op", "rms_norm", "--dtype", "fp16"], 0)
    for x, line in zip(po, out.splitlines()):
        assert line.split(None, 1) == [x["name"], x["plan"]]


@pytest.mark.parametrize("op,shape,dtype,family,seed", [
    ("rms_norm", "5x33", "bf16", "gaussian", 3),
    ("cross_entropy", "4x17", "fp16", "outlier", 1),   # labels (fp32 values)
    ("rms_norm_bwd", "3x40", "bf16", "shifted", 9),    # a derived input (rstd)
    ("matmul", "3x5x7", "fp8_e4m3", "uniform", 2),
    ("jsd", "2x9", "fp32", "near_degenerate", 4),      # derived inputs from source-only ones
])
def test_inputs_match_cli_gen(tmp_path, op, shape, dtype, family, seed):
    got = numoracle.inputs(op, shape, dtype, family, seed)
    rc, out, _ = run_cli(["gen", "--op", op, "--dtype", dtype, "--shape", shape, "--family", family,
                          "--seed", str(seed), "--out-dir", str(tmp_path)], 0)
    files = {os.path.basename(line.split()[0])[:-4]: line.split()[1] for line in out.splitlines()}
    assert set(files) == set(got)
    for name, arr in got.items():
        assert arr.tobytes() == (tmp_path / f"{name}.bin").read_bytes(), name
    mv = numoracle.inputs(op, shape, dtype, family, seed, like="memoryview")
    assert all(bytes(mv[k].cast("B")) == got[k].tobytes() for k in got)


def _candidate_from_bounds(op, inp, dtype, bump, **kw):
    """Outputs inside R (its low end), and, with bump, some elements set bump values above
    R's high end (FAIL by exactly that many ulps)."""
    lo, hi, fl = numoracle.bounds(op, inp, dtype=dtype, **kw)
    name0 = numoracle.ops()[op]["outputs"][0]["name"]
    outs = lo if isinstance(lo, dict) else {name0: lo}
    his = hi if isinstance(hi, dict) else {name0: hi}
    outs = {k: v.copy() for k, v in outs.items()}
    if bump:
        flat, top = outs[name0].reshape(-1), his[name0].reshape(-1)
        ints = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[flat.dtype.itemsize]
        sign = ints(1) << ints(8 * flat.dtype.itemsize - 1)
        bits, hb = flat.view(ints), top.view(ints).copy()
        hb[hb == sign] = 0  # -0 as +0
        idx = np.arange(0, flat.size, max(1, flat.size // 7))
        neg = (hb[idx] & sign) != 0
        k = ints(bump)
        bits[idx] = np.where(neg, hb[idx] - k, hb[idx] + k)  # bump values up from hi
    return outs


CASES = [
    ("rms_norm", "9x130", "bf16", {}, 0),
    ("rms_norm", "9x130", "bf16", {}, 3),
    ("softmax", "4x77", "fp32", {}, 40),
    ("layer_norm_bwd", "5x48", "fp16", {}, 2),        # three outputs, two optional inputs recomputed
    ("matmul", "6x10x33", "bf16", {}, 1),
    ("cross_entropy", "4x50", "fp32", {"params": {"reduction": 0}}, 5),
    ("group_norm", "2x8x3x5", "bf16", {"params": {"groups": 2}, "plan": "fn=ulp:2"}, 2),
    ("softmax", "4x64", "fp32", {"max_ulps": 1}, 0),  # INCONCLUSIVE
]


@pytest.mark.parametrize("op,shape,dtype,kw,bump", CASES)
def test_check_agrees_with_cli(tmp_path, op, shape, dtype, kw, bump):
    inp = numoracle.inputs(op, shape, dtype, "gaussian", 5, params=kw.get("params"))
    if op in ("layer_norm_bwd",):
        inp = {k: v for k, v in inp.items() if k not in ("mean", "rstd")}
    outs = _candidate_from_bounds(op, inp, dtype, bump, **kw)
    rep = numoracle.check(op, inp, outs, dtype=dtype, **kw)
    assert rep.shape == tuple(int(s) for s in shape.split("x"))
    assert (bump == 0) == (rep.verdict != "FAIL")
    cmd = rep.command(str(tmp_path / "case"))
    rc, js, err = run_command(cmd, str(tmp_path / "r.json"))
    assert rc == {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 3}[rep.verdict], err
    assert js["verdict"] == rep.verdict
    assert js["counts"] == rep.counts
    a, b = comparable(js), comparable(rep.to_dict())
    assert a.get("worst") == b.get("worst")
    assert a == b
    # and the CLI's bounds on the same files are the package's
    args = cmd.split()[2:]
    args = [a for a in args if not a.startswith("file:")][:-1]  # drop --candidate and its value
    for t in numoracle.ops()[op]["inputs"]:  # bounds generates what is not given, unless told
        if t["optional"] and t["name"] not in inp:
            args += ["--recompute", t["name"]]
    rc, out, err = run_cli(["bounds"] + [x.strip("'") for x in args] +
                           ["--lo", str(tmp_path / "lo.bin"), "--hi", str(tmp_path / "hi.bin"),
                            "--flags", str(tmp_path / "fl.bin")])
    assert rc == 0, err
    lo, hi, fl = numoracle.bounds(op, inp, dtype=dtype, **kw)
    los = lo if isinstance(lo, dict) else {"": lo}
    for name, arr in los.items():
        suffix = f".{name}" if name else ""
        assert (tmp_path / f"lo{suffix}.bin").read_bytes() == arr.tobytes()
    his = hi if isinstance(hi, dict) else {"": hi}
    for name, arr in his.items():
        suffix = f".{name}" if name else ""
        assert (tmp_path / f"hi{suffix}.bin").read_bytes() == arr.tobytes()


def test_details_are_consistent():
    inp = numoracle.inputs("rms_norm", "6x40", "fp32", "gaussian", 2)
    outs = _candidate_from_bounds("rms_norm", inp, "fp32", 9)
    rep = numoracle.check("rms_norm", inp, outs, details=True)
    v, lo, hi = rep.verdicts["y"], rep.r_lo["y"], rep.r_hi["y"]
    y = outs["y"].astype(np.float64)
    assert v.shape == lo.shape == hi.shape == (6, 40) and v.dtype == np.uint8
    inside = (lo <= y) & (y <= hi)
    assert np.array_equal(v == numoracle.PASS, inside)  # informative here, so in R <=> PASS
    assert int((v == numoracle.FAIL).sum()) == rep.n_fail == len(rep.failing("y"))
    blo, bhi, _ = numoracle.bounds("rms_norm", inp)
    assert np.array_equal(blo.astype(np.float64), lo) and np.array_equal(bhi.astype(np.float64), hi)
    d = rep.to_dict()
    assert d["worst"]["coords"] == list(np.unravel_index(rep.worst.index, (6, 40)))
    assert json.loads(json.dumps(d)) == d and d["verdict"] == "FAIL"
    with pytest.raises(ValueError):
        numoracle.check("rms_norm", inp, outs).failing()


def test_engines_agree():
    inp = numoracle.inputs("softmax", "3x50", "bf16", "gaussian", 4)
    outs = _candidate_from_bounds("softmax", inp, "bf16", 1)
    a = numoracle.check("softmax", inp, outs, dtype="bf16", engine="auto", details=True)
    b = numoracle.check("softmax", inp, outs, dtype="bf16", engine="certified", details=True)
    assert a.to_dict()["engine"]["mode"] == "fast+escalation" and b.to_dict()["engine"]["mode"] == "certified"
    assert np.array_equal(a.verdicts["y"], b.verdicts["y"]) and a.counts == b.counts
