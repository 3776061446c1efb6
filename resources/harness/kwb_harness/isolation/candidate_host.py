"""The candidate's side: a process that imports the candidate and runs what the judge asks.

Nothing in this process decides a reward. It runs calls on inputs it is told to make (from a
seed, or from an input pool whose rescaling factors the judge draws), times them with its own
clock as a cross-check, keeps their outputs until the judge names the ones it wants, and reports
what it saw (operators, extension calls, threads, patched names). A candidate may change any of
that; the judge compares outputs itself, times from outside and treats every report from here
as evidence that can only add flags.

Every call is treated alike, whatever the judge does with it: the same operator guard, the same
timer, outputs kept the same way. The process is not told which stage it serves.
"""

import contextlib
import gc
import sys

from .. import device as devices
from .. import models, values
from ..errors import CANDIDATE_RUN, CUDA_ERROR, INTERNAL, OUTPUT_MISMATCH, HarnessError, describe_exception
from ..integrity import alternate_shape, kernel_census, kernel_records, op_guard, output_digest, thread_census
from ..integrity.extension_calls import CallCounter, not_run_flag
from ..integrity.memory_poison import poison_free_memory, tensor_bytes
from ..integrity.namespace_guard import NamespaceSnapshot, watch_instance
from ..integrity.namespace_guard import flags as namespace_flags
from ..integrity.op_guard import fallback_flag, make_guard
from ..request import Request
from ..task_loader import load_candidate_for, load_reference
from ..timing import output_blocks
from ..timing.input_pool import InputPool
from ..timing.timers import CpuTimer, CudaTimer
from ..timing.trusted import TrustedClock, tampering_flag
from . import cuda_ipc
from .channel import ChannelClosed

# Request fields the candidate's process may know: nothing that tells one stage from another.
HOST_FIELDS = ("workspace", "reference", "candidate", "device", "seed", "build_dir", "cache_dir",
               "extension_path", "kernels_dir", "l2_flush", "head_start_us")


def host_fields(req) -> dict:
    return {name: getattr(req, name) for name in HOST_FIELDS}


def _aliases_input(output, inputs) -> bool:
    import torch

    pointers = {t.untyped_storage().data_ptr() for t in values.tensors(inputs) if t.numel()}
    return any(isinstance(t, torch.Tensor) and t.numel() and t.untyped_storage().data_ptr() in pointers
               for t in values.flatten(output))


def _tiny_kernel():
    import torch

    return torch.ones(1024, device="cuda").add_(1)


def _start_torch_threads(device: str) -> None:
    """torch starts its thread pools on first use; started here, before the candidate is
    imported, they do not count as the candidate's threads in the census."""
    import torch

    with torch.no_grad():
        a = torch.rand(512, 512, device=device)
        (a @ a).sum().item()
        torch.ones(1 << 21, device=device).mul_(2).sum().item()


class _Host:
    def __init__(self):
        self.req = None
        self.task = None
        self.clock = None
        self.timer = None
        self.model_new_cls = None
        self.model = None
        self.model_key = None
        self.pools = {}
        self.counter = None
        self.guard = None
        self.guarded = True
        self.namespace = None
        self.threads_before = None
        self.forward_calls_into_extension = 0
        # Forward calls run: a stage the judge ended before the first (its own finding) says
        # nothing about whether the candidate calls its kernels.
        self.forward_calls = 0
        self.kept = []
        self.last_output_bytes = []
        self.modified_inputs = set()
        self.standin_output = None

    # -- operations ------------------------------------------------------------------------

    def prepare(self, message: dict) -> dict:
        """Everything before the candidate: device, clocks, timer, task."""
        fields = dict(message["fields"])
        self.req = Request(stage="candidate", **{k: fields.get(k) for k in HOST_FIELDS})
        req = self.req
        devices.configure(req.device, req.cpu_threads)
        devices.require(req.device)
        self.clock = TrustedClock()
        watch_instance(self.clock)
        if req.device == "cuda":
            devices.synchronize(req.device)
            self.clock.capture_cuda()
        self.timer = (CudaTimer(self.clock, bool(req.l2_flush), float(req.head_start_us or 0.0))
                      if req.device == "cuda" else CpuTimer(self.clock))
        self.task = load_reference(req.reference, req.workspace)
        _start_torch_threads(req.device)
        if req.device == "cuda":
            # The profiler's first start (CUPTI's threads) and the timer's first events, paid
            # before the candidate exists: they are not the candidate's threads or time. With the
            # judge's sealed kernel records torch's profiler never runs here: it would take
            # CUPTI's buffers over from the injection library.
            if not message.get("kernel_records"):
                kernel_census.reference_streams(lambda: _tiny_kernel())
            self.timer.time_call(_tiny_kernel, [])
        # Operators are watched in every call on the CPU; on the GPU the kernel census is the
        # authority and a dispatch mode would add host time to every timed call.
        self.guarded = bool(message.get("guard", True))
        if self.guarded:
            # Here, while the judge computes the references, rather than in the first check
            # (a no-op where the warm worker's server did it before forking this process).
            op_guard.warm_up()
        return {}

    def pool(self, message: dict) -> dict:
        req = self.req
        salt = int(message["salt"])
        self.pools[salt] = InputPool(self.task, req.seed, req.device, req.workspace, int(message["budget"]), salt)
        return {"sets": len(self.pools[salt])}

    def load(self, message: dict) -> dict:
        """Imports the candidate (the request's candidate fields arrive only now)."""
        req = self.req
        for name in ("candidate", "extension_path", "kernels_dir", "workspace", "build_dir"):
            if name in message:
                setattr(req, name, message[name])
        gc.collect()
        self.threads_before = thread_census.snapshot()
        self.namespace = NamespaceSnapshot()
        self.counter = CallCounter() if (req.extension_path or req.kernels_dir) else None
        self.guard = make_guard()
        self.model_new_cls = load_candidate_for(req, self.counter)
        return {}

    def build_model(self, message: dict) -> dict:
        """Builds the candidate's model for ``seed`` ahead of the calls (not inside a timed batch)."""
        self._ensure_model(int(message["seed"]), message.get("resize"))
        return {}

    def _ensure_model(self, seed: int, resize) -> None:
        key = (seed, tuple(resize or ()))
        if self.model is not None and self.model_key == key:
            return
        self.model = None
        gc.collect()
        req = self.req
        with self._shape(resize):
            init = models.init_inputs(self.task, seed, req.workspace)
            reference = models.reference_model(self.task, init, seed, req.device, req.workspace)
            self.model = models.candidate_model(self.model_new_cls, self.task, init, reference, seed, req.device,
                                                req.workspace)
        del reference
        self.model_key = key

    def _shape(self, resize):
        return alternate_shape.resized(self.task, list(resize)) if resize else contextlib.nullcontext()

    def _inputs(self, source: dict) -> list:
        req = self.req
        if "pool" in source:
            return self.pools[int(source["pool"])].next(source.get("factor"))
        return models.make_inputs(self.task, int(source["seed"]), req.device, req.workspace)

    def _forward(self):
        """The model's forward pass, as every call runs it (guarded or not, without grad)."""
        import torch

        def call(*args):
            self.forward_calls += 1
            with torch.no_grad():
                with self.guard if self.guarded else contextlib.nullcontext():
                    return self.model(*args)

        return call

    def flush(self, message: dict) -> dict:
        """The sealed kernel records so far, delivered to the judge (after the timed calls)."""
        devices.synchronize(self.req.device)
        kernel_records.flush_own_records()
        return {}

    def standin(self, message: dict) -> dict:
        """Before the candidate's import: the reference's output for ``seed``, which
        :meth:`harness_calls` returns in place of the candidate's."""
        import torch

        req = self.req
        seed = int(message["seed"])
        init = models.init_inputs(self.task, seed, req.workspace)
        reference = models.reference_model(self.task, init, seed, req.device, req.workspace)
        with torch.no_grad():
            self.standin_output = reference(*models.make_inputs(self.task, seed, req.device, req.workspace))
        devices.synchronize(req.device)
        return {}

    def harness_calls(self, message: dict) -> dict:
        """A batch exactly as :meth:`calls` runs it, with a copy of the stand-in output for the
        forward: the kernels the harness itself launches per call, which the judge's census of
        the sealed records takes out of the candidate's batches."""
        output = self.standin_output
        try:
            return self._run_calls(message, lambda *args: values.clone(output))
        finally:
            self.kept = []
            if message.get("last", True):
                # Kept, it would tell a candidate imported later which stage this is.
                self.standin_output = None

    def calls(self, message: dict) -> dict:
        """Runs one call per entry of ``inputs`` on the model built from ``seed`` (and
        ``resize``), timing each, keeping its output and committing to it (a digest under the
        batch's ``digest_key``)."""
        self._ensure_model(int(message["seed"]), message.get("resize"))
        return self._run_calls(message, self._forward())

    def _run_calls(self, message: dict, forward) -> dict:
        req = self.req
        self.kept = []
        device_ms, host_ms, digests = [], [], []
        key = int(message["digest_key"])
        poison = bool(message.get("poison", False))
        watch = bool(message.get("watch_inputs", False))
        with self._shape(message.get("resize")):
            for source in message["inputs"]:
                with devices.one_thread(req.device):
                    inputs = self._inputs(source)
                pristine = values.clone(inputs) if watch else None
                if poison:
                    poison_free_memory(req.device, self.last_output_bytes or tensor_bytes(inputs))
                before = self.counter.total() if self.counter else 0
                try:
                    device, host, output = self.timer.time_call(forward, inputs)
                except KeyboardInterrupt:
                    raise
                except HarnessError:
                    raise
                except BaseException as exc:
                    text = describe_exception(exc, req.workspace)
                    kind = CUDA_ERROR if req.device == "cuda" and devices.is_cuda_error(exc) else CANDIDATE_RUN
                    raise HarnessError(kind, "ModelNew.forward failed: " + text) from None
                if self.counter:
                    self.forward_calls_into_extension += self.counter.total() - before
                # An output that shares memory with a pool's inputs would change when the set is
                # rescaled for a later call; the judge must see what this call returned.
                if "pool" in source and _aliases_input(output, inputs):
                    output = values.clone(output)
                if pristine is not None:
                    self._note_modified(inputs, pristine)
                self.kept.append(output)
                with devices.one_thread(req.device):
                    digests.append(output_digest.digest(output, key))
                self.last_output_bytes = tensor_bytes(output)
                device_ms.append(device)
                host_ms.append(host)
        return {"device_ms": device_ms, "host_ms": host_ms, "digests": digests}

    def reserve(self, message: dict) -> dict:
        """Before a timed batch of ``calls`` calls, untimed: cached blocks for the outputs it will
        keep, the size of the last call's (timing/output_blocks.py)."""
        return {"bytes": output_blocks.reserve(self.req.device, self.last_output_bytes, int(message["calls"]))}

    def _note_modified(self, given, pristine) -> None:
        import torch

        changed = [index for index, (g, p) in enumerate(zip(values.flatten(given), values.flatten(pristine)))
                   if isinstance(p, torch.Tensor) and (not isinstance(g, torch.Tensor) or g.shape != p.shape
                                                      or not torch.equal(g, p))]
        if changed:
            self.modified_inputs.update(changed)

    def fetch(self, message: dict):
        """The kept outputs of the calls the judge names; then forgets them all."""
        indices = [int(i) for i in message["indices"]]
        chosen = [self.kept[i] for i in indices if 0 <= i < len(self.kept)]
        self.kept = []
        return {"count": len(chosen)}, {"outputs": chosen}

    def gpu_probe(self, message: dict):
        """The judge's pattern for its seed, sent the way outputs will be (cuda_ipc.py): the judge
        checks that its channel's GPU path brings values whole before it relies on it."""
        return {}, {"probe": cuda_ipc.probe_value(int(message["seed"]))}

    def census(self, message: dict) -> dict:
        """The kernels of a few calls on pool inputs, from the profiler (GPU only). Their
        outputs are kept and committed to like any batch's: the judge checks them too, so a
        candidate that behaves differently under the profiler must still be right there."""
        self._ensure_model(int(message["seed"]), None)
        pool = self.pools[int(message["pool"])]
        factors = list(message.get("factors", []))
        key = int(message["digest_key"])
        forward = self._forward()
        self.kept = []

        streams = kernel_census.reference_streams(_tiny_kernel)
        calls = max(1, len(factors))
        # The input sets are drawn (rescaled on the GPU) before the profiled calls: their kernels
        # are the harness's, and counted in they made an honest reduction's kernels look longer
        # than its timed calls (a false timing_missed_work). A pool with fewer sets than calls
        # rescales a set again for a later call, so it is drawn as it goes, as the judge did.
        drawn = [pool.next(f) for f in factors] if len(pool) >= calls else None

        def call():
            inputs = drawn.pop(0) if drawn else pool.next(factors.pop(0) if factors else None)
            output = forward(*inputs)
            self.kept.append(output)
            return output

        census = kernel_census.take(streams, call,
                                    kernel_census.declared_kernels(self.req.workspace, self.req.candidate), calls)
        return {"census": census, "digests": [output_digest.digest(o, key) for o in self.kept]}

    def report(self, message: dict) -> dict:
        """What this process saw; the judge adds it as flags and evidence."""
        flags = []
        if self.guard is not None:
            flags.append(fallback_flag(self.guard))
        if self.clock is not None:
            flags.append(tampering_flag(self.clock))
        if self.namespace is not None:
            flags += namespace_flags(self.namespace)
        if self.threads_before is not None:
            flags += thread_census.flags_since(self.threads_before)
        if self.counter is not None and self.forward_calls and self.forward_calls_into_extension == 0:
            flags.append(not_run_flag(self.counter))
        if self.modified_inputs:
            flags.append({"code": "inputs_modified", "severity": "strict",
                          "reason": f"ModelNew.forward changed its input(s) {sorted(self.modified_inputs)} in place"})
        return {
            "flags": [f for f in flags if f],
            "torch_ops": {"compute": dict(self.guard.compute_ops) if self.guard else {},
                          "allowed": dict(self.guard.allowed_ops) if self.guard else {}},
            "extension_calls": dict(self.counter.calls) if self.counter else {},
            "forward_calls_into_extension": self.forward_calls_into_extension,
            "guarded": self.guarded,
        }

    def handle(self, message: dict):
        op = message.get("op")
        handlers = {"prepare": self.prepare, "pool": self.pool, "load": self.load, "model": self.build_model,
                    "calls": self.calls, "reserve": self.reserve, "standin": self.standin, "harness_calls": self.harness_calls,
                    "flush": self.flush,
                    "census": self.census, "report": self.report, "ping": lambda m: {}}
        if op == "fetch":
            return self.fetch(message)
        if op == "gpu_probe":
            return self.gpu_probe(message)
        if op not in handlers:
            raise HarnessError(INTERNAL, f"the candidate process got an unknown request '{op}'")
        return handlers[op](message), None


def serve(channel) -> int:
    """The candidate process's loop: one reply per request until ``exit`` or end of stream."""
    host = _Host()
    while True:
        try:
            message, _ = channel.receive()
        except ChannelClosed:
            return 0
        if message.get("op") == "exit":
            channel.send({"ok": True})
            return 0
        payload = None
        try:
            reply, payload = host.handle(message)
            reply = dict(reply, ok=True)
        except HarnessError as exc:
            reply = {"ok": False, "error": {"kind": exc.kind, "message": exc.message}}
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit from candidate code included
            reply = {"ok": False, "error": {"kind": CANDIDATE_RUN,
                                            "message": describe_exception(exc, host.req.workspace if host.req else None)}}
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            channel.send(reply, payload, has_value=payload is not None, on_gpu=message.get("on_gpu") is True)
        except ChannelClosed:
            return 0
        except Exception as exc:  # noqa: BLE001 - an output torch.save cannot write
            channel.send({"ok": False, "error": {"kind": OUTPUT_MISMATCH,
                                                 "message": f"the outputs cannot be sent to the judge: "
                                                            f"{type(exc).__name__}: {exc}"}})
