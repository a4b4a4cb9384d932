#!/usr/bin/env bash
# CLI behaviour pinned by expected-output files (DESIGN §12).
#
#   usage: bash tests/cli/run.sh path/to/numoracle [CASE-NAME-GLOB]
#
# Each tests/cli/cases/*.case is a small text file, one directive per line ('#' lines
# and blank lines are comments):
#   args: ARGS            the command line after `numoracle` (shell quoting allowed)
#   exit: N               expected exit status (exact)
#   stderr: LINE          expected stderr, one directive per line, compared exactly;
#                         no stderr directive = stderr must be empty
#   stdout: ERE           some stdout line must match (grep -E); repeatable
#   stdout-each: ERE      every stdout line must match, and stdout is not empty
#   setup: SHELL          run before the command (bash -c, in the case's directory)
#   post: SHELL           run after; must exit 0 (e.g. files written, JSON parses)
#   env: NAME=VALUE       set in the command's environment (repeatable)
# Every case runs in its own empty temporary directory; $NMO is the binary (absolute),
# $NMO_SRC the source tree.
# A case expecting exit 2 (usage or input error) must also leave stdout empty.
# The last line is `N passed, N failed`; the exit status is 1 when anything failed.
set -u
# the runners read these; a developer's own settings must not leak into the cases
unset HIPDNN_TEST_GOLDEN_DATA_DIR HIPDNN_TEST_VERIFICATION_MODE NUMORACLE_GOLDEN_DATA_DIR NUMORACLE_VERIFICATION_MODE

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/cli/run.sh path/to/numoracle [CASE-GLOB]" >&2
    exit 2
fi
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
export NMO
# the source tree (contracts/ and other inputs that cases copy)
NMO_SRC="$(cd "$(dirname "$0")/../.." && pwd)"
export NMO_SRC
only="${2:-*}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/numoracle-cli.XXXXXX")"
trap 'rm -rf "$work"' EXIT

pass=0
fail=0

for f in "$here"/cases/$only.case; do
    [ -f "$f" ] || continue
    name="$(basename "$f" .case)"
    d="$work/$name"
    mkdir -p "$d"
    args=""
    have_args=0
    exit_want=""
    greps=()
    eachs=()
    setups=()
    posts=()
    envs=()
    problems=()
    : >"$work/$name.stderr.want"
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in
        '#'* | '') ;;
        'args:'*) args="${line#args:}"; args="${args# }"; have_args=1 ;;
        'exit: '*) exit_want="${line#exit: }" ;;
        'stderr: '*) printf '%s\n' "${line#stderr: }" >>"$work/$name.stderr.want" ;;
        'stdout: '*) greps+=("${line#stdout: }") ;;
        'stdout-each: '*) eachs+=("${line#stdout-each: }") ;;
        'setup: '*) setups+=("${line#setup: }") ;;
        'post: '*) posts+=("${line#post: }") ;;
        'env: '*) envs+=("${line#env: }") ;;
        *) problems+=("malformed case line: $line") ;;
        esac
    done <"$f"
    [ "$have_args" = 1 ] || problems+=("no args: line")
    [ -n "$exit_want" ] || problems+=("no exit: line")

    for s in ${setups[@]+"${setups[@]}"}; do
        if ! (cd "$d" && bash -c "$s") >"$work/$name.setup.out" 2>&1; then
            problems+=("setup failed: $s")
            problems+=("$(cat "$work/$name.setup.out")")
        fi
    done

    (cd "$d" && eval "set -- $args" && exec env ${envs[@]+"${envs[@]}"} "$NMO" "$@") >"$work/$name.stdout" 2>"$work/$name.stderr"
    rc=$?

    if [ "$rc" != "$exit_want" ]; then
        problems+=("exit status $rc, expected $exit_want")
    fi
    if ! cmp -s "$work/$name.stderr.want" "$work/$name.stderr"; then
        problems+=("stderr differs (--- expected, +++ actual):")
        problems+=("$(diff -u "$work/$name.stderr.want" "$work/$name.stderr" | tail -n +3)")
    fi
    if [ "$exit_want" = 2 ] && [ -s "$work/$name.stdout" ]; then
        problems+=("stdout not empty on a usage/input error")
    fi
    for p in ${greps[@]+"${greps[@]}"}; do
        grep -Eq -- "$p" "$work/$name.stdout" || problems+=("no stdout line matches: $p")
    done
    for p in ${eachs[@]+"${eachs[@]}"}; do
        if [ ! -s "$work/$name.stdout" ]; then
            problems+=("stdout empty, expected every line to match: $p")
        elif grep -Evq -- "$p" "$work/$name.stdout"; then
            problems+=("stdout lines not matching $p:")
            problems+=("$(grep -Ev -- "$p" "$work/$name.stdout" | head -5)")
        fi
    done
    for s in ${posts[@]+"${posts[@]}"}; do
        if ! (cd "$d" && bash -c "$s") >"$work/$name.post.out" 2>&1; then
            problems+=("post check failed: $s")
            problems+=("$(cat "$work/$name.post.out")")
        fi
    done

    if [ ${#problems[@]} -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name: numoracle $args"
        for p in "${problems[@]}"; do printf '%s\n' "$p" | sed 's/^/     /'; done
        if [ -s "$work/$name.stdout" ]; then
            echo "     stdout (first 12 lines):"
            head -12 "$work/$name.stdout" | sed 's/^/       /'
        fi
    fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
