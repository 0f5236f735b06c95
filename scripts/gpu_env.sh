# Sourced by the GPU scripts (`source "$(dirname "$0")/gpu_env.sh" "$@"`): the repository root as the working
# directory, the source tree on PYTHONPATH (nothing is installed on the lent GPU machine), $out created from the
# first argument (default $WARPGEMM_RESULTS, else results/latest) and $py the interpreter ($PYTHON, else python3).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-${WARPGEMM_RESULTS:-results/latest}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
