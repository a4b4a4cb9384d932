"""A stand-in subject: Triton-style kernels (run by the stand-in triton over NumPy)."""
import time

import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x, n_cols):
    m = tl.max(x, axis=1)
    e = tl.exp(x - m[:, None])
    s = tl.sum(e, axis=1)
    y = e / s[:, None]
    return y


@triton.jit
def _rms_norm_kernel(x, w, n_cols, eps):
    ms = tl.sum(x * x, axis=1) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    y = (x * r[:, None]) * w[None, :]
    if n_cols < 0:
        time.sleep(3600)  # a hang a mutant can reach (ror on the bound): the timeout's test
    return y


def softmax(x):
    return _softmax_kernel(tl.wrap(x), x.shape[1])


def rms_norm(x, w, eps):
    return _rms_norm_kernel(tl.wrap(x), tl.wrap(w), x.shape[1], eps)
