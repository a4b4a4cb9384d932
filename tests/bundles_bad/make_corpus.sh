#!/usr/bin/env bash
# Rebuild the bad-input corpus (tests/bundles_bad/NN_slug/): each entry is a golden data
# root `root/` holding one malformed bundle, sweep or configuration next to a good bundle,
# and a `case` file with the pinned messages (see run.sh for the directives).
#
#   usage: bash tests/bundles_bad/make_corpus.sh path/to/numoracle
#
# The corpus is committed; rerun this only when the bundle format changes, then review
# the diff of the case files (their pinned lines are written here, by hand).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
export SOURCE_DATE_EPOCH=1767225600
cd "$here"
find . -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' -exec rm -rf {} +
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# good NAME DEST: a certified rms_norm fp32 2x5 bundle named NAME moved to DEST/NAME
good() {
    rm -rf "$tmp/g"
    "$NMO" golden --op rms_norm --dtype fp32 --shape 2x5 --seed 1 --name "$1" --root "$tmp/g" >/dev/null
    mkdir -p "$2"
    mv "$tmp/g/quick/RmsNormFwd/nchw/fp32/$1" "$2/$1"
}

# entry NN SLUG: start an entry; its root holds a good bundle good_NN (the rest of the
# run must keep passing it) and B, the folder of the bad bundle named SLUG
entry() {
    E="$here/$1_$2"
    S="$2"
    mkdir -p "$E/root/quick/$S"
    good "good_$1" "$E/root/quick/$S"
    B="$E/root/quick/$S/$S"
    G="good_$1"
    printf '# %s\n' "$3" >"$E/case"
}
bad() { good "$S" "$E/root/quick/$S"; }
say() { printf '%s\n' "$@" >>"$E/case"; }
pass_line() { say "run: PASS RmsNormFwd_nchw_fp32.$G  oracle PASS (10/10), tolerance PASS (bundle)"; }
run_fail() { # run_fail MESSAGE: the bad case fails with MESSAGE; the good one passes
    say "run-exit: 1" "run: FAIL: $1" "run: $2" ; pass_line
}
graph() { # graph NAME T0 T1 T2 NODE: an rms_norm graph JSON with replaceable pieces
    cat <<EOF
{
  "name": "$1",
  "compute_data_type": "FLOAT",
  "intermediate_data_type": "FLOAT",
  "io_data_type": "FLOAT",
  "tensors": [$2, $3, $4],
  "nodes": [$5]
}
EOF
}
T0='{"uid": 0, "name": "x", "data_type": "FLOAT", "dims": [2, 5], "strides": [5, 1], "virtual": false}'
T1='{"uid": 1, "name": "w", "data_type": "FLOAT", "dims": [5], "strides": [1], "virtual": false}'
T2='{"uid": 2, "name": "y", "data_type": "FLOAT", "dims": [2, 5], "strides": [5, 1], "virtual": false}'
NODE='{"name": "rms_norm", "type": "RmsNormFwdAttributes", "compute_data_type": "FLOAT",
   "attributes": {"x_tensor_uid": 0, "w_tensor_uid": 1, "y_tensor_uid": 2, "eps": 1e-06}}'
R="root/quick"

# ---- bundle integrity -------------------------------------------------------------------
entry 01 truncated_input "a truncated input .bin (RFC check 1)"
bad; truncate -s 13 "$B/$S.tensor0.bin"
m="$R/$S/$S/$S.tensor0.bin: uid 0 (x): size 13 bytes, expected 40 (10 elements of FLOAT)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 02 oversized_output "an expected-output .bin with extra bytes"
bad; printf 'XXXX' >>"$B/$S.tensor2.bin"
m="$R/$S/$S/$S.tensor2.bin: uid 2 (y): size 44 bytes, expected 40 (10 elements of FLOAT)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 03 dims_strides_mismatch "dims and strides of different lengths"
bad; graph "$S" '{"uid": 0, "name": "x", "data_type": "FLOAT", "dims": [2, 5], "strides": [1], "virtual": false}' "$T1" "$T2" "$NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: uid 0 (x): 2 dims but 1 strides"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 04 duplicate_uid "two tensors with the same uid"
bad; graph "$S" "$T0" '{"uid": 0, "name": "w", "data_type": "FLOAT", "dims": [5], "strides": [1], "virtual": false}' "$T2" "$NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: duplicate tensor uid 0 (tensors[0] and tensors[1])"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 05 unknown_data_type "an unknown data_type name"
bad; graph "$S" '{"uid": 0, "name": "x", "data_type": "FLOAT8", "dims": [2, 5], "strides": [5, 1], "virtual": false}' "$T1" "$T2" "$NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: uid 0 (x): unknown data_type 'FLOAT8' (known: FLOAT HALF BFLOAT16 DOUBLE FP8_E4M3 FP8_E5M2 FP8_E4M3_FNUZ FP8_E5M2_FNUZ INT32 INT64)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 06 nan_in_golden "NaN in a golden output (RFC checks 2/3)"
bad; printf '\x00\x00\xc0\x7f' | dd of="$B/$S.tensor2.bin" bs=1 seek=12 conv=notrunc status=none
m="$R/$S/$S/$S.tensor2.bin: uid 2 (y): expected output holds NaN at index [0, 3] (NaN/Inf golden data is rejected)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 07 inf_in_golden "Inf in a golden output"
bad; printf '\x00\x00\x80\xff' | dd of="$B/$S.tensor2.bin" bs=1 seek=28 conv=notrunc status=none
m="$R/$S/$S/$S.tensor2.bin: uid 2 (y): expected output holds Inf at index [1, 2] (NaN/Inf golden data is rejected)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 08 missing_input_bin "a tensor uid without its .bin (RFC check 7)"
bad; rm "$B/$S.tensor1.bin"
m="$R/$S/$S/$S.tensor1.bin: uid 1 (w): missing tensor file"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 09 unsupported_format_version "a .meta.json with format_version 2"
bad; sed -i 's/"format_version":\t1/"format_version":\t2/' "$B/$S.meta.json"
m="$R/$S/$S/$S.meta.json: format_version 2 is not supported (this reader supports 1)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 10 missing_format_version "a .meta.json without format_version"
bad; sed -i '/"format_version":/d' "$B/$S.meta.json"
m="$R/$S/$S/$S.meta.json: missing format_version (this reader supports 1)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 11 meta_not_json "a .meta.json that does not parse"
bad; printf '{"format_version": 1,\n  "generator": oops\n}\n' >"$B/$S.meta.json"
m="$R/$S/$S/$S.meta.json: not valid JSON (line 2, column 16)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 12 non_dense_strides "strides that leave gaps (v1 bundles are dense)"
bad; graph "$S" '{"uid": 0, "name": "x", "data_type": "FLOAT", "dims": [2, 5], "strides": [10, 1], "virtual": false}' "$T1" "$T2" "$NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: uid 0 (x): strides [10, 1] do not describe a dense layout of dims [2, 5] (v1 bundles are dense)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 13 unknown_operation "a node no registry operator matches (run: a SKIP, not a failure)"
bad; rm "$B/$S.meta.json"; graph "$S" "$T0" "$T1" "$T2" '{"name": "rms_normalise", "type": "RmsNormaliseAttributes", "attributes": {}}' >"$B/$S.json"
m="$R/$S/$S/$S.json: node 'rms_normalise': unsupported operation 'RmsNormaliseAttributes' (no registry operator; see numoracle ops)"
say "verify-exit: 1" "verify: error: $m" "run-exit: 0" "run: SKIP RmsNormalise_nchw_fp32.$S: $m"; pass_line

entry 14 missing_wiring "a node without one of its *_tensor_uid attributes"
bad; graph "$S" "$T0" "$T1" "$T2" '{"name": "rms_norm", "type": "RmsNormFwdAttributes", "attributes": {"x_tensor_uid": 0, "y_tensor_uid": 2}}' >"$B/$S.json"
m="$R/$S/$S/$S.json: node 'rms_norm': missing attribute 'w_tensor_uid'"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 15 wiring_unknown_uid "a *_tensor_uid naming no tensor"
bad; graph "$S" "$T0" "$T1" "$T2" '{"name": "rms_norm", "type": "RmsNormFwdAttributes", "attributes": {"x_tensor_uid": 9, "w_tensor_uid": 1, "y_tensor_uid": 2}}' >"$B/$S.json"
m="$R/$S/$S/$S.json: node 'rms_norm': x_tensor_uid 9 is not a tensor of the graph"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 16 lo_above_hi "a stored reachable set with lo > hi"
bad; dd if="$B/$S.tensor2.hi.bin" of="$tmp/h" bs=4 count=1 status=none
dd if="$B/$S.tensor2.lo.bin" of="$tmp/l" bs=4 count=1 status=none
dd if="$tmp/h" of="$B/$S.tensor2.lo.bin" bs=4 seek=0 conv=notrunc status=none
dd if="$tmp/l" of="$B/$S.tensor2.hi.bin" bs=4 seek=0 conv=notrunc status=none
m="$R/$S/$S/$S.tensor2.lo.bin: uid 2 (y): lo -0.935962677 > hi -0.935963273 at index [0, 0]"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 17 golden_outside_bounds "an expected value outside its certified set (stale bounds)"
bad; cp "$B/$S.tensor2.bin" "$tmp/y"; dd if="$tmp/y" of="$B/$S.tensor2.bin" bs=4 skip=1 seek=0 count=1 conv=notrunc status=none
m="$R/$S/$S/$S.tensor2.bin: uid 2 (y): expected value 0.491383612 at index [0, 0] lies outside its certified reachable set [-0.935963273, -0.935962677] (stale or edited bounds)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 18 missing_hi_bin "a lo bound tensor without its hi"
bad; rm "$B/$S.tensor2.hi.bin"
m="$R/$S/$S/$S.tensor2.hi.bin: uid 2 (y): missing bound tensor (lo, hi and flags come together)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 19 invalid_flag_bits "a flags byte with bits numoracle does not define"
bad; printf '\x40' | dd of="$B/$S.tensor2.flags.bin" bs=1 seek=6 conv=notrunc status=none
m="$R/$S/$S/$S.tensor2.flags.bin: uid 2 (y): invalid flag bits 0x40 at index [1, 1]"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 20 path_escaping_bundle "a tensor file that resolves outside its bundle (symlink)"
bad; mv "$B/$S.tensor0.bin" "$E/root/outside.bin"; ln -s ../../../outside.bin "$B/$S.tensor0.bin"
m="$R/$S/$S/$S.tensor0.bin: uid 0 (x): resolves outside the bundle"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 21 dtype_disagrees_with_plan "an input whose data_type the plan does not store"
bad; graph "$S" "$T0" '{"uid": 1, "name": "w", "data_type": "HALF", "dims": [5], "strides": [1], "virtual": false}' "$T2" "$NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: uid 1 (w): data_type HALF, but op rms_norm under plan in=fp32 out=fp32 stores FLOAT"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 22 shape_disagrees_with_meta "metadata shape that the tensors do not have"
bad; sed -i 's/"shape":\t\[2, 5\]/"shape":\t[5, 2]/' "$B/$S.meta.json"
m="$R/$S/$S/$S.json: tensor dims do not match op rms_norm with shape [5, 2] from the metadata"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 23 two_nodes "a multi-node graph (numoracle evaluates single-node graphs)"
bad; graph "$S" "$T0" "$T1" "$T2" "$NODE, $NODE" >"$B/$S.json"
m="$R/$S/$S/$S.json: 2 nodes (numoracle evaluates single-node graphs)"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 24 two_graphs_one_dir "two graph .json files in one bundle folder"
bad; cp "$B/$S.json" "$B/other.json"
m="$R/$S/$S: 2 graph .json files in one bundle directory (other.json $S.json); a bundle holds exactly one"
say "verify-exit: 1" "verify: error: $m"; run_fail "RmsNormFwd_nchw_fp32.$S" "  Error: $m"

entry 25 unparseable_graph "a graph .json that does not parse, next to its .bin files"
bad; printf '{"name": "x",\n "tensors": [\n' >"$B/$S.json"
m="$R/$S/$S/$S.json: not valid JSON (line 3, column 1)"
say "verify-exit: 1" "verify: error: $m"; run_fail "unknown_unknown_unknown.$S" "  Error: $m"

entry 26 missing_meta_fields "a .meta.json without the RFC's required fields"
bad; sed -i '/"generator":/d; /"reference_strategy":/d' "$B/$S.meta.json"
say "verify-exit: 1" "verify: error: $R/$S/$S/$S.meta.json: missing required field 'generator'" \
    "verify: error: $R/$S/$S/$S.meta.json: missing required field 'reference_strategy'"
say "run-exit: 0" "run: PASS RmsNormFwd_nchw_fp32.$S  oracle PASS (10/10), tolerance PASS (bundle)"; pass_line

entry 27 stray_json "a stray non-graph .json (an editor config) in a tier"
mkdir -p "$E/root/quick/$S/notes"; printf '{"editor.tabSize": 4}\n' >"$E/root/quick/$S/notes/settings.json"
m="$R/$S/notes/settings.json: not a graph JSON (no \"tensors\" or \"nodes\"); ignored"
say "verify-exit: 0" "verify: warning: $m" "run-exit: 0" "run: numoracle: warning: $m"; pass_line

entry 28 stray_bin "a .bin file that belongs to no tensor of the graph"
bad; cp "$B/$S.tensor1.bin" "$B/$S.tensor7.bin"
say "verify-exit: 0" "verify: warning: $R/$S/$S/$S.tensor7.bin: not a tensor file of $R/$S/$S/$S.json; ignored"
say "run-exit: 0" "run: PASS RmsNormFwd_nchw_fp32.$S  oracle PASS (10/10), tolerance PASS (bundle)"; pass_line

# ---- template sweeps --------------------------------------------------------------------
TEMPLATE='{
  "name": "sm",
  "io_data_type": "FLOAT",
  "tensors": [
    {"uid": 0, "name": "x", "data_type": "FLOAT", "dims": "${case.tensors.dims}", "strides": "${case.tensors.strides}"},
    {"uid": 1, "name": "y", "data_type": "FLOAT", "dims": "${case.tensors.dims}", "strides": "${case.tensors.strides}"}
  ],
  "nodes": [{"name": "softmax", "type": "SoftmaxFwdAttributes", "attributes": {"x_tensor_uid": 0, "y_tensor_uid": 1}}]
}'
TS='[{"uid": 0, "dims": [2, 3], "strides": [3, 1]}, {"uid": 1, "dims": [2, 3], "strides": [3, 1]}]'
sweep_entry() { # sweep_entry NN SLUG DESC CASES-JSON: a sweep folder root/quick/SLUG/Rows
    entry "$1" "$2" "$3"
    W="$E/root/quick/$S/Rows"
    mkdir -p "$W"
    printf '%s\n' "$TEMPLATE" >"$W/graph.template.json"
    printf '{"version": 1, "cases": %s}\n' "$4" >"$W/sweep.json"
    SW="$R/$S/Rows/sweep.json"
}
sweep_fail() { # sweep_fail CASE-ID MESSAGE
    say "verify-exit: 1" "verify: error: $2"
    say "run-exit: 1" "run: FAIL: ${S}_Rows.$1" "run:   Error: $2"; pass_line
}

sweep_entry 29 missing_placeholder "a template placeholder the case gives no value for" \
    '[{"id": "a_fp32", "values": {"tensors": [{"uid": 0, "dims": [2, 3]}, {"uid": 1, "dims": [2, 3], "strides": [3, 1]}]}, "golden": null}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': placeholder \${case.tensors.strides} of tensor uid 0: the values.tensors entry has no 'strides'"

sweep_entry 30 attribute_placeholder_missing "a node-attribute placeholder without values.attributes" \
    '[{"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": null}]'
sed -i 's/"y_tensor_uid": 1}/"y_tensor_uid": 1, "axis": "${case.attributes.axis}"}/' "$W/graph.template.json"
sweep_fail a_fp32 "$SW: case 'a_fp32': placeholder \${case.attributes.axis} has no value in values.attributes"

sweep_entry 31 case_uid_not_in_template "a case tensor uid the template does not have" \
    '[{"id": "a_fp32", "values": {"tensors": [{"uid": 0, "dims": [2, 3], "strides": [3, 1]}, {"uid": 1, "dims": [2, 3], "strides": [3, 1]}, {"uid": 5, "dims": [1], "strides": [1]}]}, "golden": null}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': tensor uid 5 is not in graph.template.json"

sweep_entry 32 case_omits_uid "a case that omits a template tensor uid" \
    '[{"id": "a_fp32", "values": {"tensors": [{"uid": 0, "dims": [2, 3], "strides": [3, 1]}]}, "golden": null}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': values.tensors omits template tensor uid 1 (cases keep the template's tensor set)"

sweep_entry 33 case_duplicate_uid "one tensor uid twice within a case" \
    '[{"id": "a_fp32", "values": {"tensors": [{"uid": 0, "dims": [2, 3], "strides": [3, 1]}, {"uid": 0, "dims": [2, 3], "strides": [3, 1]}, {"uid": 1, "dims": [2, 3], "strides": [3, 1]}]}, "golden": null}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': duplicate tensor uid 0 in values.tensors"

sweep_entry 34 golden_path_escapes "a golden.path that leaves the sweep folder" \
    '[{"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": {"id": "a_fp32", "path": "../../../../etc"}}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': golden.path '../../../../etc' escapes the bundle"

sweep_entry 35 golden_without_path "a non-null golden without golden.path" \
    '[{"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": {"id": "a_fp32"}}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': golden has no path (a non-null golden needs golden.path)"

sweep_entry 36 id_not_snake_case "a case id that is not lowercase_snake_case" \
    '[{"id": "Small-FP32", "values": {"tensors": '"$TS"'}, "golden": null}]'
sweep_fail Small_FP32 "$SW: case 'Small-FP32': id is not lowercase_snake_case"

sweep_entry 37 id_lacks_dtype "ids without the dtype token while the dtype varies" \
    '[{"id": "a_fp32", "values": {"dt": "FLOAT", "tensors": '"$TS"'}, "golden": null}, {"id": "b_small", "values": {"dt": "HALF", "tensors": '"$TS"'}, "golden": null}]'
sed -i 's/"FLOAT"/"${case.dt}"/g' "$W/graph.template.json"
sweep_fail b_small "$SW: case 'b_small': id lacks the dtype token 'fp16' (data types vary across the sweep)"
say "run: PASS ${S}_Rows.a_fp32  oracle PASS (6/6), tolerance PASS (default)"

sweep_entry 38 id_lacks_layout "ids without the layout token while the layout varies" \
    '[{"id": "a_fp32_nchw", "values": {"layout": "nchw", "tensors": '"$TS"'}, "golden": null}, {"id": "b_fp32", "values": {"layout": "nhwc", "tensors": '"$TS"'}, "golden": null}]'
sweep_fail b_fp32 "$SW: case 'b_fp32': id lacks the layout token 'nhwc' (layouts vary across the sweep)"
say "run: PASS ${S}_Rows.a_fp32_nchw  oracle PASS (6/6), tolerance PASS (default)"

sweep_entry 39 golden_dir_missing "a non-null golden whose directory is missing" \
    '[{"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": {"id": "a_fp32", "path": "golden/a_fp32/tensors.dvc"}}]'
sweep_fail a_fp32 "$SW: case 'a_fp32': golden data directory $R/$S/Rows/golden/a_fp32 is missing"

sweep_entry 40 sweep_version "a sweep.json of an unsupported version" '[]'
sed -i 's/"version": 1/"version": 2/' "$W/sweep.json"
say "verify-exit: 1" "verify: error: $SW: version 2 is not supported (this reader supports 1)"
say "run-exit: 1" "run: FAIL: ${S}_Rows.sweep" "run:   Error: $SW: version 2 is not supported (this reader supports 1)"; pass_line

sweep_entry 41 sweep_without_template "a sweep.json without graph.template.json" '[]'
rm "$W/graph.template.json"
say "verify-exit: 1" "verify: error: $SW: no graph.template.json next to it (a template sweep needs both)"
say "run-exit: 1" "run: FAIL: ${S}_Rows.sweep" "run:   Error: $SW: no graph.template.json next to it (a template sweep needs both)"; pass_line

sweep_entry 42 unused_value "a case value the template never uses (a warning)" \
    '[{"id": "a_fp32", "values": {"why": "descriptive", "tensors": '"$TS"'}, "golden": null}]'
say "verify-exit: 0" "verify: warning: $SW: case 'a_fp32': values.why is not used by the template"
say "run-exit: 0" "run: numoracle: warning: $SW: case 'a_fp32': values.why is not used by the template"
say "run: PASS ${S}_Rows.a_fp32  oracle PASS (6/6), tolerance PASS (default)"; pass_line

# ---- discovery: not combinable with the others ---------------------------------------------
sweep_entry 43 duplicate_case_id "two sweep cases with one id (a collision: a hard error)" \
    '[{"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": null}, {"id": "a_fp32", "values": {"tensors": '"$TS"'}, "golden": null}]'
say "combine: no" "verify-exit: 1" "verify: error: test name collision: ${S}_Rows.a_fp32 from $SW cases[0] and cases[1] (duplicate case id)"
say "run-exit: 2" "run: numoracle: error: test name collision: ${S}_Rows.a_fp32 from $SW cases[0] and cases[1] (duplicate case id)"
say "sweep-file: $SW" "sweep-exit: 2" "sweep: numoracle: error: $SW: duplicate case id 'a_fp32' (cases[0] and cases[1])"

entry 44 test_name_collision "two bundles producing one test name"
mkdir -p "$E/root/quick/$S/elsewhere"; good "$G" "$E/root/quick/$S/elsewhere"
m="test name collision: RmsNormFwd_nchw_fp32.$G from $R/$S/elsewhere/$G/$G.json and from $R/$S/$G/$G.json"
say "combine: no" "verify-exit: 1" "verify: error: $m" "run-exit: 2" "run: numoracle: error: $m"

entry 45 misspelled_tier "a tier folder with a typo (quik/)"
mkdir -p "$E/root/quik"; mv "$E/root/quick/$S" "$E/root/quik/$S"
say "combine: no" "verify-exit: 0" "verify: warning: root/quik: unexpected top-level directory (tiers: quick standard comprehensive full)"
say "run-exit: 0" "run: numoracle: warning: root/quik: unexpected top-level directory (tiers: quick standard comprehensive full)" "run: 0 passed, 0 failed, 0 skipped"

entry 46 empty_tier "an empty tier folder: zero cases, not a failure"
rm -rf "$E/root/quick/$S"
touch "$E/root/quick/.keep" # git keeps no empty folder; hidden entries are not discovered
say "combine: no" "run-exit: 0" "run: 0 passed, 0 failed, 0 skipped" "run: 0 inconclusive"

entry 47 payload_over_budget "tensor payload over the per-case and total budgets (RFC check 9)"
say "combine: no" "verify-args: --case-warn-mb 0.0001220703125 --total-fail-mb 0.0001220703125" "verify-exit: 1"
say "verify: warning: $R/$S/$G: case RmsNormFwd_nchw_fp32.$G tensor payload 0.00 MB exceeds the 0.00012207 MB per-case budget (needs a rationale in review)"
say "verify: error: root: total tensor payload 0.00 MB exceeds the 0.00012207 MB budget"

# ---- run configuration (RFC 0006 style), exit 2 before anything runs -----------------------
cfg_entry() { # cfg_entry NN SLUG DESC CONFIG-JSON MESSAGE
    entry "$1" "$2" "$3"
    rmdir "$E/root/quick/$S" 2>/dev/null || true
    printf '%s\n' "$4" >"$E/config.json"
    say "combine: no" "config-exit: 2" "config: numoracle: error: $5"
}
cfg_entry 48 config_not_json "a configuration that does not parse" '{"engines": {"cpu": }' \
    "config.json: not valid JSON (line 1, column 21)"
cfg_entry 49 config_unknown_key "a misspelled configuration key" '{"engines": {"cpu": {"expected_failure": ["x"]}}}' \
    "config.json: engines.cpu: unknown key 'expected_failure' (known: expected_failures tolerance_overrides tolerance)"
cfg_entry 50 config_xfail_not_array "expected_failures that is not an array" '{"engines": {"cpu": {"expected_failures": "RmsNormFwd_nchw_fp32.x"}}}' \
    "config.json: engines.cpu: expected_failures must be an array of test names"
cfg_entry 51 config_override_no_filter "a tolerance override without its glob" '{"engines": {"cpu*": {"tolerance_overrides": [{"atol": 1e-3, "rtol": 1e-3}]}}}' \
    "config.json: engines.cpu*.tolerance_overrides[0]: missing filter (a test-name glob)"
cfg_entry 52 config_negative_atol "a negative tolerance" '{"engines": {"cpu": {"tolerance_overrides": [{"filter": "*", "atol": -1}]}}}' \
    "config.json: engines.cpu.tolerance_overrides[0]: atol must be a finite number >= 0"
cfg_entry 53 config_plugin_not_loaded "an expected plugin that is not loaded" '{"plugins": {"miopen": {"path": "libmiopen_plugin.so", "engines": ["MIOPEN_PLUGIN"]}}}' \
    "config.json: expected plugin 'miopen' (libmiopen_plugin.so) is not loaded: plugin 'libmiopen_plugin.so': ./libmiopen_plugin.so: cannot open shared object file: No such file or directory"
cfg_entry 54 config_top_level "a configuration key at the top level it does not know" '{"plugin": {}}' \
    "config.json: top level: unknown key 'plugin' (known: plugins engines tolerance_overrides)"

echo "corpus: $(find . -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' | wc -l) entries"
