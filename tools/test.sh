#!/usr/bin/env bash
# Builds and runs the whole test suite; exits non-zero on any failure. Installs what is missing
# first (tools/setup.sh --deps-only), so it works on a fresh Debian 12 machine and in CI.
# GPU tests carry the ctest label `gpu` and skip cleanly where no GPU is present.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
preset="${KWB_TEST_PRESET:-release}"

"$repo/tools/setup.sh" --deps-only
cmake --preset "$preset" -S "$repo" -DKWB_BUILD_TESTS=ON >/dev/null
cmake --build "$repo/build/$preset"
cd "$repo/build/$preset"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
