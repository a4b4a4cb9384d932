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
import re
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


def _bkey(r):
    return f"{r['op']}|{r['dtype']}|{r['shape']}|{r['family']}|{r['seed']}"


MISS_CATEGORIES = {
    "inside_r": "the mutant's outputs stay inside numoracle's R on every main input where the subject PASSes "
                "(a deviation the declared plan allows: no sound check can FAIL it there)",
    "inconclusive": "numoracle is INCONCLUSIVE on the mutant (R wider than max_ulps) on a main input where the "
                    "subject PASSes",
    "base_not_pass": "the subject itself is not PASSed by numoracle on the inputs where the mutant is effective "
                     "(INCONCLUSIVE or FAIL), so no detection can be credited there",
}


def _miss_category(rs, base):
    """Why numoracle does not detect a mutant on main inputs (apps/campaign/README.md's
    definition: detected = mutant FAIL and subject PASS on the same input)."""
    seen_p = False
    for r in rs:
        if r.get("status") != "ok" or not r.get("eff") or r["cls"] != "main":
            continue
        b = base.get(_bkey(r))
        if b is None or b["v"][0] != "P":
            continue
        if r["v"][0] == "I":
            return "inconclusive"
        seen_p = True
    return "inside_r" if seen_p else "base_not_pass"


def bp_fa(mlist, mruns, base):
    """False alarms on behaviour-preserving variants: every FAIL of a check on a bp run."""
    out = {"runs_main": 0, "runs_shifted": 0, "variants": 0}
    out.update({c: {"main": 0, "shifted": 0} for c in CHECKS})
    for m in mlist:
        if m["kind"] != "bp":
            continue
        out["variants"] += 1
        for r in mruns.get(m["id"], []):
            if r.get("status") != "ok":
                continue
            out["runs_" + r["cls"]] += 1
            for i, c in enumerate(CHECKS):
                if r["v"][i] == "F":
                    out[c][r["cls"]] += 1
    return out


def real_table(mlist, mruns, base, muts):
    """Real faults: per check, the inputs where the version before the fix FAILs while the
    subject (after the fix) PASSes the same input, beside the subject's own FAILs there."""
    rows = []
    for m in mlist:
        if m["kind"] != "real":
            continue
        row = {"id": m["id"], "op": m["op"], "desc": m["desc"], "state": m.get("state"),
               "commit": (re.match(r"real fault, fixed by ([0-9a-f]+):", m["desc"]) or [None, ""])[1],
               "inputs": 0, "effective_inputs": 0,
               "fail_before_pass_after": {c: 0 for c in CHECKS}, "subject_fails": {c: 0 for c in CHECKS},
               "fault_fails": {c: 0 for c in CHECKS}, "by_dtype": {}}
        for r in mruns.get(m["id"], []):
            b = base.get(_bkey(r))
            if r.get("status") != "ok" or b is None:
                continue
            row["inputs"] += 1
            row["effective_inputs"] += bool(r.get("eff"))
            dt = row["by_dtype"].setdefault(r["dtype"], {"inputs": 0, "fail_before_pass_after": {c: 0 for c in CHECKS}})
            dt["inputs"] += 1
            for i, c in enumerate(CHECKS):
                row["fault_fails"][c] += r["v"][i] == "F"
                row["subject_fails"][c] += b["v"][i] == "F"
                if r["v"][i] == "F" and b["v"][i] == "P":
                    row["fail_before_pass_after"][c] += 1
                    dt["fail_before_pass_after"][c] += 1
        rows.append(row)
    return rows


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
        if d["role"] in ("mutant", "null", "bp"):
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
        role = {"null": "null", "bp": "bp", "real": "real"}.get(m["mop"], "mutant")
        rec = {"id": mid, "op": m["op"], "kind": {"null": "null", "bp": "bp", "real": "real"}.get(role, "generated"),
               "mutop": m["mop"],
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
                rec["miss_category"] = _miss_category(rs, base)
                rec["detected_main_by"] = sorted(det["main"], key=CHECKS.index)
                rec["detected_shifted_by"] = sorted(det["shifted"], key=CHECKS.index)
                rec["numoracle_detects_on"] = where
        rec["diff"] = m.get("diff", "")
        cnt[(role, rec["state"])] += 1
        mlist.append(rec)

    def det_counts(lst, cls, key):
        e = [m for m in lst if m["kind"] == "generated" and key(m)]
        return {"effective": len(e),
                "detected": {c: sum(1 for m in e if c in m.get(f"detected_{cls}_by", [])) for c in CHECKS}}

    effm = lambda m: m.get("state") == "effective_main"
    effs = lambda m: m.get("state") in ("effective_main", "effective_shifted_only")
    inplan = [m for m in mlist if m["op"] not in outside]
    per_op = []
    for op in ops:
        ms = [m for m in mlist if m["op"] == op and m["kind"] == "generated"]
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
    gen = [m for m in mlist if m["kind"] == "generated"]
    summary = {
        "total": len(gen), "generated": len(gen),
        "generated_before_cap": sum({m["op"]: m.get("generated_total", 0) for m in muts.values()}.values()),
        "stillborn": cnt[("mutant", "stillborn")], "crash": cnt[("mutant", "crash")],
        "hang": cnt[("mutant", "hang")], "error": cnt[("mutant", "error")], "not_run": cnt[("mutant", "not_run")],
        "bp_variants": sum(1 for m in mlist if m["kind"] == "bp"),
        "bp_evaluated": sum(1 for m in mlist if m["kind"] == "bp" and m["state"] in (
            "effective_main", "effective_shifted_only", "never_effective")),
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
                         "behaviour_preserving": bp_fa(mlist, mruns, base)},
        "numoracle_inconclusive": {"correct": inc},
        "per_operator": per_op,
        "null_controls": [{"id": m["id"], "state": m["state"]} for m in nulls],
        "misses": [{"id": m["id"], "op": m["op"], "mutop": m["mutop"], "category": m["miss_category"],
                    "desc": m["desc"], "location": m["location"], "detected_main_by": m["detected_main_by"],
                    "numoracle_detects_shifted": "numoracle" in m["detected_shifted_by"],
                    "effective_dtypes": m.get("effective_dtypes", [])}
                   for m in mlist if m["kind"] == "generated" and m.get("state") == "effective_main"
                   and "numoracle" not in m["detected_main_by"]],
        "real_faults": real_table(mlist, mruns, base, muts),
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
    bpf = rep["false_alarms"]["behaviour_preserving"]
    w(f"| numoracle FAILs on behaviour-preserving runs | 0 over {PAPER['bp_runs']:,} | "
      f"**{bpf['numoracle']['main']} main / {bpf['numoracle']['shifted']} shifted** over {bpf['runs_main']} + "
      f"{bpf['runs_shifted']} runs of {bpf['variants']} variants |")
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
    w(f"\nCorrect runs: {fa['runs_main']} main, {fa['runs_shifted']} shifted ({fa['errors']} errors). "
      f"Behaviour-preserving runs (tmut `bp`: the operands of a + or * commuted): {bpf['runs_main']} main, "
      f"{bpf['runs_shifted']} shifted; FAILs per check (main / shifted): " +
      ", ".join(f"{k} {bpf[k]['main']}/{bpf[k]['shifted']}" for k in CHECKS) + ".\n")
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
    w("\n## Misses of numoracle (effective on main inputs, not detected there), by category\n")
    cats = collections.Counter(x["category"] for x in rep["misses"])
    for k, why in MISS_CATEGORIES.items():
        w(f"- **{k}** ({cats.get(k, 0)}): {why}")
    w("")
    for mm in sorted((x for x in rep["mutant_list"] if x.get("state") == "effective_main" and x["kind"] == "generated"
                      and "numoracle" not in x["detected_main_by"]), key=lambda x: (x["miss_category"], x["id"])):
        if True:
            w(f"- [{mm['miss_category']}] `{mm['id']}` ({mm['mutop']}, {mm['function']}, {mm['location']}): {mm['desc']}; detected on main by: "
              f"{', '.join(mm['detected_main_by']) or 'none'}; on shifted by numoracle: "
              f"{'yes' if 'numoracle' in mm['detected_shifted_by'] else 'no'}; effective in "
              f"{'/'.join(mm.get('effective_dtypes', []))}"
              f"{' (published kernel outside its plan on this operator)' if mm['op'] in out else ''}")
    rf = rep["real_faults"]
    if rf:
        w("\n## Real faults (the subject's history): the version before the fix FAILs while the subject PASSes\n")
        w("Inputs: the fault's provoking family and the campaign's families, the same inputs for both versions. "
          "Cell: inputs where the check FAILs the before-fix version and PASSes the subject / inputs; in brackets "
          "the check's FAILs of the subject (after the fix) on the same inputs.\n")
        w("| fault | operator | state | inputs (effective) | " + " | ".join(CHECKS) + " |")
        w("|---|---|---|---|" + "---|" * len(CHECKS))
        for r in rf:
            w(f"| `{r['id']}` {r['commit'][:8]} | {r['op']} | {r['state']} | {r['inputs']} ({r['effective_inputs']}) | " +
              " | ".join(f"{r['fail_before_pass_after'][c]} ({r['subject_fails'][c]})" for c in CHECKS) + " |")
        for r in rf:
            w(f"- `{r['id']}`: {r['desc']}")
    w("\n## Plans (from the config)\n")
    for op, v in rep["campaign"]["plans"].items():
        w(f"- **{op}** {v['plans']}: {v['why']}")
    return "\n".join(s) + "\n"


def _inline(t):
    import html
    import re
    t = html.escape(t, quote=False)
    t = re.sub(r"`([^`]*)`", r"<code>\1</code>", t)
    return re.sub(r"\*\*([^*]*)\*\*", r"<b>\1</b>", t)


def md_to_html(md, title):
    """The report's markdown (headings, tables, lists, paragraphs) as one HTML page."""
    import html
    out = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + html.escape(title) +
           '</title>\n<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1180px;'
           'padding:0 16px}table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #dde2ea;'
           'padding:3px 7px;text-align:left}code{font-size:12px}</style></head><body>']
    lines = md.split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#"):
            k = len(ln) - len(ln.lstrip("#"))
            out.append(f"<h{k}>{_inline(ln[k:].strip())}</h{k}>")
        elif ln.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            out.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in rows[0]) + "</tr>")
            for r in rows[2:]:
                out.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>")
            out.append("</table>")
            continue
        elif ln.startswith("- "):
            out.append("<ul>")
            while i < len(lines) and lines[i].startswith("- "):
                out.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append("</ul>")
            continue
        elif ln.strip():
            out.append(f"<p>{_inline(ln)}</p>")
        i += 1
    out.append("</body></html>\n")
    return "\n".join(out)


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
    md = fmt_md(rep, cfg, a.title)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(md_to_html(md, a.title))
    dm = rep["detection_main"]
    print(f"effective(main)={dm['effective']} " + " ".join(f"{k}={dm['detected'][k]}" for k in CHECKS) +
          f" numoracle_FAIL_correct={rep['false_alarms']['correct']['numoracle']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
