#!/usr/bin/env bash
# The scripted agent episode of tests/cli/agent_episode.sh on a GPU host, in CUDA mode: the
# agent writes task 07's CUDA kernels, verifies and stops; the episode must earn reward >= 1.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
configure_gpu_host_build -DKWB_BUILD_TESTS=OFF
cmake --build "$build" --target kwb 2>&1 | grep -E "error|FAILED" | head -20
KWB_AGENT_DEVICE=cuda bash "$repo/tests/cli/agent_episode.sh" "$build/app/cli/kwb" "$(command -v python3)" "$repo"
