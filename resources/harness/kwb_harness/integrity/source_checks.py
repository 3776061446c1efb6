"""Static integrity checks of a candidate's sources, run before any of its code executes.

The run-time guards catch most hacks by what they do; these checks catch the ones whose
intent is visible in the text: fallbacks to the reference in ``except`` blocks, the reference
model reused, threads or processes that compute behind the timer's back, monkey-patching,
ways around the operator guard, precision downgrades and shapes baked into the code. Each
finding is a flag with a severity and the file and line that triggered it.

Python is parsed with ``ast`` (comments and strings cannot trigger a finding); C++ and CUDA
sources are matched with regular expressions after their comments are removed.
"""

import ast
import os
import re

STRICT = "strict"
WARNING = "warning"

_THREAD_MODULES = {"threading", "_thread", "concurrent", "multiprocessing", "asyncio", "subprocess"}
_PROCESS_CALLS = {"fork", "system", "popen", "spawnv", "spawnl", "execv", "execl", "posix_spawn"}
_LOW_PRECISION_ATTRS = {
    "half", "float16", "bfloat16", "allow_tf32", "allow_fp16_reduced_precision_reduction",
    "allow_bf16_reduced_precision_reduction", "set_float32_matmul_precision", "autocast",
}
_LOW_PRECISION_STRINGS = {"half", "float16", "bfloat16", "fp16", "bf16"}
_COMPILERS = {("torch", "compile"), ("jit", "script"), ("jit", "trace"), ("torch", "_dynamo")}
_IDENTITY_CALLS = {"data_ptr", "tobytes", "_version", "untyped_storage", "storage"}
# Ways to run code that no source check reads: code objects from bytes, libraries loaded by
# path, modules imported by computed names.
_DYNAMIC_MODULES = {"marshal", "ctypes", "cffi", "importlib", "pickle", "dill", "cloudpickle", "runpy",
                    "zipimport", "pkgutil", "imp", "code", "codeop"}
_DYNAMIC_BUILTINS = {"exec", "eval", "compile", "__import__"}
_DYNAMIC_CALLS = {"load_library"}

_CPP_PATTERNS = [
    (re.compile(r"\bstd::(thread|jthread|async)\b|\bpthread_create\b|#\s*include\s*<thread>|\bfork\s*\("),
     "threading", STRICT, "starts a thread or process: work could finish after the timer stopped"),
    # Processes by the C library's other doors (clone, vfork, spawn, exec, system): helpers made
    # with clone() outlived the judge's stop and slowed its baselines (an outside round,
    # 2026-12-05). `x.clone()` and `at::clone` are tensors' copies, not these.
    (re.compile(r"(?<![\w.>:])(?:(?:std)?::)?(?:v?fork|clone3?|posix_spawnp?|exec[lv]p?e?|system|popen)\s*\("),
     "threading", STRICT, "starts a process: work could compete with the baselines or finish after the timer stopped"),
    # Functions looked up by name at run time run what no pattern here can read. System calls
    # made directly (syscall(SYS_clone, ...), the instruction in asm) are left to the sandbox and
    # to the judge's census of the candidate's processes (processes_started): the sandbox-escape
    # table's candidates use them to test exactly those.
    (re.compile(r"\bdl(?:open|mopen|sym|vsym)\b"),
     "dynamic_code", STRICT, "looks functions up by name at run time: what it runs cannot be read from its sources"),
    (re.compile(r"\bExcludeDispatchKeyGuard\b|\bDispatchKey::Python\b"),
     "guard_evasion", STRICT, "excludes dispatch keys, which hides torch operators from the guard"),
    # ATen's per-backend entry points (at::cpu::sigmoid, at::cuda::add, at::native::..., the
    # redispatch API) run torch's own kernels without passing the dispatcher, where the guard
    # watches; ATen/Functions.h, the dispatching API, stays allowed.
    (re.compile(r"#\s*include\s*[<\"]ATen/(?:\w+Functions|ops/\w+_(?:native|\w+_dispatch))\.h[>\"]"
                r"|\bat::(?:native|cpu|redispatch)::\w+"),
     "torch_fallback", STRICT, "calls torch's own kernels past the dispatcher (ATen's per-backend or native "
                               "functions): torch does the work, unseen by the operator guard"),
    (re.compile(r"\bcudaStreamCreate\w*\b|\bgetStreamFromPool\b"),
     "stream_creation", WARNING, "creates its own CUDA stream; work on it is checked against the timer"),
    # The types, conversions and PTX that compute in 16 bits, not the headers: honest kernels
    # include cuda_fp16.h by habit, and torch/extension.h brings c10::Half along anyway.
    (re.compile(r"\b__half2?\b|\bhalf2\b|\b_Float16\b|\b__fp16\b|\b__bf16\b|\b__nv_fp8\w*\b|\b__nv_bfloat16\w*\b|\b__float2half\w*\b|\b__float2bfloat16\w*\b"
                r"|\b(?:at|c10)::(?:Half|BFloat16)\b|\b(?:torch|at|c10)::k(?:Half|BFloat16)\b"
                r"|ScalarType::(?:Half|BFloat16)\b"
                r"|_FAST_TF32\b|_FAST_16F\b|_FAST_16BF\b|\bTF32_TENSOR_OP_MATH\b|precision::tf32"
                r"|__float_to_tf32\b|\btf32\b"
                # Spellings without a type name: GCC's machine modes for 16-bit floats, C++23's
                # std::float16_t and literal suffixes, PTX conversions and operand types in asm.
                r"|\b_*mode_*\s*\(\s*_*(?:HF|BF)_*\s*\)|\b(?:std::)?b?float16_t\b"
                r"|\b\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:f16|F16|bf16|BF16)\b"
                r"|\.(?:b?f16(?:x2)?|e4m3\w*|e5m2\w*|e2m1\w*)\b"),
     "precision_downgrade", None, "computes in reduced precision (fp16 / bf16 / tf32)"),
]
_CPP_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# C++ lets space and line breaks stand between a scope and its name (`std :: thread`); the
# patterns are written without, so the text loses them first.
_CPP_SCOPE_SPACING = re.compile(r"\s*::\s*")
# Thread types named without their scope, after `using namespace std;` or `using std::thread;`
# (the spacing above already gone, so `using namespace ::std;` reads `namespace::std`):
# declared (`thread t(...)`, `thread{[&]{...}}`), held (`vector<thread>`) or std::async called.
# A variable merely called `thread` (common in kernels), a helper whose name starts with it
# (`thread_sum(...)`), a message that mentions it and `using namespace std::chrono;` are none of
# these: string literals are blanked for this check, and the name must end where `thread` ends.
_STD_IN_SCOPE = re.compile(r"\busing\s+namespace\s*(?:::)?std\s*;|\busing\s*(?:::)?std::(?:thread|jthread|async)\b")
_BARE_THREAD = re.compile(r"(?<![\w:.>])j?thread\b\s*(?:\w+\s*)?[({]\s*(?:\[|&|[\w:]+\s*[,)}(])"
                          r"|(?<![\w:.>])j?thread\b\s+\w+\s*[({]|<\s*j?thread\s*>|(?<![\w:.>])async\s*\(")
# `namespace s = std;` makes `s::thread` std::thread.
_STD_ALIAS = re.compile(r"\bnamespace\s+(\w+)\s*=\s*(?:::)?std\s*;")
# Literals, leftmost first: a raw string, a character literal (so that '"' opens no string), a
# string. Blanked where a pattern names calls, which text in a literal does not make.
_CPP_LITERAL = re.compile(r'R"([^()\\\s]{0,16})\((?:.|\n)*?\)\1"'
                          r"|'(?:\\.|[^'\\\n])'"
                          r'|"(?:\\.|[^"\\\n])*"')
# The patterns that look for calls (threads, processes, look-ups by name) read literal-free text.
_CALL_PATTERN_CODES = {"threading", "dynamic_code"}
_CPP_INTEGER = re.compile(r"(?<![\w.])(\d+)(?:[uUlL]*)(?![\w.])")


def _flag(code: str, severity: str, reason: str, where: str) -> dict:
    return {"code": code, "severity": severity, "reason": f"{where}: {reason}"}


class _PythonChecker(ast.NodeVisitor):
    """Walks one Python file of the workspace once and records findings with their line numbers."""

    def __init__(self, display: str, task_is_fp32: bool, shape_literals: dict):
        self.display = display
        self.task_is_fp32 = task_is_fp32
        self.shape_literals = shape_literals
        self.module_aliases = set()
        self.flags = []
        self._function_depth = 0
        self._seen = set()

    def _add(self, node, code: str, severity: str, reason: str) -> None:
        key = (code, getattr(node, "lineno", 0))
        if key in self._seen:
            return
        self._seen.add(key)
        self.flags.append(_flag(code, severity, reason, f"{self.display}:{getattr(node, 'lineno', 0)}"))

    # Imports: remember module aliases (for monkey-patching) and reject thread/process modules.
    def visit_Import(self, node):
        for alias in node.names:
            root = alias.name.split(".")[0]
            self.module_aliases.add(alias.asname or root)
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            # `from torch import nn` binds a module; attribute writes through it patch torch.
            self.module_aliases.add(alias.asname or alias.name)
            if alias.name.startswith(("_disable", "_pop", "_set_torch")) or alias.name in (
                    "DisableTorchFunction", "DisableTorchFunctionSubclass"):
                self._add(node, "guard_evasion", STRICT,
                          f"imports {alias.name} from {module}, which can switch the operator guard off")
            if alias.name == "Model" or module.split(".")[-1] == "model":
                self._add(node, "reference_model_used", STRICT,
                          f"imports the reference ({module}.{alias.name}); ModelNew must not run Model")

    def _check_module(self, node, name: str) -> None:
        root = name.split(".")[0]
        if root in _THREAD_MODULES:
            self._add(node, "threading", STRICT,
                      f"imports {name}: work in another thread or process can finish after the timer stopped")
        if root == "model":
            self._add(node, "reference_model_used", STRICT, "imports the reference task module model.py")
        if "_python_dispatch" in name.split(".") or name.startswith("torch._C"):
            self._add(node, "guard_evasion", STRICT,
                      f"imports {name}, whose internals can switch the operator guard off")
        if root == "triton":
            self._add(node, "triton_kernels", WARNING, "imports triton; the task asks for CUDA C++ kernels")
        if root in _DYNAMIC_MODULES:
            self._add(node, "dynamic_code", STRICT,
                      f"imports {name}, which runs or loads code that the source checks cannot read")

    def visit_ClassDef(self, node):
        if node.name == "ModelNew":
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                if name == "Model":
                    self._add(node, "reference_model_used", STRICT, "ModelNew inherits from the reference Model")
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        self._function_depth += 1
        self.generic_visit(node)
        self._function_depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Try(self, node):
        for handler in node.handlers:
            if handler.body and not isinstance(handler.body[-1], ast.Raise):
                if self._function_depth:
                    self._add(handler, "try_except_fallback", STRICT,
                              "an except block that does not re-raise: a failing kernel could fall back to torch")
                else:
                    self._add(handler, "try_except_fallback", WARNING,
                              "a module-level except block that does not re-raise")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_Name(self, node):
        if node.id == "Model" and isinstance(node.ctx, ast.Load):
            self._add(node, "reference_model_used", STRICT, "refers to the reference Model")
        if self.task_is_fp32 and node.id in ("float16", "bfloat16"):
            self._add(node, "precision_downgrade", STRICT, f"uses {node.id} in an fp32 task")

    def _root(self, node):
        while isinstance(node, ast.Attribute):
            node = node.value
        while isinstance(node, ast.Subscript):
            node = node.value
            while isinstance(node, ast.Attribute):
                node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def _check_patch_target(self, target) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_patch_target(element)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            root = self._root(target)
            if root in self.module_aliases:
                self._add(target, "monkey_patching", STRICT,
                          f"assigns to an attribute of the imported module '{root}'")

    def visit_Assign(self, node):
        for target in node.targets:
            self._check_patch_target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_patch_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._check_patch_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self._check_patch_target(target)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        attr = node.attr
        parent = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        if (parent, attr) in _COMPILERS:
            self._add(node, "torch_compile_used", STRICT,
                      f"uses {parent}.{attr}: generated kernels bypass the operator guard")
        if attr == "_C" or attr.startswith("_disable") or attr in ("_python_dispatch", "_pop_mode",
                                                                    "_pop_torch_dispatch_mode",
                                                                    "DisableTorchFunction",
                                                                    "DisableTorchFunctionSubclass"):
            self._add(node, "guard_evasion", STRICT,
                      f"touches torch internals ({parent}.{attr}) that can switch the operator guard off")
        if attr in ("Stream", "stream", "ExternalStream") and parent == "cuda":
            self._add(node, "stream_creation", WARNING,
                      "uses its own CUDA stream; work on it is checked against the timer")
        if attr in ("CUDAGraph", "graph", "make_graphed_callables") and parent == "cuda":
            self._add(node, "cuda_graph", WARNING,
                      "uses CUDA graphs; replays are checked against fresh inputs")
        if self.task_is_fp32 and attr in _LOW_PRECISION_ATTRS:
            self._add(node, "precision_downgrade", STRICT, f"uses {attr} in an fp32 task")
        if attr in _PROCESS_CALLS and parent == "os":
            self._add(node, "threading", STRICT, f"calls os.{attr}: work in another process")
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("setattr", "delattr") and node.args:
            root = self._root(node.args[0])
            if root in self.module_aliases:
                self._add(node, "monkey_patching", STRICT, f"calls {name} on the imported module '{root}'")
        if isinstance(func, ast.Name) and name in _DYNAMIC_BUILTINS or name in _DYNAMIC_CALLS:
            self._add(node, "dynamic_code", STRICT,
                      f"calls {name}(), which runs or loads code that the source checks cannot read")
        if name in ("id", "hash") and isinstance(func, ast.Name) or name in _IDENTITY_CALLS:
            self._add(node, "input_identity_used", WARNING,
                      f"calls {name}(): results cached by identity or content are caught by fresh-input timing")
        if self.task_is_fp32 and name in ("to", "type") and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in _LOW_PRECISION_STRINGS
            for a in list(node.args) + [k.value for k in node.keywords]
        ):
            self._add(node, "precision_downgrade", STRICT, "converts to a reduced-precision dtype in an fp32 task")
        if self.task_is_fp32 and name == "set_float32_matmul_precision":
            self._add(node, "precision_downgrade", STRICT, "lowers the float32 matmul precision")
        self.generic_visit(node)

    def visit_Constant(self, node):
        value = node.value
        if type(value) is int and value in self.shape_literals:
            self._add(node, "hardcoded_shape", WARNING,
                      f"the literal {value} equals the task's {self.shape_literals[value]}; "
                      "the candidate is also verified on a second shape")


# A version-control folder is not the candidate's source (its objects are compressed, and an
# include into it is flagged on its own).
_SKIPPED_FOLDERS = {".git"}
# What the builds (under the top-level build/), the manifest and Python's imports (bytecode in a
# __pycache__ folder) write: skipped there. Everything else in build/, .kwb/ and __pycache__/ is
# read like any other file, since a kernel may include a header from there and a module there
# may be imported by name (bytecode itself is never read: the stages set a pycache prefix no
# file can be in).
_BUILD_OUTPUTS = {"build.ninja", ".ninja_log", ".ninja_deps", "kwb.lock"}
_BUILD_OUTPUT_SUFFIXES = (".o", ".so", ".a")
# What the fast path's NVRTC build (engine/evaluation/fast_kernel_build.cpp) writes for each
# kernel: its module, PTX and manifest, straight in build/kwb_kernels/.
_FAST_PATH_FOLDER = ("build", "kwb_kernels")
_FAST_PATH_SUFFIXES = (".cubin", ".ptx", ".json")


def _fast_path_output(parts: list) -> bool:
    return len(parts) == 3 and tuple(parts[:2]) == _FAST_PATH_FOLDER and parts[2].endswith(_FAST_PATH_SUFFIXES)


# What `kwb eval --counters` and `--timeline` write into the workspace's build folder
# (engine/evaluation/ncu_collection.cpp, evaluator.cpp's prepareTimeline): Nsight Compute's
# report (binary) and its CSV pages in build/counters/<time>/, the timeline's records in
# build/timelines/. Only these names there: anything else in those folders is read.
_COUNTERS_OUTPUTS = {"counters.ncu-rep", "details.csv", "raw.csv"}
_TIMELINE_SUFFIX = "-profile.kwbtl.jsonl"


def _measurement_output(parts: list) -> bool:
    if len(parts) == 4 and tuple(parts[:2]) == ("build", "counters"):
        return parts[3] in _COUNTERS_OUTPUTS
    return len(parts) == 3 and tuple(parts[:2]) == ("build", "timelines") and parts[2].endswith(_TIMELINE_SUFFIX)


def _generated(display: str) -> bool:
    parts = display.split(os.sep)
    name = parts[-1]
    if parts[0] == "build" and (name in _BUILD_OUTPUTS or name.endswith(_BUILD_OUTPUT_SUFFIXES)):
        return True
    if _fast_path_output(parts) or _measurement_output(parts):
        return True
    return display == os.path.join(".kwb", "workspace.json") or \
        (len(parts) > 1 and parts[-2] == "__pycache__" and name.endswith(".pyc"))


# Prose the agent may write (notes, plans); read as code only when a source names it.
_DOCUMENT_SUFFIXES = (".md", ".rst", ".txt")
_TEXT_LIMIT = 2 << 20
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')


def _protected(relative: str) -> bool:
    """The workspace's protected files (engine/workspace's isProtectedWorkspacePath): the
    harness's and the task's, hash-checked before every evaluation."""
    return relative == "model.py" or relative.startswith("binding") or relative == "utils" or \
        relative.startswith("utils" + os.sep)


def _workspace_files(workspace: str, candidate: str) -> tuple:
    """(files to check, findings about the files themselves): every file below the workspace,
    whatever its folder or extension, that an import or the build could read, without following
    links. A link that leaves the workspace, and a file that is not text, are findings: code the
    checks cannot read."""
    files, findings = [], []
    root = os.path.realpath(workspace)
    candidate_path = os.path.realpath(candidate) if candidate else ""
    for folder, dirs, names in os.walk(workspace, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_FOLDERS
                         and not _protected(os.path.relpath(os.path.join(folder, d), workspace)))
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            display = os.path.relpath(path, workspace)
            if _protected(display) or os.path.realpath(path) == candidate_path or _generated(display):
                continue
            if os.path.islink(path):
                target = os.path.realpath(path)
                if target != root and not target.startswith(root + os.sep):
                    findings.append(_flag("link_outside_workspace", STRICT,
                                          f"a link to {target}, outside the workspace: what it reads is not "
                                          "checked", display))
                continue
            if os.path.isfile(path):
                files.append(path)
    return files, findings


def _read_text(path: str):
    """The file's text, or None when it is not text (a NUL byte, too large to be a source) or
    cannot be read here (a file made unreadable now can be made readable again at run time)."""
    try:
        if os.path.getsize(path) > _TEXT_LIMIT:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def _blank_literals(code: str) -> str:
    """The text with every string and character literal's content replaced by spaces (line
    breaks kept, so that findings keep their line numbers)."""
    def blank(match):
        text = match.group(0)
        return text[0] + "".join(c if c == "\n" else " " for c in text[1:-1]) + text[-1]

    return _CPP_LITERAL.sub(blank, code)


def _thread_without_std_scope(code: str):
    """The first thread type or std::async named through `using` or a namespace alias of std,
    in comment- and literal-free text whose scopes are unspaced; None when there is none."""
    for alias in set(_STD_ALIAS.findall(code)):
        match = re.search(rf"(?<![\w:]){re.escape(alias)}::(?:thread|jthread|async)\b", code)
        if match:
            return match
        if re.search(rf"\busing\s+namespace\s*{re.escape(alias)}\s*;", code):
            return _BARE_THREAD.search(code)
    return _BARE_THREAD.search(code) if _STD_IN_SCOPE.search(code) else None


def _check_cpp(text: str, display: str, task_is_fp32: bool, shape_literals: dict, first_line: int = 1) -> list:
    """Findings in C++ / CUDA text; ``first_line`` is the line the text starts on in its file (a
    source embedded in a Python string)."""
    code = _CPP_COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    # Line breaks inside `std ::\n thread` go too: a finding's line can then be a few lines early.
    code = _CPP_SCOPE_SPACING.sub("::", code)
    flags = []
    literal_free = _blank_literals(code)
    match = _thread_without_std_scope(literal_free)
    if match:
        line = code.count("\n", 0, match.start()) + first_line
        flags.append(_flag("threading", STRICT, "starts a thread named without its std:: scope: work could "
                           f"finish after the timer stopped ('{match.group(0).strip()}')", f"{display}:{line}"))
    for pattern, flag_code, severity, reason in _CPP_PATTERNS:
        if flag_code == "precision_downgrade":
            if not task_is_fp32:
                continue
            severity = STRICT
        searched = literal_free if flag_code in _CALL_PATTERN_CODES else code
        match = pattern.search(searched)
        if match:
            line = searched.count("\n", 0, match.start()) + first_line
            flags.append(_flag(flag_code, severity, f"{reason} ('{match.group(0).strip()}')", f"{display}:{line}"))
    for target in _INCLUDE.findall(code):
        parts = target.replace("\\", "/").split("/")
        if _SKIPPED_FOLDERS & set(parts):
            flags.append(_flag("unchecked_include", STRICT,
                               f"#include \"{target}\" reads from a folder the source checks do not read",
                               display))
        elif any(_fast_path_output(parts[i:]) or _measurement_output(parts[i:]) for i in range(len(parts))):
            # The engine's outputs are skipped; text put under their names is not.
            flags.append(_flag("unchecked_include", STRICT,
                               f"#include \"{target}\" reads a build output of the engine's (fast path, "
                               "counters, timeline), which the source checks do not read", display))
    if shape_literals is None:
        return flags
    for match in _CPP_INTEGER.finditer(code):
        value = int(match.group(1))
        if value in shape_literals:
            line = code.count("\n", 0, match.start()) + 1
            flags.append(_flag("hardcoded_shape", WARNING,
                               f"the literal {value} equals the task's {shape_literals[value]}; "
                               "the candidate is also verified on a second shape", f"{display}:{line}"))
            break
    return flags


def distinctive_sizes(task_module, inputs: list) -> dict:
    """Sizes that would only appear in a candidate's code if it baked the task's shape in.

    Small values and the powers of two that serve as block sizes are common in honest kernels,
    so they are left out; what remains are the task's batch and feature sizes.
    """
    sizes = {}
    common = {1 << k for k in range(11)}
    for name, value in sorted(vars(task_module).items()):
        if type(value) is int and value > 8 and value not in common and not name.startswith("_"):
            sizes.setdefault(value, f"'{name}'")
    for index, described in enumerate(inputs):
        for dim in described.get("shape", []) or []:
            if isinstance(dim, int) and dim > 8 and dim not in common:
                sizes.setdefault(dim, f"input {index} dimension")
    return sizes


def check_sources(candidate: str, workspace: str, task_module, inputs: list, named_only: bool = False) -> list:
    """All static findings for a candidate, given the task's module and input descriptions.

    A workspace's every file is the candidate's to write, so all of them are checked. A
    KernelBench pair's candidate is one file in a folder it shares with others (its reference,
    other samples, their builds): ``named_only`` checks that file and the files it names, directly
    or through a named file, and leaves the neighbours' code and data alone."""
    floating = [d.get("dtype") for d in inputs if d.get("type") == "tensor" and
                str(d.get("dtype", "")).startswith(("float", "bfloat", "complex"))]
    task_is_fp32 = bool(floating) and all(d in ("float32", "float64") for d in floating)
    shape_literals = distinctive_sizes(task_module, inputs) if task_module is not None else {}

    flags = []
    display = os.path.relpath(candidate, workspace) if workspace else os.path.basename(candidate)
    candidate_text = _read_text(candidate) or ""
    flags.extend(_check_python_text(candidate_text, display, task_is_fp32, shape_literals))
    if not workspace:
        return flags
    files, findings = _workspace_files(workspace, candidate)
    if named_only:
        files, findings = _named_files(files, findings, candidate_text, workspace)
    flags.extend(findings)
    texts = {}
    for path in files:
        text = _read_text(path)
        if text is None:
            flags.append(_flag("opaque_file", STRICT, "not a readable text file under 2 MB: code or data the "
                                                      "source checks cannot read", os.path.relpath(path, workspace)))
        else:
            texts[path] = text
    named = _names_in_sources([candidate_text] + list(texts.values()))
    for path, text in texts.items():
        relative = os.path.relpath(path, workspace)
        if path.endswith(".py"):
            flags.extend(_check_python_text(text, relative, task_is_fp32, shape_literals))
        elif not path.endswith(_DOCUMENT_SUFFIXES) or os.path.basename(path) in named:
            # Any other text may be #included by the build or handed to load_inline, whatever
            # its name or folder.
            flags.extend(_check_cpp(text, relative, task_is_fp32, shape_literals))
    return flags


_WORD = re.compile(r"[\w.-]+")


def _named_files(files: list, findings: list, candidate_text: str, workspace: str) -> tuple:
    """The files, and findings about files, that the candidate names: by file name (a source
    handed to load, an #include), by module name (a sibling imported) or by the first folder of
    their path, followed through the named files' own text until nothing new is named."""
    def keys(display: str) -> set:
        name = os.path.basename(display)
        return {name, os.path.splitext(name)[0], display.split(os.sep)[0]}

    words = set(_WORD.findall(candidate_text))
    chosen, pending = [], list(files)
    while True:
        named = [path for path in pending if keys(os.path.relpath(path, workspace)) & words]
        if not named:
            break
        for path in named:
            pending.remove(path)
            chosen.append(path)
            words.update(_WORD.findall(_read_text(path) or ""))
    kept = [f for f in findings if keys(f["reason"].split(":", 1)[0]) & words]
    return sorted(chosen), kept


def _names_in_sources(texts: list) -> set:
    """Base names of files that a source names: #include targets and the file-like parts of
    string literals."""
    names = set()
    for text in texts:
        names.update(os.path.basename(m) for m in _INCLUDE.findall(text))
        names.update(os.path.basename(m) for m in re.findall(r"[\w./-]+\.(?:md|rst|txt)\b", text))
    return names


def _check_python_text(text: str, display: str, task_is_fp32: bool, shape_literals: dict) -> list:
    try:
        tree = ast.parse(text, filename=display)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the verify stage reports the syntax error with its location
    checker = _PythonChecker(display, task_is_fp32, shape_literals)
    # Imports first, so that patches written above an import line are still recognised.
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            checker.module_aliases.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            checker.module_aliases.update(a.asname or a.name for a in node.names)
    checker.visit(tree)
    return checker.flags + _check_embedded_sources(tree, display, task_is_fp32)


# What marks a Python string as C++ or CUDA source (load_inline's cpp_sources and cuda_sources,
# a kernel handed to cupy or NVRTC): the compiler reads it, so the C++ checks must too.
_EMBEDDED_SOURCE = re.compile(r"__global__|__device__|#\s*include|\btorch::|\bat::|\bc10::|\basm\s*(?:volatile\s*)?\(")


def _check_embedded_sources(tree, display: str, task_is_fp32: bool) -> list:
    """The C++ checks over every string constant that holds C++ or CUDA source (not the shape
    literals: a kernel's block sizes in a string read like the task's sizes too often)."""
    flags, seen = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _EMBEDDED_SOURCE.search(node.value):
            for flag in _check_cpp(node.value, display, task_is_fp32, None, first_line=getattr(node, "lineno", 1)):
                if (flag["code"], flag["reason"]) not in seen:
                    seen.add((flag["code"], flag["reason"]))
                    flags.append(flag)
    return flags
