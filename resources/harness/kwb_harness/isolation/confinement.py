"""A warm worker's stage child narrows itself to one workspace before any task or candidate code.

One fork server may serve every workspace below a common folder (the engine's
``WarmWorkerPlan``): its bubblewrap binds that folder and the folder of every workspace's runs,
so the server is not started anew for each workspace (its torch import is most of an
evaluation's start). What one workspace's stage may write is then this child's to enforce,
with Landlock: writes (and creating, removing, renaming, truncating) succeed only below the
stage's own writable folders, its workspace's runs folder (scratch and HOME), ``/dev`` (a GPU's
device nodes are opened for writing), ``/dev/shm`` and ``/proc`` (the CUDA driver writes there). Reading is left to bubblewrap, as for a
cold stage. The host's shared ``/tmp`` of the server is not writable: ``TMPDIR`` moves to a
folder of the workspace's own, so nothing one workspace leaves there meets another's stage.

The restriction is the kernel's and cannot be lifted by the process or its descendants. Where it
cannot be applied the child stops (fail closed): the engine shares a server only where the kernel
offers Landlock.
"""

import ctypes
import os

# Landlock's system calls have the same numbers on every architecture (they came after the
# table was unified).
_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Access rights (include/uapi/linux/landlock.h). Only writing is handled: reading, executing and
# device ioctls stay as the sandbox allows them.
_WRITE_FILE = 1 << 1
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3

_ABI1_WRITES = (_WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_CHAR | _MAKE_DIR | _MAKE_REG
                | _MAKE_SOCK | _MAKE_FIFO | _MAKE_BLOCK | _MAKE_SYM)
# What a rule may grant on a file that is not a folder.
_FILE_RIGHTS = _WRITE_FILE | _TRUNCATE

# Always writable: device nodes (the GPU's are opened read-write), POSIX shared memory, and
# /proc: the CUDA driver's initialisation writes there, and without it cudaGetDeviceCount fails
# with error 304 ("OS call failed") on an H200 host (bench/gpu_warm_worker_variants.sh,
# 2026-12-03: /tmp, /dev and /dev/shm writable failed; adding /proc, and only /proc, passed).
# The sandbox's /proc is its own process namespace's, and the kernel's own permissions still
# decide what in it can be written.
SYSTEM_WRITABLE = ("/dev", "/dev/shm", "/proc")


class ConfinementError(RuntimeError):
    pass


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is switched off)."""
    libc = _libc()
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _handled_writes(abi: int) -> int:
    rights = _ABI1_WRITES
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    return rights


def restrict_writes(writable) -> None:
    """From now on this process and its descendants may write only below ``writable`` (paths
    that do not exist are skipped). Raises ConfinementError when the kernel refuses."""
    abi = landlock_abi()
    if abi < 1:
        raise ConfinementError("the kernel offers no Landlock; a shared warm worker cannot "
                               "confine its stage")
    libc = _libc()
    handled = _handled_writes(abi)
    attr = _RulesetAttr(handled)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise ConfinementError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for path in writable:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # nothing there to write into
            try:
                is_folder = os.path.isdir(f"/proc/self/fd/{fd}")
                rule = _PathBeneathAttr(handled if is_folder else handled & _FILE_RIGHTS, fd)
                if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                    raise ConfinementError(
                        f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        # Landlock asks for no_new_privs (bubblewrap has set it already; setting it twice is fine).
        PR_SET_NO_NEW_PRIVS = 38
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise ConfinementError(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise ConfinementError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)


def enter(confinement) -> None:
    """Makes this forked child the process of one workspace's stage: its working folder, the
    variables that name that workspace's folders, and (``landlock``) writes limited to its own
    folders. ``confinement`` is the engine's ``confine`` field; None leaves everything as is."""
    if not confinement:
        return
    if not isinstance(confinement, dict):
        raise ConfinementError("the confinement must be an object")
    environment = confinement.get("environment") or {}
    for name, value in environment.items():
        os.environ[str(name)] = str(value)
    writable = [str(path) for path in confinement.get("writable") or []]
    if confinement.get("landlock"):
        # A temporary folder of this workspace's own, inside what it may write.
        home = environment.get("HOME") or (writable[0] if writable else "")
        if not home:
            raise ConfinementError("a confined stage needs a writable folder")
        tmp = os.path.join(home, "tmp")
        os.makedirs(tmp, mode=0o700, exist_ok=True)
        os.environ["TMPDIR"] = tmp
        import tempfile

        tempfile.tempdir = None  # computed afresh from TMPDIR on next use
        restrict_writes(writable + [tmp, *SYSTEM_WRITABLE])
    cwd = confinement.get("cwd")
    if cwd:
        os.chdir(str(cwd))
