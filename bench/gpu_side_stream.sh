#!/usr/bin/env bash
# Short re-run on a GPU host of the adversarial cases whose verdict changed after the full table
# (side_stream made strict) plus the honest ones, with the smallest build that runs them.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
configure_gpu_host_build
cmake --build "$build" --target kwb_adversarial_gpu_tests 2>&1 | grep -E "error|FAILED" | head -20
cd "$build" && ctest -L gpu -R "AdversarialGpu.*(side_stream|honest)" -j 4 -V 2>&1 |
    grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed"
