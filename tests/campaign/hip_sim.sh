#!/usr/bin/env bash
# Backend hip smoke campaign (a -Dgpu=sim build: the HIP registry's kernels run on the CPU
# simulator; with -Dgpu=cuda|hip on a device the same). Tiny on purpose: the simulator runs
# every GPU thread as a fiber. Checks: correct kernels and the registry's mutant kernels are
# run through the runner, journaled and reported with the CPU backend's rules; no numoracle
# false alarm; some mutant is effective and detected; a rerun resumes without running again;
# the kernels that declare a reduction geometry are judged under it too, with no FAIL.
#
#   usage: bash tests/campaign/hip_sim.sh path/to/numoracle
set -u
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/campaign/hip_sim.sh path/to/numoracle" >&2
    exit 2
fi
command -v python3 >/dev/null || { echo "SKIP: python3 reads the report"; exit 77; }
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
CMP="$(cd "$(dirname "$0")/../../papers/sound-oracles" && pwd)/compare_oracles.py"
work="$(mktemp -d "${TMPDIR:-/tmp}/nmo-hipsim.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work" || exit 2
cat >h.json <<CFG
{"name": "hip-sim-smoke", "backend": "hip", "operators": ["rms_norm", "softmax", "matmul"],
 "dtypes": ["bf16"], "families": {"main": ["gaussian"], "shifted": ["large"]},
 "shapes": {"rms_norm": ["2x67"], "softmax": ["2x67"], "matmul": ["5x7x9"]},
 "seeds": [1], "mutant_seeds": [1], "mutants": {"generated": false, "null_control": false},
 "checks": ["numoracle", "torch", "vllm"], "workers": 2, "timeout": 30,
 "journal": "$work/h.jsonl", "out_dir": "$work/rep"}
CFG
"$NMO" campaign --config h.json --quiet || fail "campaign"
[ -f rep/report.json ] || fail "no report"
n1=$(wc -l <h.jsonl)
"$NMO" campaign --config h.json --quiet || fail "resumed campaign"
n2=$(wc -l <h.jsonl)
[ "$n1" -eq "$n2" ] || fail "the rerun journaled $((n2 - n1)) more lines"
python3 - rep/report.json <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
fa, m, d = r["false_alarms"], r["mutants"], r["detection_main"]
def need(c, msg):
    if not c:
        print("FAIL:", msg); sys.exit(1)
need(r["campaign"]["backend"] == "hip", "backend is not hip")
need(fa["correct"]["runs_main"] >= 3 and fa["behaviour_preserving"]["runs_main"] >= 3, "too few correct runs: %s" % fa)
need(fa["correct"]["errors"] == 0 and fa["behaviour_preserving"]["errors"] == 0, "correct kernels failed: %s" % fa)
need(fa["correct"]["numoracle"] == {"main": 0, "shifted": 0}, "numoracle false alarm on a correct kernel")
need(fa["behaviour_preserving"]["numoracle"] == {"main": 0, "shifted": 0}, "numoracle false alarm on a bp kernel")
need(m["hand_written"] >= 10 and m["generated"] == 0, "mutant kernels: %s" % m)
need(d["effective"] >= 5 and d["detected"]["numoracle"] >= 5, "detection: %s" % d)
need(any(n.startswith("backend hip: device") for n in r["notes"]), "no device note: %s" % r["notes"])
# issue 17: the rms_norm and softmax kernels declare their launch geometry (kcommon.h); the
# campaign judges them under it too: runs judged, none FAILs, every geometry applied
g = {x["op"]: x for x in r["detection_main_geometry"]["per_operator"]}
bd = r["detection_main_geometry"]["by_dtype"][0]
need(g["rms_norm"]["correct_runs_under_geometry"] > 0 and g["softmax"]["correct_runs_under_geometry"] > 0,
     "no run judged under a declared geometry: %s" % g)
need(g["matmul"]["correct_runs_under_geometry"] == 0, "matmul declares no geometry: %s" % g["matmul"])
need(bd["correct_fail_under_geometry"] == 0 and bd["geometry_not_applied"] == 0, "geometry: %s" % bd)
print("ok: hip backend: %d correct + %d bp main runs, %d/%d effective mutant kernels detected by numoracle"
      % (fa["correct"]["runs_main"], fa["behaviour_preserving"]["runs_main"], d["detected"]["numoracle"], d["effective"]))
PY
# issue 22: the same campaign judged by the GPU tier (--oracle-device gpu: nmo_gpu_check on
# the kernels' outputs): numoracle's counts equal run by run (compare_oracles.py), and
# the comparison's own control: one count changed in a GPU-judged run must be reported
"$NMO" campaign --config h.json --quiet --oracle-device gpu --journal "$work/g.jsonl" --out "$work/grep" \
    || fail "campaign --oracle-device gpu"
python3 "$CMP" h.jsonl g.jsonl || fail "the GPU tier's verdicts differ from the CPU's"
python3 - g.jsonl g2.jsonl <<'PY' || exit 1
import json, sys
done = False
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    for line in f:
        r = json.loads(line)
        if not done and r.get("od") == "gpu" and r["nmo"][0] > 0:
            r["nmo"][0] -= 1; r["nmo"][1] += 1; done = True
            line = json.dumps(r) + "\n"
        o.write(line)
sys.exit(0 if done else 1)
PY
if python3 "$CMP" h.jsonl g2.jsonl >/dev/null; then fail "compare_oracles.py missed a changed count"; fi
echo "ok: --oracle-device gpu: the same numoracle counts run by run"
