"""What the Python package costs over the C API: numoracle.check() on a 4096x4096 bf16
rms_norm from NumPy arrays, against the same check through the C API (bench/bind_bench.c:
nmo_case_init_params, the inputs copied in, nmo_check, nmo_report_json), on the same
tensors, measured side by side in one run: rounds alternate which side goes first, and
the ratio is the median over the rounds of each round's Python/C ratio (wall time; the
same for process CPU time, every thread, on the line before). The C driver times itself
in its process, its second repetition (its start-up, file reading and first-touch page
faults are not counted); the Python side times
the whole call (the arrays' buffers, the request, the check, the report parsed into a
Report).

    PYTHONPATH=python NUMORACLE_LIB=build/oracle/libnumoracle.so \\
        /usr/bin/python3 bench/py_overhead.py --driver build/bench/nmo_bind_bench

Last line: op=rms_norm python_over_c=X (target <= 1.1)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import numoracle


def rms_norm_bf16(xb, wb, eps=1e-6):
    """A correct NumPy rms_norm on bf16 bits (fp32 compute, one RNE store)."""
    x = (xb.astype(np.uint32) << 16).view(np.float32)
    w = (wb.astype(np.uint32) << 16).view(np.float32)
    r = np.float32(1) / np.sqrt(np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32) + np.float32(eps))
    u = (x * r * w).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--driver", required=True, help="the nmo_bind_bench executable")
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()

    print(f"library: {numoracle.library_path()}")
    inp = numoracle.inputs("rms_norm", a.shape, "bf16", "gaussian", 1)
    y = rms_norm_bf16(inp["x"], inp["w"])
    with tempfile.TemporaryDirectory(prefix="nmo_py_overhead.") as d:
        paths = {k: os.path.join(d, f"{k}.bin") for k in ("x", "w", "y")}
        inp["x"].tofile(paths["x"])
        inp["w"].tofile(paths["w"])
        y.tofile(paths["y"])
        argv = [a.driver, "rms_norm", "bf16", a.shape, "2", paths["x"], paths["w"], "--", paths["y"]]

        def c_side():
            # two repetitions, the second counted: a warm process, as the Python side is
            out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.splitlines()[-1].split()
            assert out[2] == "verdict=PASS", out
            return float(out[0].split("=")[1]), float(out[1].split("=")[1])

        def py_side():
            t0, u0 = time.perf_counter(), time.process_time()
            rep = numoracle.check("rms_norm", inp, y, dtype="bf16")
            t, u = time.perf_counter() - t0, time.process_time() - u0
            assert rep.verdict == "PASS", rep.to_dict()
            return t, u

        c_side(), py_side()  # warm both (page cache, the library's tables)
        cs, ps = [], []
        for r in range(a.rounds):
            for side in ((c_side, py_side) if r % 2 == 0 else (py_side, c_side)):
                (cs if side is c_side else ps).append(side())
            print(f"round {r}: wall c={cs[-1][0]:.4f}s python={ps[-1][0]:.4f}s ({ps[-1][0] / cs[-1][0]:.3f}); "
                  f"cpu c={cs[-1][1]:.4f}s python={ps[-1][1]:.4f}s ({ps[-1][1] / cs[-1][1]:.3f})")
    # each round's two sides ran back to back: the median of the per-round ratios keeps
    # the load of a shared machine, which drifts between rounds, out of the ratio
    wall = statistics.median(p[0] / c[0] for p, c in zip(ps, cs))
    cpu = statistics.median(p[1] / c[1] for p, c in zip(ps, cs))
    best = min(p[0] for p in ps) / min(c[0] for c in cs)
    print(f"rms_norm {a.shape} bf16, {a.rounds} rounds: wall median C {statistics.median(c[0] for c in cs):.4f}s, "
          f"Python {statistics.median(p[0] for p in ps):.4f}s; best-of ratio {best:.3f} "
          f"(threads: NMO_THREADS={os.environ.get('NMO_THREADS', 'unset: online CPUs')}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"op=rms_norm python_over_c_cpu={cpu:.3f}")
    print(f"op=rms_norm python_over_c={wall:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
