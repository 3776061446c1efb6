"""Stage ``compile``: builds the workspace's kernels into the ``cuda_extension`` module.

Builds go through torch.utils.cpp_extension.load with a persistent build directory, so
ninja recompiles only changed translation units. On top of that, finished modules are
cached by content hash, which makes re-evaluating an unchanged (or reverted) workspace a
file copy.
"""

import contextlib
import glob
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import sysconfig
import tempfile
import time

from .. import device as devices
from ..diagnostics import first_error, parse_diagnostics, workspace_relative
from ..environment import torch_build_info
from ..errors import BAD_REQUEST, COMPILE_ERROR, HarnessError
from ..task_loader import EXTENSION_NAME
from .capture import redirect_to_file, tail_text

SOURCE_EXTS = (".cu", ".cpp")
HEADER_EXTS = (".h", ".hpp", ".cuh", ".inl")
SO_NAME = EXTENSION_NAME + ".so"
_COMMAND_LOG_LIMIT = 256 * 1024
_NINJA_COMPILE = re.compile(r"^\[\d+/\d+\] .*? -c (?P<src>.+?) -o \S+")


def _listing(workspace: str, exts: tuple) -> list:
    """Files with the given extensions in the workspace root and kernels/, sorted, relative."""
    found = []
    for sub in ("", "kernels"):
        folder = os.path.join(workspace, sub) if sub else workspace
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(exts) and os.path.isfile(os.path.join(folder, name)):
                found.append(f"{sub}/{name}" if sub else name)
    return found


def collect_sources(workspace: str, device: str) -> list:
    # The CPU build only takes .cpp files: kernels' .cu launchers are replaced by
    # KWB_CPU_MODE implementations, and no CUDA compiler or GPU is needed.
    exts = (".cpp",) if device == "cpu" else SOURCE_EXTS
    return _listing(workspace, exts)


def _check_object_names(sources: list, device: str) -> None:
    # cpp_extension names objects after the file's base name only, so kernels/a.cpp and
    # a.cpp would overwrite each other's object file and one would silently vanish.
    owners = {}
    for rel in sources:
        stem = os.path.splitext(os.path.basename(rel))[0]
        obj = stem + (".cuda.o" if rel.endswith(".cu") and device == "cuda" else ".o")
        if obj in owners:
            raise HarnessError(
                COMPILE_ERROR,
                f"{owners[obj]} and {rel} would both compile to {obj}; rename one of them",
            )
        owners[obj] = rel


def _nvidia_wheel_dirs(sub: str) -> list:
    """lib/ or include/ folders of NVIDIA's pip packages, which may hold what CUDA_HOME lacks."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("nvidia")
    except Exception:
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    dirs = []
    for root in spec.submodule_search_locations:
        dirs.extend(sorted(glob.glob(os.path.join(root, "*", sub))))
    return dirs


def _link_flags(lib: str, cuda_home: str | None) -> list:
    if cuda_home:
        for sub in ("lib64", "lib", os.path.join("targets", f"{platform.machine()}-linux", "lib")):
            folder = os.path.join(cuda_home, sub)
            if os.path.exists(os.path.join(folder, f"lib{lib}.so")):
                # cpp_extension already passes -L$CUDA_HOME/lib64.
                return [f"-l{lib}"] if sub == "lib64" else [f"-L{folder}", f"-l{lib}"]
    pattern = re.compile(rf"^lib{re.escape(lib)}\.so\.\d+$")
    for folder in _nvidia_wheel_dirs("lib"):
        for name in sorted(os.listdir(folder)):
            if pattern.match(name):
                # Wheels ship only the versioned name; the rpath lets the module find it
                # even if torch has not loaded that library first.
                return [f"-L{folder}", f"-l:{name}", f"-Wl,-rpath,{folder}"]
    return [f"-l{lib}"]


def _cudnn_includes(cuda_home: str | None) -> list:
    if cuda_home and os.path.exists(os.path.join(cuda_home, "include", "cudnn.h")):
        return []
    for folder in _nvidia_wheel_dirs("include"):
        if os.path.exists(os.path.join(folder, "cudnn.h")):
            return [folder]
    return []


def _read(workspace: str, rel: str) -> bytes:
    with open(os.path.join(workspace, rel), "rb") as handle:
        return handle.read()


def _detect_arch() -> str:
    import torch

    if not torch.cuda.is_available():
        raise HarnessError(BAD_REQUEST, "field 'arch' is empty and there is no CUDA device to detect it from")
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def find_cuda_home() -> str | None:
    """The toolkit folder, found the way cpp_extension finds it but without importing torch."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda" if os.path.isdir("/usr/local/cuda") else None


def build_settings(req, sources: list) -> dict:
    # torch is not imported here: on a cache hit the whole stage stays torch-free.
    if req.device == "cpu":
        return {
            "arch": "",
            "cflags": ["-O3", "-DKWB_CPU_MODE", "-std=c++17"] + req.extra_cflags,
            "cuda_cflags": [],
            "ldflags": [],
            "include_paths": [],
            "with_cuda": False,
        }
    arch = req.arch or _detect_arch()
    number = arch[len("sm_"):]
    cuda_home = find_cuda_home()
    ldflags = _link_flags("cublas", cuda_home)
    include_paths = []
    uses_cudnn = any(re.search(rb"#\s*include\s*[<\"]cudnn\.h[>\"]", _read(req.workspace, s)) for s in sources)
    if uses_cudnn:
        ldflags += _link_flags("cudnn", cuda_home)
        include_paths += _cudnn_includes(cuda_home)
    return {
        "arch": arch,
        "cflags": ["-O3", "-std=c++17"] + req.extra_cflags,
        # One explicit -gencode also stops cpp_extension from adding its own list of
        # architectures, which would multiply nvcc time for code nobody runs.
        "cuda_cflags": [
            "-O3",
            "--use_fast_math",
            f"-gencode=arch=compute_{number},code=sm_{number}",
            "-std=c++17",
        ]
        + req.extra_cuda_cflags,
        "ldflags": ldflags,
        "include_paths": include_paths,
        "with_cuda": True,
        "cuda_home": cuda_home or "",
    }


def content_hash(req, sources: list, settings: dict) -> str:
    torch_version, torch_cuda = torch_build_info()
    digest = hashlib.sha256()
    digest.update(b"kwb-extension-v1\0")
    # Headers are hashed although only sources are compiled: a change in an included
    # header changes the binary just the same.
    for rel in sorted(set(sources) | set(_listing(req.workspace, HEADER_EXTS))):
        data = _read(req.workspace, rel)
        digest.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0")
        digest.update(data)
    context = {
        "settings": settings,
        "torch": torch_version,
        "torch_cuda": torch_cuda,
        "device": req.device,
        # The module is tied to the interpreter's ABI and the machine it was built for.
        "python": list(sys.version_info[:2]),
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
        "machine": platform.machine(),
    }
    digest.update(json.dumps(context, sort_keys=True).encode("utf-8"))
    return digest.hexdigest()


def _atomic_copy(src: str, dst: str) -> None:
    # A process that already loaded the old module keeps its mapping of the old inode;
    # overwriting in place would corrupt that mapping, a rename does not.
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".kwb-", suffix=".so.tmp", dir=os.path.dirname(dst))
    os.close(fd)
    try:
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _exclusive(build_dir: str):
    """Serialises builds of one build directory across processes.

    torch's own lock is a plain file that survives a killed build and then makes every
    later build wait forever; holding an flock (released by the kernel when the holder
    dies) lets the stale file be removed safely.
    """
    import fcntl

    os.makedirs(build_dir, exist_ok=True)
    with open(os.path.join(build_dir, "kwb.lock"), "w") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(build_dir, "lock"))
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _compiled_files(output: str, workspace: str) -> list:
    files = []
    for line in output.splitlines():
        match = _NINJA_COMPILE.match(line.strip())
        if match:
            rel = workspace_relative(match.group("src").strip("'\""), workspace)
            if rel not in files:
                files.append(rel)
    return files


def _ninja_build(req, build_dir: str, sources: list, settings: dict):
    """Runs cpp_extension.load; returns (error or None, captured build output)."""
    from torch.utils import cpp_extension

    devices.configure(req.device, req.cpu_threads)
    # The versioner renames a module whose inputs changed within one process
    # (cuda_extension_v1); a stage builds once, but in-process callers may build twice.
    with contextlib.suppress(Exception):
        cpp_extension.JIT_EXTENSION_VERSIONER.entries.pop(EXTENSION_NAME, None)
    error = None
    with redirect_to_file() as captured:
        try:
            # verbose=True makes ninja print commands and compiler output (warnings too)
            # on fd 1, which the redirection collects; with verbose=False the output of a
            # successful build would be thrown away.
            cpp_extension.load(
                name=EXTENSION_NAME,
                sources=[os.path.join(req.workspace, s) for s in sources],
                extra_cflags=settings["cflags"],
                extra_cuda_cflags=settings["cuda_cflags"],
                extra_ldflags=settings["ldflags"],
                extra_include_paths=settings["include_paths"],
                build_directory=build_dir,
                with_cuda=settings["with_cuda"],
                verbose=True,
                is_python_module=True,
            )
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            error = exc
    return error, captured.text


def run(req, result: dict) -> None:
    result.update(
        extension_path="",
        cache_hit=False,
        content_hash="",
        sources=[],
        compiled_files=[],
        diagnostics=[],
        command_log="",
    )
    workspace = req.workspace
    sources = collect_sources(workspace, req.device)
    result["sources"] = sources
    if not [s for s in sources if s != "binding.cpp"]:
        result["skipped"] = True
        print("no sources: candidate builds its own extension (nothing to compile in "
              f"{workspace} or {os.path.join(workspace, 'kernels')})")
        return
    _check_object_names(sources, req.device)

    settings = build_settings(req, sources)
    digest = content_hash(req, sources, settings)
    result["content_hash"] = digest
    build_dir = os.path.join(req.build_dir, req.device)
    target = os.path.join(build_dir, SO_NAME)
    cached = os.path.join(req.cache_dir, "ext", digest, SO_NAME)
    print(f"compile: {len(sources)} sources, device {req.device}"
          + (f", arch {settings['arch']}" if settings["arch"] else "") + f", hash {digest[:16]}")

    with _exclusive(build_dir):
        if os.path.isfile(cached):
            _atomic_copy(cached, target)
            result.update(extension_path=target, cache_hit=True, command_log=f"cache hit: {cached}\n")
            print(f"cache hit: {cached}")
            return

        started = time.perf_counter()
        error, output = _ninja_build(req, build_dir, sources, settings)
        _finish(req, result, error, output, time.perf_counter() - started, target, cached)


def _finish(req, result, error, output, took, target, cached) -> None:
    text = output
    if error is not None and str(error) not in output:
        text += "\n" + str(error)
    diagnostics = parse_diagnostics(text, req.workspace, os.path.join(req.build_dir, req.device))
    result["diagnostics"] = diagnostics
    result["command_log"] = tail_text(text, _COMMAND_LOG_LIMIT)
    result["compiled_files"] = _compiled_files(output, req.workspace)
    warnings = sum(1 for d in diagnostics if d["severity"] == "warning")
    if req.verbose:
        print(output)

    if error is not None:
        if isinstance(error, ImportError):
            message = (f"the extension was built but cannot be loaded: {error}\n"
                       "Usually a launcher declared in a binding has no definition in the "
                       "compiled sources (in CPU mode: no KWB_CPU_MODE implementation).")
        else:
            message = first_error(diagnostics, text)
        print(f"build failed after {took:.1f}s: {message}")
        raise HarnessError(COMPILE_ERROR, message)

    if not os.path.isfile(target):
        raise HarnessError(COMPILE_ERROR, f"the build reported success but {target} is missing")
    _atomic_copy(target, cached)
    result["extension_path"] = target
    print(f"built {target} in {took:.1f}s; recompiled: "
          f"{', '.join(result['compiled_files']) or 'nothing'}; {warnings} warning(s)")
