#!/usr/bin/env python3
"""Inputs for rms_norm_bwd_probe.py: numoracle's own cases (what the contract's
gradient_accuracy cell judges: family gaussian, the seed, eps = 1e-6), with the rstd
numoracle derives, as one .npz (case/x, case/w, case/dy, case/rstd, case/eps).

    PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so \\
        python3 hip/validate/probe/rms_norm_bwd_probe_inputs.py OUT.npz
"""
import sys

import numpy as np

import numoracle

# 64x4096: the contract's shape (seed 1 FAILed dx[11337]); 3x1025 and 16x3000: rows that
# are not a power of two (3x1025: N % 4 != 0, ATen's non-vectorized path)
CASES = [("m64n4096s0", (64, 4096), 0), ("m64n4096s1", (64, 4096), 1), ("m3n1025s0", (3, 1025), 0),
         ("m16n3000s0", (16, 3000), 0)]
out = {}
for name, shape, seed in CASES:
    t = numoracle.inputs("rms_norm_bwd", shape, "fp32", "gaussian", seed)
    for k in ("dy", "x", "w", "rstd"):
        out[f"{name}/{k}"] = np.ascontiguousarray(t[k], dtype=np.float32)
    out[f"{name}/eps"] = np.float64(1e-6)
np.savez_compressed(sys.argv[1], **out)
print("wrote", sys.argv[1], sorted(out))
