#!/usr/bin/env bash
# Issue 18's learning run on a GPU host: SmolLM2-135M-Instruct with LoRA, trained by GRPO in
# kwb-model to choose kernel-template settings (resources/tuning) that the evaluation service
# scores with the milestone reward; before and after, the policy is sampled on the training and
# held-out spaces beside a random-choice baseline (`kwb train tune`, bench/tuning/h200.json).
#
# The device machine takes 64 MiB per call and the GGUF is 98 MB, so it travels in two parts in
# two calls back to back on one warm machine (tools/pack-tuning-carry.sh makes .carry-a and
# .carry-b here; kwb-model, built here against the same pip torch 2.11.0+cu130, rides in
# .carry-a):
#   bench/gpu_tuning_run.sh build     (carry .deps) builds kwb alone
#   bench/gpu_tuning_run.sh prepare   (carry .carry-a, .deps/prefix and .deps/sandbox: all of .deps
#                                     would not fit beside it) copies part one to /tmp/kwb-carry
#                                     and builds kwb there (KWB_BUILD=off: already built)
#   bench/gpu_tuning_run.sh run       (carry .carry-b) joins the GGUF, checks its hash, checks that
#                                     kwb-model (carried in .carry-b) loads, runs the tuning run,
#                                     then bench/model_throughput.py; the files come back in $OUT
#   bench/gpu_tuning_run.sh resume    (no carry needed) continues the run that `run` started
#                                     (`kwb train tune --resume`): a run longer than one call
# KWB_BUILD=off skips prepare's kwb build and its probe of the shared warm workers, KWB_PROBE=off
# the probe alone; KWB_TUNING=off or KWB_THROUGHPUT=off skip a part of run and resume
# (KWB_TUNING_SECONDS and KWB_THROUGHPUT_SECONDS limit them, KWB_THROUGHPUT_ARGS adds the
# throughput script's options, KWB_TUNING_STEPS extends a resumed run, KWB_TRAINING_SECONDS sets
# the part's training budget: 0 trains until the call's limit stops it and a resume goes on, a
# number keeps the rest of the call for the final phase); KWB_TORCH_GPU_TESTS=off skips
# libtorch's GPU tests; KWB_COMPARE_PARALLEL
# (with run) first times the phases at the parallel_evaluations settings it lists.
set -uo pipefail
part="${1:-run}"
out="${OUT:-/tmp/kwb-tuning}"
mkdir -p "$out"
exec > >(tee -a "$out/tuning-$part.log") 2>&1
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
carry=/tmp/kwb-carry
kwb="$build/app/cli/kwb"
export KWB_RESOURCES="$repo/resources"

# The host's torch libraries for the kwb-model built elsewhere: torch/lib and the CUDA wheels'.
torch_libraries() {
    python3 - <<'PY'
import glob, os, torch
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
site = os.path.dirname(os.path.dirname(torch.__file__))
print(":".join([lib] + sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))))
PY
}

# kwb alone, without the test suite (no GoogleTest needed: the call that builds it carries the
# model's first half beside .deps/prefix and .deps/sandbox, and .deps/googletest would not fit).
build_kwb() {
    local started
    started=$(date +%s)
    configure_gpu_host_build -DKWB_BUILD_TESTS=OFF
    cmake --build "$build" --target kwb kwb_cupti_inject 2>&1 | grep -E "error|FAILED" | head -20
    [ -x "$kwb" ] || { echo "kwb did not build"; return 1; }
    echo "kwb build: $(($(date +%s) - started)) s"
}

# kwb-model, built on the dev machine against the same pip torch, must load with the host's torch
# libraries; where it does not, it is built here against them.
check_model_worker() {
    local started
    chmod +x "$carry/kwb-model"
    if LD_LIBRARY_PATH="$(torch_libraries):$LD_LIBRARY_PATH" "$carry/kwb-model" --help >/dev/null; then
        echo "kwb-model (built elsewhere) loads here"
        return 0
    fi
    started=$(date +%s)
    cmake -S "$repo" -B "$repo/build/gpu-host-torch" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DKWB_BUILD_GUI=OFF -DKWB_BUILD_TESTS=OFF -DKWB_WITH_TORCH=ON \
        -DKWB_PYTHON_EXECUTABLE="$(command -v python3)" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INCLUDE_PATH="$prefix/include" \
        -DCMAKE_LIBRARY_PATH="$prefix/lib" >/dev/null &&
        cmake --build "$repo/build/gpu-host-torch" --target kwb-model 2>&1 | grep -E "error|FAILED" | head
    cp "$repo/build/gpu-host-torch/app/model_worker/kwb-model" "$carry/kwb-model" &&
        echo "kwb-model built here: $(($(date +%s) - started)) s"
}

case "$part" in
build)
    build_kwb || exit 1
    ;;
prepare)
    mkdir -p "$carry"
    cp "$repo/.carry-a/"* "$carry/"
    echo "python: $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)')"
    if [ "${KWB_BUILD:-on}" != off ]; then
        build_kwb
    fi
    [ "${KWB_BUILD:-on}" != off ] && [ "${KWB_PROBE:-on}" != off ] || exit 0
    # The shared warm workers' stages on this GPU (they once failed to start CUDA under Landlock,
    # bench/results/2026-12-03-h200-tuning-run.md): the bundled gelu fast-path solution twice,
    # with the default settings, and where each evaluation's time went.
    use_bundled_bubblewrap
    probe=/tmp/kwb-probe
    rm -rf "$probe"
    "$kwb" workspace init "$repo/resources/tasks/01_gelu.py" "$probe/ws" --fast --with-solution >/dev/null
    for attempt in 1 2 3; do
        started=$(date +%s.%N)
        "$kwb" eval "$probe/ws" --fast --json > "$probe/result.json" 2> "$probe/stderr"
        python3 "$repo/bench/evaluation_line.py" "shared workers, gelu fast solution, evaluation $attempt" "$started" \
            "$probe/result.json"
    done
    ;;
run | resume)
    if [ "$part" = run ]; then
        cat "$carry/smollm2.gguf.part-a" "$repo/.carry-b/smollm2.gguf.part-b" > "$carry/smollm2.gguf"
        (cd "$carry" && sha256sum -c "$repo/.carry-b/smollm2.gguf.sha256") || exit 1
        cp "$repo/.carry-b/smollm2.gguf.sha256" "$carry/"
        for f in kwb-model kwb_torch_gpu_tests; do
            [ -f "$repo/.carry-b/$f" ] && cp "$repo/.carry-b/$f" "$carry/"
        done
        check_model_worker
    else
        # The model joined by `run` on this machine (it stays while the machine is warm).
        (cd "$carry" && sha256sum -c smollm2.gguf.sha256) ||
            { echo "no model here: run the prepare and run parts first on this machine"; exit 1; }
    fi
    [ -x "$kwb" ] || [ "${KWB_TUNING:-on}" = off ] ||
        { echo "kwb is not built: run the prepare part first"; exit 1; }
    # Only kwb-model gets the torch libraries' path: in the evaluation's stages the wheels'
    # CUDA libraries ahead of the system's made cudaGetDeviceCount fail with error 304 (OS call
    # failed) on the H200 (2026-12-03).
    libraries="$(torch_libraries)"
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s:$LD_LIBRARY_PATH" exec %s "$@"\n' "$libraries" \
        "$carry/kwb-model" > "$carry/kwb-model-run"
    chmod +x "$carry/kwb-model-run"
    export KWB_MODEL_WORKER="$carry/kwb-model-run"
    echo "torch sees $(python3 -c 'import torch; print(torch.cuda.device_count())' 2>&1 | tail -1) GPU(s); with the wheels' libraries first: $(LD_LIBRARY_PATH="$libraries:$LD_LIBRARY_PATH" python3 -c 'import torch; print(torch.cuda.device_count())' 2>&1 | tail -1)"
    use_bundled_bubblewrap
    echo "sandbox: ${KWB_BWRAP:-$(command -v bwrap || echo none)}"
    run=/tmp/kwb-tuning-run
    if [ -n "${KWB_COMPARE_PARALLEL:-}" ]; then
        # The evaluation throughput of the run's phases at several parallel_evaluations settings
        # (KWB_COMPARE_PARALLEL="4 1 4": in that order, the first on a cold baseline cache): no
        # training step, the training spaces only, the same seed, each run in its own process.
        rm -rf "$HOME/.cache/kernel-workbench/baselines"
        for parallel in $KWB_COMPARE_PARALLEL; do
            compare="/tmp/kwb-parallel-$parallel-$(date +%s)"
            python3 - "$repo/bench/tuning/h200.json" "$compare.json" "$parallel" <<'PY'
import json, sys
settings = json.load(open(sys.argv[1]))
settings.update(steps=0, held_out=[], evaluation_samples=8, parallel_evaluations=int(sys.argv[3]))
json.dump(settings, open(sys.argv[2], "w"))
PY
            started=$(date +%s.%N)
            timeout 300 "$kwb" train tune --config "$compare.json" --model "$carry/smollm2.gguf" \
                --out "$compare" > /dev/null 2> "$compare.log"
            python3 - "$compare" "$parallel" "$started" <<'PY'
import json, statistics, sys, time
folder, parallel, started = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = [json.loads(line) for line in open(folder + "/samples.jsonl")]
new = [r for r in rows if not r.get("reused") and "seconds" in r]
seconds = sorted(r["seconds"] for r in new)
print(f"parallel_evaluations {parallel}: {time.time() - started:.0f} s wall for {len(rows)} samples, "
      f"{len(new)} evaluated; per evaluation median {statistics.median(seconds):.2f} s, "
      f"max {seconds[-1]:.1f} s; rewards {sorted(r['reward'] for r in rows if r['phase'] == 'start')}")
PY
        done
    fi
    if [ "${KWB_TUNING:-on}" != off ]; then
        started=$(date +%s)
        if [ "$part" = run ]; then
            rm -rf "$run"
            what=(--config "$repo/bench/tuning/h200.json" --model "$carry/smollm2.gguf" --out "$run")
        else
            what=(--resume "$run" ${KWB_TUNING_STEPS:+--steps "$KWB_TUNING_STEPS"})
        fi
        what+=(${KWB_TRAINING_SECONDS:+--training-seconds "$KWB_TRAINING_SECONDS"})
        # timeout's TERM stops the run cleanly: what was measured stays in its folder.
        PYTHONUNBUFFERED=1 timeout "${KWB_TUNING_SECONDS:-540}" "$kwb" train tune "${what[@]}" \
            > "$out/summary-stdout.json"
        echo "kwb train tune ($part): exit $?, $(($(date +%s) - started)) s"
        for f in config.json samples.jsonl steps.jsonl summary.json policy.log; do
            [ -f "$run/$f" ] && cp "$run/$f" "$out/"
        done
    fi
    # libtorch's GPU tests, carried with kwb-model (tools/pack-tuning-carry.sh): generation
    # through CUDA graphs equals the steps launched one by one.
    if [ -x "$carry/kwb_torch_gpu_tests" ] && [ "${KWB_TORCH_GPU_TESTS:-on}" != off ]; then
        LD_LIBRARY_PATH="$libraries:$LD_LIBRARY_PATH" timeout 120 "$carry/kwb_torch_gpu_tests" 2>&1 |
            grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Which is|row "
        echo "kwb_torch_gpu_tests: exit ${PIPESTATUS[0]}"
    fi
    # Generation and training throughput against PyTorch on the same model (what is left of
    # the call; the tuning run comes first).
    if [ "${KWB_THROUGHPUT:-on}" != off ]; then
        started=$(date +%s)
        timeout "${KWB_THROUGHPUT_SECONDS:-150}" python3 "$repo/bench/model_throughput.py" \
            --kwb-model "$carry/kwb-model-run" --model "$carry/smollm2.gguf" --device cuda \
            --json "$out/model-throughput.json" ${KWB_THROUGHPUT_ARGS:-}
        echo "model throughput: exit $?, $(($(date +%s) - started)) s"
    fi
    ;;
*)
    echo "unknown part: $part" >&2
    exit 2 ;;
esac
