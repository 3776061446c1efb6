#!/usr/bin/env python3
"""Checks which shared libraries each built binary loads, against the architecture's rules.

    tools/check_links.py ROLE=PATH [ROLE=PATH ...]

Roles: kwb (the headless CLI), gui (kernel-workbench), torch-worker (kwb-libtorch, kwb-model), inject
(the CUPTI injection library). The rules:
- nothing links libcuda: the driver is dlopen'ed, so every binary starts without a GPU;
- kwb, the torch worker and the injection library load no Qt: they run on GPU servers that
  have none;
- kwb, the GUI and the injection library load no libtorch: libtorch exports its own copies of
  some std:: symbols that crashed kwb when they shared a process, and a profiled torch process
  already has its own;
- the GUI does load Qt, and the torch worker does load libtorch (so a broken check, such as an
  ldd that prints nothing, cannot pass silently).
The whole dependency closure is read through ldd, so a library that drags Qt or torch in
indirectly is caught too. Exit status 0 when every rule holds.
"""

import re
import subprocess
import sys

QT = re.compile(r"^libQt\d")
TORCH = re.compile(r"^lib(torch|c10)[._]")
CUDA_DRIVER = re.compile(r"^libcuda\.so")

RULES = {
    # role: (forbidden patterns with names, required patterns with names)
    "kwb": ([(QT, "Qt"), (TORCH, "libtorch"), (CUDA_DRIVER, "libcuda")], []),
    "gui": ([(TORCH, "libtorch"), (CUDA_DRIVER, "libcuda")], [(QT, "Qt")]),
    "torch-worker": ([(QT, "Qt"), (CUDA_DRIVER, "libcuda")], [(TORCH, "libtorch")]),
    "inject": ([(QT, "Qt"), (TORCH, "libtorch"), (CUDA_DRIVER, "libcuda")], []),
}


def loaded_libraries(path):
    """Sonames in the binary's dependency closure (ldd), found or not."""
    run = subprocess.run(["ldd", path], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"ldd {path} failed: {run.stderr.strip() or run.stdout.strip()}")
    names = []
    for line in run.stdout.splitlines():
        name = line.strip().split(" ", 1)[0]
        if name and not name.startswith("/"):
            names.append(name)
    return names


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    problems = []
    for item in argv:
        role, _, path = item.partition("=")
        if role not in RULES or not path:
            print(f"check_links: bad argument '{item}' (ROLE=PATH, roles: {', '.join(RULES)})")
            return 2
        names = loaded_libraries(path)
        forbidden, required = RULES[role]
        for pattern, what in forbidden:
            hits = [n for n in names if pattern.match(n)]
            if hits:
                problems.append(f"{role} ({path}) loads {what}: {', '.join(hits)}")
        for pattern, what in required:
            if not any(pattern.match(n) for n in names):
                problems.append(f"{role} ({path}) does not load {what}; is the check reading "
                                "the right binary?")
        print(f"{role}: {len(names)} libraries checked")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("links: every binary loads only what its layer allows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
