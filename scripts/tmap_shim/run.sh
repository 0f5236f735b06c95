#!/usr/bin/env bash
# Build the shim and log the TMA descriptors cuBLAS and warpgemm build: bash scripts/tmap_shim/run.sh OUT SHAPES
set -euo pipefail
out=$(realpath -m "${1:?out dir}"); mkdir -p "$out"
cd "$(dirname "$0")/../.."
gcc -shared -fPIC -O2 -o "$out/tmap_log.so" scripts/tmap_shim/tmap_log.c -ldl
export PYTHONPATH=$PWD TMAP_LOG=$out/tmap.log
rc=0
LD_PRELOAD=$out/tmap_log.so python3 scripts/tmap_shim/tmap_probe.py "${2:?shapes}" > "$out/tmap_probe.log" 2>&1 || rc=$?
rm -f "$out/tmap_log.so"
[ $rc -eq 0 ] || { tail -20 "$out/tmap_probe.log"; exit $rc; }
