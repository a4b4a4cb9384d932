#!/usr/bin/env python3
"""Report of a Triton campaign (numoracle-campaign-report/1: report.json, report.md) from
its journal(s): a pure function of the journal lines, so resumed, sharded (one journal
per GPU) and uninterrupted campaigns report alike.

    python3 report.py --config campaign_liger.json --journal a.jsonl [--journal b.jsonl ...] \
        [--out DIR] [--title TEXT]

Journals may be gzipped (.gz). Definitions: apps/campaign/README.md (the paper's).
"""

import argparse
import collections
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

CHECKS = ("numoracle", "torch", "vllm", "hipdnn", "te", "higham", "p999")
LABELS = {"numoracle": "numoracle", "torch": "torch assert_close", "vllm": "vLLM 1e-2",
          "hipdnn": "hipDNN fixed", "te": "TransformerEngine", "higham": "Higham dynamic",
          "p999": "calibrated p99.9"}
PAPER = {"effective": 124, "numoracle": 116, "fixed": "59-83 (4 checks)", "correct_runs": 14400,
         "bp_runs": 2616, "inconclusive_shifted": 634}


def read_journals(paths):
    lines = []
    for p in paths:
        op = gzip.open if p.endswith(".gz") else open
        with op(p, "rt") as f:
            for ln in f:
                ln = ln.strip()
                if not ln:
                    continue
                try:
                    lines.append(json.loads(ln))
                except ValueError:
                    break  # torn last line
    return lines


def aggregate(cfg, L):
    headers = [d for d in L if d.get("t") == "header"]
    muts = {}
    for d in L:
        if d.get("t") == "mutant":
            muts.setdefault(d["mid"], d)
    mstat = {d["mid"]: d for d in L if d.get("t") == "mstatus"}
    runs = {}
    for d in L:
        if d.get("t") == "run":
            runs[d["id"]] = d  # a run journaled by two shards (mutant-seed bases) counts once
    correct = [d for d in runs.values() if d["role"] == "correct" and d.get("phase") == "eval"]
    base = {}
    for d in correct:
        if d.get("status") == "ok":
            base[f"{d['op']}|{d['dtype']}|{d['shape']}|{d['family']}|{d['seed']}"] = d
    mruns = collections.defaultdict(list)
    for d in runs.values():
        if d["role"] in ("mutant", "null"):
            mruns[d["mid"]].append(d)
    ops = [o["op"] for o in cfg["operators"]]

    # correct runs: false alarms and inconclusive
    fa = {c: {"main": 0, "shifted": 0} for c in CHECKS}
    inc = {"main": 0, "shifted": 0}
    nrun = {"main": 0, "shifted": 0}
    per_op_fa = collections.defaultdict(lambda: collections.Counter())
    per_op_runs = collections.Counter()
    per_op_inc = collections.Counter()
    errors = 0
    for d in correct:
        if d.get("status") != "ok":
            errors += 1
            continue
        cls = d["cls"]
        nrun[cls] += 1
        per_op_runs[d["op"]] += 1
        for i, c in enumerate(CHECKS):
            if d["v"][i] == "F":
                fa[c][cls] += 1
                per_op_fa[d["op"]][(c, cls)] += 1
        if d["v"][0] == "I":
            inc[cls] += 1
            if cls == "shifted":
                per_op_inc[d["op"]] += 1
    # ops whose published kernel numoracle FAILs somewhere: the plan does not describe it
    outside = sorted({d["op"] for d in correct if d.get("status") == "ok" and d["v"][0] == "F"}, key=ops.index)
    outside_dt = collections.defaultdict(set)
    for d in correct:
        if d.get("status") == "ok" and d["v"][0] == "F":
            outside_dt[d["op"]].add(d["dtype"])

    mlist = []
    cnt = collections.Counter()
    nondet_runs = 0
    for mid, m in sorted(muts.items()):
        st = mstat.get(mid)
        role = "null" if m["mop"] == "null" else "mutant"
        rec = {"id": mid, "op": m["op"], "kind": "null" if role == "null" else ("real" if m["mop"] == "real" else "generated"), "mutop": m["mop"],
               "location": f"{m['file']}:{m['line']}:{m['col']}", "function": m["func"], "desc": m["desc"]}
        if st is None:
            rec["state"] = "not_run"
        elif st["status"] != "ok":
            rec["state"] = {"timeout": "hang"}.get(st["status"], st["status"])
            rec["msg"] = st.get("msg", "")[:200]
        else:
            rs = mruns.get(mid, [])
            statuses = collections.Counter(r["status"] for r in rs)
            rec["runs"] = dict(statuses)
            nondet_runs += statuses.get("nondet", 0)
            if statuses.get("crash"):
                rec["state"] = "crash"
            else:
                eff = {"main": False, "shifted": False}
                det = {"main": set(), "shifted": set()}
                where = None
                dtypes_eff = set()
                for r in rs:
                    if r["status"] != "ok":
                        continue
                    b = base.get(f"{r['op']}|{r['dtype']}|{r['shape']}|{r['family']}|{r['seed']}")
                    if b is None:
                        continue
                    if r["eff"]:
                        eff[r["cls"]] = True
                        dtypes_eff.add(r["dtype"])
                        for i, c in enumerate(CHECKS):
                            if r["v"][i] == "F" and b["v"][i] == "P":
                                det[r["cls"]].add(c)
                                if c == "numoracle" and r["cls"] == "main" and where is None:
                                    where = f"{r['dtype']} {r['shape']} {r['family']} seed {r['seed']}"
                rec["effective_dtypes"] = sorted(dtypes_eff)
                if role == "null":
                    rec["state"] = "null_effective" if (eff["main"] or eff["shifted"]) else "null_ok"
                elif eff["main"]:
                    rec["state"] = "effective_main"
                elif eff["shifted"]:
                    rec["state"] = "effective_shifted_only"
                elif statuses.get("ok", 0) == 0:
                    rec["state"] = "error" if statuses.get("error") else "nondet"
                else:
                    rec["state"] = "never_effective"
                rec["detected_main_by"] = sorted(det["main"], key=CHECKS.index)
                rec["detected_shifted_by"] = sorted(det["shifted"], key=CHECKS.index)
                rec["numoracle_detects_on"] = where
        rec["diff"] = m.get("diff", "")
        cnt[(role, rec["state"])] += 1
        mlist.append(rec)

    def det_counts(lst, cls, key):
        e = [m for m in lst if m["kind"] != "null" and key(m)]
        return {"effective": len(e),
                "detected": {c: sum(1 for m in e if c in m.get(f"detected_{cls}_by", [])) for c in CHECKS}}

    effm = lambda m: m.get("state") == "effective_main"
    effs = lambda m: m.get("state") in ("effective_main", "effective_shifted_only")
    inplan = [m for m in mlist if m["op"] not in outside]
    per_op = []
    for op in ops:
        ms = [m for m in mlist if m["op"] == op and m["kind"] != "null"]
        e = [m for m in ms if effm(m)]
        per_op.append({"op": op, "mutants": len(ms),
                       "evaluated": sum(1 for m in ms if m["state"] not in ("not_run", "stillborn", "crash", "hang",
                                                                             "error")),
                       "stillborn": sum(1 for m in ms if m["state"] == "stillborn"),
                       "not_run": sum(1 for m in ms if m["state"] == "not_run"),
                       "effective_main": len(e),
                       "detected_main": {c: sum(1 for m in e if c in m["detected_main_by"]) for c in CHECKS},
                       "false_alarms_main": {c: per_op_fa[op][(c, "main")] for c in CHECKS},
                       "false_alarms_shifted": {c: per_op_fa[op][(c, "shifted")] for c in CHECKS},
                       "correct_runs": per_op_runs[op], "inconclusive_shifted": per_op_inc[op],
                       "published_kernel_outside_plan": sorted(outside_dt.get(op, []))})
    gen = [m for m in mlist if m["kind"] != "null"]
    summary = {
        "total": len(gen), "generated": len(gen),
        "generated_before_cap": sum({m["op"]: m.get("generated_total", 0) for m in muts.values()}.values()),
        "stillborn": cnt[("mutant", "stillborn")], "crash": cnt[("mutant", "crash")],
        "hang": cnt[("mutant", "hang")], "error": cnt[("mutant", "error")], "not_run": cnt[("mutant", "not_run")],
        "evaluated": sum(1 for m in gen if m["state"] in ("effective_main", "effective_shifted_only",
                                                            "never_effective", "nondet")),
        "effective_main": sum(1 for m in gen if effm(m)),
        "effective_shifted_only": sum(1 for m in gen if m["state"] == "effective_shifted_only"),
        "never_effective": sum(1 for m in gen if m["state"] == "never_effective"),
        "nondeterministic_runs": nondet_runs}
    nulls = [m for m in mlist if m["kind"] == "null"]
    rep = {
        "format": "numoracle-campaign-report/1",
        "campaign": {"name": cfg["name"], "config_hash": cfg["hash"], "backend": "triton",
                     "journal_hashes": sorted({h["hash"] for h in headers}),
                     "provenance": headers[0]["provenance"] if headers else {},
                     "subjects": headers[0].get("commits", {}) if headers else {},
                     "wall_s": sum(d.get("wall_s", 0) for d in L if d.get("t") == "note"),
                     "plans": {o["op"]: {"plans": o.get("plans", {}), "why": o["why"]} for o in cfg["operators"]}},
        "checks": [{"name": c, "label": LABELS[c]} for c in CHECKS],
        "mutants": summary,
        "detection_main": det_counts(mlist, "main", effm),
        "detection_shifted": det_counts(mlist, "shifted", effs),
        "detection_main_published_kernel_in_plan": det_counts(inplan, "main", effm),
        "operators_published_kernel_outside_plan": {op: sorted(outside_dt[op]) for op in outside},
        "false_alarms": {"correct": {"runs_main": nrun["main"], "runs_shifted": nrun["shifted"], "errors": errors,
                                     **fa},
                         "behaviour_preserving": {"runs_main": 0, "runs_shifted": 0,
                                                  "note": "no behaviour-preserving variants in this campaign"}},
        "numoracle_inconclusive": {"correct": inc},
        "per_operator": per_op,
        "null_controls": [{"id": m["id"], "state": m["state"]} for m in nulls],
        "mutant_list": mlist,
    }
    return rep


def fmt_md(rep, cfg, title):
    s = []
    w = s.append
    c = rep["campaign"]
    w(f"# {title}\n")
    w(f"Format `{rep['format']}`; config `{c['config_hash']}` ({cfg['name']}); journal header hash(es) "
      f"{', '.join(c['journal_hashes'])}.\n")
    p = c["provenance"]
    w(f"- Device: {p.get('device')}; torch {p.get('torch')}, Triton {p.get('triton')}, CUDA {p.get('cuda')}; "
      f"numoracle {p.get('numoracle')}. Campaign wall time on the device: {c['wall_s']:.0f} s.")
    for k, v in c["subjects"].items():
        w(f"- Subject **{k}**: {v.get('url')} at `{v.get('commit')}` ({v.get('date')}); files: {v.get('files')}; "
          f"{v.get('replaced')}.")
    m = rep["mutants"]
    w(f"- Mutants: {m['total']} sampled (of {m['generated_before_cap']} generated), {m['stillborn']} stillborn "
      f"(Triton compile error), {m['crash']} crashed, {m['hang']} hung, {m['error']} errors, "
      f"{m['not_run']} not run in this slice; {m['evaluated']} evaluated: **{m['effective_main']} effective on main "
      f"inputs**, {m['effective_shifted_only']} only on shifted, {m['never_effective']} never effective; "
      f"{m['nondeterministic_runs']} nondeterministic mutant runs excluded.")
    nl = rep["null_controls"]
    w(f"- Null controls (unmutated source loaded like a mutant): {sum(1 for x in nl if x['state'] == 'null_ok')} of "
      f"{len(nl)} never effective" + (", " + ", ".join(f"{x['id']} {x['state']}" for x in nl
                                                    if x['state'] != 'null_ok') if any(
        x['state'] != 'null_ok' for x in nl) else "") + ".\n")
    fa = rep["false_alarms"]["correct"]
    dm, dmi = rep["detection_main"], rep["detection_main_published_kernel_in_plan"]
    ds = rep["detection_shifted"]
    out = rep["operators_published_kernel_outside_plan"]
    w("## Beside the paper\n")
    w("| | paper (13 Triton operators, RTX PRO 6000) | **this slice (Liger-Kernel on the H200)** |")
    w("|---|---|---|")
    w(f"| effective mutants, main inputs | {PAPER['effective']} | **{dm['effective']}** |")
    e = dm["effective"] or 1
    w(f"| numoracle detects (main) | {PAPER['numoracle']} (93.5%) | **{dm['detected']['numoracle']} "
      f"({100 * dm['detected']['numoracle'] / e:.1f}%)** |")
    fx = [dm["detected"][k] for k in CHECKS[1:]]
    w(f"| fixed checks detect (main) | {PAPER['fixed']} | {min(fx)}-{max(fx)} (6 checks) |")
    outs = ", ".join(k + " " + "/".join(v) for k, v in out.items()) or "none"
    w(f"| numoracle FAILs on correct runs (published kernels) | 0 over 14,400 | "
      f"**{fa['numoracle']['main']} main / {fa['numoracle']['shifted']} shifted** over {fa['runs_main']} + "
      f"{fa['runs_shifted']} runs (operators: {outs}) |")
    w(f"| shifted-input correct runs left INCONCLUSIVE | 634 calls | {rep['numoracle_inconclusive']['correct']['shifted']}"
      f" of {fa['runs_shifted']} |")
    ei = dmi["effective"] or 1
    w(f"| same detection, operators whose published kernel numoracle never FAILs | — | "
      f"{dmi['detected']['numoracle']} / {dmi['effective']} ({100 * dmi['detected']['numoracle'] / ei:.1f}%) |\n")
    w("## All checks\n")
    w("| check | detected (main) | detected (shifted) | FAIL on correct runs (main / shifted) |")
    w("|---|---|---|---|")
    for k in CHECKS:
        b = "**" if k == "numoracle" else ""
        w(f"| {b}{LABELS[k]}{b} | {dm['detected'][k]} / {dm['effective']} | {ds['detected'][k]} / {ds['effective']} | "
          f"{fa[k]['main']} / {fa[k]['shifted']} |")
    w(f"\nCorrect runs: {fa['runs_main']} main, {fa['runs_shifted']} shifted ({fa['errors']} errors). No "
      "behaviour-preserving variants (the subject has one implementation per operator here).\n")
    w("## Per operator (main inputs)\n")
    w("| operator | plan | mutants (stillborn, not run) | effective | " + " | ".join(CHECKS) +
      " | correct runs | numoracle FAIL on correct (main/shifted) | inconclusive (shifted) |")
    w("|---|---|---|---|" + "---|" * len(CHECKS) + "---|---|---|")
    for o in rep["per_operator"]:
        plans = rep["campaign"]["plans"][o["op"]]["plans"]
        pl = "; ".join(f"{k}: `{v}`" for k, v in plans.items()) or "default"
        d = o["detected_main"]
        w(f"| {o['op']} | {pl} | {o['mutants']} ({o['stillborn']}, {o['not_run']}) | {o['effective_main']} | " +
          " | ".join(str(d[k]) for k in CHECKS) + f" | {o['correct_runs']} | "
          f"{o['false_alarms_main']['numoracle']}/{o['false_alarms_shifted']['numoracle']} | "
          f"{o['inconclusive_shifted']} |")
    w("\n## Misses of numoracle (effective on main inputs, not detected there)\n")
    for mm in rep["mutant_list"]:
        if mm.get("state") == "effective_main" and "numoracle" not in mm["detected_main_by"]:
            w(f"- `{mm['id']}` ({mm['mutop']}, {mm['function']}, {mm['location']}): {mm['desc']}; detected on main by: "
              f"{', '.join(mm['detected_main_by']) or 'none'}; on shifted by numoracle: "
              f"{'yes' if 'numoracle' in mm['detected_shifted_by'] else 'no'}; effective in "
              f"{'/'.join(mm.get('effective_dtypes', []))}"
              f"{' (published kernel outside its plan on this operator)' if mm['op'] in out else ''}")
    w("\n## Plans (from the config)\n")
    for op, v in rep["campaign"]["plans"].items():
        w(f"- **{op}** {v['plans']}: {v['why']}")
    return "\n".join(s) + "\n"


def main(argv=None):
    import campaign
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True)
    ap.add_argument("--journal", action="append", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--title", default="Triton campaign: Liger-Kernel on the H200")
    a = ap.parse_args(argv)
    cfg = campaign.load_config(a.config)
    L = read_journals(a.journal)
    rep = aggregate(cfg, L)
    out = a.out or cfg["out_dir"]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(rep, f, indent=1, sort_keys=False)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(fmt_md(rep, cfg, a.title))
    dm = rep["detection_main"]
    print(f"effective(main)={dm['effective']} " + " ".join(f"{k}={dm['detected'][k]}" for k in CHECKS) +
          f" numoracle_FAIL_correct={rep['false_alarms']['correct']['numoracle']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
