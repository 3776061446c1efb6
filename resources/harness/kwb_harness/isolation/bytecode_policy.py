"""Where a stage may run compiled bytecode (``.pyc``) instead of compiling the source.

A ``.pyc`` whose recorded size and modification time match a clean ``.py`` runs in its place, and
the source checks read the ``.py``. So in a folder the candidate can write (the workspace, the
stage's scratch, a temporary folder) bytecode must never be read: every module there is compiled
from its source, and a lone ``.pyc`` is not a module. The interpreter's own installation (the
standard library and the environment's site-packages, read-only inside the sandbox) keeps its
bytecode: refusing it everywhere, as a ``sys.pycache_prefix`` below ``/proc`` did, recompiled torch
at every stage start (2-3 s of each cold stage on a 2-core machine, in every process that
imports torch).

A candidate that could write the installation could change its ``.py`` files as well; bytecode
there adds nothing to what it could do (the sandbox mounts it read-only; `sandbox_weak` says when
it is not).
"""

import os
import sys
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)


class SourceOnlyLoader(SourceFileLoader):
    """Compiles the module from its source every time; never reads or writes ``__pycache__``."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


def _below(path: str, root: str) -> bool:
    return bool(root) and (path == root or path.startswith(root.rstrip(os.sep) + os.sep))


def installation_roots() -> list:
    """The interpreter's own folders: its prefix (a virtual environment's) and the base prefix."""
    roots = {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    return sorted(r for r in roots if r and r != os.sep)


def writable_roots() -> list:
    """Folders the stage's candidate can write: its working folder (the workspace), its HOME (the
    stage's scratch) and the temporary folder. Excluded even where they lie inside the
    installation."""
    roots = {_real(os.getcwd()), _real(os.environ.get("HOME", "")), _real(os.environ.get("TMPDIR", "/tmp"))}
    return sorted(r for r in roots if r and r != os.sep)


def engine_cache():
    """The bytecode cache the engine filled for this interpreter (``KWB_BYTECODE_CACHE``), or None.
    Read once, by the bootstrap, before any candidate code runs."""
    folder = os.environ.get("KWB_BYTECODE_CACHE", "")
    return folder if os.path.isabs(folder) and os.path.isdir(folder) else None


def trusts_bytecode_in(folder: str, installation: list, writable: list) -> bool:
    real = _real(folder or os.getcwd())
    return any(_below(real, root) for root in installation) and not any(_below(real, root) for root in writable)


def install(cache_only=()) -> None:
    """Replaces the file-system path hook: folders of the installation get the standard finder,
    `cache_only` folders (the harness, when the engine's cache is in use) one that reads bytecode
    only through ``sys.pycache_prefix`` (no lone ``.pyc``, nothing beside the sources), and every
    other folder one that compiles sources and ignores bytecode. Finders created before (the
    interpreter's start-up, in the standard library) are dropped so that each folder is looked at
    again under the new hook."""
    installation = installation_roots()
    cached = sorted({_real(p) for p in cache_only if p})
    writable = writable_roots()
    trusted_loaders = [(ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceFileLoader, SOURCE_SUFFIXES),
                       (SourcelessFileLoader, BYTECODE_SUFFIXES)]
    cache_loaders = [(ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceFileLoader, SOURCE_SUFFIXES)]
    guarded_loaders = [(ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceOnlyLoader, SOURCE_SUFFIXES)]

    def finder_for(folder: str):
        if folder and not os.path.isdir(folder):
            raise ImportError("not a folder", path=folder)
        if trusts_bytecode_in(folder, installation, writable):
            loaders = trusted_loaders
        elif sys.pycache_prefix and trusts_bytecode_in(folder, cached, writable):
            loaders = cache_loaders
        else:
            loaders = guarded_loaders
        return FileFinder(folder, *loaders)

    file_hooks = [hook for hook in sys.path_hooks if getattr(hook, "__name__", "") == "path_hook_for_FileFinder"]
    for hook in file_hooks:
        sys.path_hooks.remove(hook)
    sys.path_hooks.append(finder_for)
    sys.path_importer_cache.clear()
