#!/bin/sh
# A `kwb train tune` stand-in for the Kernel Tuning view's test (tests/widgets/test_training_view):
# the run's folder as the real one writes it, a step a second (samples first, then the step's
# line); on SIGINT (Stop) a summary saying so and a checkpoint, as Ctrl+C leaves them.
# FAKE_TUNE_FAIL: the error output and exit status of a run that cannot start. FAKE_TUNE_PAUSE:
# a long pause after the second step. --resume: one more step after the stopped ones, then the
# summary.
[ -n "$FAKE_TUNE_FAIL" ] && { echo "policy: loading" >&2; echo "kwb: no model: give \"model\" in the settings" >&2; exit 2; }
arguments="$*"
while [ $# -gt 0 ]; do
  case "$1" in --out|--resume) out=$2; [ "$1" = --resume ] && resumed=1;; esac; shift
done
mkdir -p "$out"
echo "$arguments" >> "$out/arguments.txt"
trap 'echo "{\"stopped\":true}" > "$out/summary.json"; touch "$out/checkpoint.pt"; exit 0' INT
sample() { echo "{\"phase\":\"$1\",\"step\":$2,\"space\":\"$3\",\"action\":\"threads=$4\",\"reward\":$5,\"correct\":true,\"speedup_vs_eager\":$6,\"speedup_vs_compile\":$6,\"verdict\":\"correct\"}" >> "$out/samples.jsonl"; }
step() { echo "{\"step\":$1,\"samples\":2,\"mean_reward\":$2,\"pass_rate\":1.0,\"faster_than_compile\":0.5,\"speedup_vs_eager\":1.1,\"update\":{\"loss\":-0.01,\"approximate_kl\":0.003,\"entropy\":2.5,\"clip_fraction\":0.01,\"tokens_per_second\":800}}" >> "$out/steps.jsonl"; }
if [ -n "$resumed" ]; then
  sample train 3 01_gelu 256 3 1.6; sample train 3 01_gelu 256 3 1.6; step 3 3.0
  sample final 0 01_gelu 256 3 1.6; echo '{"stopped":false}' > "$out/summary.json"; exit 0
fi
echo '{"train":["01_gelu"],"held_out":["07_scale_residual_add"],"steps":3}' > "$out/config.json"
sample start 0 01_gelu 64 1 0.5; sample start 0 07_scale_residual_add 64 1 0.8; sample random 0 01_gelu 128 1 0.7
sample train 1 01_gelu 64 1 0.5; sample train 1 01_gelu 512 2 1.2; step 1 1.5
sleep 1
sample train 2 01_gelu 256 3 1.6; sample train 2 01_gelu 512 2 1.2; step 2 2.5
[ -n "$FAKE_TUNE_PAUSE" ] && { sleep 60 & wait; }
sample final 0 01_gelu 256 3 1.6; sample final 0 07_scale_residual_add 256 2 1.3
echo '{"stopped":false}' > "$out/summary.json"
