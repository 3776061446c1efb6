#!/usr/bin/env bash
# Two versions of kwb doing the same rollout on one GPU machine, one after the other, so that a
# change's effect on rollout throughput is measured on the same host (hosts of the same GPU model
# differ by tens of percent). The other version's tree comes as .ab/old.tar.gz (carried):
#   git archive --prefix=old/ REV | gzip > .ab/old.tar.gz
#   bench/gpu_rollout_ab.sh build            build both versions (this tree's and the archive's)
#   bench/gpu_rollout_ab.sh old|new [...]    bench/gpu_rollout.sh's `rollout` part with that
#                                            version's kwb and harness, in a work folder of its own
#                                            (a fresh kwb cache each time), KWB_ROLLOUT_SECONDS long
# Give the parts in the order wanted (e.g. `build old` in one call, `new` in the next, `old` again
# in a third to see the order's effect); each writes $OUT/<part>-<n>/ (rollout.log, report.md).
# KWB_ONLY, KWB_EPISODES, KWB_CONCURRENCY, KWB_ROLLOUT_SECONDS as bench/gpu_rollout.sh takes them.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-/tmp/kwb-rollout-ab}"
old_root=/tmp/kwb-ab
mkdir -p "$out"
for part in "$@"; do
case "$part" in
build)
    if [ ! -d "$old_root/old" ]; then
        mkdir -p "$old_root" && tar -xzf "$repo/.ab/old.tar.gz" -C "$old_root" || exit 1
        ln -sfn "$repo/.deps" "$old_root/old/.deps"
    fi
    (
        source "$repo/bench/gpu_host_env.sh"
        started=$(date +%s)
        configure_gpu_host_build
        cmake --build "$build" --target kwb kwb_cupti_inject 2>&1 | grep -E "error|FAILED" | head -20
        echo "new build: $(($(date +%s) - started)) s"
    )
    (
        source "$old_root/old/bench/gpu_host_env.sh"
        started=$(date +%s)
        configure_gpu_host_build
        cmake --build "$build" --target kwb kwb_cupti_inject 2>&1 | grep -E "error|FAILED" | head -20
        echo "old build: $(($(date +%s) - started)) s"
    ) ;;
old | new)
    tree="$repo"
    [ "$part" = old ] && tree="$old_root/old"
    n=1
    while [ -e "$out/$part-$n" ]; do n=$((n + 1)); done
    echo "== $part ($tree), run $n"
    OUT="$out/$part-$n" KWB_WORK="/tmp/kwb-ab-work-$part" KWB_EPISODES="${KWB_EPISODES:-2}" \
        bash "$tree/bench/gpu_rollout.sh" cuda rollout >/dev/null 2>&1
    grep -E "^- (evaluations|GPU)|^\| (profile|inspect|verify|compile) |^## kwb" "$out/$part-$n/report.md" ;;
*)
    echo "unknown part: $part" >&2
    exit 2 ;;
esac
done
