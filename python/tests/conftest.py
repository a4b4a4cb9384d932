"""Helpers for the numoracle Python suite: bf16 by bit manipulation (NumPy has none), the
CLI of the same build, and running a reproduce command."""
import json
import os
import shlex
import subprocess

import numpy as np
import pytest

import numoracle

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def cli_path():
    """The numoracle CLI of the build under test ($NUMORACLE_CLI, else next to the library)."""
    p = os.environ.get("NUMORACLE_CLI")
    if not p:
        lib = numoracle.library_path().split(" (")[0]
        p = os.path.join(os.path.dirname(lib), "numoracle")
    if not os.path.exists(p):
        pytest.skip(f"no numoracle CLI at {p} (set NUMORACLE_CLI)")
    return p


def run_cli(args, check_rc=None):
    """Run the CLI; returns (rc, stdout, stderr)."""
    r = subprocess.run([cli_path()] + list(args), capture_output=True, text=True)
    if check_rc is not None:
        assert r.returncode == check_rc, (r.returncode, r.stdout, r.stderr)
    return r.returncode, r.stdout, r.stderr


def run_command(cmd, json_path=None):
    """Run a `numoracle check ...` command line as printed by numoracle (the first word
    replaced by the build's CLI); returns (rc, JSON report or None, stderr)."""
    argv = shlex.split(cmd)
    assert argv[0] == "numoracle", cmd
    if json_path:
        argv += ["--json", json_path]
    rc, out, err = run_cli(argv[1:])
    js = None
    if json_path and os.path.exists(json_path):
        with open(json_path) as f:
            js = json.load(f)
    return rc, js, err


def bf16_to_f32(u):
    """uint16 bf16 bit patterns -> float32 values (exact)."""
    return (np.asarray(u, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(f):
    """float32 -> bf16 bits, round to nearest even (NaN kept NaN)."""
    u = np.asarray(f, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(f, dtype=np.float32))
    r[nan] = 0x7FC0
    return r


def bf16_round(f):
    """float32 values rounded to bf16, as float32."""
    return bf16_to_f32(f32_to_bf16(f))


def comparable(report_dict):
    """A JSON report without what differs between two runs of the same check: the time,
    the candidate's name, where the inputs came from, the command line, and what only
    the binding adds."""
    d = json.loads(json.dumps(report_dict))
    for k in ("seconds", "candidate", "inputs", "command", "seed", "family", "plan_text", "dtype",
              "api_version", "outputs"):
        d.pop(k, None)
    if "worst" in d:
        d["worst"].pop("coords", None)
    return d


class Counting:
    """Wraps an rms_norm kernel function and counts its calls (a judgment must not run a kernel whose
    provenance it rejects)."""
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    # the rms_norm signature exactly: the judge inspects it to decide what it may pass
    def __call__(self, x, w, eps):
        self.calls += 1
        return self.fn(x, w, eps)
