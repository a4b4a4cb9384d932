"""Unit tests of the Triton mutation engine, the baselines and the report's definitions,
on source text and synthetic journals (no Triton, PyTorch or GPU needed).

    /usr/bin/python3 -m pytest -q papers/sound-oracles/triton/test_tmut.py
"""

import ast
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks  # noqa: E402
import report  # noqa: E402
import tmut  # noqa: E402

SRC = '''import triton
import triton.language as tl

EPS_HOST = 1e-6  # module level: not kernel code


def host_helper(x, n):
    return x + n * 2


@triton.jit
def _kernel(Y_ptr, X_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    """docstring: y = x / sqrt(mean(x^2) + eps) - never mutated"""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    x = tl.load(X_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.max(x, axis=0)
    x = x - m
    s = tl.sum(x * x, axis=0) / n_cols
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    acc += x
    y = x / tl.sqrt(s + eps)
    tl.store(Y_ptr + row * n_cols + offs, y, mask=mask)


@triton.jit(do_not_specialize=["n"])
def _other(A_ptr, n):
    a = tl.load(A_ptr).cast(tl.float32)
    tl.store(A_ptr, (a * 0.5).cast(a.dtype))
'''


def muts(**kw):
    return tmut.generate(SRC, "demo", "demo.py", **kw)


def test_fnv1a32_known_values():
    # FNV-1a 32-bit offset basis and the published value for "a"
    assert tmut.fnv1a32(b"") == 0x811C9DC5
    assert tmut.fnv1a32(b"a") == 0xE40C292C


def test_only_jit_functions_are_found():
    names = [f.name for f in tmut.jit_functions(SRC)]
    assert names == ["_kernel", "_other"]


def test_edits_stay_inside_jit_bodies():
    ms = muts()
    assert ms, "no mutants generated"
    kernel_lines = set()
    for fn in tmut.jit_functions(SRC):
        body = tmut._body(fn)
        kernel_lines |= set(range(body[0].lineno, fn.end_lineno + 1))
    src_lines = SRC.splitlines()
    for m in ms:
        ast.parse(m.source)  # every mutant is a program
        new = m.source.splitlines()
        # the text before the first kernel body and the helper are unchanged
        assert "def host_helper(x, n):\n    return x + n * 2" in m.source
        assert "EPS_HOST = 1e-6" in m.source
        assert '"""docstring: y = x / sqrt(mean(x^2) + eps) - never mutated"""' in m.source
        changed = [i + 1 for i, (a, b) in enumerate(zip(src_lines, new)) if a != b]
        assert len(new) == len(src_lines)
        assert changed and all(ln in kernel_lines for ln in changed), (m.id, m.desc, changed)


def test_every_operator_fires():
    got = {m.mop for m in muts()}
    assert got == set(tmut.MUTATION_OPERATORS)


def by_desc(ms, text):
    return [m for m in ms if text in m.desc]


def test_specific_edits():
    ms = muts()
    src = {m.desc: m.source for m in ms}
    # boundary: < -> <= on the mask
    assert any("mask = offs <= n_cols" in m.source for m in by_desc(ms, "'<' -> '<='"))
    # max subtraction deleted / dropped
    assert any("    pass\n    s = tl.sum" in m.source for m in by_desc(ms, "delete: x = x - m"))
    assert any("x = (x)\n" in m.source for m in by_desc(ms, "drop the right operand of '-': m"))
    # reductions swapped and axis changed
    assert any("m = tl.sum(x, axis=0)" in m.source for m in by_desc(ms, "tl.max -> tl.sum"))
    assert any("tl.max(x, axis=1)" in m.source for m in by_desc(ms, "axis=0 -> axis=1"))
    # casts removed or narrowed
    assert any("other=0.0))\n" in m.source or "other=0.0))" in m.source for m in by_desc(ms, "drop .to(tl.float32)"))
    assert any(".to(tl.bfloat16)" in m.source for m in by_desc(ms, ".to(tl.float32) -> .to(tl.bfloat16)"))
    assert any("dtype=tl.float16" in m.source for m in by_desc(ms, "dtype=tl.float32 -> tl.float16"))
    # mask dropped from the store, other changed on the load
    assert any("tl.store(Y_ptr + row * n_cols + offs, y)\n" in m.source for m in by_desc(ms, "tl.store without mask"))
    assert any("other=1.0" in m.source for m in by_desc(ms, "other=0.0 -> 1.0"))
    # eps scaled; the augmented assignment inverted; offsets shifted
    assert any("(eps * 10.0)" in m.source for m in by_desc(ms, "eps -> eps * 10.0"))
    assert any("acc -= x" in m.source for m in by_desc(ms, "'+=' -> '-='"))
    assert any("tl.load((X_ptr + row * n_cols + offs) + 1" in m.source for m in by_desc(ms, "offset"))
    # constants: 0.5 halved/doubled in _other, tl.arange(0, ...) start moved
    assert any("a * 1.0" in m.source for m in by_desc(ms, "0.5 -> 1.0"))
    assert any("tl.arange(1, BLOCK_SIZE)" in m.source for m in by_desc(ms, "0 -> 1"))
    # .cast(tl.float32) removed / narrowed, .cast(other.dtype) removed
    assert any("a = (tl.load(A_ptr))\n" in m.source for m in by_desc(ms, "drop .cast(tl.float32)"))
    assert any(".cast(tl.float16)" in m.source for m in by_desc(ms, ".cast(tl.float32) -> .cast(tl.float16)"))
    assert any("tl.store(A_ptr, (a * 0.5))\n" in m.source for m in by_desc(ms, "drop .cast(a.dtype)"))
    assert src  # keeps flake quiet


def test_no_edits_of_axis_or_unary_minus_as_binary():
    for m in muts(mops=["cp"]):
        assert "axis=1" not in m.source.replace(SRC, "")  # axis is red's, not cp's
    # "-(x)" style unary minus is no BinOp: aor never produces a stray operator
    src = SRC.replace("y = x / tl.sqrt(s + eps)", "y = -x / tl.sqrt(s + eps)")
    for m in tmut.generate(src, "demo", "demo.py", mops=["aor"]):
        ast.parse(m.source)


def test_ids_are_stable_and_sampling_is_by_id():
    a, b = muts(), muts()
    assert [m.id for m in a] == [m.id for m in b]
    assert len({m.id for m in a}) == len(a)
    s = tmut.sample(a, 5)
    assert [m.id for m in s] == sorted(m.id for m in a)[:5]
    assert tmut.sample(a, 0) == sorted(a, key=lambda m: m.id)
    # an edit's id depends on the edit, not on the other mutants
    only = tmut.generate(SRC, "demo", "demo.py", functions=["_other"])
    assert {m.id for m in only} <= {m.id for m in a}


def test_functions_filter_and_unknown_name():
    only = tmut.generate(SRC, "demo", "demo.py", functions=["_other"])
    assert only and all(m.func == "_other" for m in only)
    with pytest.raises(ValueError, match="no @triton.jit function named _nope"):
        tmut.generate(SRC, "demo", "demo.py", functions=["_nope"])


def test_diff_is_the_edit():
    m = by_desc(muts(), "'<' -> '<='")[0]
    assert "-    mask = offs < n_cols" in m.diff and "+    mask = offs <= n_cols" in m.diff


def test_null_mutant_is_the_source():
    n = tmut.null_mutant(SRC, "demo", "demo.py")
    assert n.source == SRC and n.mop == "null"


# ---- baselines ------------------------------------------------------------------------

def test_round_to_bf16_rne():
    x = np.array([1.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -8 + 2 ** -20, -3.0, np.inf])
    r = checks.round_to(x, "bf16")
    # ties to even: 1 + 2^-8 -> 1, 1 + 3*2^-8 -> 1 + 2^-6; above the tie rounds up
    assert list(r) == [1.0, 1.0, 1.0 + 2 ** -6, 1.0 + 2 ** -7, -3.0, np.inf]


def test_torch_rule_and_nan():
    ref = np.array([1.0, 2.0, np.nan])
    t = checks.Tensor("add", "fp32", "fp32", ref[:2], {}, {}, 2)
    assert t.judge("torch", np.array([1.0 + 1e-6, 2.0])) == "P"
    assert t.judge("torch", np.array([1.0 + 1e-4, 2.0])) == "F"
    t2 = checks.Tensor("add", "fp32", "fp32", ref, {}, {}, 3)
    assert t2.judge("torch", np.array([1.0, 2.0, np.nan])) == "F"  # equal_nan=False
    assert t2.judge("hipdnn", np.array([1.0, 2.0, np.nan])) == "P"  # non-finite agree in kind


def test_hipdnn_table_is_read_from_the_c_source():
    assert checks.hipdnn_tol("rms_norm", "bf16") == (1e-2, "layernorm")
    assert checks.hipdnn_tol("softmax", "fp32")[1] == "reduction"
    assert checks.hipdnn_tol("swiglu", "fp16") == (1e-3, "pointwise")


# ---- report definitions ---------------------------------------------------------------

def _cfg():
    return {"name": "t", "hash": "h", "operators": [{"op": "softmax", "why": "w", "plans": {}}]}


def _run(role, cls, fam, v, eff=False, mid=None, status="ok"):
    d = {"t": "run", "op": "softmax", "role": role, "cls": cls, "family": fam, "dtype": "fp32", "shape": "4x8",
         "seed": 1, "status": status, "v": v}
    if role == "correct":
        d.update(phase="eval", id=f"eval|{fam}")
    else:
        d.update(phase="mutant", mid=mid, eff=eff, id=f"mut|{fam}|{mid}")
    return d


def test_detection_needs_a_passing_base_and_inconclusive_never_passes():
    L = [{"t": "header", "hash": "h", "provenance": {}},
         {"t": "mutant", "mid": "G-a", "op": "softmax", "mop": "aor", "file": "f", "line": 1, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mutant", "mid": "G-b", "op": "softmax", "mop": "aor", "file": "f", "line": 2, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mstatus", "mid": "G-a", "status": "ok"}, {"t": "mstatus", "mid": "G-b", "status": "ok"},
         # base PASSes numoracle on gaussian, is INCONCLUSIVE on small
         _run("correct", "main", "gaussian", "PPPPPPP"), _run("correct", "main", "small", "IPPPPPP"),
         _run("mutant", "main", "gaussian", "FFPPPPP", True, "G-a"),  # detected by numoracle and torch
         _run("mutant", "main", "small", "FFFPPPP", True, "G-b"),     # numoracle: base INCONCLUSIVE -> no
         ]
    rep = report.aggregate(_cfg(), L)
    d = rep["detection_main"]
    assert d["effective"] == 2
    assert d["detected"]["numoracle"] == 1 and d["detected"]["torch"] == 2 and d["detected"]["vllm"] == 1
    assert rep["numoracle_inconclusive"]["correct"]["main"] == 1
    assert rep["false_alarms"]["correct"]["numoracle"]["main"] == 0


def test_crash_and_nondet_and_not_effective():
    L = [{"t": "header", "hash": "h", "provenance": {}},
         {"t": "mutant", "mid": "G-c", "op": "softmax", "mop": "idx", "file": "f", "line": 1, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mutant", "mid": "G-d", "op": "softmax", "mop": "cp", "file": "f", "line": 1, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mutant", "mid": "G-e", "op": "softmax", "mop": "cp", "file": "f", "line": 1, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mstatus", "mid": "G-c", "status": "ok"}, {"t": "mstatus", "mid": "G-d", "status": "ok"},
         {"t": "mstatus", "mid": "G-e", "status": "stillborn", "msg": "CompilationError"},
         _run("correct", "main", "gaussian", "FPPPPPP"),
         _run("mutant", "main", "gaussian", "FFFFFFF", True, "G-c", status="crash"),
         _run("mutant", "main", "gaussian", "PPPPPPP", False, "G-d")]
    rep = report.aggregate(_cfg(), L)
    st = {m["id"]: m["state"] for m in rep["mutant_list"]}
    assert st == {"G-c": "crash", "G-d": "never_effective", "G-e": "stillborn"}
    # a FAIL of numoracle on the published kernel is counted and names the operator
    assert rep["false_alarms"]["correct"]["numoracle"]["main"] == 1
    assert rep["operators_published_kernel_outside_plan"] == {"softmax": ["fp32"]}


# ---- behaviour-preserving variants (bp) ---------------------------------------------------

def test_bp_is_opt_in_and_commutes_value_arithmetic_only():
    default = muts()
    assert all(m.mop != "bp" and m.id.startswith("G-") for m in default)
    bp = muts(mops=("bp",))
    assert bp and all(m.mop == "bp" and m.id.startswith("B-") for m in bp)
    descs = [m.desc for m in bp]
    assert "commute '*': x * x" in descs
    assert any(d.startswith("commute '+': s") for d in descs)
    # pointer arithmetic (X_ptr + ...) is left alone; '-' and '/' do not commute
    assert not any("ptr" in d.lower() for d in descs)
    assert not any(d.startswith(("commute '-'", "commute '/'")) for d in descs)
    for m in bp:
        ast.parse(m.source)
        assert "(x) * (x)" in m.source or "* (" in m.source or "+ (" in m.source
    # opting in does not change the ids of the generated mutants
    both = muts(mops=tuple(tmut.MUTATION_OPERATORS) + ("bp",))
    assert {m.id for m in both if m.mop != "bp"} == {m.id for m in default}


def test_bp_false_alarms_are_counted_apart():
    L = [{"t": "header", "hash": "h", "provenance": {}},
         {"t": "mutant", "mid": "B-x", "op": "softmax", "mop": "bp", "file": "f", "line": 1, "col": 1, "func": "k",
          "desc": "d", "diff": ""},
         {"t": "mstatus", "mid": "B-x", "status": "ok", "role": "bp"},
         _run("correct", "main", "gaussian", "PPPPPPP"), _run("correct", "shifted", "large", "PPPPPPP"),
         dict(_run("bp", "main", "gaussian", "PFPPPPP", True, "B-x"), role="bp"),
         dict(_run("bp", "shifted", "large", "FPPPPPP", False, "B-x"), role="bp")]
    rep = report.aggregate(_cfg(), L)
    b = rep["false_alarms"]["behaviour_preserving"]
    assert b["runs_main"] == 1 and b["runs_shifted"] == 1
    assert b["torch"]["main"] == 1 and b["numoracle"]["shifted"] == 1 and b["numoracle"]["main"] == 0
    # a bp variant is never counted as a mutant
    assert rep["mutants"]["total"] == 0 and rep["detection_main"]["effective"] == 0


def test_misses_are_sorted_into_categories():
    L = [{"t": "header", "hash": "h", "provenance": {}}]
    for mid in ("G-1", "G-2", "G-3"):
        L += [{"t": "mutant", "mid": mid, "op": "softmax", "mop": "aor", "file": "f", "line": 1, "col": 1,
               "func": "k", "desc": "d", "diff": ""}, {"t": "mstatus", "mid": mid, "status": "ok"}]
    L += [_run("correct", "main", "gaussian", "PPPPPPP"), _run("correct", "main", "small", "IPPPPPP"),
          dict(_run("mutant", "main", "gaussian", "PFPPPPP", True, "G-1"), n={"pass": 9, "fail": 0, "inc": 0}),
          dict(_run("mutant", "main", "gaussian", "IFPPPPP", True, "G-2"), n={"pass": 8, "fail": 0, "inc": 1}),
          _run("mutant", "main", "small", "FFPPPPP", True, "G-3")]
    rep = report.aggregate(_cfg(), L)
    cat = {m["id"]: m["category"] for m in rep["misses"]}
    assert cat == {"G-1": "inside_r", "G-2": "inconclusive", "G-3": "base_not_pass"}


def test_real_fault_table():
    L = [{"t": "header", "hash": "h", "provenance": {}},
         {"t": "mutant", "mid": "R-x", "op": "softmax", "mop": "real", "file": "f", "line": 0, "col": 0, "func": "",
          "desc": "real fault, fixed by abc", "diff": ""},
         {"t": "mstatus", "mid": "R-x", "status": "ok"},
         _run("correct", "main", "gaussian", "PPFPPPP"), _run("correct", "main", "small", "FPPPPPP"),
         _run("mutant", "main", "gaussian", "FFFPPPP", True, "R-x"),
         _run("mutant", "main", "small", "FFPPPPP", True, "R-x")]
    rep = report.aggregate(_cfg(), L)
    (r,) = rep["real_faults"]
    # the before-fix version FAILs while the after-fix subject PASSes the same input
    assert r["inputs"] == 2
    assert r["fail_before_pass_after"]["numoracle"] == 1   # small: the subject FAILs there
    assert r["fail_before_pass_after"]["torch"] == 2
    assert r["fail_before_pass_after"]["vllm"] == 0        # gaussian: vllm FAILs the subject too
    assert r["subject_fails"]["vllm"] == 1 and r["subject_fails"]["numoracle"] == 1
    assert rep["mutants"]["total"] == 0  # real faults are reported apart from the generated mutants
