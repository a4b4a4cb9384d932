"""Every error path: numoracle.Error with the library's status code, and the CLI's message
where the CLI has the same request."""
import os

import numpy as np
import pytest

import numoracle

from conftest import f32_to_bf16, run_cli

F32 = np.float32


@pytest.fixture(scope="module")
def rms():
    inp = numoracle.inputs("rms_norm", "8x64", "fp32", "gaussian", 0)
    y = np.zeros((8, 64), dtype=F32)
    return inp, y


def err(fn, *a, **k):
    with pytest.raises(numoracle.Error) as e:
        fn(*a, **k)
    assert isinstance(e.value.status, int) and e.value.message == str(e.value)
    assert e.value.exit_code == 2
    return e.value


def cli_error(args):
    rc, out, errtext = run_cli(args)
    assert rc == 2, (rc, out, errtext)
    line = errtext.strip().splitlines()[-1]
    assert line.startswith("numoracle: error: ")
    return line[len("numoracle: error: "):]


def test_unknown_op(rms, tmp_path):
    inp, y = rms
    e = err(numoracle.check, "rms_nrom", inp, y)
    assert e.status == 6 and "rms_nrom" in e.message
    f = tmp_path / "y.bin"
    y.tofile(f)
    assert e.message == cli_error(["check", "--op", "rms_nrom", "--dtype", "fp32", "--shape", "8x64",
                                   "--candidate", f"file:{f}"])
    assert err(numoracle.candidates, "nope").status == 6
    assert err(numoracle.inputs, "nope", "8x64", "fp32").status == 6
    assert err(numoracle.bounds, "nope", inp).status == 6


def test_unknown_param_same_as_cli(rms, tmp_path):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", inp, y, params={"epsilon": 1e-5})
    msg = cli_error(["check", "--op", "rms_norm", "--dtype", "fp32", "--shape", "8x64", "--param", "epsilon=1e-5",
                     "--candidate", "cpu"])
    assert e.status == 2 and e.message == msg
    assert err(numoracle.check, "rms_norm", inp, y, params={"eps": float("nan")}).status == 2
    assert err(numoracle.check, "rms_norm", inp, y, params={"eps": "small"}).status == 2


def test_bad_plan_same_as_cli(rms):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", inp, y, plan="acc=fp99")
    msg = cli_error(["check", "--op", "rms_norm", "--dtype", "fp32", "--shape", "8x64", "--plan", "acc=fp99",
                     "--candidate", "cpu"])
    assert e.status == 4 and e.message == msg
    e = err(numoracle.check, "rms_norm", inp, y, plan="preset=nonesuch")
    assert "nonesuch" in e.message


def test_unknown_dtype_same_as_cli(rms):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", inp, y, dtype="fp12")
    msg = cli_error(["check", "--op", "rms_norm", "--dtype", "fp12", "--shape", "8x64", "--candidate", "cpu"])
    assert e.status == 7 and e.message == msg
    # a dtype the operator has no default plan for
    e = err(numoracle.check, "rms_norm", inp, y, dtype="fp8_e4m3")
    msg = cli_error(["check", "--op", "rms_norm", "--dtype", "fp8_e4m3", "--shape", "8x64", "--candidate", "cpu"])
    assert e.message == msg


def test_missing_input(rms):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", {"x": inp["x"]}, y)
    assert e.status == 2 and "input w of op rms_norm not given" in e.message
    e = err(numoracle.check, "layer_norm", {"x": inp["x"]}, y)
    assert "inputs w, b of op layer_norm not given" in e.message


def test_missing_output():
    inp = numoracle.inputs("rms_norm_bwd", "4x32", "fp32", "gaussian", 0)
    dx = np.zeros((4, 32), F32)
    e = err(numoracle.check, "rms_norm_bwd", inp, {"dx": dx})
    assert e.status == 2 and "output dw of op rms_norm_bwd not given" in e.message
    e = err(numoracle.check, "rms_norm", {"x": dx, "w": dx[0]}, None)
    assert "no outputs" in e.message


def test_unknown_and_duplicate_names(rms):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", {"x": inp["x"], "weight": inp["w"]}, y)
    assert e.message == "unknown input 'weight' for op rms_norm (inputs: x w)"
    e = err(numoracle.check, "rms_norm", inp, {"out": y})
    assert e.message == "unknown output 'out' for op rms_norm (outputs: y)"
    e = err(numoracle.check, "rms_norm", [inp["x"], inp["w"], inp["w"]], y)
    assert "op rms_norm has 2 inputs (x w); 3 given" == e.message


def test_wrong_shape(rms):
    inp, y = rms
    e = err(numoracle.check, "rms_norm", {"x": inp["x"], "w": inp["w"][:63]}, y)
    assert e.status == 12 and e.message.startswith("input w: dims [63], but op rms_norm at shape 8x64")
    e = err(numoracle.check, "rms_norm", inp, y[:, :32])
    assert e.status == 12 and "output y: dims [8, 32]" in e.message and "expects [8, 64]" in e.message
    e = err(numoracle.check, "rms_norm", inp, y, shape="8x32")  # a shape given that the dims contradict
    assert e.status == 12 and "input x: dims [8, 64]" in e.message
    e = err(numoracle.check, "matmul", {"A": np.zeros((4, 5), F32), "B": np.zeros((6, 7), F32)},
            np.zeros((4, 7), F32))
    assert e.status == 12 and "input B" in e.message
    e = err(numoracle.check, "matmul", {"A": np.zeros((4, 5, 2), F32), "B": np.zeros((5, 7), F32)},
            np.zeros((4, 7), F32))
    assert e.status == 12 and "cannot infer the shape of op matmul" in e.message
    assert err(numoracle.check, "rms_norm", inp, y, shape="8xq").status == 4
    assert err(numoracle.check, "rms_norm", inp, np.zeros((8, 0), F32)).status == 12


def test_wrong_dtype(rms):
    inp, y = rms
    xb = f32_to_bf16(inp["x"])
    # bf16 inputs with an fp32 output: the plan's in is fp32 (dtype from the output)
    e = err(numoracle.check, "rms_norm", {"x": xb, "w": inp["w"]}, y, dtype=None)
    assert "uint16 array holds raw bit patterns" in e.message
    e = err(numoracle.check, "rms_norm", {"x": inp["x"].astype(np.float64), "w": inp["w"]}, y)
    assert e.message == "input x: dtype fp64, but op rms_norm under this plan takes fp32 (the plan's in)"
    e = err(numoracle.check, "rms_norm", inp, y.astype(np.float16))
    assert e.status == 2 and "input x: dtype fp32, but op rms_norm under this plan takes fp16" in e.message
    e = err(numoracle.check, "rms_norm", inp, y, plan="out=bf16")
    assert e.message.startswith("output y: dtype fp32, but the plan stores outputs as bf16")
    e = err(numoracle.check, "rms_norm", inp, y.astype(np.complex64))
    assert e.status == 7
    e = err(numoracle.check, "rms_norm", inp, y.astype(np.uint16), dtype="fp32")
    assert "dtype='fp32' has 4-byte elements" in e.message


def test_labels():
    inp = numoracle.inputs("cross_entropy", "4x16", "fp32", "gaussian", 1)
    loss = np.zeros((1,), F32)
    lab = inp["labels"].astype(np.int64)
    rep = numoracle.check("cross_entropy", {"x": inp["x"], "labels": lab}, loss)  # int64 labels convert
    assert rep.verdict == "FAIL"
    lab[2] = 16
    e = err(numoracle.check, "cross_entropy", {"x": inp["x"], "labels": lab}, loss)
    assert e.status == 13 and "input labels: element 2 is 16, not a class in [0, 16)" in e.message
    e = err(numoracle.check, "cross_entropy", {"x": inp["x"], "labels": inp["labels"].astype(np.float16)}, loss)
    assert e.status == 2 and "class labels" in e.message


def test_other_bad_arguments(rms):
    inp, y = rms
    assert err(numoracle.check, "rms_norm", inp, y, engine="fastest").message == \
        "bad engine 'fastest': expected auto or certified"
    assert err(numoracle.check, "rms_norm", inp, y, max_ulps=0).status == 2
    assert err(numoracle.check, "rms_norm", inp, y, max_ulps=2.5).status == 2
    assert err(numoracle.check, "rms_norm", inp, [[1.0, 2.0]]).status == 2  # not an array
    assert err(numoracle.inputs, "rms_norm", "8x64", "fp32", "lognormal").message.startswith(
        "unknown family 'lognormal' (known: gaussian")
    assert err(numoracle.inputs, "rms_norm", "8x64", "fp32", seed=-1).status == 2
    assert err(numoracle.inputs, "rms_norm", "8x64", "fp32", like="jax").status == 2
    assert err(numoracle.inputs, "matmul", "8x64", "fp32").status == 12  # MxNxK
    assert err(numoracle.plans, "rms_norm", "fp12").status == 7
    e = err(numoracle.bounds, "rms_norm", {"w": inp["w"]})
    assert "give the dtype" in e.message or "not given" in e.message


def test_error_is_an_exception_with_status():
    e = numoracle.Error(6, "unknown op 'x' (see numoracle ops)")
    assert isinstance(e, Exception) and e.status == 6 and "unknown op" in repr(e)


def test_library_not_found(tmp_path):
    import subprocess
    import sys
    env = dict(os.environ, NUMORACLE_LIB=str(tmp_path / "missing.so"))
    r = subprocess.run([sys.executable, "-c", "import numoracle; numoracle.ops()"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "NUMORACLE_LIB=" in r.stderr and "does not load" in r.stderr
