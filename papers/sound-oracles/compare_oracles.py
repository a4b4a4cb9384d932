#!/usr/bin/env python3
"""Compare numoracle's verdicts in two campaign journals of the same configuration, run
by run: one judged on the CPU (nmo_judge on the kept enclosures), one with
`numoracle campaign --oracle-device gpu` (the GPU tier, nmo_gpu_check, where it checks
the case; those runs carry "od":"gpu"). The GPU tier is built to give the certified
verdicts element for element, so every common run must have the same numoracle counts
[pass, fail, inconclusive]. Prints one summary line and one line an operator; exit 1 on
any difference or when no run was judged on the GPU.

    usage: python3 compare_oracles.py CPU.jsonl GPU.jsonl
"""
import json
import sys
from collections import defaultdict


def runs(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("type") == "run" and r.get("status") == "ok" and "nmo" in r:
                out[r["id"]] = r
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    a, b = runs(argv[1]), runs(argv[2])
    per = defaultdict(lambda: [0, 0, 0, 0])  # common, on gpu, differing, fail verdicts on gpu
    diffs = []
    oderr = [r for r in b.values() if "oderr" in r]
    for rid, rb in b.items():
        ra = a.get(rid)
        if ra is None:
            continue
        p = per[rb["op"]]
        p[0] += 1
        gpu = rb.get("od") == "gpu"
        p[1] += gpu
        p[3] += gpu and rb["nmo"][1] > 0
        if ra["nmo"] != rb["nmo"]:
            p[2] += 1
            if len(diffs) < 10:
                diffs.append("%s: cpu %s gpu %s%s" % (rid, ra["nmo"], rb["nmo"], "" if gpu else " (cpu judged both)"))
    tot = [sum(p[i] for p in per.values()) for i in range(4)]
    print("compare_oracles: %d common runs, %d judged on the GPU (%d of them with FAILing elements), %d differing"
          % (tot[0], tot[1], tot[3], tot[2]))
    for op in sorted(per):
        p = per[op]
        print("  op=%s runs=%d gpu=%d gpu_with_fail=%d differing=%d" % (op, p[0], p[1], p[3], p[2]))
    for d in diffs:
        print("  DIFF", d)
    print("  runs the GPU tier failed on (judged on the CPU): %d" % len(oderr))
    for r in oderr[:5]:
        print("  ODERR %s: %s" % (r["id"], r["oderr"]))
    return 1 if tot[2] or tot[1] == 0 or oderr else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
