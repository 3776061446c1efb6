#!/usr/bin/env bash
# Reward-integrity evidence on a GPU host, in two parts (each fits one device call):
#   bench/gpu_integrity.sh adversarial   build, then the whole adversarial table in CUDA mode
#   bench/gpu_integrity.sh bundled       the bundled solutions (honest: must not be flagged) with
#                                        repeat-until-stable timing, then the GPU bad-input tests
#   bench/gpu_integrity.sh noise         three small tasks inside the bundled bubblewrap and without
#                                        it: events against the kernel census and the judge's costs
# Prints a header with date, GPU, driver and versions for bench/results/.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$repo/build/gpu-host"
part="${1:-adversarial}"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader)"
echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
if [ ! -x "$build/tests/kwb_adversarial_gpu_tests" ] || [ "$part" = adversarial ]; then
    KWB_BUILD_ONLY=1 KWB_DEPS_PREFIX="${KWB_DEPS_PREFIX:-$repo/.deps/prefix}" \
        KWB_GTEST_SOURCE="${KWB_GTEST_SOURCE:-$repo/.deps/googletest}" \
        "$repo/tools/gpu-host-build.sh" "$build" 2>&1 | grep -E "error|FAILED|Error" | head -40
fi
cd "$build" || exit 1
# The host has no bubblewrap: try Debian's, packed by tools/pack-host-deps.sh. Kept only if a
# bundled solution still earns its reward on the GPU inside it.
bundled_bwrap="$repo/.deps/sandbox/bwrap"
if ! command -v bwrap >/dev/null && [ -x "$bundled_bwrap" ]; then
    if "$bundled_bwrap" --ro-bind / / --unshare-pid --unshare-net --dev /dev --proc /proc true 2>/tmp/bwrap-probe.txt; then
        probe_ws="$(mktemp -d)/ws"
        ./app/cli/kwb workspace init "$repo/resources/tasks/07_scale_residual_add.py" "$probe_ws" --with-solution >/dev/null
        if KWB_BWRAP="$bundled_bwrap" ./app/cli/kwb eval "$probe_ws" --device cuda --json >/tmp/bwrap-eval.json 2>/tmp/bwrap-eval.err &&
            python3 -c 'import json,sys; r=json.load(open("/tmp/bwrap-eval.json")); print("bundled bubblewrap eval:", r["reward"], r.get("sandbox")); sys.exit(r["reward"] < 1)'; then
            export KWB_BWRAP="$bundled_bwrap"
        else
            echo "bundled bubblewrap: CUDA evaluation inside it failed; running without"; tail -5 /tmp/bwrap-eval.err
            python3 -c 'import json; r=json.load(open("/tmp/bwrap-eval.json")); print(r.get("verdict"), r.get("failure_message", "")[:600]); [print(" ", f.get("severity"), f.get("code"), f.get("reason", "")[:300]) for f in r.get("flags", [])]' 2>/dev/null
        fi
    else
        echo "bundled bubblewrap cannot create namespaces here: $(head -c 300 /tmp/bwrap-probe.txt)"
    fi
fi
echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"
case "$part" in
adversarial)
    # Four at a time: eight share the GPU enough to stretch kernel times past the census slack, and each case is mostly Python start-up and compiles.
    ctest -L gpu -R "AdversarialGpu${KWB_CASES:+.*($KWB_CASES)}" -j 4 -V 2>&1 | grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed|tests passed|Test #|limit \(|failure_message|message:" ;;
bundled)
    ctest -L gpu -R "AdversarialGpu.*side_stream" -V 2>&1 | grep -E "\[adversarial\]|^[0-9]+:   \[|Passed|Failed"
    python3 "$repo/bench/eval_bundled.py" --kwb "$build/app/cli/kwb" --precompile 8 --edit-tasks 0 \
        --iterations 40 --out "${OUT:-/tmp}/eval-bundled-integrity.json"
    ctest -L gpu -R "GpuEvaluation|GpuLaunch" --output-on-failure 2>&1 | tail -15 ;;
noise)
    tasks="${KWB_TASKS:-01_gelu,02_sum_reduction,07_scale_residual_add}"
    out="${OUT:-/tmp}"
    python3 "$repo/bench/eval_bundled.py" --kwb "$build/app/cli/kwb" --tasks "$tasks" --edit-tasks 0 \
        --iterations 40 --out "$out/noise-sandboxed.json" >/dev/null
    python3 "$repo/bench/census_vs_events.py" "$out/noise-sandboxed.json" "${KWB_BWRAP:+bubblewrap}"
    KWB_BWRAP= KWB_SANDBOX=rlimits-only python3 "$repo/bench/eval_bundled.py" --kwb "$build/app/cli/kwb" \
        --tasks "$tasks" --edit-tasks 0 --iterations 40 --out "$out/noise-unsandboxed.json" >/dev/null
    python3 "$repo/bench/census_vs_events.py" "$out/noise-unsandboxed.json" "rlimits only" | tail -n +3 ;;
esac
