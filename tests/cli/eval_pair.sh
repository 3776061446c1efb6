#!/usr/bin/env bash
# `kwb eval REF --candidate CAND` judges a KernelBench file pair by KernelBench's rules unless
# told otherwise, and says so in the record; `--profile cuda-agent` switches the rules.
#   eval_pair.sh KWB PYTHON DATA_DIR
set -eu
kwb="$1"
python="$2"
data="$3"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# KernelBench keeps a problem's samples side by side: the neighbours (another sample that uses
# torch.compile, a binary file) are not this candidate's code and must not cost it its reward.
mkdir "$out/samples"
cp "$data/reference.py" "$data/candidate.py" "$out/samples/"
printf 'import torch\nf = torch.compile(lambda x: x)\n' >"$out/samples/sample_2.py"
printf '\0\1\2' >"$out/samples/sample_2.bin"
"$kwb" eval "$out/samples/reference.py" --candidate "$out/samples/candidate.py" --device cpu --checks 2 \
    --iterations 2 --json >"$out/pair.json"
"$kwb" eval "$data/reference.py" --candidate "$data/candidate.py" --device cpu --checks 2 \
    --no-profile --profile cuda-agent --json >"$out/agent.json"
"$python" - "$out/pair.json" "$out/agent.json" <<'PY'
import json, sys
pair, agent = (json.load(open(path)) for path in sys.argv[1:3])
assert pair["correct"] is True, pair["failure"]
neighbours = [f for f in pair["flags"] if f["code"] in ("torch_compile_used", "opaque_file", "hardcoded_shape")]
assert not neighbours, neighbours  # the test's candidate is torch itself: that flag is its own
assert pair["rules"]["profile"] == "kernelbench" and pair["rules"]["modified"] is True, pair["rules"]
assert pair["rules"]["dtype_tolerances"]["float32"] == 1e-4, pair["rules"]
assert pair["checks"]["run"] == 2, pair["checks"]  # an explicit option beats the profile's 5
# KernelBench's runtime is the mean of its trials: the pair's speed-up compares means.
assert pair["rules"]["speedup_statistic"] == "mean", pair["rules"]
t = pair["timings"]
expected = t["eager"]["mean_ms"] / t["candidate"]["mean_ms"]
assert abs(pair["speedup"]["vs_eager"] - expected) <= 1e-9 * expected, (pair["speedup"], expected)
assert agent["rules"]["speedup_statistic"] == "median", agent["rules"]
assert agent["rules"]["profile"] == "cuda-agent" and agent["rules"]["modified"] is True, agent["rules"]
assert (agent["rules"]["atol"], agent["rules"]["rtol"], agent["rules"]["dtype_tolerances"]) == (0.01, 0.01, {})
stages = sum(s["seconds"] for s in pair["stages"])
assert stages >= 0.95 * pair["total_seconds"], (stages, pair["total_seconds"])
print("ok: kernelbench rules for the pair, cuda-agent on request; stages cover", round(stages, 2), "of",
      round(pair["total_seconds"], 2), "s")
PY
