#!/usr/bin/env bash
# The README's operator list is generated from the registry (`numoracle ops --markdown`).
# The block between its markers must be what the registry generates, except that
# operators registered after the block was last generated (the registry's last rows)
# may be missing: each is a note, not a failure, so that adding an operator stays its
# three files (refs/README.md). A changed or removed row, a row out of order, an
# operator the registry no longer has, or a count that is not the block's row count
# fails. --update rewrites the block.
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
is_row='^| `' # a table row (grep BRE: a literal |)
nh=$(printf '%s\n' "$have" | grep -c "$is_row")
nw=$(printf '%s\n' "$want" | grep -c "$is_row")
# what the block must be: the generated one with its first nh rows only and the count nh
expect=$(printf '%s\n' "$want" | awk -v n="$nh" -v nw="$nw" '
    NR == 1 && $1 == nw { sub(/^[0-9]+/, n) }
    index($0, "| `") == 1 { if (++k > n) next }
    { print }')
if [ "$nh" -gt "$nw" ] || [ "$have" != "$expect" ]; then
    echo "check_readme_ops: the operator list in $readme differs from the registry:"
    diff <(printf '%s\n' "$have") <(printf '%s\n' "$expect")
    echo "run: bash tests/check_readme_ops.sh $nmo $readme --update"
    exit 1
fi
printf '%s\n' "$want" | grep "$is_row" | tail -n +"$((nh + 1))" | while IFS= read -r row; do
    op=${row#| \`}
    echo "check_readme_ops: note: operator ${op%%\`*} is registered after $readme's table was generated (--update adds it)"
done
echo "check_readme_ops: $readme lists $nh of the registry's $nw operators"
