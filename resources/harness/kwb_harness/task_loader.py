"""Imports the reference task, the candidate and the compiled extension by path.

Each file is imported under a fresh module name so that a reference and a candidate that
share a file name (or a previous evaluation in the same process) never shadow each other.
"""

import importlib.machinery
import importlib.util
import itertools
import os
import sys
from dataclasses import dataclass

from .errors import (
    CANDIDATE_IMPORT,
    CANDIDATE_MISSING_CLASS,
    COMPILE_ERROR,
    TASK_IMPORT,
    TASK_MISSING_FUNCTION,
    HarnessError,
    describe_exception,
)

EXTENSION_NAME = "cuda_extension"
_counter = itertools.count()


@dataclass
class ReferenceTask:
    module: object
    model_cls: type
    get_inputs: object
    get_init_inputs: object


def load_extension(path: str) -> object:
    """Loads the built .so and registers it before model_new.py runs ``import cuda_extension``."""
    if not os.path.isfile(path):
        raise HarnessError(
            CANDIDATE_IMPORT, f"extension {path} does not exist; run the compile stage first"
        )
    # The module name has to match the PyInit_ symbol, which binding.cpp derives from
    # TORCH_EXTENSION_NAME; the file name itself does not matter.
    loader = importlib.machinery.ExtensionFileLoader(EXTENSION_NAME, path)
    spec = importlib.util.spec_from_file_location(EXTENSION_NAME, path, loader=loader)
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except BaseException as exc:
        hint = ""
        if "undefined symbol" in str(exc):
            hint = (
                "\nA launcher declared in a binding has no definition in the built sources "
                "(in CPU mode each extern \"C\" launcher needs a KWB_CPU_MODE implementation)."
            )
        raise HarnessError(
            CANDIDATE_IMPORT, f"cannot load extension {path}: {type(exc).__name__}: {exc}{hint}"
        ) from None
    sys.modules[EXTENSION_NAME] = module
    return module


def _import_file(path: str, role: str):
    directory = os.path.dirname(path)
    # Tasks and candidates may import helpers that sit beside them, but after the standard
    # library and the installed packages: a workspace file named like a module the harness (or
    # torch) imports later must not be imported in its place.
    if directory not in sys.path:
        sys.path.append(directory)
    stem = os.path.splitext(os.path.basename(path))[0]
    stem = "".join(c if c.isalnum() else "_" for c in stem)
    name = f"kwb_{role}_{next(_counter)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot create an import spec for {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before execution: dataclasses, pickling and torch.compile look modules
    # up in sys.modules by the name recorded on classes and functions.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_reference(path: str, workspace: str | None = None) -> ReferenceTask:
    try:
        module = _import_file(path, "reference")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a task calling exit() is broken

        raise HarnessError(TASK_IMPORT, describe_exception(exc, workspace)) from None
    return check_reference(module)


def check_reference(module) -> ReferenceTask:
    missing = [
        name
        for name, want_class in (("Model", True), ("get_inputs", False), ("get_init_inputs", False))
        if not (isinstance(getattr(module, name, None), type) if want_class else callable(getattr(module, name, None)))
    ]
    if missing:
        described = ", ".join("class Model" if m == "Model" else f"{m}()" for m in missing)
        raise HarnessError(TASK_MISSING_FUNCTION, f"the task does not define {described}")
    return ReferenceTask(module, module.Model, module.get_inputs, module.get_init_inputs)


def load_candidate(path: str, workspace: str | None = None) -> type:
    try:
        module = _import_file(path, "candidate")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: a task calling exit() is broken

        text = str(exc)
        # A candidate that builds its own extension (load_inline) fails here when its
        # sources do not compile; that is a compile error, not an import problem.
        if isinstance(exc, RuntimeError) and "Error building extension" in text:
            from .diagnostics import first_error, parse_diagnostics

            diags = parse_diagnostics(text, workspace or os.path.dirname(path))
            raise HarnessError(COMPILE_ERROR, first_error(diags, text)) from None
        message = describe_exception(exc, workspace)
        if isinstance(exc, ModuleNotFoundError) and exc.name == EXTENSION_NAME:
            message += "\nThe extension is not loaded: run the compile stage first (no extension_path given)."
        raise HarnessError(CANDIDATE_IMPORT, message) from None
    model_new = getattr(module, "ModelNew", None)
    if not isinstance(model_new, type):
        raise HarnessError(CANDIDATE_MISSING_CLASS, f"{os.path.basename(path)} does not define class ModelNew")
    return model_new


def load_candidate_for(req, counter=None) -> type:
    """Loads the extension (if the request names one) and then the candidate's ModelNew.
    With a ``counter`` (integrity.extension_calls.CallCounter) the candidate imports a stand-in module
    that counts its calls into the extension."""
    # Candidates that call load_inline themselves build into the evaluation's build
    # folder instead of a per-user cache shared with unrelated runs.
    os.environ["TORCH_EXTENSIONS_DIR"] = req.build_dir
    os.makedirs(req.build_dir, exist_ok=True)
    if req.kernels_dir:
        # The fast path: the candidate imports the shipped kwb_kernels runtime, which loads the
        # cubins the engine compiled; the counter sees every launch.
        import kwb_kernels

        kwb_kernels.configure(req.kernels_dir, counter)
    if req.extension_path:
        module = load_extension(req.extension_path)
        if counter is not None:
            from .integrity.extension_calls import counting_module

            sys.modules[EXTENSION_NAME] = counting_module(module, counter)
    return load_candidate(req.candidate, req.workspace)
