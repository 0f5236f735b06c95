#!/usr/bin/env bash
# Programmatic dependent launch settings compared in alternating processes (scripts/env_ab.sh does the work):
#   PDL_MODES="1 all" bash scripts/pdl_ab.sh "$OUT"     # WARPGEMM_PDL values, in turn, $PDL_REPS times
# Cases: M in $PDL_M x (N, K) in $PDL_SHAPES ("NxK,NxK"), plus $PDL_EXTRA ("MxNxK,...": more single cases).
modes=""
for mode in ${PDL_MODES:-1 all 0}; do modes="$modes pdl-$mode:WARPGEMM_PDL=$mode"; done
AB_MODES="$modes" AB_REPS="${PDL_REPS:-2}" AB_M="${PDL_M:-128,256}" AB_SHAPES="${PDL_SHAPES:-}" AB_EXTRA="${PDL_EXTRA:-}" \
    exec bash "$(dirname "$0")/env_ab.sh" "$@"
