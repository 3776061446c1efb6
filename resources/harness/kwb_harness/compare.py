"""Output comparison between candidate and reference.

Structure, types, dtypes and shapes must match exactly; values follow
torch.testing.assert_close semantics (|a - b| <= atol + rtol * |b|, non-finite values
must be equal, NaN matches NaN only where the reference is NaN too).
"""

import math
from dataclasses import dataclass, field

from .errors import NUMERICAL_MISMATCH, OUTPUT_MISMATCH
from .values import dtype_name, flatten


@dataclass
class Comparison:
    stats: list = field(default_factory=list)
    kind: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.kind is None


def _shape_of(value) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_shape_of(v) for v in value)
        return f"{type(value).__name__}[{inner}]"
    if isinstance(value, dict):
        inner = ", ".join(f"{k!r}: {_shape_of(value[k])}" for k in sorted(value, key=repr))
        return f"dict{{{inner}}}"
    return type(value).__name__


def _fmt(x: float) -> str:
    return f"{x:.6g}"


# Elements per slice when comparing on the CPU. Whole-tensor float64 temporaries (a dozen, 8
# bytes per element) were each fresh memory the kernel had to fault in and zero: 1.4-1.8 s for
# 8M elements. A slice stays in the cache, and below ATen's grain size (32768) each operation
# runs on this thread alone: larger slices were split over the intra-op threads at every
# operation, and on a machine busy with other work those waits made a comparison 5-10x slower.
# On a GPU one pass over the whole tensor is cheapest (a slice would cost a launch and a sync).
_CPU_SLICE = 1 << 14


def _slice_errors(c, r, atol: float, rtol: float):
    """(max_abs, max_rel, bad_count, worst_offset, worst_diff) of one flat float64 slice;
    worst_offset is None when nothing in it is bad."""
    import torch

    equal = (c == r) | (torch.isnan(c) & torch.isnan(r))
    both_finite = torch.isfinite(c) & torch.isfinite(r)
    diff = torch.where(equal, 0.0, (c - r).abs())
    # A NaN or infinity on one side only is as wrong as an error can be.
    diff = torch.where(equal | both_finite, diff, math.inf)
    r_abs = r.abs()
    bad = (diff > atol + rtol * r_abs) | ~(equal | both_finite)
    # Relative error only means something where the reference is not ~0: near zero, a 1e-7
    # rounding difference would read as an enormous relative error.
    significant = r_abs > atol
    rel = torch.where(significant, diff / r_abs.clamp_min(1e-30), 0.0)
    rel = torch.where(torch.isinf(diff) | torch.isnan(rel), math.inf, rel)
    bad_count = int(bad.sum().item())
    worst_offset = worst_diff = None
    if bad_count:
        # argmax gives the first of equal maxima, so the worst element is the first one found.
        masked = torch.where(bad, diff, -1.0)
        worst_offset = int(masked.argmax().item())
        worst_diff = masked[worst_offset].item()
    return diff.max().item(), rel.max().item(), bad_count, worst_offset, worst_diff


def _tensor_errors(cand, ref, atol: float, rtol: float):
    """(max_abs, max_rel, bad_count, worst_index, cand_value, ref_value) for equal shapes."""
    import torch

    if ref.numel() == 0:
        return 0.0, 0.0, 0, None, None, None
    c = cand.detach()
    r = ref.detach()
    if r.is_complex():
        c = torch.view_as_real(c)
        r = torch.view_as_real(r)
    shape = tuple(c.shape)
    c = c.reshape(-1)
    r = r.reshape(-1)
    count = r.numel()
    step = count if r.device.type != "cpu" else _CPU_SLICE
    max_abs = max_rel = 0.0
    bad_count = 0
    worst = worst_diff = None
    for start in range(0, count, step):
        s_abs, s_rel, s_bad, s_offset, s_diff = _slice_errors(
            c[start:start + step].to(torch.float64), r[start:start + step].to(torch.float64), atol, rtol)
        max_abs = max(max_abs, s_abs)
        max_rel = max(max_rel, s_rel)
        bad_count += s_bad
        if s_offset is not None and (worst_diff is None or s_diff > worst_diff):
            worst, worst_diff = start + s_offset, s_diff
    if worst is None:
        return max_abs, max_rel, bad_count, None, None, None
    return (max_abs, max_rel, bad_count, list(_unravel(worst, shape)),
            c[worst].to(torch.float64).item(), r[worst].to(torch.float64).item())


def _unravel(pos: int, shape: tuple):
    index = []
    for size in reversed(shape):
        index.append(pos % size if size else 0)
        pos = pos // size if size else 0
    return reversed(index)


def compare(cand_out, ref_out, atol: float, rtol: float, dtype_tolerances: dict | None = None) -> Comparison:
    """``dtype_tolerances`` (dtype name -> value) replaces atol and rtol for tensors of those
    dtypes: KernelBench's tolerance per precision."""
    import torch

    result = Comparison()
    ref_shape, cand_shape = _shape_of(ref_out), _shape_of(cand_out)
    if ref_shape != cand_shape:
        result.kind = OUTPUT_MISMATCH
        result.message = f"output structure differs: reference returns {ref_shape}, candidate returns {cand_shape}"
        return result

    for index, (c, r) in enumerate(zip(flatten(cand_out), flatten(ref_out))):
        label = f"output {index}"
        if isinstance(r, torch.Tensor):
            # Subclasses can override comparison and printing; only a plain tensor proves
            # that the kernel really produced these values.
            if type(c) is not torch.Tensor:
                result.kind = OUTPUT_MISMATCH
                result.message = f"{label} is a {type(c).__module__}.{type(c).__qualname__}, expected a plain torch.Tensor"
                return result
            for what, cv, rv in (
                ("dtype", dtype_name(c.dtype), dtype_name(r.dtype)),
                ("shape", list(c.shape), list(r.shape)),
                ("device", str(c.device), str(r.device)),
                ("layout", str(c.layout), str(r.layout)),
            ):
                if cv != rv:
                    result.kind = OUTPUT_MISMATCH
                    result.message = f"{label}: {what} {cv} differs from the reference's {rv}"
                    return result
            tolerance = (dtype_tolerances or {}).get(dtype_name(r.dtype))
            t_atol, t_rtol = (tolerance, tolerance) if tolerance is not None else (atol, rtol)
            max_abs, max_rel, bad, worst, cv, rv = _tensor_errors(c, r, t_atol, t_rtol)
            result.stats.append({
                "index": index,
                "max_abs_error": max_abs,
                "max_rel_error": max_rel,
                "shape": list(r.shape),
                "dtype": dtype_name(r.dtype),
            })
            if bad and result.ok:
                share = 100.0 * bad / max(r.numel(), 1)
                result.kind = NUMERICAL_MISMATCH
                result.message = (
                    f"{label} (shape {list(r.shape)}, {dtype_name(r.dtype)}): {bad} of {r.numel()} "
                    f"elements ({share:.3g}%) exceed atol={t_atol:g}, rtol={t_rtol:g}; "
                    f"max abs error {_fmt(max_abs)}, max rel error {_fmt(max_rel)}; "
                    f"worst at {worst}: candidate {_fmt(cv)}, reference {_fmt(rv)}"
                )
            continue

        if type(c) is not type(r):
            result.kind = OUTPUT_MISMATCH
            result.message = f"{label} is a {type(c).__name__}, the reference's is a {type(r).__name__}"
            return result
        error = 0.0
        try:
            same = bool(c == r)
        except Exception:
            same = False
        if isinstance(r, float):
            both_nan = math.isnan(c) and math.isnan(r)
            same = both_nan or math.isclose(c, r, rel_tol=rtol, abs_tol=atol) or c == r
            error = 0.0 if both_nan or c == r else abs(c - r)
        result.stats.append({
            "index": index,
            "max_abs_error": error if not math.isnan(error) else math.inf,
            "max_rel_error": (error / (abs(r) + 1e-12)) if isinstance(r, float) and math.isfinite(error) else (0.0 if same else math.inf),
            "shape": [],
            "dtype": type(r).__name__,
        })
        if not same and result.ok:
            result.kind = NUMERICAL_MISMATCH if isinstance(r, (int, float)) else OUTPUT_MISMATCH
            result.message = f"{label}: candidate {c!r} differs from the reference's {r!r}"
    return result
