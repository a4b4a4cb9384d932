#!/usr/bin/env bash
# Every "DESIGN §N" cited in the sources and docs names a section of docs/DESIGN.md.
#   bash tests/check_design_refs.sh [SRCROOT]
set -u
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root" || exit 2
[ -f docs/DESIGN.md ] || { echo "design refs: docs/DESIGN.md missing"; exit 1; }
have=$(sed -n 's/^## \([0-9][0-9]*\)\..*/\1/p' docs/DESIGN.md | sort -u)
bad=0; n=0
while IFS=: read -r f sec; do
    n=$((n + 1))
    grep -qx "$sec" <<<"$have" || { echo "design refs: $f cites DESIGN §$sec, docs/DESIGN.md has no section $sec"; bad=1; }
done < <(grep -rnoE 'DESIGN §[0-9]+' oracle refs hip apps tests bench meson.build README.md 2>/dev/null |
         sed -E 's/^([^:]*):[0-9]+:DESIGN §([0-9]+)$/\1:\2/')
[ "$bad" = 0 ] && echo "design refs: ok ($n citations, sections: $(tr '\n' ' ' <<<"$have"))"
exit $bad
