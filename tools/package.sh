#!/usr/bin/env bash
# Builds the .deb (CPack, from the release build) and checks it as a user's machine would see it:
# lintian, desktop-file-validate and appstreamcli report no errors, and from the package's files
# unpacked into a scratch root, `kwb --version`, `kwb eval` on a bundled task in CPU mode and
# `kernel-workbench --screenshot` work, finding their resources, harness and man pages there
# and nothing in this checkout.
#
#   tools/package.sh [--no-check]        (KWB_BUILD_PRESET picks the build, default release)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=${KWB_BUILD_PRESET:-release}
build=$repo/build/$preset
check=1
[[ ${1:-} == --no-check ]] && check=0
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
fail() { printf 'package: FAIL: %s\n' "$*" >&2; exit 1; }

start=$SECONDS
cmake --preset "$preset" -S "$repo" >/dev/null
cmake --build "$build"
cmake --build "$build" --target kwb_man_pages
rm -f "$build"/kernel-workbench_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/kernel-workbench_*.deb)
say "built $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $((SECONDS - start)) s"
[[ $check == 1 ]] || exit 0

say "lintian"
# Errors fail the check; warnings are printed for the record.
lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "root privileges" | tee "$build/lintian.txt" || true
! grep -q '^E:' "$build/lintian.txt" || fail "lintian reports errors"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
say "desktop-file-validate, appstreamcli validate, the MIME types"
desktop-file-validate "$root"/usr/share/applications/*.desktop
appstreamcli validate --no-net "$root"/usr/share/metainfo/*.metainfo.xml
xmllint --noout "$root/usr/share/mime/packages/kernel-workbench.xml"
# The MIME types name kwb's files by their first bytes, as a file manager would see them.
command -v gio >/dev/null || fail "gio is missing (libglib2.0-bin; tools/setup.sh installs it)"
{
    mkdir -p "$root/mime-db/mime/packages" "$root/samples"
    cp /usr/share/mime/packages/freedesktop.org.xml "$root/usr/share/mime/packages/kernel-workbench.xml" \
        "$root/mime-db/mime/packages/"
    update-mime-database "$root/mime-db/mime"
    printf '{"t":"header","format":"kwb-cupti/1","pid":1}\n' > "$root/samples/records.jsonl"
    printf '{"displayTimeUnit":"ns","otherData":{"format":"kwb-timeline/1"},"traceEvents":[]}' \
        > "$root/samples/export.json"
    printf '{"format":"kwb.episode","format_version":1,"episode":{},"events":[]}\n' \
        > "$root/samples/run.jsonl"
    for sample in records.jsonl:application/x-kwb-trace export.json:application/x-kwb-trace \
        run.jsonl:application/x-kwb-episodes; do
        type=$(XDG_DATA_DIRS="$root/mime-db" XDG_DATA_HOME="$root/none" \
            gio info -a standard::content-type "$root/samples/${sample%%:*}" 2>/dev/null |
            awk '/content-type/ { print $2 }')
        [[ $type == "${sample#*:}" ]] || fail "${sample%%:*} is $type, not ${sample#*:}"
    done
    echo "MIME types: records and Chrome export -> application/x-kwb-trace, episodes -> application/x-kwb-episodes"
}

say "the installed files, without this checkout"
# Nothing may come from the checkout: no resource override, and the checkout's venv is not the
# installed kwb's business (KWB_PYTHON names the Python with torch, as a user would).
python=$("$build/app/cli/kwb" info 2>/dev/null | awk '/\(project venv\)|\(KWB_PYTHON\)|\(settings\)|\(PATH\)/ { print $1; exit }')
[[ -x $python ]] || fail "no Python with torch found for the smoke test"
# The store is a scratch one; the cache (compiled extensions by content hash, ccache) is the
# user's, as it would be: the test suite has usually built this solution's extension already.
run() { env -u KWB_RESOURCES KWB_PYTHON="$python" KWB_STATE_DIR="$root/state" "$@"; }
run "$root/usr/bin/kwb" --version | tee "$root/version.txt"
grep -q "^kwb $(sed -n 's/^project(KernelWorkbench VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")" \
    "$root/version.txt" || fail "kwb --version"
run "$root/usr/bin/kwb" info | tee "$root/info.txt"
grep -q "Tasks:    $root/usr/share/kernel-workbench/resources/tasks" "$root/info.txt" ||
    fail "the installed kwb does not use its own bundled tasks"
grep -q "Profiler: $root/usr/lib/.*/kernel-workbench/libkwb_cupti_inject.so" "$root/info.txt" ||
    fail "the installed kwb does not find its own CUPTI injection library"
run "$root/usr/bin/kwb" doctor | tee "$root/doctor.txt" || fail "kwb doctor"
grep -q '^\[skip\] libtorch: kwb-libtorch is not installed' "$root/doctor.txt" ||
    fail "kwb doctor: the libtorch line"
grep -q '^\[ok\]   CUDA toolkit (NVRTC)' "$root/doctor.txt" || fail "kwb doctor: NVRTC"
task=$root/usr/share/kernel-workbench/resources/tasks/03_softmax.py
run "$root/usr/bin/kwb" workspace init --with-solution "$task" "$root/ws" >/dev/null
eval_start=$SECONDS
run "$root/usr/bin/kwb" eval "$root/ws" --device cpu --json > "$root/eval.json" ||
    { cat "$root/eval.json" >&2; fail "kwb eval exited $?"; }
"$python" - "$root/eval.json" <<'PY' || fail "kwb eval's result"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["correct"] is True and r["reward"] >= 1, {k: r.get(k) for k in ("reward", "correct", "failure_kind", "message")}
print(f"kwb eval: reward {r['reward']}, correct on the CPU")
PY
say "kwb eval from the package: $((SECONDS - eval_start)) s"
run env QT_QPA_PLATFORM=offscreen "$root/usr/bin/kernel-workbench" --screenshot "$root/shot.png" \
    --size 1366x768 "$task" | tee "$root/shot.txt"
grep -q "03_softmax.py" "$root/shot.txt" || fail "kernel-workbench --screenshot"
[[ $(stat -c %s "$root/shot.png") -gt 20000 ]] || fail "the screenshot is blank"
zcat "$root/usr/share/man/man1/kwb-eval.1.gz" | grep -q 'auto, cpu or cuda' || fail "kwb-eval(1)"
say "package checked in $((SECONDS - start)) s: $(basename "$deb")"
