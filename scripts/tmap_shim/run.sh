#!/usr/bin/env bash
# Build the shim and log the TMA descriptors cuBLAS and warpgemm build: bash scripts/tmap_shim/run.sh OUT SHAPES
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?out dir}; mkdir -p "$out"
gcc -shared -fPIC -O2 -o "$out/tmap_log.so" scripts/tmap_shim/tmap_log.c -ldl
export PYTHONPATH=$PWD TMAP_LOG=$out/tmap.log
LD_PRELOAD=$out/tmap_log.so python3 scripts/tmap_shim/tmap_probe.py "${2:?shapes}" > "$out/tmap_probe.log" 2>&1 || tail -20 "$out/tmap_probe.log"
rm -f "$out/tmap_log.so"
