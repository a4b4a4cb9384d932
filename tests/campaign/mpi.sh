#!/usr/bin/env bash
# MPI: `mpirun -n 2 numoracle campaign` (each rank one shard, rank 0 merges the journals)
# reports exactly what one process reports for the same config: the same report.json.
#
#   usage: bash tests/campaign/mpi.sh path/to/numoracle [path/to/mpirun]
set -u
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/campaign/mpi.sh path/to/numoracle [path/to/mpirun]" >&2
    exit 2
fi
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
MPIRUN=${2:-mpirun}
work="$(mktemp -d "${TMPDIR:-/tmp}/nmo-mpi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$work" || exit 2
# OpenMPI refuses root unless told; CI containers run as root
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
cat >s.json <<CFG
{"name": "mpi", "operators": ["rms_norm", "softmax"], "dtypes": ["bf16"],
 "families": {"main": ["gaussian"], "shifted": ["large"]}, "seeds": [1, 2, 3, 4], "mutant_seeds": [1],
 "mutants": {"max_per_op": 3}, "calibration": {"seeds": [1001]}, "timeout": 3, "workers": 1,
 "work_dir": "$work/wd"}
CFG
"$NMO" campaign --config s.json --journal one.jsonl --out one --quiet || fail "one process"
"$MPIRUN" -n 2 --oversubscribe $root "$NMO" campaign --config s.json --journal k.jsonl --out two --progress off \
    > mpi.log 2>&1 || { tail -20 mpi.log; fail "mpirun -n 2"; }
[ -s k.rank1of2.jsonl ] && [ -s k.rank2of2.jsonl ] || fail "no per-rank journals: $(ls)"
e1=$(grep -c '"phase":"eval"' k.rank1of2.jsonl); e2=$(grep -c '"phase":"eval"' k.rank2of2.jsonl)
ef=$(grep -c '"phase":"eval"' one.jsonl)
[ "$e1" -gt 0 ] && [ "$e2" -gt 0 ] || fail "a rank ran no evaluation input ($e1, $e2)"
[ $((e1 + e2)) -eq "$ef" ] || fail "ranks ran $e1 + $e2 evaluation runs, one process $ef"
[ -f two/report.json ] || fail "rank 0 wrote no merged report"
# the same report, except which signal a crashing mutant died of: its garbage reads depend
# on the address space, which MPI_Init changes (shared-memory segments); the counts do not
sed '/"probe_detail":/d' one/report.json > one.cmp
sed '/"probe_detail":/d' two/report.json > two.cmp
cmp -s one.cmp two.cmp || { diff one.cmp two.cmp | head; fail "MPI report differs"; }
# --shard is the one-process way to split: refused together with mpirun
"$MPIRUN" -n 2 --oversubscribe $root "$NMO" campaign --config s.json --journal x.jsonl --shard 1/2 --quiet \
    > bad.log 2>&1 && fail "--shard under mpirun accepted"
grep -q -- "--shard and mpirun both split the campaign" bad.log || { cat bad.log; fail "no clear error for --shard under mpirun"; }
echo "ok: mpirun -n 2 ran $e1 + $e2 evaluation runs and rank 0 merged them into the one-process report"
