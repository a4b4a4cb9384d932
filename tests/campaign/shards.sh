#!/usr/bin/env bash
# Shards: --shard 1/2 and 2/2 run disjoint halves of the evaluation inputs; their
# journals merged with --report-only give exactly the report of the unsharded campaign.
#
#   usage: bash tests/campaign/shards.sh path/to/numoracle
set -u
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/campaign/shards.sh path/to/numoracle" >&2
    exit 2
fi
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d "${TMPDIR:-/tmp}/nmo-shards.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work" || exit 2
cat >s.json <<CFG
{"name": "shards", "operators": "all", "dtypes": ["bf16"],
 "families": {"main": ["gaussian"], "shifted": ["large"]}, "seeds": [1, 2, 3], "mutant_seeds": [1],
 "mutants": {"max_per_op": 4}, "calibration": {"seeds": [1001]}, "timeout": 3, "work_dir": "$work/wd"}
CFG
"$NMO" campaign --config s.json --journal full.jsonl --out full --quiet || fail "unsharded run"
"$NMO" campaign --config s.json --journal s1.jsonl --shard 1/2 --out r1 --quiet || fail "shard 1/2"
"$NMO" campaign --config s.json --journal s2.jsonl --shard 2/2 --out r2 --quiet || fail "shard 2/2"
"$NMO" campaign --config s.json --report-only --journal s1.jsonl --journal s2.jsonl --out merged --quiet || fail "merge"
e1=$(grep -c '"phase":"eval"' s1.jsonl); e2=$(grep -c '"phase":"eval"' s2.jsonl); ef=$(grep -c '"phase":"eval"' full.jsonl)
[ "$e1" -gt 0 ] && [ "$e2" -gt 0 ] || fail "an empty shard ($e1, $e2)"
[ $((e1 + e2)) -eq "$ef" ] || fail "shards ran $e1 + $e2 evaluation runs, unsharded $ef"
cmp -s full/report.json merged/report.json || { diff full/report.json merged/report.json | head; fail "merged report differs"; }
echo "ok: shards of $e1 and $e2 evaluation runs merge into the unsharded report"
