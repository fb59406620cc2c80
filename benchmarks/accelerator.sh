#!/usr/bin/env bash
# The accelerator machine in one command (raw MJX, training with first- and second-run
# compile, the C simulator on the host cores, the largest env count, Brax PPO) within
# --budget-s seconds; JSON rows and a Markdown table in --out. benchmarks/accelerator.py
# says what each part measures.
#   bash benchmarks/accelerator.sh [--budget-s S] [--out DIR] [--plan PART ...] [-- TRAIN FLAGS]
# PYTHON picks the interpreter (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" benchmarks/accelerator.py "$@"
