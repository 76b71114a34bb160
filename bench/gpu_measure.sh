#!/usr/bin/env bash
# Runs bench/gpu_measure.py (training memory and throughput on one NVIDIA GPU; see its header)
# after printing the environment. Needs a GPU with PyTorch, transformers and peft; never run by
# the tests. Writes results.jsonl and measured-h200.yaml into $OUT (default ./out).
#   bash bench/gpu_measure.sh [DEADLINE_S]      (default 480: no config starts or runs past it)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
echo "== environment"
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not found"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>/dev/null || true
# Versions from package metadata: importing torch here would cost seconds of the time budget.
python3 - <<'PY'
import sys
from importlib import metadata
print("python", sys.version.split()[0], sys.executable)
for name in ("torch", "transformers", "peft", "accelerate"):
    try:
        print(name, metadata.version(name))
    except metadata.PackageNotFoundError:
        print(name, "not installed")
PY
echo "== measurements"
exec python3 bench/gpu_measure.py --out "${OUT:-./out}" --deadline-s "${1:-480}"
