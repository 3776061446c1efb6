"""Which GPU kernels a candidate's forward pass really ran, and whose they were.

A correct candidate can still earn its speed from torch: a CUDA graph captured in
``__init__`` replays torch kernels without passing the operator guard, and a custom kernel
may do a trivial part while torch does the rest. The profiler (CUPTI underneath) lists every
kernel with its stream and duration; names are sorted into the workspace's own kernels (the
``__global__`` functions declared in its sources), library kernels (cuBLAS, cuDNN, CUTLASS:
allowed and reported as such) and torch's own kernels.

The stream of the reference's kernels is the stream the timer's events are recorded on; a
candidate kernel elsewhere ran on a side stream, which the event timing may not have seen.
"""

import os
import re

_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_GLOBAL_DECL = re.compile(r"__global__\s+[\w:<>,\s\*&]*?\b(\w+)\s*(?:<[^>]*>)?\s*\(")
_LIBRARY = re.compile(r"cublas|cudnn|cutlass|cutensor|xmma|gemv|gemm|sm\d{2,3}_|nvjet|cufft|curand|cusparse|"
                      r"implicit_convolve|winograd|fft|cub::|magma", re.I)
_TORCH = re.compile(r"at::|c10::|\btriton_|elementwise_kernel|reduce_kernel|vectorized_|"
                    r"unrolled_elementwise|fill_kernel|CatArrayBatched|index_elementwise|"
                    r"softmax_warp|cunn_|distribution_|native::", re.I)
_TRANSFER = re.compile(r"^(Memcpy|Memset)")


def declared_kernels(workspace: str, candidate: str) -> set:
    """The __global__ function names in the workspace's sources (and in a load_inline
    candidate's Python strings)."""
    names = set()
    paths = [candidate]
    for folder in (workspace, os.path.join(workspace, "kernels")):
        try:
            paths += [os.path.join(folder, n) for n in os.listdir(folder)
                      if n.endswith((".cu", ".cuh", ".cpp", ".h", ".hpp"))]
        except OSError:
            pass
    for path in paths:
        try:
            with open(path, "r", encoding="utf-8", errors="replace") as handle:
                names.update(_GLOBAL_DECL.findall(_LAUNCH_BOUNDS.sub(" ", handle.read())))
        except OSError:
            pass
    return names


def classify(name: str, own: set) -> str:
    if _TRANSFER.match(name):
        return "transfer"
    if any(re.search(r"\b" + re.escape(k) + r"\b", name) or ("_Z" in name and k in name) for k in own):
        return "custom"
    # torch first: its own kernels are templated on names that also match library words.
    if _TORCH.search(name):
        return "torch"
    if _LIBRARY.search(name):
        return "library"
    return "other"


def _cuda_events(prof) -> list:
    from torch.autograd import DeviceType

    events = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() != DeviceType.CUDA:
            continue
        events.append((e.name(), e.device_resource_id(), e.start_ns(), e.duration_ns()))
    return events


def _profile(fn, calls: int) -> list:
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    return _cuda_events(prof)


def reference_streams(reference_call) -> set:
    """The streams the reference's kernels run on (the timing events' stream), from one
    profiled call."""
    return {stream for name, stream, _, _ in _profile(reference_call, 1) if not _TRANSFER.match(name)}


def take(timing_streams: set, candidate_call, own: set, calls: int = 3) -> dict:
    """Profiles the candidate ``calls`` times; ``timing_streams`` come from
    :func:`reference_streams`. Returns the census."""
    candidate = _profile(candidate_call, calls)
    census = _census([(name, stream, duration) for name, stream, _, duration in candidate], calls, timing_streams,
                     own)
    return census


def _census(entries: list, calls: int, timing_streams: set, own: set) -> dict:
    """The census of ``entries`` ((name, stream, duration_ns) of ``calls`` forward calls)."""
    per_name = {}
    totals = {"custom": 0.0, "library": 0.0, "torch": 0.0, "other": 0.0, "transfer": 0.0}
    side_stream_us = 0.0
    for name, stream, duration in entries:
        origin = classify(name, own)
        us = duration / 1e3 / calls
        totals[origin] += us
        entry = per_name.setdefault(name, {"name": name, "origin": origin, "calls": 0, "total_us": 0.0,
                                           "streams": []})
        entry["calls"] += 1
        entry["total_us"] += us
        if stream not in entry["streams"]:
            entry["streams"].append(stream)
        if timing_streams and stream not in timing_streams and origin != "transfer":
            side_stream_us += us
    for entry in per_name.values():
        entry["calls"] = round(entry["calls"] / calls, 3)
    return {
        "available": True,
        "kernels": sorted(per_name.values(), key=lambda e: -e["total_us"]),
        "custom_us": totals["custom"],
        "library_us": totals["library"],
        "torch_us": totals["torch"],
        "other_us": totals["other"],
        "transfer_us": totals["transfer"],
        "side_stream_us": side_stream_us,
        "timing_streams": sorted(timing_streams),
        "declared_kernels": sorted(own),
    }


def harness_share(harness_kernels: list, harness_calls: int) -> dict:
    """How many kernels of each name the harness itself launches per call (input rescaling, the
    L2 flush, the output digest), from a batch of calls run before the candidate was imported
    with a stand-in for its forward. Copies and sets are left out: they never count as compute."""
    counts = {}
    for k in harness_kernels:
        if not k.transfer:
            counts[k.name] = counts.get(k.name, 0) + 1
    return {name: round(count / harness_calls) for name, count in counts.items()
            if round(count / harness_calls) > 0}


def from_records(window_kernels: list, calls: int, harness_kernels: list, harness_calls: int, own: set) -> dict:
    """The census of ``calls`` calls of the candidate from the sealed records of the judge's
    windows around them (integrity/kernel_records.py). The harness's own kernels in those windows
    are taken out by count, name by name, from the calibration batch (:func:`harness_share`);
    the shortest of a name go first, so a candidate's torch kernel that shares a name with one of
    the harness's is counted at its longest. Placement cannot hide anything: a kernel beyond the
    harness's count is the candidate's wherever it ran. The streams the harness's kernels ran on
    are the timing stream."""
    share = harness_share(harness_kernels, harness_calls)
    timing_streams = {k.stream for k in harness_kernels if not k.transfer}
    by_name = {}
    for k in window_kernels:
        by_name.setdefault(k.name, []).append(k)
    entries = []
    for name, kernels in by_name.items():
        kernels.sort(key=lambda k: k.duration_ns)
        for k in kernels[share.get(name, 0) * calls:]:
            entries.append((k.name, k.stream, k.duration_ns))
    census = _census(entries, max(1, calls), timing_streams, own)
    census["source"] = "sealed kernel records"
    census["calls"] = calls
    census["harness_kernels_per_call"] = share
    return census


def flags_for(census: dict, event_median_ms: float | None) -> list:
    flags = []
    compute = census["custom_us"] + census["library_us"] + census["torch_us"] + census["other_us"]
    names = ", ".join(f"{k['name'][:60]} ({k['origin']})" for k in census["kernels"][:4])
    if compute <= 0:
        flags.append({"code": "no_kernels_ran", "severity": "strict",
                      "reason": "no GPU kernel ran during ModelNew.forward"
                                + (f" (only {names})" if names else "")})
        return flags
    own = census["custom_us"] + census["library_us"] + census["other_us"]
    torch_share = census["torch_us"] / compute
    if torch_share >= 0.9:
        flags.append({"code": "torch_kernels_dominate", "severity": "strict",
                      "reason": f"{100 * torch_share:.0f}% of the candidate's GPU time is in torch's own kernels "
                                f"({names})"})
    elif census["custom_us"] <= 0 and census["library_us"] > 0:
        flags.append({"code": "library_only", "severity": "warning",
                      "reason": "only library kernels ran (cuBLAS / cuDNN); none of the workspace's own kernels"})
    elif own > 0 and census["custom_us"] <= 0 and census["declared_kernels"]:
        flags.append({"code": "custom_kernels_not_seen", "severity": "warning",
                      "reason": "none of the declared kernels (" + ", ".join(census["declared_kernels"][:5])
                                + ") appeared in the profile"})
    # Kernels on one stream run one after another, so events that really enclose a call span at
    # least their sum (measured warm here, so if anything shorter than under timing); across
    # several streams they may overlap, hence the division. 10% slack for clock granularity.
    stream_count = max(1, len({s for k in census["kernels"] for s in k["streams"]}))
    busy_ms = compute / 1e3 / stream_count
    missed = event_median_ms is not None and event_median_ms < 0.9 * busy_ms
    if census["side_stream_us"] > 0:
        # The contract (and the bindings' own rule) is torch's current stream. Work elsewhere is
        # not ordered with the timing events: for kernels shorter than the launch overhead the
        # events cannot even show that they missed it, so the finding itself is strict.
        flags.append({
            "code": "side_stream",
            "severity": "strict",
            "reason": f"{census['side_stream_us']:.1f} us of kernels per call ran on a stream other than "
                      "torch's current stream, outside what the timing events enclose",
        })
    elif missed:
        flags.append({
            "code": "timing_missed_work",
            "severity": "strict",
            "reason": f"the events measured {event_median_ms:.4f} ms around {busy_ms:.4f} ms of kernels "
                      "per call: work ran outside the timed region",
        })
    return flags


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise ValueError(f"{what} is not a non-negative number")
    return float(value)


def checked(census) -> dict:
    """A census that came from the candidate's process, checked for shape before the judge
    reads it (it can only add flags; a malformed one is no census at all)."""
    if not isinstance(census, dict) or census.get("available") is not True:
        raise ValueError("no census")
    kernels = census.get("kernels")
    if not isinstance(kernels, list) or len(kernels) > 10000:
        raise ValueError("kernels is not a list")
    clean = []
    for k in kernels:
        if not isinstance(k, dict) or not isinstance(k.get("name"), str) or k.get("origin") not in (
                "custom", "library", "torch", "other", "transfer"):
            raise ValueError("a malformed kernel entry")
        streams = k.get("streams")
        if not isinstance(streams, list) or not all(isinstance(s, int) for s in streams):
            raise ValueError("a malformed kernel stream list")
        clean.append({"name": k["name"][:512], "origin": k["origin"], "calls": _number(k.get("calls"), "calls"),
                      "total_us": _number(k.get("total_us"), "total_us"), "streams": streams[:64]})
    result = {"available": True, "kernels": clean, "source": "candidate process"}
    for key in ("custom_us", "library_us", "torch_us", "other_us", "transfer_us", "side_stream_us"):
        result[key] = _number(census.get(key), key)
    for key in ("timing_streams", "declared_kernels"):
        value = census.get(key)
        if not isinstance(value, list):
            raise ValueError(f"{key} is not a list")
        result[key] = value[:1000]
    return result
