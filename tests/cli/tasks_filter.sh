#!/usr/bin/env bash
# `kwb tasks filter`: each of Ops-6K's filters drops the task made to fail it, with its reason;
# oversized inputs are a skip sized before anything is allocated; a renamed copy and a copy of
# the decontamination set are near-duplicates; the kept tasks are written as a task set that
# loads back; a second run reads the cache.
#   tasks_filter.sh KWB PYTHON SOURCE_DIR
set -eu
kwb="$1"
python="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KWB_CACHE_DIR="$tmp/cache"
mkdir -p "$tmp/set" "$tmp/kernelbench/level1"
task() { # task FILE FORWARD_BODY [INPUT_SHAPE]
    cat > "$1" <<PY
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        $2


def get_inputs():
    return [torch.randn(${3:-32, 64})]


def get_init_inputs():
    return []
PY
}
task "$tmp/set/a_gelu.py" "return torch.nn.functional.gelu(x) * 2.0"
task "$tmp/set/b_gelu_renamed.py" "return torch.nn.functional.gelu(x) * 3.5" "128, 16"
task "$tmp/set/c_constant.py" "return torch.zeros_like(x) + 1.0"
task "$tmp/set/d_random.py" "return x + torch.rand_like(x)"
task "$tmp/set/e_nan.py" "return torch.log(x - 100.0)"
task "$tmp/set/f_huge.py" "return x * 2" "1 << 20, 1 << 12"
task "$tmp/set/g_broken.py" "return x.no_such_method()"
task "$tmp/set/h_softmax.py" "return torch.softmax(x, dim=-1)"
task "$tmp/kernelbench/level1/1_Softmax.py" "return torch.softmax(x, dim=-1)" "16, 16384"
sed -i 's/\bx\b/inp/g' "$tmp/kernelbench/level1/1_Softmax.py"  # renamed: still the same task

"$kwb" tasks filter "$tmp/set" --python "$python" --no-compile --memory-budget 1 --against "$tmp/kernelbench" \
    --out "$tmp/kept.jsonl" --json > "$tmp/first.json"
"$python" - "$tmp/first.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
verdicts = {v["id"]: v for v in report["verdicts"]}
def reasons(task):
    return " | ".join(verdicts[task]["reasons"])
assert report["tasks"] == 8 and report["kept"] == 1, (report["kept"], {k: v["reasons"] for k, v in verdicts.items()})
assert verdicts["a_gelu"]["kept"] and verdicts["a_gelu"]["eager_ms"] > 0, verdicts["a_gelu"]
assert "near-duplicate of a_gelu" in reasons("b_gelu_renamed"), reasons("b_gelu_renamed")
assert "outputs are constant" in reasons("c_constant") and "do not change with the inputs" in reasons("c_constant")
assert "not deterministic" in reasons("d_random"), reasons("d_random")
assert "not finite" in reasons("e_nan"), reasons("e_nan")
assert verdicts["f_huge"]["skipped"] and "16.00 GiB" in reasons("f_huge"), reasons("f_huge")
assert verdicts["f_huge"]["step"] == "size", verdicts["f_huge"]  # nothing was allocated
assert "does not run eager" in reasons("g_broken") and "no_such_method" in reasons("g_broken"), reasons("g_broken")
assert "near-duplicate of" in reasons("h_softmax") and "1_Softmax" in reasons("h_softmax"), reasons("h_softmax")
assert not any(v["from_cache"] for v in verdicts.values())
print("ok: every filter drops its task with its reason")
PY
# The kept tasks are a task set of their own.
"$kwb" tasks filter "$tmp/kept.jsonl" --python "$python" --no-compile --max-ms 1e-9 --json > "$tmp/kept.json"
"$python" - "$tmp/kept.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["tasks"] == 1 and report["kept"] == 0, report
assert "over the" in report["verdicts"][0]["reasons"][0], report["verdicts"][0]
PY
# A second run reads the measurements from the cache; torch.compile is screened for real once.
"$kwb" tasks filter "$tmp/set" --python "$python" --no-compile --memory-budget 1 --json > "$tmp/second.json"
"$kwb" tasks filter "$tmp/set" --python "$python" --limit 1 --json > "$tmp/compiled.json"
"$python" - "$tmp/second.json" "$tmp/compiled.json" <<'PY'
import json, sys
second, compiled = (json.load(open(p)) for p in sys.argv[1:3])
assert all(v["from_cache"] for v in second["verdicts"]), [v["from_cache"] for v in second["verdicts"]]
assert compiled["kept"] == 1 and not compiled["verdicts"][0]["from_cache"], compiled
PY
if "$kwb" tasks filter "$tmp/missing" --python "$python" > "$tmp/missing.out" 2>&1; then
    echo "FAIL: a missing task set was screened"; exit 1
fi
grep -q "cannot read the task set" "$tmp/missing.out" || { cat "$tmp/missing.out"; echo "FAIL: unclear error"; exit 1; }
echo "PASS: kwb tasks filter"
