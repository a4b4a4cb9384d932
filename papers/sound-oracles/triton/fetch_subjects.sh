#!/bin/sh
# Copy the subjects' Python sources (not vendored: into the git-ignored subjects/ folder of
# the checkout) from local git clones or mirrors, and record each repository's commit in
# subjects/COMMITS.json. The campaign reads the subjects from there; the device run
# carries the folder.
#   sh papers/sound-oracles/triton/fetch_subjects.sh LIGER_GIT_DIR [COMMIT]
# LIGER_GIT_DIR: a clone or bare mirror of github.com/linkedin/Liger-Kernel.
set -eu
root=$(git rev-parse --show-toplevel)
liger=${1:?usage: fetch_subjects.sh LIGER_GIT_DIR [COMMIT]}
rev=${2:-HEAD}
commit=$(git --git-dir="$liger" rev-parse "$rev^{commit}")
dest="$root/subjects/liger-kernel"
rm -rf "$dest" && mkdir -p "$dest"
# Only what the modelled operators import: the package root, its utils, ops/utils and the
# operator files. ops/__init__.py is NOT copied: it imports every backend (cutedsl, cutile,
# ascend) at import time; an empty one stands in and each operator module is imported by
# its own name (liger_kernel.ops.rms_norm), as Liger's submodule imports do.
files="src/liger_kernel/__init__.py src/liger_kernel/utils.py src/liger_kernel/ops/utils.py"
for op in rms_norm layer_norm fused_add_rms_norm swiglu geglu cross_entropy softmax kl_div jsd rope group_norm dyt; do
    files="$files src/liger_kernel/ops/$op.py"
done
git --git-dir="$liger" archive --format=tar "$commit" $files | tar -x -C "$dest" --strip-components=1
: > "$dest/liger_kernel/ops/__init__.py"
date=$(git --git-dir="$liger" log -1 --format=%cI "$commit")
cat > "$root/subjects/COMMITS.json" <<J
{"liger-kernel": {"url": "https://github.com/linkedin/Liger-Kernel", "commit": "$commit", "date": "$date",
  "files": "$(echo $files | sed 's/src\///g')", "replaced": "liger_kernel/ops/__init__.py (empty)"}}
J
echo "subjects/liger-kernel at $commit"
