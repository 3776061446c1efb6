"""Counts calls into the compiled extension during the candidate's forward pass.

On the GPU the profiler shows which kernels ran; on the CPU there are no kernel records, so
the evidence that the workspace's own code did the work is that ``cuda_extension``'s functions
were called at all. The module the candidate imports is a stand-in whose functions count their
calls and forward them.
"""

import collections
import types


class CallCounter:
    def __init__(self):
        self.calls = collections.Counter()

    def total(self) -> int:
        return sum(self.calls.values())


def _counting(function, name: str, counter: CallCounter):
    def call(*args, **kwargs):
        counter.calls[name] += 1
        return function(*args, **kwargs)

    call.__name__ = name
    call.__doc__ = getattr(function, "__doc__", None)
    return call


def counting_module(module, counter: CallCounter) -> types.ModuleType:
    stand_in = types.ModuleType(module.__name__, module.__doc__)
    for name in dir(module):
        value = getattr(module, name)
        if callable(value) and not name.startswith("__") and not isinstance(value, type):
            value = _counting(value, name, counter)
        setattr(stand_in, name, value)
    stand_in.__file__ = getattr(module, "__file__", None)
    return stand_in


def not_run_flag(counter: CallCounter) -> dict:
    return {
        "code": "custom_kernels_not_run",
        "severity": "strict",
        "reason": "ModelNew.forward never called the compiled extension (cuda_extension) nor launched "
                  "a kwb_kernels kernel: the output did not come from the workspace's kernels",
    }
