#!/usr/bin/env python3
"""numoracle's mutation campaign over real Triton subjects (Liger-Kernel), on a GPU.

    python3 campaign.py --config campaign_liger.json [--shard I/N] [--gpu K]
    python3 report.py --config campaign_liger.json --journal a.jsonl [--journal b.jsonl ...]

The same rules as the C campaign (apps/campaign/README.md): the correct kernel (the
subject as published) and its mutants run on the same inputs (numoracle's input
families and seeds); every output is judged by numoracle (the operator's plan written in
the config) and the six fixed baselines (checks.py); effective = bitwise different from
the subject on some input; detected = FAIL on the mutant and PASS on the subject on the
same input; INCONCLUSIVE is never a pass.

Execution: the parent process runs the correct kernels and judges everything; every
mutant (and a null control per operator: the unmutated source loaded the same way) runs
in its own child process with a wall-clock timeout, twice per input (outputs that differ
between the two runs: nondet, excluded). A Triton compile error is a stillborn mutant,
a child killed by a signal or a CUDA fault a crash, a timeout a hang. Every run is one
journal line (JSONL, fsynced per batch); a restarted campaign skips every journaled id.
--shard I/N (1-based) takes every N-th mutant and every N-th evaluation input: one
process per GPU (--gpu K sets CUDA_VISIBLE_DEVICES), journals merged by report.py.
"""

import argparse
import concurrent.futures as cf
import hashlib
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import traceback
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)

import tmut  # noqa: E402

ENGINE = "triton-campaign-1"


# ---- config ---------------------------------------------------------------------------

def load_config(path):
    with open(path) as f:
        cfg = json.load(f)
    known = {"name", "comment", "subjects", "families", "seeds", "mutant_seeds", "calibration", "max_per_op",
             "null_control", "timeout", "alt_plans", "bp_per_op", "generated", "faults", "workers", "journal", "work_dir", "out_dir", "operators", "mutation_operators"}
    bad = set(cfg) - known
    if bad:
        raise SystemExit(f"{path}: unknown field(s) {', '.join(sorted(bad))}")
    opknown = {"op", "subject", "module", "file", "functions", "adapter", "dtypes", "shapes", "params", "plans",
               "why", "row_len", "alt_plans"}
    for o in cfg["operators"]:
        bad = set(o) - opknown
        if bad:
            raise SystemExit(f"{path}: operator {o.get('op')}: unknown field(s) {', '.join(sorted(bad))}")
        for k in ("op", "subject", "module", "file", "functions", "adapter", "dtypes", "shapes", "why"):
            if k not in o:
                raise SystemExit(f"{path}: operator {o.get('op')}: missing field {k}")
    # the hash covers what changes results, as written (relative paths): the same config
    # checked out elsewhere (the GPU machine) has the same hash
    canon = json.dumps({k: v for k, v in cfg.items() if k not in ("journal", "work_dir", "out_dir", "workers", "comment")},
                       sort_keys=True)
    cfg["hash"] = hashlib.sha256((ENGINE + canon).encode()).hexdigest()[:16]
    base = os.path.dirname(os.path.abspath(path))
    for k in ("journal", "work_dir", "out_dir"):
        cfg[k] = os.path.join(base, cfg[k])
    cfg["subjects"] = {k: os.path.join(base, v) for k, v in cfg["subjects"].items()}
    return cfg


def seeds(spec):
    return list(range(spec["first"], spec["first"] + spec["count"]))


def inputs_of(cfg, o, which):
    """(dtype, shape, family, class, seed) of one operator: eval (all families, eval seeds),
    mutant (all families, mutant seeds), calib (calibration families and seeds)."""
    fam = cfg["families"]
    out = []
    if which == "calib":
        c = cfg["calibration"]
        for dt in o["dtypes"]:
            for sh in o["shapes"]:
                for f in c["families"]:
                    for s in seeds(c["seeds"]):
                        out.append((dt, sh, f, "calib", s))
        return out
    ss = seeds(cfg["seeds"]) if which == "eval" else cfg["mutant_seeds"]
    if which == "eval" and cfg.get("eval_seeds_now"):  # --eval-seeds: this slice's share
        ss = [s for s in ss if s < cfg["seeds"]["first"] + cfg["eval_seeds_now"] or s in cfg["mutant_seeds"]]
    for dt in o["dtypes"]:
        for sh in o["shapes"]:
            for cls in ("main", "shifted"):
                for f in fam[cls]:
                    for s in ss:
                        out.append((dt, sh, f, cls, s))
    return out


def key_of(op, inp):
    dt, sh, f, _, s = inp
    return f"{op}|{dt}|{sh}|{f}|{s}"


# ---- tensors --------------------------------------------------------------------------

def to_torch(arrs, dtypes, dev):
    import numpy as np
    import torch
    out = {}
    for k, a in arrs.items():
        if a.dtype == np.uint16:           # bf16 bits
            out[k] = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16).to(dev)
        else:
            out[k] = torch.from_numpy(a.copy()).to(dev)
    return out


def to_numpy(t):
    """A torch tensor -> NumPy in numoracle's convention (bf16 as uint16 bits)."""
    import numpy as np
    import torch
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16).copy()
    return t.numpy().copy()


def as_f64(a, fmt):
    import numpy as np
    if a.dtype == np.uint16 and fmt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


# ---- module loading -------------------------------------------------------------------

def load_module(cfg, o, source=None, tag=None):
    """The subject's operator module; with source: that text loaded in its place (under
    the same module name, from a file in the work dir so that Triton can read it)."""
    root = cfg["subjects"][o["subject"]]
    if root not in sys.path:
        sys.path.insert(0, root)
    if source is None:
        return importlib.import_module(o["module"])
    d = os.path.join(cfg["work_dir"], "src", tag)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, os.path.basename(o["file"]))
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(o["module"], path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[o["module"]] = mod
    spec.loader.exec_module(mod)
    return mod


def run_adapter(o, mod, ins_t, params):
    import torch
    # NMO_TRITON_ADAPTERS: another adapter module (the stand-in of standin/, for tests)
    adapters = importlib.import_module(os.environ.get("NMO_TRITON_ADAPTERS", "liger"))
    outs, extra = adapters.ADAPTERS[o["adapter"]](mod, ins_t, params)
    torch.cuda.synchronize()
    return {k: to_numpy(v) for k, v in outs.items()}, {k: to_numpy(v) for k, v in extra.items()}


def op_params(o):
    import numoracle
    d = {p["name"]: p["default"] for p in numoracle.ops()[o["op"]]["params"]}
    d.update(o.get("params", {}))
    return d


def gen_inputs(o, inp, params):
    import numoracle
    dt, sh, f, _, s = inp
    return numoracle.inputs(o["op"], sh, dt, f, s, plan=o.get("plans", {}).get(dt), params=params)


# ---- the mutant child -----------------------------------------------------------------

def child_main(cfg, opname, mid, src_path, out_path, shard_inputs):
    """Run one mutant on its inputs; write {key: {status, outputs...}} as an .npz and a
    .json summary. Exit codes: 0 done, 3 stillborn (compile error on the first input)."""
    import numpy as np
    import torch
    o = next(x for x in cfg["operators"] if x["op"] == opname)
    params = op_params(o)
    src = open(src_path).read()
    summary, arrays = {}, {}
    try:
        mod = load_module(cfg, o, src, mid)
    except Exception as e:  # the module does not even import: stillborn
        json.dump({"stillborn": f"import: {type(e).__name__}: {str(e)[:300]}"}, open(out_path + ".json", "w"))
        return 3
    dev = torch.device("cuda")
    for i, inp in enumerate(inputs_of(cfg, o, "mutant")):
        k = key_of(opname, inp)
        ins = gen_inputs(o, inp, params)
        res = []
        try:
            for _ in range(2):
                t = to_torch(ins, None, dev)
                res.append(run_adapter(o, mod, t, params))
        except Exception as e:
            name = type(e).__name__
            msg = str(e)
            if i == 0 and ("CompilationError" in name or "CompileTimeAssertionFailure" in name):
                json.dump({"stillborn": f"{name}: {msg[:300]}"}, open(out_path + ".json", "w"))
                return 3
            if "illegal" in msg or "CUDA error" in msg or "misaligned" in msg:
                summary[k] = {"status": "crash", "msg": f"{name}: {msg[:200]}"}
                break  # the context is gone
            summary[k] = {"status": "error", "msg": f"{name}: {msg[:200]}"}
            continue
        (o1, e1), (o2, e2) = res
        same = all(np.array_equal(o1[n].view(np.uint8), o2[n].view(np.uint8)) for n in o1)
        if not same:
            summary[k] = {"status": "nondet"}
            continue
        summary[k] = {"status": "ok", "outputs": sorted(o1), "extra": sorted(e1)}
        for n, a in o1.items():
            arrays[f"{i}|o|{n}"] = a
        for n, a in e1.items():
            arrays[f"{i}|x|{n}"] = a
    np.savez(out_path + ".npz", **{k.replace("|", "__"): v for k, v in arrays.items()})
    json.dump({"runs": summary}, open(out_path + ".json", "w"))
    return 0


# ---- judging --------------------------------------------------------------------------

class Judge:
    def __init__(self, cfg):
        import numoracle
        self.n = numoracle
        self.cfg = cfg
        self.meta = numoracle.ops()
        self.p999 = {}

    def roles(self, op):
        return {t["name"]: t["role"] for t in self.meta[op]["inputs"]}

    def out_fmt(self, o, dt):
        return dt  # the default plans store outputs in the input dtype

    def reference(self, o, dt, ins, params):
        """Midpoints of numoracle's enclosure rounded to the output format, by output."""
        import numpy as np
        import checks
        lo, hi, _ = self.n.bounds(o["op"], ins, dtype=dt, plan=o.get("plans", {}).get(dt), params=params)
        names = [t["name"] for t in self.meta[o["op"]]["outputs"]]
        if not isinstance(lo, dict):
            lo, hi = {names[0]: lo}, {names[0]: hi}
        ref = {}
        for k in lo:
            a, b = as_f64(lo[k], dt), as_f64(hi[k], dt)
            with np.errstate(invalid="ignore", over="ignore"):
                m = np.where(a == b, a, a / 2 + b / 2)
            ref[k] = checks.round_to(m, dt)
        return ref

    def judge(self, o, inp, ins, outs, params, ref):
        """Verdict string (one letter per check: P F I -) and numoracle's counts."""
        import numpy as np
        import checks
        dt = inp[0]
        try:
            r = self.n.check(o["op"], ins, outs, dtype=dt, plan=o.get("plans", {}).get(dt), params=params)
            v0 = {"PASS": "P", "FAIL": "F", "INCONCLUSIVE": "I"}[r.verdict]
            cnt = r.counts
            nc = {"pass": cnt["pass"], "fail": cnt["fail"], "inc": cnt["inconclusive"]}
        except self.n.Error as e:
            v0, nc = "E", {"error": str(e)[:200]}
        roles = self.roles(o["op"])
        f64_in = {k: as_f64(v, dt) for k, v in ins.items()}
        row_len = int(str(inp[1]).split("x")[-1]) if "row_len" not in o else o["row_len"]
        letters = {c: [] for c in checks.CHECKS[1:]}
        err = [0.0, 0.0]
        for name, a in outs.items():
            cand = as_f64(a, dt)
            ref_t = ref[name]
            t = checks.Tensor(o["op"], dt, "fp32", ref_t, f64_in, roles, row_len,
                              self.p999.get((o["op"], dt, name)))
            for c in letters:
                letters[c].append(t.judge(c, cand))
            ea, er = checks.errors(cand, ref_t)
            err = [max(err[0], ea), max(err[1], er)]
        v = v0 + "".join(checks.combine(letters[c]) for c in checks.CHECKS[1:])
        if v0 == "F":
            w = r.to_dict().get("worst") or {}
            nc["worst"] = {k: w.get(k) for k in ("tensor", "index", "candidate", "r_lo", "r_hi", "outside_ulps")}
        return v, nc, err

    def alt(self, o, inp, ins, outs, params):
        """numoracle's verdict on a correct run under each of the config's alt_plans
        (evidence for the plan choice; never used for detection)."""
        res = {}
        alts = list(self.cfg.get("alt_plans", [])) + list(o.get("alt_plans", {}).get(inp[0], []))
        for pl in alts:
            # an entry: a plan text, or {"plan": text, "params": {...}} (params over the operator's)
            txt, pp = (pl, params) if isinstance(pl, str) else (pl.get("plan", ""), {**params, **pl.get("params", {})})
            name = (txt or "default") + ("" if isinstance(pl, str) else " " + " ".join(
                f"{k}={v}" for k, v in sorted(pl.get("params", {}).items())))
            try:
                r = self.n.check(o["op"], ins, outs, dtype=inp[0], plan=txt or None, params=pp)
                res[name] = r.verdict[0]
            except self.n.Error:
                res[name] = "E"
        return res


# ---- the parent -----------------------------------------------------------------------

class Journal:
    def __init__(self, path, cfg, force=False):
        self.path = path
        self.done = {}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            lines = open(path, "rb").read().split(b"\n")
            good = []
            for ln in lines:
                if not ln.strip():
                    continue
                try:
                    d = json.loads(ln)
                except ValueError:
                    break  # a torn last line (killed mid-write) is dropped
                good.append(ln)
                if d.get("t") == "header" and d["hash"] != cfg["hash"] and not force:
                    raise SystemExit(f"{path}: journal of another config (hash {d['hash']}, this {cfg['hash']}); "
                                     "--force to resume anyway")
                if "id" in d:
                    self.done[d["id"]] = d
            with open(path, "wb") as f:
                f.write(b"".join(x + b"\n" for x in good))
        self.f = open(path, "ab")

    def write(self, d):
        self.f.write((json.dumps(d, sort_keys=True) + "\n").encode())
        if "id" in d:
            self.done[d["id"]] = d

    def sync(self):
        self.f.flush()
        os.fsync(self.f.fileno())


def parent_main(cfg, args):
    import numpy as np
    import torch
    import numoracle
    import checks
    t0 = time.time()
    shard_i, shard_n = args.shard
    jpath = cfg["journal"] if shard_n == 1 else cfg["journal"].replace(".jsonl", f".{shard_i}of{shard_n}.jsonl")
    J = Journal(jpath, cfg, args.force)
    if "header" not in J.done:
        prov = {"torch": torch.__version__, "cuda": torch.version.cuda, "numoracle": numoracle.version()}
        try:
            import triton
            prov["triton"] = triton.__version__
        except ImportError:
            pass
        prov["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
        commits = {}
        for name, root in cfg["subjects"].items():
            p = os.path.join(os.path.dirname(root), "COMMITS.json")
            if os.path.exists(p):
                commits = json.load(open(p))
        J.write({"t": "header", "id": "header", "hash": cfg["hash"], "engine": ENGINE, "provenance": prov,
                 "commits": commits, "shard": f"{shard_i}/{shard_n}"})
    judge = Judge(cfg)
    os.makedirs(cfg["work_dir"], exist_ok=True)
    dev = torch.device("cuda")
    ops = [o for o in cfg["operators"] if not args.ops or o["op"] in args.ops.split(",")]

    # prepare: mutants (journaled once per shard; the same ids in every shard)
    muts = {}
    for o in ops:
        src = open(os.path.join(cfg["subjects"][o["subject"]], o["file"])).read()
        allm = tmut.generate(src, o["op"], o["file"], o["functions"], cfg.get("mutation_operators", tmut.MUTATION_OPERATORS))
        keep = tmut.sample(allm, cfg["max_per_op"]) if cfg.get("generated", True) else []
        # real faults: the subject's file as it was before a fix (real_faults.py builds them)
        for fl in cfg.get("faults", []):
            if fl["op"] == o["op"]:
                fsrc = open(os.path.join(os.path.dirname(os.path.abspath(args.config)), fl["source"])).read()
                keep.append(tmut.Mutant(fl["id"], o["op"], o["file"], "real", "", 0, 0,
                                        f"real fault, fixed by {fl['commit']}: {fl['desc']}",
                                        tmut.unified_diff(src, fsrc, o["file"]), fsrc))
        if cfg.get("null_control", True):
            keep.append(tmut.null_mutant(src, o["op"], o["file"]))
        if cfg.get("bp_per_op", 0):
            keep += tmut.sample(tmut.generate(src, o["op"], o["file"], o["functions"], ("bp",)), cfg["bp_per_op"])
        muts[o["op"]] = keep
        for m in keep:
            if "mutant|" + m.id not in J.done:
                J.write({"t": "mutant", "id": "mutant|" + m.id, "mid": m.id, "op": o["op"], "mop": m.mop,
                         "func": m.func, "line": m.line, "col": m.col, "desc": m.desc, "diff": m.diff,
                         "file": o["file"], "generated_total": len(allm)})
    J.sync()

    pool = cf.ThreadPoolExecutor(max_workers=max(2, cfg["workers"]))

    def correct_run(o, inp, phase):
        rid = f"{phase}|{key_of(o['op'], inp)}|liger"
        params = op_params(o)
        ins = gen_inputs(o, inp, params)
        try:
            outs, extra = run_adapter(o, mod_of[o["op"]], to_torch(ins, None, dev), params)
        except Exception as e:
            return rid, inp, None, None, None, f"{type(e).__name__}: {str(e)[:300]}"
        ins.update(extra)
        return rid, inp, ins, outs, params, None

    mod_of = {o["op"]: load_module(cfg, o) for o in ops}
    base_store = {}

    # calibration (every shard: p999 needs all of it), then evaluation
    for o in ops:
        calib_err = {}
        for phase, which in (("calib", "calib"), ("eval", "eval")):
            lst = inputs_of(cfg, o, which)
            if phase == "eval":
                for (dt, name), vals in calib_err.items():
                    a, r = np.concatenate(vals[0]), np.concatenate(vals[1])
                    judge.p999[(o["op"], dt, name)] = (float(np.quantile(a, 0.999)) if a.size else 0.0,
                                                       float(np.quantile(r, 0.999)) if r.size else 0.0)
                # a shard's share by a hash of the input's key: stable when --eval-seeds grows
                lst = [x for x in lst if zlib.crc32(key_of(o["op"], x).encode()) % shard_n == shard_i - 1
                       or x[4] in cfg["mutant_seeds"]]
            futs = []
            for inp in lst:
                rid = f"{phase}|{key_of(o['op'], inp)}|liger"
                need_base = phase == "eval" and inp[4] in cfg["mutant_seeds"]
                if rid in J.done and not need_base and phase == "eval":
                    continue
                rid, inp, ins, outs, params, err = correct_run(o, inp, phase)
                if err:
                    J.write({"t": "run", "id": rid, "op": o["op"], "phase": phase, "role": "correct",
                             "status": "error", "msg": err, "cls": inp[3]})
                    continue
                if need_base:
                    base_store[key_of(o["op"], inp)] = (ins, outs)
                if phase == "calib":
                    ref = judge.reference(o, inp[0], ins, params)
                    for name, a in outs.items():
                        c, e = as_f64(a, inp[0]), ref[name]
                        ok = np.isfinite(c) & np.isfinite(e)
                        d = np.abs(c[ok] - e[ok])
                        nz = e[ok] != 0
                        slot = calib_err.setdefault((inp[0], name), ([], []))
                        slot[0].append(d.ravel())
                        slot[1].append((d[nz] / np.abs(e[ok][nz])).ravel())
                    continue
                if rid in J.done:
                    continue
                futs.append(pool.submit(lambda a: (a, judge.judge(o, a[1], a[2], a[3], a[4],
                                                                   judge.reference(o, a[1][0], a[2], a[4])),
                                                   judge.alt(o, a[1], a[2], a[3], a[4])),
                                        (rid, inp, ins, outs, params)))
            for fu in futs:
                (rid, inp, ins, outs, params), (v, nc, err), alt = fu.result()
                J.write({"t": "run", "id": rid, "op": o["op"], "phase": "eval", "role": "correct", "status": "ok",
                         "dtype": inp[0], "shape": inp[1], "family": inp[2], "cls": inp[3], "seed": inp[4],
                         "v": v, "n": nc, "err": err, "alt": alt})
            J.sync()
        J.write({"t": "calib", "id": f"calib|{o['op']}",
                 "p999": {f"{k[1]}|{k[2]}": v for k, v in judge.p999.items() if k[0] == o["op"]}})
        J.sync()
        print(f"[{time.time() - t0:7.1f}s] {o['op']}: correct runs done", flush=True)

    # mutants: one child process each, `workers` at a time
    # round robin over the operators, so that a slice cut by --budget covers all of them
    # controls (null, bp, real faults) of every operator first, so that a slice cut by
    # --budget still has them; then the generated mutants
    per_op, controls = [], []
    for o in ops:
        mine = [m for j, m in enumerate(muts[o["op"]]) if j % shard_n == shard_i - 1 and f"mdone|{m.id}" not in J.done]
        controls += [(o, m) for m in mine if m.mop in ("null", "bp", "real")]
        per_op.append([(o, m) for m in mine if m.mop not in ("null", "bp", "real")])
    todo = controls + [x for rnd in range(max([len(q) for q in per_op] or [0])) for q in per_op if rnd < len(q)
                       for x in [q[rnd]]]
    wd = os.path.join(cfg["work_dir"], "mut")
    os.makedirs(wd, exist_ok=True)

    def run_child(o, m):
        sp = os.path.join(wd, m.id + ".py")
        with open(sp, "w") as f:
            f.write(m.source)
        outp = os.path.join(wd, m.id)
        for ext in (".json", ".npz"):
            if os.path.exists(outp + ext):
                os.remove(outp + ext)
        env = dict(os.environ)
        # one cache for all: Triton keys a kernel by its source, so a mutant never reads
        # another's binary, and the kernels a mutant leaves alone compile once
        env["TRITON_CACHE_DIR"] = os.path.join(cfg["work_dir"], "triton-cache")
        cmd = [sys.executable, os.path.abspath(__file__), "--config", args.config, "--child", o["op"], m.id, sp, outp]
        t1 = time.time()
        p = None
        try:
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            live.add(p)
            try:
                log, _ = p.communicate(timeout=cfg["timeout"])
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                return o, m, "timeout", None, time.time() - t1, ""
        except OSError as e:
            return o, m, "error", None, 0.0, str(e)
        finally:
            if p is not None:
                live.discard(p)
        tail = log.decode(errors="replace")[-400:]
        if p.returncode < 0:
            return o, m, "crash", None, time.time() - t1, f"signal {-p.returncode}: {tail}"
        if p.returncode == 3:
            return o, m, "stillborn", json.load(open(outp + ".json")), time.time() - t1, ""
        if p.returncode != 0 or not os.path.exists(outp + ".json"):
            return o, m, "crash", None, time.time() - t1, f"exit {p.returncode}: {tail}"
        return o, m, "ok", json.load(open(outp + ".json")), time.time() - t1, ""

    live = set()

    def on_term(signum, _frame):
        # `timeout` or a kill of the slice: end the children (their own sessions) too;
        # the journal is synced after every mutant, so nothing journaled is lost
        for p in list(live):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        print(f"signal {signum}: children ended, stopping (resume with the same command)", flush=True)
        os._exit(143)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    cpool = cf.ThreadPoolExecutor(max_workers=cfg["workers"])
    futs = [cpool.submit(run_child, o, m) for o, m in todo]
    deadline = t0 + args.budget if args.budget else None
    n_finished = [0]

    def budget_spent():
        # checked after every finished mutant, whatever its status: a hang or a stillborn
        # mutant finishing last must cut the slice as well as a judged one.  --max-mutants
        # is the same cut by count, which a test can rely on on a machine of any speed.
        n_finished[0] += 1
        if deadline and time.time() > deadline:
            print("budget reached: stopping (resume with the same command)", flush=True)
        elif args.max_mutants and n_finished[0] >= args.max_mutants:
            print(f"mutant limit reached ({args.max_mutants}): stopping (resume with the same command)", flush=True)
        else:
            return False
        for f2 in futs:
            f2.cancel()
        cpool.shutdown(wait=False, cancel_futures=True)
        for p in list(live):  # the children started last: ended, journaled as not run
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        return True

    for fu in cf.as_completed(futs):
        o, m, st, res, secs, msg = fu.result()
        role = {"null": "null", "bp": "bp"}.get(m.mop, "mutant")
        if st != "ok":
            J.write({"t": "mstatus", "id": f"mdone|{m.id}", "mid": m.id, "op": o["op"], "role": role, "status": st,
                     "msg": (res or {}).get("stillborn", msg)[:400], "secs": round(secs, 2)})
            J.sync()
            if budget_spent():
                break
            continue
        data = np.load(os.path.join(wd, m.id + ".npz"))
        arrs = {k.replace("__", "|"): data[k] for k in data.files}
        params = op_params(o)

        def judge_one(i, inp):
            k = key_of(o["op"], inp)
            r = res["runs"].get(k)
            rid = f"mut|{k}|{m.id}"
            rec = {"t": "run", "id": rid, "op": o["op"], "phase": "mutant", "role": role, "mid": m.id,
                   "dtype": inp[0], "shape": inp[1], "family": inp[2], "cls": inp[3], "seed": inp[4]}
            if r is None:
                return None  # not reached (an earlier crash ended the child)
            if r["status"] != "ok":
                rec.update(status=r["status"], msg=r.get("msg", ""))
                return rec
            outs = {n: arrs[f"{i}|o|{n}"] for n in r["outputs"]}
            bins, bouts = base_store[k]
            ins = dict(bins)
            for n in r["extra"]:
                ins[n] = arrs[f"{i}|x|{n}"]
            ndiff = int(sum(int((outs[n].view(np.uint8).reshape(outs[n].shape + (-1,)) !=
                                 bouts[n].view(np.uint8).reshape(bouts[n].shape + (-1,))).any(-1).sum())
                            for n in outs))
            ref = judge.reference(o, inp[0], ins, params)
            v, nc, err = judge.judge(o, inp, ins, outs, params, ref)
            rec.update(status="ok", v=v, n=nc, err=err, eff=ndiff > 0, ndiff=ndiff)
            return rec

        def judge_safe(a):
            try:
                return judge_one(*a)
            except Exception as e:  # a judging error is journaled, never ends the campaign
                return {"t": "run", "id": f"mut|{key_of(o['op'], a[1])}|{m.id}", "op": o["op"], "phase": "mutant",
                        "role": role, "mid": m.id, "status": "error", "msg": f"judge: {type(e).__name__}: {e}"[:300],
                        "dtype": a[1][0], "shape": a[1][1], "family": a[1][2], "cls": a[1][3], "seed": a[1][4]}

        for rec in pool.map(judge_safe, list(enumerate(inputs_of(cfg, o, "mutant")))):
            if rec is not None:
                J.write(rec)
        J.write({"t": "mstatus", "id": f"mdone|{m.id}", "mid": m.id, "op": o["op"], "role": role, "status": "ok",
                 "secs": round(secs, 2)})
        J.sync()
        if budget_spent():
            break
    J.write({"t": "note", "wall_s": round(time.time() - t0, 1), "shard": f"{shard_i}/{shard_n}",
             "mutants_left": sum(1 for f2 in futs if f2.cancelled())})
    J.sync()
    print(f"[{time.time() - t0:7.1f}s] done: journal {jpath}", flush=True)
    os._exit(0)  # children of cancelled futures are not waited for


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--shard", default="1/1")
    ap.add_argument("--gpu", default=None, help="CUDA_VISIBLE_DEVICES for this process (one process per GPU)")
    ap.add_argument("--ops", default="", help="comma-separated subset of the config's operators")
    ap.add_argument("--budget", type=float, default=0, help="stop starting mutants after this many seconds")
    ap.add_argument("--max-mutants", type=int, default=0,
                    help="stop starting mutants once this many have finished in this call (0: no limit)")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--eval-seeds", type=int, default=0,
                    help="judge only the first K evaluation seeds in this call (the rest resume later)")
    ap.add_argument("--child", nargs=4, metavar=("OP", "ID", "SRC", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        i, n = (int(x) for x in args.shard.split("/"))
        if not 1 <= i <= n:
            raise ValueError
    except ValueError:
        print(f"campaign.py: error: bad --shard {args.shard!r}: expected I/N with 1 <= I <= N", file=sys.stderr)
        return 2
    args.shard = (i, n)
    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    cfg = load_config(args.config)
    cfg["eval_seeds_now"] = args.eval_seeds
    if args.child:
        try:
            return child_main(cfg, *args.child, None)
        except Exception:
            traceback.print_exc()
            return 4
    return parent_main(cfg, args)


if __name__ == "__main__":
    sys.exit(main())
