#!/usr/bin/env python3
"""Misses analysis of a campaign journal (numoracle campaign): every mutant that is
effective on main inputs and that numoracle does not detect there, with the evidence.

For each such mutant and each main input on which it is effective:
  v        the verdict string (numoracle torch vllm hipdnn te higham p999)
  nmo      numoracle's element counts [pass, fail, inconclusive]
  ulp      the mutant's largest distance from the reference (output ulps)
  cmax     the largest such distance of any correct variant on the same input
  base     numoracle's verdict on the base (the correct variant it derives from)

Categories (the paper's definitions are unchanged; these only sort the misses):
  within-plan, rounding-level: on every main input numoracle finds every element of the
      mutant's output inside the certified reachable set (no FAIL), and the mutant is never
      more than GROSS ulps further from the reference than the farthest correct variant:
      its outputs are ones the declared precision plan allows, and no sound oracle can
      reject them on these inputs.
  inside R, beyond the correct spread: no FAIL on main inputs, but on some input more than
      GROSS ulps beyond every correct variant: either a cancellation element (tiny output
      whose ulps are not the scale of the error the plan allows) or a bound wider than it
      needs to be; listed with the evidence for a decision.
  FAIL with an inconclusive base: numoracle FAILs the mutant on some main input but the
      base is INCONCLUSIVE there (a detection needs a PASS on the base).

usage: misses.py JOURNAL.jsonl [...] > misses.md"""
import json, sys, collections

GROSS = 8
MAIN = {"gaussian", "small"}

muts, runs, corr = {}, collections.defaultdict(list), {}
for path in sys.argv[1:]:
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        t = r.get("type")
        if t == "mutant":
            muts[r["id"]] = r
        elif t == "run" and r.get("phase") == "eval" and r.get("status") == "ok":
            key = (r["op"], r["dtype"], r["shape"], r["family"], r["seed"])
            if r["role"] in ("correct", "bp"):
                c = corr.setdefault(key, {"ulp": 0, "v": {}})
                c["ulp"] = max(c["ulp"], r.get("ulp", 0) or 0)
                c["v"][r["cand"]] = r["v"]
            elif r["role"] == "mutant":
                runs[r["cand"]].append(r)

cats = collections.defaultdict(list)
for mid, rs in sorted(runs.items()):
    main = [r for r in rs if r["family"] in MAIN and r.get("eff")]
    if not main:
        continue
    det = fail_incbase = 0
    ev = []
    for r in main:
        key = (r["op"], r["dtype"], r["shape"], r["family"], r["seed"])
        c = corr.get(key, {"ulp": 0, "v": {}})
        bv = c["v"].get(r["base"], "?")
        if r["v"][0] == "F" and bv[0] == "P":
            det = 1
        if r["v"][0] == "F" and bv[0] != "P":
            fail_incbase = 1
        ev.append((r["ulp"] - c["ulp"], r, c["ulp"], bv))
    if det:
        continue
    shifted = any(r["v"][0] == "F" for r in rs if r["family"] not in MAIN)
    beyond = max(e[0] for e in ev)
    if fail_incbase:
        cat = "FAIL with an inconclusive base"
    elif beyond <= GROSS:
        cat = "within-plan, rounding-level"
    else:
        cat = "inside R, beyond the correct spread"
    cats[cat].append((mid, beyond, shifted, sorted(ev, key=lambda e: -e[0])[:3]))

total_missed = sum(len(v) for v in cats.values())
print("# numoracle misses on main inputs\n")
print("Journal(s): %s. %d effective mutants missed on main inputs.\n" % (", ".join(sys.argv[1:]), total_missed))
for cat in ("within-plan, rounding-level", "inside R, beyond the correct spread", "FAIL with an inconclusive base"):
    L = cats.get(cat, [])
    print("## %s: %d\n" % (cat, len(L)))
    if not L:
        continue
    print("| mutant | what | max ulps beyond the correct variants (main) | numoracle FAILs it on shifted inputs | worst main inputs: dtype shape family seed, v, nmo [pass,fail,inc], ulp / correct max |")
    print("|---|---|---|---|---|")
    for mid, beyond, sh, ev in L:
        m = muts.get(mid, {})
        what = (m.get("desc", "") + (" (" + m.get("func", "") + ")" if m.get("func") else "")).replace("|", "\\|")
        ins = "; ".join("%s %s %s %s, %s, %s, %s / %s" % (r["dtype"], r["shape"], r["family"], r["seed"], r["v"],
                                                         r.get("nmo"), r["ulp"], cu) for _, r, cu, _ in ev)
        print("| %s | %s | %d | %s | %s |" % (mid, what[:120], beyond, "yes" if sh else "no", ins))
    print()
