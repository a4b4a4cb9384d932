#!/usr/bin/env bash
# Extract the C example from README.md, compile it against the built static library and
# run it: the README's API example must stay true.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^```c$/{on=1; next} /^```$/{if(on){exit}} on' "$root/README.md" > "$tmp/example_api.c"
test -s "$tmp/example_api.c" || { echo "readme_example: no C block in README.md"; exit 1; }
libs="-lmpfr -lgmp -lcjson -lm -lpthread -ldl"
if pkg-config --exists openblas 2>/dev/null; then libs="$libs $(pkg-config --libs openblas)"; fi
cc -std=c17 -I"$root/oracle/include" "$tmp/example_api.c" -o "$tmp/example_api" \
   "$root/$build/oracle/libnumoracle.a" $libs
out=$("$tmp/example_api")
echo "readme_example: $out"
case "$out" in PASS:*) ;; *) echo "readme_example: expected PASS"; exit 1;; esac
# The same program against the shared library: the public API (its export list,
# oracle/numoracle.map) is all the example needs.
cc -std=c17 -I"$root/oracle/include" "$tmp/example_api.c" -o "$tmp/example_api_so" \
   -L"$root/$build/oracle" -Wl,-rpath,"$root/$build/oracle" -lnumoracle -lm
out_so=$("$tmp/example_api_so")
[ "$out_so" = "$out" ] || { echo "readme_example: shared library gives '$out_so', static '$out'"; exit 1; }
echo "readme_example (shared library): same output"
