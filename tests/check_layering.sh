#!/usr/bin/env bash
# The direction of dependencies (docs/DESIGN.md, "Layout"), checked on the sources:
#   refs/ and oracle/ (the operators and the library) include no hip/ or apps/ header;
#   hip/ includes no apps/ header;
#   hip/'s plain C (runner, plugin loading, registry, drivers) includes no kernel header
#   (hip/kernels/, nmo_hip.h, nmo_hip_sim.h): it reaches kernels only through the tables;
#   the installed headers (oracle/include/numoracle/) include no private header
#   (oracle/engine/, nmo_internal.h) and no <mpfr.h> (no MPFR type in the public API).
#   bash tests/check_layering.sh [SRCROOT]     exit 1 and one line per violation
set -u
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root" || exit 2
bad=0
# header names (as included: basename or a path below apps/) that belong to a layer
names_of() { find "$1" \( -name '*.h' -o -name '*.def.in' -o -name '*.hpp' \) -printf '%P\n' | sed 's/\.in$//'; }
hip_h=$(names_of hip; names_of hip | xargs -n1 basename)
app_h=$(names_of apps; names_of apps | xargs -n1 basename)
# check FILES... against a list of forbidden include names
check() {
    local what=$1 forbidden=$2; shift 2
    local f inc
    for f in "$@"; do
        while IFS= read -r inc; do
            if grep -qxF -- "$inc" <<<"$forbidden"; then
                echo "layering: $f includes \"$inc\" ($what)"; bad=1
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sed 's|^\.\./||')
    done
}
lib_files=$(find oracle refs \( -name '*.c' -o -name '*.h' -o -name '*.in' \) | sort)
hip_files=$(find hip \( -name '*.c' -o -name '*.h' -o -name '*.hip' -o -name '*.cpp' \) | sort)
# shellcheck disable=SC2086
check "a hip/ header in the library" "$hip_h" $lib_files
# shellcheck disable=SC2086
check "an app header in the library" "$app_h" $lib_files
# shellcheck disable=SC2086
check "an app header in the GPU layer" "$app_h" $hip_files
kern_h=$(cd hip && { find kernels -name '*.h' -printf '%P\n'; find kernels -name '*.h'; echo nmo_hip.h; echo nmo_hip_sim.h; })
hip_c_files=$(find hip \( -name '*.c' -o -name 'nmo_gpu*.h' -o -name 'nmo_runner.h' \) | sort)
# shellcheck disable=SC2086
check "a kernel header in the GPU layer's C" "$kern_h" $hip_c_files
for f in oracle/include/numoracle/*.h; do
    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](mpfr\.h|gmp\.h|engine/|nmo_internal\.h|cjson/)' "$f"; then
        echo "layering: installed header $f includes a private header or MPFR/GMP/cJSON"; bad=1
    fi
    if grep -nE '\b(mpfr_t|mpfr_ptr|mpfr_srcptr|mpfr_rnd_t|mpz_t|mpq_t)\b' "$f" | grep -v '^\s*[0-9]*:\s*/\?\*' >/dev/null; then
        echo "layering: installed header $f names an MPFR/GMP type (opaque struct pointers such as struct cJSON are fine)"; bad=1
    fi
done
[ "$bad" = 0 ] && echo "layering: ok ($(wc -w <<<"$lib_files") library files, $(wc -w <<<"$hip_files") GPU-layer files)"
exit $bad
