#!/usr/bin/env python3
"""KernelBench's evaluation method, written here from its documented procedure (this is not
KernelBench's code, which is not installed on our GPU host): one pair, in this process.

- Both models built after seeding 42 from get_init_inputs(), moved to the GPU.
- Correctness: 5 trials, each with inputs drawn after seeding a per-trial seed; shapes must
  match and torch.allclose(atol=rtol=tolerance) hold, the tolerance by precision (1e-4 for
  float32, 1e-2 for float16 and bfloat16: get_tolerance_for_precision).
- Timing with CUDA events: 3 warm-up calls (synchronised), then 100 trials plus one discarded;
  before each trial a device synchronisation and an L2 flush (a 256 MB int64 fill, queued, not
  waited for), start event, the call, end event, synchronisation. The runtime is the mean.
- Speed-up = reference mean / candidate mean.

    bench/kernelbench_method.py REFERENCE CANDIDATE [--trials 100] [--correct-trials 5]

Prints one JSON line: compiled, correct, max_abs_diff, runtime_ms, ref_runtime_ms, speedup,
seconds (inside the process, from before `import torch`).
"""

import time

_started = time.perf_counter()

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import torch  # noqa: E402

TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2}


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed(value: int) -> None:
    torch.manual_seed(value)
    torch.cuda.manual_seed(value)


def to_device(values, device):
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def flush_l2(device) -> None:
    scratch = torch.empty((32, 1024, 1024), dtype=torch.int64, device=device)
    scratch.fill_(42)
    del scratch


def time_trials(model, inputs, device, trials: int, warmup: int = 3, discard: int = 1) -> list:
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
            torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        times = []
        for trial in range(trials + discard):
            torch.cuda.synchronize(device)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            flush_l2(device)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize(device)
            if trial >= discard:
                times.append(start.elapsed_time(end))
    return times


def evaluate(reference: str, candidate: str, trials: int, correct_trials: int) -> dict:
    device = torch.device("cuda:0")
    result = {"compiled": False, "correct": False, "max_abs_diff": None, "runtime_ms": None,
              "ref_runtime_ms": None, "speedup": None}
    ref = load(reference, "kb_reference")
    try:
        new = load(candidate, "kb_candidate")
    except Exception:
        result["error"] = traceback.format_exc(limit=2)[-600:]
        return result
    result["compiled"] = True
    init = ref.get_init_inputs()
    seed(42)
    model = ref.Model(*init).to(device)
    seed(42)
    model_new = new.ModelNew(*init).to(device)
    torch.manual_seed(42)
    trial_seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(correct_trials)]
    worst = 0.0
    correct = True
    with torch.no_grad():
        for trial_seed in trial_seeds:
            seed(trial_seed)
            inputs = to_device(ref.get_inputs(), device)
            seed(trial_seed)
            expected = model(*inputs)
            seed(trial_seed)
            try:
                actual = model_new(*inputs)
            except Exception:
                result["error"] = traceback.format_exc(limit=2)[-600:]
                return result
            torch.cuda.synchronize(device)
            if actual.shape != expected.shape:
                correct = False
                break
            tolerance = TOLERANCE.get(expected.dtype, 1e-4)
            worst = max(worst, (actual.float() - expected.float()).abs().max().item())
            if not torch.allclose(actual, expected, atol=tolerance, rtol=tolerance):
                correct = False
                break
    result["max_abs_diff"] = worst
    result["correct"] = correct
    if not correct:
        return result
    seed(42)
    inputs = to_device(ref.get_inputs(), device)
    new_times = time_trials(model_new, inputs, device, trials)
    ref_times = time_trials(model, inputs, device, trials)
    result["runtime_ms"] = sum(new_times) / len(new_times)
    result["ref_runtime_ms"] = sum(ref_times) / len(ref_times)
    result["speedup"] = result["ref_runtime_ms"] / result["runtime_ms"]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description="KernelBench's method on one pair")
    parser.add_argument("reference")
    parser.add_argument("candidate")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--correct-trials", type=int, default=5)
    args = parser.parse_args()
    result = evaluate(args.reference, args.candidate, args.trials, args.correct_trials)
    result["seconds"] = time.perf_counter() - _started
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
