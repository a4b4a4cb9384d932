#!/bin/sh
# One device call of the Triton campaign (Liger-Kernel on a GPU; slice 6 by default), resumable:
#   sh papers/sound-oracles/triton/device_slice3.sh OUT BUDGET [EVAL_SEEDS] [FAULTS_BUDGET]
# From the checkout root, with a numoracle build: PYTHONPATH=<root>/python and
# NUMORACLE_LIB=<root>/build.../libnumoracle.so set (PY: the interpreter, default python3;
# CFG / FCFG: the configs, default campaign_liger_s6.json / campaign_liger_faults_s4.json).
# BUDGET: seconds after which the campaign starts no more mutants (a hard `timeout` ends it
# 60 s later); EVAL_SEEDS: judge the first K evaluation seeds in this call (0: all);
# FAULTS_BUDGET: seconds for the real-fault campaign (0: not run), run first (it is small).
# SLACK: seconds a stage may run past its budget before `timeout` ends it (default 60).
# BUDGET 0: the main campaign is not run (its report is still written from the journal);
# MAX_MUTANTS: also stop once this many mutants have finished in this call (a cut by count);
# FOPS: a comma-separated subset of the fault config's operators; OPS: the same for the main
# campaign; REJUDGE=1 (with OPS): first drop OPS's records from the resumed journal, so those
# operators are judged again by this build (after an engine change that only they reach).
# REJUDGE also resumes a journal of another config (--force): one that differs from CFG in
# OPS's entries only. Slice 5 from slice 4 (kl_div's plan changed):
#   CFG=campaign_liger_s5.json OPS=kl_div REJUDGE=1 sh papers/sound-oracles/triton/device_slice3.sh OUT 120
# (with RESUME_DIR=<root>/papers/sound-oracles/results/triton-h200/s4; its journal is under s5/).
# FREJUDGE=1 (with FOPS) does the same for the fault campaign; FRESUME_DIR: where its
# journal is resumed from (default RESUME_DIR). Slice 6 (the exp figure, cross_entropy's
# geometry), from slice 5, in two calls (the second resumes from the first's journal,
# committed under s6/):
#   CFG=campaign_liger_s6.json OPS=cross_entropy,cross_entropy_bwd,jsd REJUDGE=1 \
#     RESUME_DIR=<root>/papers/sound-oracles/results/triton-h200/s5 FOPS=cross_entropy_bwd FREJUDGE=1 \
#     FRESUME_DIR=<root>/papers/sound-oracles/results/triton-h200/s4 sh .../device_slice3.sh OUT 300 0 110
#   CFG=campaign_liger_s6.json OPS=swiglu,swiglu_bwd,softmax REJUDGE=1 \
#     RESUME_DIR=<root>/papers/sound-oracles/results/triton-h200/s6 sh .../device_slice3.sh OUT 420
# Resume: the journals of earlier calls, committed under results/triton-h200/s6/, are
# unpacked first; this call's journals, logs and report go to OUT (<= 8 files).
set -u
OUT=${1:?usage: device_slice3.sh OUT BUDGET [EVAL_SEEDS] [FAULTS_BUDGET]}
BUDGET=${2:?usage: device_slice3.sh OUT BUDGET [EVAL_SEEDS] [FAULTS_BUDGET]}
ES=${3:-0}
FB=${4:-0}
PY=${PY:-python3}
CFG=${CFG:-campaign_liger_s6.json}
FCFG=${FCFG:-campaign_liger_faults_s4.json}
ROOT=$(pwd)
T=$ROOT/papers/sound-oracles/triton
R=${RESUME_DIR:-$ROOT/papers/sound-oracles/results/triton-h200/s6}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
t0=$(date +%s)

jpath() { (cd "$T" && "$PY" -c 'import sys, campaign; print(campaign.load_config(sys.argv[1])["journal"])' "$1"); }

# unpack a committed journal unless this machine already has one
resume() { # config journal-name [dir]
    j=$(jpath "$1") || { echo "cannot read $1" >&2; exit 2; }
    d=${3:-$R}
    if [ -f "$d/$2" ] && [ ! -s "$j" ]; then
        mkdir -p "$(dirname "$j")" && gunzip -c "$d/$2" > "$j" && echo "resumed $j from $d/$2 ($(wc -l < "$j") lines)"
    fi
}

stage() { # config budget eval-seeds log journal-name [ops] [rejudge] [resume-dir]
    resume "$1" "$5" "${8:-}"
    j=$(jpath "$1")
    if [ "${7:-0}" = 1 ] && [ -n "${6:-}" ] && [ -s "$j" ]; then
        "$PY" -c 'import json, sys
ops = set(sys.argv[2].split(",")); lines = open(sys.argv[1]).read().splitlines(True)
keep = [l for l in lines if not l.strip() or json.loads(l).get("op") not in ops]
open(sys.argv[1], "w").writelines(keep); print("rejudge: dropped", len(lines) - len(keep), "records of", sys.argv[2])' "$j" "$6"
    fi
    s=$(date +%s)
    # a re-judged journal may come from a config that differs in OPS's entries only
    force=; [ "${7:-0}" = 1 ] && force=--force
    (cd "$T" && exec timeout -k 10 $(($2 + ${SLACK:-60})) "$PY" campaign.py --config "$1" --budget "$2" --eval-seeds "$3" \
        ${6:+--ops "$6"} ${MAX_MUTANTS:+--max-mutants "$MAX_MUTANTS"} $force) > "$OUT/$4" 2>&1
    rc=$?
    [ -f "$j" ] && gzip -c "$j" > "$OUT/$5"
    echo "$4: rc=$rc wall=$(($(date +%s) - s))s journal=$(wc -l < "$j" 2>/dev/null || echo 0) lines" >> "$OUT/summary.txt"
}

: > "$OUT/summary.txt"
if [ "$FB" -gt 0 ]; then
    stage "$FCFG" "$FB" 0 faults.log faults.jsonl.gz "${FOPS:-}" "${FREJUDGE:-0}" "${FRESUME_DIR:-}"
fi
[ "$BUDGET" -gt 0 ] && stage "$CFG" "$BUDGET" "$ES" campaign.log journal.jsonl.gz "${OPS:-}" "${REJUDGE:-0}"
(cd "$T" && "$PY" report.py --config "$CFG" --journal "$(jpath "$CFG")" --out "$OUT/report") >> "$OUT/summary.txt" 2>&1
if [ "$FB" -gt 0 ]; then
    (cd "$T" && "$PY" report.py --config "$FCFG" --journal "$(jpath "$FCFG")" --out "$OUT/report-faults" \
        >/dev/null && grep -A6 '^| fault' "$OUT/report-faults/report.md") >> "$OUT/summary.txt" 2>&1
    rm -rf "$OUT/report-faults"
fi
rm -f "$OUT/report/report.html"   # regenerated from the journal off the device (<= 8 files here)
echo "total wall $(($(date +%s) - t0))s" >> "$OUT/summary.txt"
[ -f "$OUT/campaign.log" ] && tail -5 "$OUT/campaign.log"
cat "$OUT/summary.txt"
