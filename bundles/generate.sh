#!/usr/bin/env bash
# (Re)generate the shipped golden bundles (RFC 0011 layout with certified bounds).
#
#   usage: bash bundles/generate.sh [path/to/numoracle]     (default ./build/apps/numoracle)
#
# quick/    every operator listed by `numoracle ops`, every dtype it lists, at its first
#           test shape (`--shape test`): one bundle per (operator, dtype) named `small`,
#           inputs from the first of gaussian/shifted/uniform x seeds whose reachable sets
#           are all informative (see golden() below); plus a few template sweeps.
# standard/ a handful of realistic shapes, each under the 2 MB per-case budget.
# comprehensive/ quick bundles that no tried input makes decidable (listed at the end).
# These three tiers are rewritten as a whole; full/ is left alone.
# Backward operators ("x_bwd") are generated with their forward in the same run (the
# forward bundle lands under the same name); a forward that a backward already wrote is
# not regenerated.
#
# Everything is written into a temporary root first and swapped in at the end, so a failed
# run leaves the previous bundles untouched. generated_at is pinned (SOURCE_DATE_EPOCH) so
# that regenerating unchanged bundles yields identical bytes; export SOURCE_DATE_EPOCH to
# override. The run ends with `numoracle verify` over the new tree.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NMO="${1:-${NUMORACLE:-$here/../build/apps/numoracle}}"
[ -x "$NMO" ] || { echo "generate.sh: no numoracle at $NMO (build first: make build)" >&2; exit 2; }
NMO="$(cd "$(dirname "$NMO")" && pwd)/$(basename "$NMO")"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1767225600}" # 2026-01-01T00:00:00Z
unset NUMORACLE_GOLDEN_DATA_DIR

# the new tree is built as $top/bundles and every command runs in $top, so that the
# generation_command recorded in each bundle reads `--root bundles` (stable across runs)
top="$here/.gen.$$"
gen="$top/bundles"
rm -rf "$top"
mkdir -p "$gen"
trap 'rm -rf "$top"' EXIT
fail=0
n=0

# golden ARGS...: one bundle (and its forward for a backward operator). Inputs: the first
# of a few (shape, family, seed) choices whose reachable sets are all informative, so that
# every shipped bundle is decidable (an element whose R is wider than max_ulps is
# INCONCLUSIVE for every candidate; outputs near cancellation, as in backward passes and
# normalizations at large sizes, make a few such elements likely). `--shape test` also
# tries the op's second test shape; an explicit shape is kept. When no choice is fully
# informative, the choice with the fewest undecidable elements is written anyway: a
# quick bundle then moves to comprehensive/ (quick must decide every case: `make test`
# runs it), a standard one stays, and both are listed at the end.
notes=()
golden() {
    local last="" fs sh a shapes=("") best="" best_n="" nw
    for a in "$@"; do [ "$a" = test ] && shapes=(test test2); done
    for sh in "${shapes[@]}"; do
        for fs in "gaussian 1" "shifted 1" "uniform 1" "gaussian 2" "shifted 2" "uniform 2" "small 1" \
            "large 1" "gaussian 3" "shifted 3" "uniform 3" "gaussian 4"; do
            local args=()
            for a in "$@"; do [ -n "$sh" ] && [ "$a" = test ] && a="$sh"; args+=("$a"); done
            args+=(--family "${fs% *}" --seed "${fs#* }")
            if out="$(cd "$top" && "$NMO" golden --root bundles --informative "${args[@]}" 2>&1)"; then
                n=$((n + 1))
                printf '%s\n' "$out"
                return 0
            fi
            case "$out" in
            *"exists (use --force"*) return 0 ;; # a forward already written by its backward
            *"wider than max_ulps"*)
                last="$out"
                nw="$(printf '%s' "$out" | sed -n 's/.*error: \([0-9]*\) of .*/\1/p')"
                if [ -z "$best_n" ] || [ "$nw" -lt "$best_n" ]; then best_n="$nw"; best="${args[*]}"; fi ;;
            *) last="$out"; best=""; break 2 ;;
            esac
        done
    done
    if [ -n "$best" ]; then
        # shellcheck disable=SC2086 # best holds plain words (no spaces inside)
        set -- $best
        local moved=()
        for a in "$@"; do [ "$a" = quick ] && a=comprehensive; moved+=("$a"); done
        if out="$(cd "$top" && "$NMO" golden --root bundles "${moved[@]}" 2>&1)"; then
            n=$((n + 1))
            printf '%s\n' "$out"
            notes+=("$best_n undecidable element(s): numoracle golden ${moved[*]}")
            return 0
        fi
        last="$out"
    fi
    echo "generate.sh: FAILED: numoracle golden $*" >&2
    printf '%s\n' "$last" | sed 's/^/    /' >&2
    fail=1
}

have_op() { "$NMO" ops --op "$1" >/dev/null 2>&1; }

# ---- quick: every operator x dtype at its first test shape -----------------------------
ops="$("$NMO" ops | sed -n 's/^\([a-z0-9_]*\): .*/\1/p')"
# backward operators first: they write their forward bundle too
for op in $(printf '%s\n' $ops | grep '_bwd$' || true) $(printf '%s\n' $ops | grep -v '_bwd$'); do
    dtypes="$("$NMO" ops --op "$op" | sed -n 's/^  dtypes: *//p')"
    for dt in $dtypes; do
        # only dtypes the CPU engine runs: `numoracle run --tier quick --engine cpu` must
        # decide every shipped quick bundle (others would be SKIPs)
        if probe="$("$NMO" check --op "$op" --dtype "$dt" --shape test --candidate cpu 2>&1 >/dev/null)"; [ $? = 2 ]; then
            echo "generate.sh: quick: $op $dt skipped: $probe"
            continue
        fi
        golden --op "$op" --dtype "$dt" --shape test --name small --tier quick
    done
done

# ---- quick: template sweeps -------------------------------------------------------------
# A sweep is authored here (graph.template.json + sweep.json), then `numoracle golden
# --sweep` writes golden/{case}/ for each case. Case ids carry the dtype and layout tokens
# because both vary within the sweeps.
sweep() { # sweep DIR: generate every case of DIR/sweep.json (DIR below $top)
    if out="$(cd "$top" && "$NMO" golden --informative --sweep "${1#$top/}/sweep.json" 2>&1)"; then
        n=$((n + 1))
        printf '%s\n' "$out"
    else
        echo "generate.sh: FAILED: numoracle golden --sweep $1/sweep.json" >&2
        printf '%s\n' "$out" | sed 's/^/    /' >&2
        fail=1
    fi
}

if have_op rms_norm; then
    d="$gen/quick/RmsNormFwd/Rows"
    mkdir -p "$d"
    cat >"$d/graph.template.json" <<'EOF'
{
  "name": "rms_norm_rows",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "${case.io_data_type}",
  "tensors": [
    {"uid": 0, "name": "x", "data_type": "${case.tensors.data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false},
    {"uid": 1, "name": "w", "data_type": "${case.tensors.data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false},
    {"uid": 2, "name": "y", "data_type": "${case.tensors.data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false}
  ],
  "nodes": [
    {"name": "rms_norm", "type": "RmsNormFwdAttributes", "compute_data_type": "FLOAT",
     "attributes": {"x_tensor_uid": 0, "w_tensor_uid": 1, "y_tensor_uid": 2, "eps": "${case.attributes.eps}"}}
  ]
}
EOF
    cat >"$d/sweep.json" <<'EOF'
{
  "version": 1,
  "cases": [
    {"id": "odd_rows_fp32_nchw",
     "values": {"io_data_type": "FLOAT", "layout": "nchw", "attributes": {"eps": 1e-5},
                "tensors": [{"uid": 0, "data_type": "FLOAT", "dims": [2, 3, 257], "strides": [771, 257, 1]},
                            {"uid": 1, "data_type": "FLOAT", "dims": [257], "strides": [1]},
                            {"uid": 2, "data_type": "FLOAT", "dims": [2, 3, 257], "strides": [771, 257, 1]}]},
     "golden": {"id": "odd_rows_fp32_nchw", "path": "golden/odd_rows_fp32_nchw"},
     "metadata": {"format_version": 1, "operation": "RmsNormFwd", "seed": 11, "family": "gaussian"}},
    {"id": "odd_rows_bf16_nchw",
     "values": {"io_data_type": "BFLOAT16", "layout": "nchw", "attributes": {"eps": 1e-6},
                "tensors": [{"uid": 0, "data_type": "BFLOAT16", "dims": [2, 3, 257], "strides": [771, 257, 1]},
                            {"uid": 1, "data_type": "BFLOAT16", "dims": [257], "strides": [1]},
                            {"uid": 2, "data_type": "BFLOAT16", "dims": [2, 3, 257], "strides": [771, 257, 1]}]},
     "golden": {"id": "odd_rows_bf16_nchw", "path": "golden/odd_rows_bf16_nchw"},
     "metadata": {"format_version": 1, "operation": "RmsNormFwd", "seed": 12, "family": "shifted"}},
    {"id": "odd_rows_bf16_nhwc",
     "values": {"io_data_type": "BFLOAT16", "layout": "nhwc", "attributes": {"eps": 1e-6},
                "tensors": [{"uid": 0, "data_type": "BFLOAT16", "dims": [2, 3, 257], "strides": [771, 1, 3]},
                            {"uid": 1, "data_type": "BFLOAT16", "dims": [257], "strides": [1]},
                            {"uid": 2, "data_type": "BFLOAT16", "dims": [2, 3, 257], "strides": [771, 1, 3]}]},
     "golden": {"id": "odd_rows_bf16_nhwc", "path": "golden/odd_rows_bf16_nhwc"},
     "metadata": {"format_version": 1, "operation": "RmsNormFwd", "seed": 13, "family": "gaussian"}},
    {"id": "odd_rows_fp16_nchw",
     "values": {"io_data_type": "HALF", "layout": "nchw", "attributes": {"eps": 1e-6},
                "tensors": [{"uid": 0, "data_type": "HALF", "dims": [2, 3, 257], "strides": [771, 257, 1]},
                            {"uid": 1, "data_type": "HALF", "dims": [257], "strides": [1]},
                            {"uid": 2, "data_type": "HALF", "dims": [2, 3, 257], "strides": [771, 257, 1]}]},
     "golden": {"id": "odd_rows_fp16_nchw", "path": "golden/odd_rows_fp16_nchw"},
     "metadata": {"format_version": 1, "operation": "RmsNormFwd", "seed": 14, "family": "near_degenerate"}},
    {"id": "graph_only_fp16_nchw",
     "values": {"io_data_type": "HALF", "layout": "nchw", "attributes": {"eps": 1e-6},
                "tensors": [{"uid": 0, "data_type": "HALF", "dims": [4, 65], "strides": [65, 1]},
                            {"uid": 1, "data_type": "HALF", "dims": [65], "strides": [1]},
                            {"uid": 2, "data_type": "HALF", "dims": [4, 65], "strides": [65, 1]}]},
     "golden": null,
     "metadata": {"format_version": 1, "operation": "RmsNormFwd", "seed": 15}}
  ]
}
EOF
    sweep "$d"
fi

if have_op softmax; then
    d="$gen/quick/SoftmaxFwd/Rows"
    mkdir -p "$d"
    cat >"$d/graph.template.json" <<'EOF'
{
  "name": "softmax_rows",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "${case.io_data_type}",
  "tensors": [
    {"uid": 0, "name": "x", "data_type": "${case.tensors.data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false},
    {"uid": 1, "name": "y", "data_type": "${case.tensors.data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false}
  ],
  "nodes": [
    {"name": "softmax", "type": "SoftmaxFwdAttributes", "compute_data_type": "FLOAT",
     "attributes": {"x_tensor_uid": 0, "y_tensor_uid": 1}}
  ]
}
EOF
    cat >"$d/sweep.json" <<'EOF'
{
  "version": 1,
  "cases": [
    {"id": "vocab_row_fp32",
     "values": {"io_data_type": "FLOAT",
                "tensors": [{"uid": 0, "data_type": "FLOAT", "dims": [2, 1031], "strides": [1031, 1]},
                            {"uid": 1, "data_type": "FLOAT", "dims": [2, 1031], "strides": [1031, 1]}]},
     "golden": {"id": "vocab_row_fp32", "path": "golden/vocab_row_fp32/tensors.dvc"},
     "metadata": {"format_version": 1, "operation": "SoftmaxFwd", "seed": 21, "family": "large"}},
    {"id": "vocab_row_bf16",
     "values": {"io_data_type": "BFLOAT16",
                "tensors": [{"uid": 0, "data_type": "BFLOAT16", "dims": [2, 1031], "strides": [1031, 1]},
                            {"uid": 1, "data_type": "BFLOAT16", "dims": [2, 1031], "strides": [1031, 1]}]},
     "golden": {"id": "vocab_row_bf16", "path": "golden/vocab_row_bf16/tensors.dvc"},
     "metadata": {"format_version": 1, "operation": "SoftmaxFwd", "seed": 22, "family": "outlier"}},
    {"id": "vocab_row_fp16",
     "values": {"io_data_type": "HALF",
                "tensors": [{"uid": 0, "data_type": "HALF", "dims": [2, 1031], "strides": [1031, 1]},
                            {"uid": 1, "data_type": "HALF", "dims": [2, 1031], "strides": [1031, 1]}]},
     "golden": {"id": "vocab_row_fp16", "path": "golden/vocab_row_fp16/tensors.dvc"},
     "metadata": {"format_version": 1, "operation": "SoftmaxFwd", "seed": 23, "family": "gaussian"}}
  ]
}
EOF
    sweep "$d"
fi

if have_op matmul; then
    d="$gen/quick/MatmulFwd/Plain"
    mkdir -p "$d"
    cat >"$d/graph.template.json" <<'EOF'
{
  "name": "matmul_plain",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "${case.io_data_type}",
  "tensors": [
    {"uid": 0, "name": "A", "data_type": "${case.io_data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false},
    {"uid": 1, "name": "B", "data_type": "${case.io_data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false},
    {"uid": 2, "name": "C", "data_type": "${case.io_data_type}", "dims": "${case.tensors.dims}",
     "strides": "${case.tensors.strides}", "virtual": false}
  ],
  "nodes": [
    {"name": "matmul", "type": "MatmulFwdAttributes", "compute_data_type": "FLOAT",
     "attributes": {"A_tensor_uid": 0, "B_tensor_uid": 1, "C_tensor_uid": 2}}
  ]
}
EOF
    cat >"$d/sweep.json" <<'EOF'
{
  "version": 1,
  "cases": [
    {"id": "skinny_k513_bf16",
     "values": {"io_data_type": "BFLOAT16",
                "tensors": [{"uid": 0, "dims": [5, 513], "strides": [513, 1]},
                            {"uid": 1, "dims": [513, 7], "strides": [7, 1]},
                            {"uid": 2, "dims": [5, 7], "strides": [7, 1]}]},
     "golden": {"id": "skinny_k513_bf16", "path": "golden/skinny_k513_bf16"},
     "metadata": {"format_version": 1, "operation": "MatmulFwd", "seed": 31, "family": "shifted"}},
    {"id": "skinny_k513_fp16",
     "values": {"io_data_type": "HALF",
                "tensors": [{"uid": 0, "dims": [5, 513], "strides": [513, 1]},
                            {"uid": 1, "dims": [513, 7], "strides": [7, 1]},
                            {"uid": 2, "dims": [5, 7], "strides": [7, 1]}]},
     "golden": {"id": "skinny_k513_fp16", "path": "golden/skinny_k513_fp16"},
     "metadata": {"format_version": 1, "operation": "MatmulFwd", "seed": 32, "family": "shifted"}},
    {"id": "square_fp32",
     "values": {"io_data_type": "FLOAT",
                "tensors": [{"uid": 0, "dims": [16, 16], "strides": [16, 1]},
                            {"uid": 1, "dims": [16, 16], "strides": [16, 1]},
                            {"uid": 2, "dims": [16, 16], "strides": [16, 1]}]},
     "golden": {"id": "square_fp32", "path": "golden/square_fp32"},
     "metadata": {"format_version": 1, "operation": "MatmulFwd", "seed": 33, "family": "shifted"}}
  ]
}
EOF
    sweep "$d"
fi

# ---- standard: a handful of realistic shapes (each case < 2 MB with its bounds) --------
have_op rms_norm && golden --op rms_norm --dtype bf16 --shape 32x4096 --name llama_hidden_4096 --tier standard
have_op rms_norm && golden --op rms_norm --dtype fp16 --shape 2x32x16x64 --layout nhwc --name nhwc_4d --tier standard
have_op softmax && golden --op softmax --dtype bf16 --shape 16x8192 --name attn_row_8192 --tier standard
have_op matmul && golden --op matmul --dtype bf16 --shape 128x128x1024 --name proj_k1024 --tier standard
have_op layer_norm && golden --op layer_norm --dtype bf16 --shape 32x4096 --name hidden_4096 --tier standard
have_op cross_entropy && golden --op cross_entropy --dtype bf16 --shape 8x32000 --name vocab_32000 --tier standard

if [ "$fail" != 0 ]; then
    echo "generate.sh: some bundles failed; the previous bundles are left in place" >&2
    exit 1
fi

# ---- swap the new tiers in, then verify -------------------------------------------------
for t in quick standard comprehensive; do
    rm -rf "$here/$t.old"
    if [ -d "$here/$t" ]; then mv "$here/$t" "$here/$t.old"; fi
    if [ -d "$gen/$t" ]; then mv "$gen/$t" "$here/$t"; fi
    rm -rf "$here/$t.old"
done
echo "generate.sh: $n generation runs"
for x in ${notes[@]+"${notes[@]}"}; do echo "generate.sh: NOTE: $x"; done
"$NMO" verify "$here"
