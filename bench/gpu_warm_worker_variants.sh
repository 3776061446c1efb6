#!/usr/bin/env bash
# One bundled fast-path solution evaluated under each way the stages can run on a GPU host: the
# shared warm worker (Landlock-confined stage children, the default where the kernel has
# Landlock), a warm worker per workspace (KWB_SHARED_WORKERS=off) and cold stages
# (KWB_WARM_WORKER=0). Prints each verdict and the host's Landlock ABI. Needs kwb built
# (bench/gpu_tuning_run.sh prepare or bench/gpu_evaluation_service.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_host_env.sh"
kwb="$build/app/cli/kwb"
export KWB_RESOURCES="$repo/resources" KWB_SERVE=off
if ! command -v bwrap >/dev/null && [ -x "$repo/.deps/sandbox/bwrap" ]; then
    export KWB_BWRAP="$repo/.deps/sandbox/bwrap"
fi
echo "kernel $(uname -r), landlock ABI $(PYTHONPATH="$repo/resources/harness" python3 -c \
    'from kwb_harness.isolation import confinement; print(confinement.landlock_abi())')"
# CUDA in a process whose writes Landlock restricts as a shared worker's stage child does
# (outside bubblewrap), and with everything writable, to tell Landlock's part from the sandbox's.
for writable in "/tmp /dev /dev/shm" "/"; do
    PYTHONPATH="$repo/resources/harness" python3 - $writable <<'PY' 2>&1 | tail -1
import sys
from kwb_harness.isolation import confinement
confinement.restrict_writes(sys.argv[1:])
import torch
try:
    x = torch.ones(4, device="cuda")
    print(f"landlock, writable {' '.join(sys.argv[1:])}: cuda ok ({float(x.sum())})")
except Exception as e:
    print(f"landlock, writable {' '.join(sys.argv[1:])}: cuda failed: {str(e)[:200]}")
PY
done
root=/tmp/kwb-variants
rm -rf "$root"
"$kwb" workspace init "$repo/resources/tasks/01_gelu.py" "$root/ws" --fast --with-solution >/dev/null
for variant in "default" "KWB_SHARED_WORKERS=off" "KWB_WARM_WORKER=0"; do
    started=$(date +%s.%N)
    env ${variant/default/KWB_VARIANT=default} "$kwb" eval "$root/ws" --fast --json > "$root/result.json" 2> "$root/stderr"
    python3 "$repo/bench/evaluation_line.py" "$variant" "$started" \
        "$root/result.json"
done
