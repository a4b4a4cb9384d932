#!/usr/bin/env bash
# The README's operator list is generated from the registry (`numoracle ops --markdown`):
# fail when the block between its markers differs. --update rewrites the block.
#   bash tests/check_readme_ops.sh NUMORACLE README.md [--update]
set -u
nmo=$1 readme=$2 mode=${3:-check}
begin='<!-- ops:begin (generated: numoracle ops --markdown; tests/check_readme_ops.sh --update) -->'
end='<!-- ops:end -->'
want=$("$nmo" ops --markdown) || { echo "check_readme_ops: '$nmo ops --markdown' failed"; exit 2; }
grep -qxF -- "$begin" "$readme" && grep -qxF -- "$end" "$readme" ||
    { echo "check_readme_ops: $readme has no ops:begin/ops:end markers"; exit 1; }
have=$(awk -v b="$begin" -v e="$end" '$0 == e {f = 0} f {print} $0 == b {f = 1}' "$readme")
if [ "$mode" = --update ]; then
    [ "$have" = "$want" ] && exit 0
    tmp=$(mktemp "$readme.XXXXXX")
    W="$want" awk -v b="$begin" -v e="$end" '$0 == e {print ENVIRON["W"]; f = 0} !f {print} $0 == b {f = 1}' \
        "$readme" > "$tmp" && mv "$tmp" "$readme" && echo "check_readme_ops: $readme updated"
    exit
fi
if [ "$have" != "$want" ]; then
    echo "check_readme_ops: the operator list in $readme differs from the registry:"
    diff <(printf '%s\n' "$have") <(printf '%s\n' "$want")
    echo "run: bash tests/check_readme_ops.sh $nmo $readme --update"
    exit 1
fi
echo "check_readme_ops: $readme lists the registry's $("$nmo" ops --markdown | head -1 | cut -d' ' -f1) operators"
