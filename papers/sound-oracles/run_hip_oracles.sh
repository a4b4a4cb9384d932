#!/usr/bin/env bash
# Issue 22's campaign evidence: the HIP campaign judged with the CPU oracle and again with
# the GPU tier (numoracle campaign --oracle-device gpu), each timed, then the two journals
# compared run by run (compare_oracles.py) and both reports' tables printed. On a GPU
# machine, from the repository root, after `ninja -C build-gpu` (run_hip.sh's build).
# Each step is its own invocation (a device call is limited to 10 minutes); a step cut
# short resumes from its journal when run again.
#
#   usage: bash papers/sound-oracles/run_hip_oracles.sh cpu|gpu|compare OUTDIR [CONFIG]
#   (CONFIG default campaign_hip.json; journals in papers/sound-oracles/out/oracles-*.jsonl;
#   B=build-sim: another build directory)
set -u
step=${1:?step: cpu, gpu or compare}
O=${2:?OUTDIR}
cfg=${3:-campaign_hip.json}
root="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$O"
O="$(cd "$O" && pwd)"
cd "$root/papers/sound-oracles" || exit 2
tag=$(basename "$cfg" .json)
case $step in
cpu|gpu)
    t0=$(date +%s.%N)
    ../../${B:-build-gpu}/apps/numoracle campaign --config "$cfg" --progress off --oracle-device "$step" \
        --journal "out/oracles-$tag-$step.jsonl" --out "out/oracles-$tag-$step" >"$O/campaign_$step.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "step=$step config=$cfg rc=$rc wall_s=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")" | tee -a "$O/campaign_$step.txt"
    cp "out/oracles-$tag-$step/report.md" "$O/report_$step.md" 2>/dev/null
    grep -c '"od":"gpu"' "out/oracles-$tag-$step.jsonl" | sed 's/^/runs judged on the GPU: /'
    # what compare_oracles.py reads, small enough to bring back from a device machine
    /usr/bin/env python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "run" and r.get("status") == "ok" and "nmo" in r:
        print(json.dumps({k: r[k] for k in ("type", "id", "op", "status", "nmo", "od", "oderr") if k in r}))
' "out/oracles-$tag-$step.jsonl" | gzip -9 >"$O/verdicts_$step.jsonl.gz" ;;
compare) # the journals, or the verdicts_*.jsonl.gz of the steps in OUTDIR
    a="out/oracles-$tag-cpu.jsonl" b="out/oracles-$tag-gpu.jsonl"
    [ -f "$a" ] || { gunzip -c "$O/verdicts_cpu.jsonl.gz" >"$O/verdicts_cpu.jsonl" && a="$O/verdicts_cpu.jsonl"; }
    [ -f "$b" ] || { gunzip -c "$O/verdicts_gpu.jsonl.gz" >"$O/verdicts_gpu.jsonl" && b="$O/verdicts_gpu.jsonl"; }
    /usr/bin/env python3 compare_oracles.py "$a" "$b" | tee "$O/compare.txt"
    echo "compare rc=${PIPESTATUS[0]}"
    for s in cpu gpu; do
        r="out/oracles-$tag-$s/report.md"
        [ -f "$r" ] || r="$O/report_$s.md"
        echo "== $s"; grep -E "^\| (numoracle|torch|vLLM|hipDNN|Trans|Higham|calib)" "$r" 2>/dev/null | head -7
        grep -E "^Runs:|^numoracle INCONCLUSIVE" "$r" 2>/dev/null
    done ;;
*) echo "unknown step $step" >&2; exit 2 ;;
esac
