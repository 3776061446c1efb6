"""Parsing and validation of the request JSON.

Every problem found here is the caller's mistake, so it is reported as ``bad_request``
before any user code runs.
"""

import json
import os
import re
from dataclasses import dataclass, field

from . import PROTOCOL_VERSION, STAGES
from .errors import BAD_REQUEST, HarnessError

_ARCH_RE = re.compile(r"^sm_(\d+[a-z]?)$")


@dataclass
class Request:
    stage: str
    workspace: str
    reference: str
    candidate: str
    device: str
    seed: int
    build_dir: str
    cache_dir: str
    # The torch threads this stage may use (the engine's share of the cores for it); 0: the
    # device's default (KWB_CPU_THREADS on the CPU, torch's own on a GPU)
    cpu_threads: int = 0
    # The evaluation's own scratch folder (the judge's torch.compile caches); a temporary
    # folder when the request names none
    scratch_dir: str = ""
    # The CUPTI injection library whose sealed kernel records are the GPU's kernel census
    # (integrity/kernel_records.py); empty where the engine has none
    kernel_records_library: str = ""
    # The profile stage runs under Nsight Compute for hardware counters: ncu owns CUPTI, so no
    # kernel census is taken, and nothing is timed for a reward
    counters_run: bool = False
    # A KernelBench pair (a candidate file in a folder it shares with others), not a workspace
    pair_mode: bool = False
    # compile
    arch: str = ""
    extra_cflags: list = field(default_factory=list)
    extra_cuda_cflags: list = field(default_factory=list)
    verbose: bool = False
    # verify
    checks: int = 5
    atol: float = 1e-2
    rtol: float = 1e-2
    # Per output dtype name ("float32": 1e-4): that value as both atol and rtol (KernelBench's
    # tolerance per precision); outputs of other dtypes use atol and rtol.
    dtype_tolerances: dict = field(default_factory=dict)
    extension_path: str | None = None
    # fast path: the folder of NVRTC-compiled kernel modules the kwb_kernels runtime loads
    kernels_dir: str | None = None
    shapes: str = "default"
    # profile / baseline
    warmup: int = 3
    iterations: int = 20
    rounds: int = 5
    l2_flush: bool = True
    # GPU time (a spin kernel) queued between the L2 flush and each timed call's start event
    # (timing/timers.py); 0: none.
    head_start_us: float = 0.0
    include_baselines: bool = True
    include_compile: bool = True
    # repeat-until-stable timing: more rounds until the per-round medians agree within
    # target_cv, up to max_rounds or time_budget_s seconds of timing
    target_cv: float = 0.03
    max_rounds: int = 15
    time_budget_s: float = 30.0
    # and while a speed-up's interval straddles milestone_threshold (0: no milestones decided
    # here), against this run's baselines or baseline_rounds (the per-round medians of cached ones)
    milestone_threshold: float = 0.0
    baseline_rounds: dict = field(default_factory=dict)
    # screen: inputs larger than this (bytes, sized before allocating) are not run; 0: no limit
    screen_memory_bytes: int = 0
    # inspect: a task whose inputs (sized before allocating) need more bytes than this fails as
    # task_too_large; 0: no limit
    input_budget_bytes: int = 0
    # inspect: the reference's description from an earlier inspect of the same bytes, kept by
    # the engine ({"digest", "inputs", ...}); used only when it is well-formed and its digest is
    # the reference file's (stages/known_description.py), else the reference is described afresh
    reference_description: object = None
    # similar: the task files to check, the tasks they must not resemble, and how alike is too alike
    files: list = field(default_factory=list)
    against: list = field(default_factory=list)
    similarity_threshold: float = 0.9


def _fail(message: str) -> HarnessError:
    return HarnessError(BAD_REQUEST, message)


def load_json(path: str) -> dict:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise _fail(f"cannot read request file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise _fail(f"request file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _fail("request must be a JSON object")
    return data


def _get(data: dict, key: str, kinds, default=None, required: bool = False):
    if key not in data or data[key] is None:
        if required:
            raise _fail(f"missing field '{key}'")
        return default
    value = data[key]
    # bool is an int subclass; a JSON true must not pass as a count.
    if isinstance(value, bool) and bool not in kinds:
        raise _fail(f"field '{key}' must be {kinds[0].__name__}, got bool")
    if not isinstance(value, kinds):
        raise _fail(f"field '{key}' must be {kinds[0].__name__}, got {type(value).__name__}")
    return value


def _path(data: dict, key: str, required: bool, default: str = "") -> str:
    value = _get(data, key, (str,), default=default, required=required)
    if not value:
        if required:
            raise _fail(f"field '{key}' must not be empty")
        return ""
    return os.path.abspath(os.path.expanduser(value))


def _str_list(data: dict, key: str) -> list:
    value = _get(data, key, (list,), default=[])
    if not all(isinstance(item, str) for item in value):
        raise _fail(f"field '{key}' must be a list of strings")
    return list(value)


def parse(data: dict, stage: str) -> Request:
    if stage not in STAGES:
        raise _fail(f"unknown stage '{stage}' (expected one of {', '.join(STAGES)})")
    version = _get(data, "version", (int,), required=True)
    if version != PROTOCOL_VERSION:
        raise _fail(f"unsupported request version {version} (harness speaks {PROTOCOL_VERSION})")
    declared = _get(data, "stage", (str,), default=stage)
    if declared != stage:
        raise _fail(f"request is for stage '{declared}' but the harness was asked to run '{stage}'")

    device = _get(data, "device", (str,), required=True)
    if device not in ("cpu", "cuda"):
        raise _fail(f"field 'device' must be 'cpu' or 'cuda', got '{device}'")

    needs_reference = stage in ("inspect", "verify", "profile", "baseline", "screen")
    needs_candidate = stage in ("verify", "profile")
    workspace = _path(data, "workspace", required=stage == "compile")
    reference = _path(data, "reference", required=needs_reference)
    candidate = _path(data, "candidate", required=needs_candidate)
    if not workspace:
        workspace = os.path.dirname(candidate or reference)

    for key, value in (("workspace", workspace), ("reference", reference), ("candidate", candidate)):
        if not value:
            continue
        if key == "workspace" and not os.path.isdir(value):
            raise _fail(f"workspace {value} is not a directory")
        if key != "workspace" and (needs_reference if key == "reference" else needs_candidate):
            if not os.path.isfile(value):
                raise _fail(f"{key} file {value} does not exist")

    req = Request(
        stage=stage,
        workspace=workspace,
        reference=reference,
        candidate=candidate,
        device=device,
        seed=_get(data, "seed", (int,), default=42),
        build_dir=_path(data, "build_dir", required=False) or os.path.join(workspace, "build"),
        cache_dir=_path(data, "cache_dir", required=False)
        or os.path.join(os.path.expanduser("~"), ".cache", "kernel-workbench"),
    )

    req.cpu_threads = _get(data, "cpu_threads", (int,), default=0)
    if req.cpu_threads < 0:
        raise _fail(f"field 'cpu_threads' must not be negative, got {req.cpu_threads}")
    req.pair_mode = _get(data, "pair_mode", (bool,), default=False)
    req.scratch_dir = _path(data, "scratch_dir", required=False)
    req.kernel_records_library = _path(data, "kernel_records_library", required=False)
    req.counters_run = _get(data, "counters_run", (bool,), default=False)
    req.arch = _get(data, "arch", (str,), default="").strip()
    if req.arch and not _ARCH_RE.match(req.arch):
        raise _fail(f"field 'arch' must look like 'sm_90' or 'sm_90a', got '{req.arch}'")
    req.extra_cflags = _str_list(data, "extra_cflags")
    req.extra_cuda_cflags = _str_list(data, "extra_cuda_cflags")
    req.verbose = _get(data, "verbose", (bool,), default=False)

    req.checks = _get(data, "checks", (int,), default=req.checks)
    req.atol = float(_get(data, "atol", (float, int), default=req.atol))
    req.rtol = float(_get(data, "rtol", (float, int), default=req.rtol))
    tolerances = _get(data, "dtype_tolerances", (dict,), default={})
    for name, value in tolerances.items():
        if type(value) not in (float, int) or value < 0:
            raise _fail(f"field 'dtype_tolerances' must map dtype names to non-negative numbers, got {name}: {value!r}")
    req.dtype_tolerances = {str(name): float(value) for name, value in tolerances.items()}
    ext = _get(data, "extension_path", (str,), default="")
    req.extension_path = os.path.abspath(ext) if ext else None
    kernels_dir = _get(data, "kernels_dir", (str,), default="")
    req.kernels_dir = os.path.abspath(kernels_dir) if kernels_dir else None
    req.shapes = _get(data, "shapes", (str,), default="default")

    req.warmup = _get(data, "warmup", (int,), default=req.warmup)
    req.iterations = _get(data, "iterations", (int,), default=req.iterations)
    req.rounds = _get(data, "rounds", (int,), default=req.rounds)
    req.l2_flush = _get(data, "l2_flush", (bool,), default=True)
    req.head_start_us = float(_get(data, "head_start_us", (float, int), default=0.0))
    if not 0.0 <= req.head_start_us <= 10000.0:
        raise _fail(f"field 'head_start_us' must be 0 to 10000, got {req.head_start_us!r}")
    req.include_baselines = _get(data, "include_baselines", (bool,), default=True)
    req.include_compile = _get(data, "include_compile", (bool,), default=True)
    req.target_cv = float(_get(data, "target_cv", (float, int), default=req.target_cv))
    req.max_rounds = _get(data, "max_rounds", (int,), default=req.max_rounds)
    req.time_budget_s = float(_get(data, "time_budget_s", (float, int), default=req.time_budget_s))
    req.milestone_threshold = float(_get(data, "milestone_threshold", (float, int), default=0.0))
    rounds = _get(data, "baseline_rounds", (dict,), default={})
    for name, values in rounds.items():
        if not isinstance(values, list) or not all(type(v) in (float, int) and v > 0 for v in values):
            raise _fail(f"field 'baseline_rounds' must map variants to lists of positive times, got {name}")
    req.baseline_rounds = {str(name): [float(v) for v in values] for name, values in rounds.items()}
    req.screen_memory_bytes = _get(data, "screen_memory_bytes", (int,), default=0)
    if req.screen_memory_bytes < 0:
        raise _fail("field 'screen_memory_bytes' must not be negative")
    req.input_budget_bytes = _get(data, "input_budget_bytes", (int,), default=0)
    if req.input_budget_bytes < 0:
        raise _fail("field 'input_budget_bytes' must not be negative")
    # Kept as given: a malformed one is not the caller's mistake to fail on, only a description
    # not to use (inspect says why and describes the reference afresh).
    req.reference_description = data.get("reference_description")
    req.files = [os.path.abspath(p) for p in _str_list(data, "files")]
    req.against = [os.path.abspath(p) for p in _str_list(data, "against")]
    req.similarity_threshold = float(_get(data, "similarity_threshold", (float, int), default=0.9))
    if not 0 < req.similarity_threshold <= 1:
        raise _fail("field 'similarity_threshold' must be in (0, 1]")

    if req.checks < 1:
        raise _fail("field 'checks' must be at least 1")
    if req.atol < 0 or req.rtol < 0:
        raise _fail("tolerances must not be negative")
    if req.warmup < 0 or req.iterations < 1 or req.rounds < 1:
        raise _fail("'warmup' must be >= 0, 'iterations' and 'rounds' >= 1")
    if req.target_cv < 0 or req.max_rounds < 1 or req.time_budget_s < 0:
        raise _fail("'target_cv' and 'time_budget_s' must be >= 0, 'max_rounds' >= 1")
    if req.shapes != "default":
        raise _fail(f"field 'shapes' supports only 'default', got '{req.shapes}'")
    return req
