#!/usr/bin/env bash
# kl_div and jsd at 4096x4096 (16.8M terms in one reduction) on the GPU: the HIP kernels
# judged under the reduction geometry each declares (plugin ABI 2's geometry callback,
# hip/kernels/{kl_div,jsd}.hip: a block or a warp per row, then the row partials in any order)
# and under sum=any, fp32 and bf16; the bf16-accumulator mutants beside them. One short
# table on stdout; every report (text + JSON) in $OUT.
#
#   . .devroot/device-env.sh
#   meson setup build-dev -Dgpu=cuda -Dtests=disabled && ninja -C build-dev
#   bash hip/validate/geom_h200.sh            (B=build-dev SHAPE=4096x4096 by default)
#
# The checks run side by side (one process each: the oracle of a scalar loss is one unit,
# single-threaded); each is killed after 170 s (TMO), so the stage stays under 3 minutes.
# Expect: correct kernels PASS under their geometry (under any: INCONCLUSIVE or PASS by
# the error-scale rule), mutants FAIL under it. Exit 1 if a correct kernel FAILs.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
B=${B:-build-dev}
N=$B/oracle/numoracle
SHAPE=${SHAPE:-4096x4096}
TMO=${TMO:-170}
KERNELS=${KERNELS:-"kl_div:block256 kl_div:warp_row_fma kl_div:mut_acc_bf16 jsd:block256 jsd:warp_row jsd:mut_acc_bf16"}
[ -x "$N" ] || { echo "no $N: build first (see the header)"; exit 2; }
t0=$(date +%s)
for ok in $KERNELS; do
    op=${ok%%:*}; k=${ok#*:}
    for dt in fp32 bf16; do
        for pl in geom any; do
            f=$OUT/${op}_${k}_${dt}_${pl}
            if [ $pl = any ]; then set -- --plan sum=any; else set --; fi
            ( s=$(date +%s%N)
              timeout -s KILL "$TMO" "$N" check --op "$op" --dtype "$dt" --shape "$SHAPE" --candidate "hip:$k" \
                  "$@" --json "$f.json" >"$f.txt" 2>&1
              rc=$?; ms=$(( ($(date +%s%N) - s) / 1000000 ))
              echo "rc=$rc wall=$(( ms / 1000 )).$(printf %03d $(( ms % 1000 )))" >>"$f.txt" ) &
        done
    done
done
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/gpu.txt" 2>&1
printf "%-7s %-14s %-5s %-4s %-26s %-13s %10s  %-44s %s\n" op kernel dtype plan sum verdict width_med R wall_s
bad=0
for ok in $KERNELS; do
    op=${ok%%:*}; k=${ok#*:}
    for dt in fp32 bf16; do
        for pl in geom any; do
            f=$OUT/${op}_${k}_${dt}_${pl}.txt
            sum=$(sed -n 's/^plan: .* \(sum=[^ ]*\) .*/\1/p' "$f" | head -1)
            v=$(sed -n 's/^verdict: //p' "$f" | head -1)
            w=$(sed -n 's/.*reachable-set width (output ulps): median \([^ ]*\).*/\1/p' "$f" | head -1)
            r=$(sed -n 's/.*candidate \([^,]*\), R = \(\[[^]]*\]\).*/\1 in \2/p' "$f" | head -1)
            wall=$(sed -n 's/^rc=.* wall=//p' "$f")
            [ -n "$v" ] || v="ERROR($(sed -n 's/^rc=\([0-9]*\).*/\1/p' "$f"))"
            printf "%-7s %-14s %-5s %-4s %-26s %-13s %10s  %-44s %s\n" "$op" "$k" "$dt" "$pl" "${sum:--}" "$v" \
                "${w:--}" "${r:--}" "${wall:--}"
            case $k in mut_*) ;; *) [ "$v" = FAIL ] && bad=1 ;; esac
        done
    done
done
echo "geom_h200: $(( $(date +%s) - t0 )) s, shape $SHAPE, $(cat "$OUT/gpu.txt" 2>/dev/null)"
exit $bad
