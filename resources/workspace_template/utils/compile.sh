#!/usr/bin/env bash
# Builds kernels/*.cu, kernels/*.cpp and binding.cpp into the cuda_extension module.
# Usage: bash utils/compile.sh [--device cpu|cuda] [--arch sm_90] [--verbose]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec "${KWB_PYTHON:-python3}" -m utils.compile "$@"
