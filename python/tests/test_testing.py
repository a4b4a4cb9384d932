"""numoracle.testing.assert_certified: silent on PASS, a message readable at a glance on
FAIL and INCONCLUSIVE, and a reproduce command that the CLI runs to the same verdict."""
import re

import numpy as np
import pytest

import numoracle
from numoracle.testing import assert_certified

from conftest import run_command


@pytest.fixture(scope="module")
def sm():
    inp = numoracle.inputs("softmax", "6x64", "bf16", "gaussian", 9)
    lo, hi, _ = numoracle.bounds("softmax", inp, dtype="bf16")
    return inp, lo, hi


def test_pass_returns_the_report(sm):
    inp, lo, hi = sm
    rep = assert_certified(lo, op="softmax", inputs=inp, dtype="bf16")
    assert isinstance(rep, numoracle.Report) and rep.passed
    assert assert_certified({"y": hi}, op="softmax", inputs=[inp["x"]], dtype="bf16").passed


def test_fail_message(sm, tmp_path, monkeypatch):
    inp, lo, hi = sm
    monkeypatch.setenv("NUMORACLE_REPRO_DIR", str(tmp_path))
    y = hi.copy()
    y[4, 17] += 5   # 5 values above R's high end (positive: bits up = values up)
    y[1, 2] += 1
    with pytest.raises(AssertionError) as e:
        assert_certified(y, op="softmax", inputs=inp, dtype="bf16")
    msg = str(e.value)
    print(msg)
    lines = msg.splitlines()
    assert lines[0] == "numoracle: softmax output not certified: FAIL"
    assert "mismatched elements: 2 / 384" in lines[1]
    assert "worst element: y[4, 17] (flat index 273), FAIL" in msg
    assert re.search(r"actual: +[0-9.e-]+\n +R: +\[[0-9.e-]+, [0-9.e-]+\]", msg)
    assert "distance: 5 ulps of bf16 outside R" in msg
    assert "plan: in=bf16 out=bf16 compute=fp32" in msg
    cmd = msg.split("reproduce: ", 1)[1].strip()
    assert cmd.startswith("numoracle check --op softmax --dtype bf16 --shape 6x64 ")
    assert str(tmp_path) in cmd
    rc, js, err = run_command(cmd, str(tmp_path / "r.json"))
    assert rc == 1 and js["counts"]["fail"] == 2 and js["worst"]["index"] == 273, err


def test_inconclusive(sm):
    inp = numoracle.inputs("softmax", "4x64", "fp32", "gaussian", 0)
    lo, hi, _ = numoracle.bounds("softmax", inp, max_ulps=1)
    with pytest.raises(AssertionError) as e:
        assert_certified(lo, op="softmax", inputs=inp, max_ulps=1, reproduce=False)
    msg = str(e.value)
    assert msg.startswith("numoracle: softmax output not certified: INCONCLUSIVE")
    assert "inconclusive elements: 256 / 256" in msg and "wide 256" in msg
    assert "allow_inconclusive=True" in msg and "reproduce:" not in msg
    rep = assert_certified(lo, op="softmax", inputs=inp, max_ulps=1, allow_inconclusive=True)
    assert rep.verdict == "INCONCLUSIVE"
    # a FAIL is never allowed
    y = hi.copy()
    y[0, 0] = np.float32(2.0)
    with pytest.raises(AssertionError, match="FAIL"):
        assert_certified(y, op="softmax", inputs=inp, max_ulps=1, allow_inconclusive=True, reproduce=False)


def test_params_and_plan_in_message():
    inp = numoracle.inputs("rms_norm", "4x32", "fp32", "small", 1)
    lo, hi, _ = numoracle.bounds("rms_norm", inp, params={"eps": 1e-3}, plan="fn=ulp:4")
    y = lo.copy()
    y[2, 3] = -y[2, 3] if y[2, 3] != 0 else np.float32(1)
    with pytest.raises(AssertionError) as e:
        assert_certified(y, op="rms_norm", inputs=inp, params={"eps": 1e-3}, plan="fn=ulp:4", reproduce=False)
    msg = str(e.value)
    assert "params: eps=0.001 offset=0" in msg and "fn=ulp:4" in msg


def test_errors_are_not_assertions(sm):
    inp, lo, hi = sm
    with pytest.raises(numoracle.Error):
        assert_certified(lo, op="softmax", inputs={"z": inp["x"]}, dtype="bf16")
