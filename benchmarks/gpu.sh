#!/usr/bin/env bash
# GPU in one command: raw MJX, training env-steps/s at 4,096 and 8,192 envs and the time to a
# team return of 3,000 on ant-modular, appended to BENCHMARKS.md with the hardware; about 7.5
# minutes (benchmarks/gpu.py says how each part is budgeted).
#   bash benchmarks/gpu.sh                  # MJX's JAX implementation
#   bash benchmarks/gpu.sh --backend warp   # MJX's MuJoCo Warp (pip install -e '.[warp]')
set -euo pipefail
cd "$(dirname "$0")/.."
exec python benchmarks/gpu.py "$@"
