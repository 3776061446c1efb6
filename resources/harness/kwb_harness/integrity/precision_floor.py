"""The precision a candidate computes in, measured on its outputs instead of read from its sources.

The source checks find 16-bit types by name; a lookup table, integer quantisation or a truncated
mantissa has no name, and CUDA Agent's tolerance (1e-2) lets such an answer pass as correct. So the
judge also runs the reference in float64 and asks of every float32 output two things:
- does it meet KernelBench's float32 tolerance (1e-4, what the external harness demands) against
  the float64 answer; and if not,
- is it much further from that answer than the reference's own float32 run is (a reference that
  is itself far off, such as a convolution in TF32 or a sum with cancellation, allows as much)?
Failing both is the strict ``precision_downgrade``: honest float32 arithmetic and another
summation order stay within both; 16-bit arithmetic, tables and quantisation do not.

CUDA code is built with ``--use_fast_math`` (CUDA Agent's compile flags, which the workspace build
reproduces), and under it ``tanhf`` becomes ``tanh.approx.f32``, whose relative error reaches
2^-11 (PTX ISA): an honest Tanh, Mish or GELU-tanh kernel misses 1e-4 by up to a few times. On the
GPU an error up to 2^-10 is therefore the warning ``precision_reduced`` (shown, no reward lost),
and only beyond it strict. What that band lets through unpunished is as precise as the build's
own intrinsics; tables and 8-bit mantissas stay far beyond it (a 256-entry sigmoid table: 8e-3).
"""

import copy

from .. import device as devices
from ..values import flatten, map_tensors

# KernelBench's tolerance for float32 outputs (get_tolerance_for_precision).
FLOAT32_TOLERANCE = 1e-4
# How many times the reference's own float32 error a candidate's may reach before it counts.
NOISE_ALLOWANCE = 64.0
# The error, in the same units, that CUDA's fast-math intrinsics may reach (tanh.approx.f32: 2^-11
# relative), with room for a composition such as GELU-tanh; up to it a miss is only a warning
# where the candidate's code was built with --use_fast_math.
FAST_MATH_ENVELOPE = 2.0 ** -10
# Elements per step of the float64 arithmetic (bounded temporaries; see compare.py): small on the
# CPU, larger on a GPU, where each step is a few kernels.
_CPU_SLICE = 1 << 16
_GPU_SLICE = 1 << 24
# The float64 copies of inputs and outputs this check may add; a task beyond it (KernelBench's
# largest level-1 inputs are gigabytes, some small inputs make outputs of gigabytes) is not
# measured rather than pushed over the stage's memory budget, which would end the evaluation as
# the candidate's failure.
_MAX_PRECISE_BYTES = 2 << 30


def _errors(candidate, reference, precise) -> tuple:
    """(largest candidate error, largest reference error, whether any element misses the
    tolerance) of one float32 output against its float64 answer, each error in units of the
    tolerance's scale (1 + |answer|), so that small elements count as much as large ones;
    non-finite elements are the comparison's business and skipped here."""
    import torch

    c, r, p = candidate.reshape(-1), reference.reshape(-1), precise.reshape(-1)
    step = _GPU_SLICE if c.is_cuda else _CPU_SLICE
    worst_candidate = worst_reference = 0.0
    misses = False
    for start in range(0, c.numel(), step):
        cs = c[start:start + step].double()
        rs = r[start:start + step].double()
        ps = p[start:start + step].to(device=cs.device, dtype=torch.float64)
        finite = torch.isfinite(cs) & torch.isfinite(rs) & torch.isfinite(ps)
        scale = 1.0 + ps.abs()
        candidate_error = torch.where(finite, (cs - ps).abs() / scale, 0.0)
        reference_error = torch.where(finite, (rs - ps).abs() / scale, 0.0)
        worst_candidate = max(worst_candidate, float(candidate_error.max()))
        worst_reference = max(worst_reference, float(reference_error.max()))
        if not misses:
            misses = bool((candidate_error > FLOAT32_TOLERANCE).any())
    return worst_candidate, worst_reference, misses


def _reduced_precision_watch():
    """A dispatch mode that notes the floating dtypes below float64 any operator produces: a
    reference that casts to float32 or 16 bits inside itself has no float64 answer to give."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Watch(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.reduced = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            for value in tree_flatten(result)[0]:
                if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
                    self.reduced.add(str(value.dtype).replace("torch.", ""))
            return result

    return Watch()


def _out_of_device_memory(exc: Exception) -> bool:
    """A library's allocation failure (cuBLAS's CUBLAS_STATUS_ALLOC_FAILED, cuDNN's, a CUDA
    "out of memory"), which torch raises as a plain RuntimeError: short this time, not unable."""
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("ALLOC_FAILED" in text or "out of memory" in text.lower())


class PrecisionFloor:
    """The reference in float64 for one stage, made on first use."""

    def __init__(self, ref_model, device: str, fast_math: bool | None = None):
        self._ref_model = ref_model
        self._device = device
        # Whether the candidate's code was built with fast-math intrinsics: every CUDA build is.
        self._fast_math = device == "cuda" if fast_math is None else fast_math
        self._precise_model = None
        self.unavailable = ""  # why the task cannot run in float64, once it is known
        self.measured = 0  # outputs held to the floor
        self.skipped = 0  # checks skipped for want of memory

    def _precise_outputs(self, inputs, expected) -> list | None:
        import torch

        if self.unavailable:
            return None
        floats = [t for t in flatten(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()]
        outputs = [t for t in flatten(expected) if isinstance(t, torch.Tensor)]
        # The inputs' float64 copies, the output's float64 answer and what the forward keeps on
        # the way (as much again, at least).
        needed = 2 * sum(t.numel() * 8 for t in floats) + 2 * sum(t.numel() * 8 for t in outputs)
        if needed > _MAX_PRECISE_BYTES:
            self.unavailable = "its inputs and outputs are too large for float64 copies"
            print(f"precision floor: not checked ({self.unavailable})")
            return None
        try:
            if self._precise_model is None:
                self._precise_model = copy.deepcopy(self._ref_model).double()
            doubled = map_tensors(inputs, lambda t: t.detach().double() if t.dtype == torch.float32
                                  else t.detach().clone())
            watch = _reduced_precision_watch()
            default = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)  # tensors the forward makes itself, too
            try:
                with torch.no_grad(), watch:
                    output = self._precise_model(*doubled)
                devices.synchronize(self._device)
            finally:
                torch.set_default_dtype(default)
            if watch.reduced:
                self.unavailable = "it computes in " + ", ".join(sorted(watch.reduced)) + " inside itself"
        except torch.OutOfMemoryError:
            # The device is short this time (the candidate's process shares it): this check is
            # skipped, the next one tries again.
            self.skipped += 1
            print("precision floor: this check skipped (out of memory for the float64 run)")
            _release(self._device)
            return None
        except Exception as exc:  # noqa: BLE001 - a task that cannot run in float64 is not checked
            if _out_of_device_memory(exc):  # cuBLAS / cuDNN say it in a RuntimeError of their own
                self.skipped += 1
                print(f"precision floor: this check skipped (the float64 run ran out of memory: {exc})")
                _release(self._device)
                return None
            self.unavailable = f"{type(exc).__name__}: {exc}"
        if self.unavailable:
            print(f"precision floor: the reference has no float64 answer ({self.unavailable}); not checked")
            return None
        return flatten(output)

    def flag_for(self, output, expected, inputs) -> dict | None:
        """The strict flag when a float32 output of the candidate, already within the stage's
        tolerance of ``expected`` (the reference's float32 run on ``inputs``), is computed in less
        precision than float32 (the warning ``precision_reduced`` when no further off than
        fast-math intrinsics the build imposed); None otherwise."""
        import torch

        candidates, references = flatten(output), flatten(expected)
        pairs = [(i, c, r) for i, (c, r) in enumerate(zip(candidates, references))
                 if isinstance(c, torch.Tensor) and isinstance(r, torch.Tensor)
                 and r.dtype == torch.float32 and c.dtype == r.dtype and c.shape == r.shape and r.numel()]
        if not pairs:
            return None
        precise = self._precise_outputs(inputs, expected)
        if precise is None or len(precise) != len(references):
            return None
        try:
            return self._compare(pairs, precise)
        except torch.OutOfMemoryError:
            self.skipped += 1
            print("precision floor: this check skipped (out of memory comparing in float64)")
            return None
        except Exception as exc:  # noqa: BLE001 - the judge's own measurement failing is no verdict
            print(f"precision floor: this check failed in the judge, not counted ({type(exc).__name__}: {exc})")
            return None
        finally:
            del precise
            _release(self._device)

    def _compare(self, pairs, precise) -> dict | None:
        import torch

        self.measured += 1
        reduced = None
        for index, candidate, reference in pairs:
            answer = precise[index]
            if not isinstance(answer, torch.Tensor) or answer.shape != reference.shape:
                continue
            candidate_error, reference_error, misses = _errors(candidate, reference, answer)
            if not misses or candidate_error <= NOISE_ALLOWANCE * reference_error:
                continue
            distance = (f"output {index} (float32) is {candidate_error:.3g} x (1 + |answer|) from the float64 "
                        f"answer, beyond float32's tolerance ({FLOAT32_TOLERANCE:g}, which KernelBench would "
                        "reject)")
            if self._fast_math and candidate_error <= FAST_MATH_ENVELOPE:
                reduced = reduced or {
                    "code": "precision_reduced", "severity": "warning",
                    "reason": f"{distance} but within the error of the fast-math intrinsics the CUDA build "
                              f"uses ({FAST_MATH_ENVELOPE:.3g}; tanhf becomes tanh.approx.f32 under "
                              "--use_fast_math, as in CUDA Agent's compile): not scored down"}
                continue
            return {"code": "precision_downgrade", "severity": "strict",
                    "reason": f"{distance} and {NOISE_ALLOWANCE:g}x the reference's own float32 error "
                              f"({reference_error:.3g}): it is computed in less precision than float32 (a table, "
                              "quantisation, 16-bit arithmetic) or in a far less accurate order than the "
                              "reference's"}
        return reduced

    def evidence(self) -> dict:
        """How often the floor was applied, for the record."""
        return {"measured": self.measured, "skipped": self.skipped, "unavailable": self.unavailable}

    def unmeasured_flag(self) -> dict | None:
        """A warning when every check this stage meant to make was skipped for want of memory
        (the candidate's process shares the device and can hold it): the floor did not apply."""
        if self.measured or not self.skipped:
            return None
        return {"code": "precision_unmeasured", "severity": "warning",
                "reason": f"the float64 reference could not run in any of {self.skipped} precision check(s) "
                          "(out of memory on a device the candidate's process shares): its precision was "
                          "not measured"}

    def release(self) -> None:
        """Lets the float64 model go (the stage has no further check)."""
        self._precise_model = None
        _release(self._device)


def _release(device: str) -> None:
    """Hands the float64 run's cached blocks back to the device the candidate's process shares."""
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()
