#!/usr/bin/env bash
# The shared library exports the public API and nothing else:
#   1. `nm -D --defined-only` of libnumoracle.so equals the global list of
#      oracle/numoracle.map (the linker's version script: one list, used by both);
#   2. every symbol of that list is declared in an installed header
#      (oracle/include/numoracle/*.h) as a function or variable.
#   bash tests/check_exports.sh LIBNUMORACLE.so SRCROOT
set -u
lib=$1; root=$2
map="$root/oracle/numoracle.map"
[ -f "$lib" ] || { echo "check_exports: $lib: no such library"; exit 2; }
[ -f "$map" ] || { echo "check_exports: $map: no such file"; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' |
    grep -v '^NUMORACLE_' | sort -u > "$tmp/exported"
sed -n '/global:/,/local:/p' "$map" | sed 's/#.*//' | tr -d ' \t;' | grep -vE '^(global:|local:|)$' |
    sort -u > "$tmp/listed"
bad=0
if ! diff -u "$tmp/listed" "$tmp/exported" > "$tmp/diff"; then
    echo "check_exports: $lib exports differ from $map (- listed only, + exported only):"
    grep '^[-+][a-z_]' "$tmp/diff"; bad=1
fi
cat "$root"/oracle/include/numoracle/*.h > "$tmp/headers"
while IFS= read -r s; do
    # a declaration: the name followed by '(' (function) or by ';' / '[' (variable)
    grep -qE "(^|[^A-Za-z0-9_])$s[[:space:]]*(\(|;|\[)" "$tmp/headers" ||
        { echo "check_exports: $s is exported but declared in no installed header"; bad=1; }
done < "$tmp/listed"
[ "$bad" = 0 ] && echo "check_exports: ok, $(wc -l < "$tmp/exported") symbols exported, each declared in oracle/include/numoracle/"
exit $bad
