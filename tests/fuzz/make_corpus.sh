#!/usr/bin/env bash
# Seed the fuzz corpora from the shipped bundles, the bad-input corpus and the CLI cases:
#   bash tests/fuzz/make_corpus.sh      (rewrites tests/fuzz/corpus/)
# Files are named by content hash; inputs with a NUL carry a second file after it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
out="$here/corpus"
rm -rf "$out"
mkdir -p "$out"/{plan,bundle,sweep,config}
put() { # put HARNESS FILE [SECOND-FILE]
    local h="$1" tmp
    tmp="$(mktemp)"
    if [ $# -ge 3 ]; then cat "$2" >"$tmp"; printf '\0' >>"$tmp"; cat "$3" >>"$tmp"; else cat "$2" >"$tmp"; fi
    mv "$tmp" "$out/$h/$(sha1sum "$tmp" | cut -c1-16)"
}
# bundles: graph [NUL meta], from bundles/ and tests/bundles_bad/
while IFS= read -r g; do
    m="${g%.json}.meta.json"
    if [ -f "$m" ]; then put bundle "$g" "$m"; else put bundle "$g"; fi
done < <(find "$src/bundles" "$src/tests/bundles_bad" -name '*.json' ! -name '*.meta.json' ! -name 'sweep.json' \
           ! -name 'graph.template.json' ! -name 'config.json' | sort | head -120)
# sweeps: sweep.json NUL graph.template.json
while IFS= read -r s; do
    t="$(dirname "$s")/graph.template.json"
    if [ -f "$t" ]; then put sweep "$s" "$t"; else put sweep "$s"; fi
done < <(find "$src/bundles" "$src/tests/bundles_bad" -name sweep.json | sort)
# campaign configs: the bad corpus and every config a CLI case writes
for c in "$src"/tests/bundles_bad/*/config.json; do [ -f "$c" ] && put config "$c"; done
i=0
for line in '{"operators": ["a"], "seeds": [18446744073709551615]}' '{"seeds": {"first": 1e300, "count": 2}}' \
            '{"mutants": {"max_per_op": 1e300}}' '{"timeout": 1e300}' '{"operators": "all", "dtypes": ["bf16"], "seeds": [1]}' \
            '{"name": "smoke", "operators": "all", "dtypes": ["bf16"], "families": {"main": ["gaussian"], "shifted": ["large"]}, "seeds": [1], "mutants": {"max_per_op": 4}, "calibration": {"seeds": [1001]}, "timeout": 3, "workers": 2}'; do
    f="$(mktemp)"; printf '%s\n' "$line" >"$f"; put config "$f"; rm -f "$f"; i=$((i + 1))
done
# plans: every --plan text of the CLI cases, each preset and the fields' extremes
{
    grep -rhoE -- "--plan ('[^']*'|\"[^\"]*\"|[^ ]+)" "$src/tests/cli/cases" | sed -E "s/^--plan //; s/^['\"]//; s/['\"]$//"
    printf '%s\n' 'in=bf16 out=bf16 compute=fp32 acc=fp32 inter=fp32 sum=any fn=cuda round=rne subnormals=ieee max_ulps=auto' \
        'sum=mma:16:5' 'sum=mma:0000000000000000000000000000016:5' 'fn=ulp:007' 'round=sr subnormals=ftz' 'max_ulps=5 max_ulps=auto' \
        'preset=triton' 'fn=triton' 'fn=fast' 'sum=exact' 'in=fp8_e4m3 out=fp8_e5m2'
} | sort -u | while IFS= read -r p; do
    f="$(mktemp)"; printf '%s' "$p" >"$f"; put plan "$f"; rm -f "$f"
done
for h in plan bundle sweep config; do echo "$h: $(ls "$out/$h" | wc -l) inputs"; done
