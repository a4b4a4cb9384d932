#!/usr/bin/env bash
# The HIP campaign (campaign_hip.json) on a GPU machine: configure and build the CUDA
# (nvcc) flavour of the HIP layer, run the campaign, leave the report in
# papers/sound-oracles/results/hip-h200/ (and the journal in papers/sound-oracles/out/).
# A second invocation resumes from the journal. Optional: RESULTS=DIR copies both there.
#
#   usage (repository root): bash papers/sound-oracles/run_hip.sh
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
t0=$(date +%s)
if [ ! -f build-gpu/build.ninja ]; then
    meson setup build-gpu -Dgpu=cuda -Dtests=disabled -Dblas=disabled >build-gpu-setup.log 2>&1 ||
        { tail -40 build-gpu-setup.log; exit 2; }
fi
ninja -C build-gpu >build-gpu.log 2>&1 || { tail -60 build-gpu.log; exit 2; }
t1=$(date +%s)
echo "build: $((t1 - t0)) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
cd papers/sound-oracles
../../build-gpu/apps/numoracle campaign --config campaign_hip.json --progress off
t2=$(date +%s)
echo "campaign: $((t2 - t1)) s"
if [ -n "${RESULTS:-}" ]; then
    mkdir -p "$RESULTS"
    cp -r results/hip-h200 "$RESULTS/" && cp out/sound-oracles-hip.jsonl "$RESULTS/" || true
fi
