#!/usr/bin/env bash
# The bad-input corpus: every entry gives its pinned messages while the rest of the run
# continues.
#
#   usage: bash tests/bundles_bad/run.sh path/to/numoracle [ENTRY-GLOB]
#
# Each tests/bundles_bad/NN_slug/ holds `root/` (a golden data root: the malformed item
# next to a good bundle), maybe `config.json`, and a `case` file of directives:
#   verify-args: ARGS   extra arguments of `numoracle verify root`
#   verify-exit: N      run `numoracle verify root`, expect exit N
#   verify: LINE        a line its output (stdout and stderr) must contain, exactly
#   run-exit: N         run `numoracle run --golden-data-dir root --tier full --engine cpu`
#   run: LINE           likewise
#   config-exit: N      run that with --config config.json
#   config: LINE
#   sweep-file: PATH    run `numoracle golden --sweep PATH --root root`
#   sweep-exit: N
#   sweep: LINE
#   combine: no         keep out of the combined runs
# Every entry runs alone in a copy of its folder. Then all combinable entries are merged
# into one root and `verify` and `run` run once over it: each entry's verify/run lines
# must still appear (one bad bundle never hides another), and so must every good
# bundle's PASS line. The last line is `N passed, N failed`.
set -u
[ $# -ge 1 ] && [ -x "$1" ] || { echo "usage: bash tests/bundles_bad/run.sh path/to/numoracle [GLOB]" >&2; exit 2; }
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
only="${2:-*}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/numoracle-bad.XXXXXX")"
trap 'rm -rf "$work"' EXIT
unset NUMORACLE_GOLDEN_DATA_DIR NUMORACLE_VERIFICATION_MODE HIPDNN_TEST_GOLDEN_DATA_DIR HIPDNN_TEST_VERIFICATION_MODE
pass=0
fail=0
entries=0
mkdir -p "$work/combined/root"
: >"$work/combined/verify.want"
: >"$work/combined/run.want"

# check OUT WANT-FILE EXIT-WANT EXIT-GOT: problems to stdout
check() {
    local out="$1" want="$2" ew="$3" eg="$4"
    [ "$ew" = "$eg" ] || echo "exit status $eg, expected $ew"
    while IFS= read -r line; do
        grep -Fxq -- "$line" "$out" || echo "missing line: $line"
    done <"$want"
}

for e in "$here"/$only; do
    [ -d "$e" ] && [ -f "$e/case" ] || continue
    name="$(basename "$e")"
    entries=$((entries + 1))
    d="$work/$name"
    cp -a "$e" "$d"
    problems=()
    combine=1
    declare -A ex=() args=()
    for k in verify run config sweep; do : >"$d/$k.want"; done
    sweep_file=""
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in
        '#'* | '') ;;
        'combine: no') combine=0 ;;
        'verify-args: '*) args[verify]="${line#verify-args: }" ;;
        'sweep-file: '*) sweep_file="${line#sweep-file: }" ;;
        *-exit:\ *) k="${line%%-exit: *}"; ex[$k]="${line#*-exit: }" ;;
        verify:\ * | run:\ * | config:\ * | sweep:\ *) k="${line%%: *}"; printf '%s\n' "${line#*: }" >>"$d/$k.want" ;;
        *) problems+=("malformed case line: $line") ;;
        esac
    done <"$e/case"
    for k in verify run config sweep; do
        [ -n "${ex[$k]:-}" ] || continue
        case "$k" in
        verify) (cd "$d" && eval "exec \"$NMO\" verify root ${args[verify]:-}") >"$d/$k.out" 2>&1 ;;
        run) (cd "$d" && exec "$NMO" run --golden-data-dir root --tier full --engine cpu) >"$d/$k.out" 2>&1 ;;
        config) (cd "$d" && exec "$NMO" run --golden-data-dir root --config config.json) >"$d/$k.out" 2>&1 ;;
        sweep) (cd "$d" && exec "$NMO" golden --sweep "$sweep_file") >"$d/$k.out" 2>&1 ;;
        esac
        rc=$?
        while IFS= read -r p; do problems+=("$k: $p"); done < <(check "$d/$k.out" "$d/$k.want" "${ex[$k]}" "$rc")
    done
    if [ "$combine" = 1 ]; then
        cp -a "$e/root/." "$work/combined/root/"
        cat "$d/verify.want" >>"$work/combined/verify.want"
        cat "$d/run.want" >>"$work/combined/run.want"
    fi
    if [ ${#problems[@]} -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name"
        for p in "${problems[@]}"; do printf '     %s\n' "$p"; done
        for k in verify run config sweep; do
            [ -s "$d/$k.out" ] && { echo "     $k output:"; sed 's/^/       /' "$d/$k.out" | head -20; }
        done
    fi
    unset ex args
done

# all combinable entries at once: nothing hides anything else
if [ "$only" = "*" ]; then
    c="$work/combined"
    (cd "$c" && exec "$NMO" verify root) >"$c/verify.out" 2>&1
    vrc=$?
    (cd "$c" && exec "$NMO" run --golden-data-dir root --tier full --engine cpu) >"$c/run.out" 2>&1
    rrc=$?
    problems=()
    # a warning-only line set never decides the exit: errors exist, so both exit 1
    while IFS= read -r p; do problems+=("verify: $p"); done < <(check "$c/verify.out" "$c/verify.want" 1 "$vrc")
    while IFS= read -r p; do problems+=("run: $p"); done < <(check "$c/run.out" "$c/run.want" 1 "$rrc")
    nbad="$(grep -c '^FAIL: ' "$c/run.out")"
    ngood="$(grep -c '^PASS ' "$c/run.out")"
    if [ ${#problems[@]} -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   combined: one verify and one run over $(ls "$c/root/quick" | wc -l) entries ($nbad failing cases, $ngood passing)"
    else
        fail=$((fail + 1))
        echo "FAIL combined"
        for p in "${problems[@]}"; do printf '     %s\n' "$p"; done
        tail -5 "$c/run.out" | sed 's/^/       /'
    fi
fi
echo "$entries corpus entries"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
