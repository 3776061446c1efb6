#!/usr/bin/env python3
"""Checks that every C++ module includes only what its layer may reach.

The libraries' include roots (cmake/KwbIncludeRoots.cmake) already stop the engine from
including the agent or the widgets at compile time; this check adds the finer rules inside a
library (engine/process cannot include engine/evaluation, widgets/models cannot include a
widget), the third-party headers each layer may use (no Qt in the engine, the agent or kwb; no
torch outside the torch folders), and the folder sizes docs/ARCHITECTURE.md allows.

    tools/check_layering.py [--root DIR] [--plant PATH LINE]...

--plant adds a line to a file for this run only (the file need not exist): the test suite uses
it to show that an upward include fails the check. Exit status 0 when clean, 1 otherwise.
"""

import argparse
import pathlib
import re
import sys

# Module -> the modules it may include. A module is a folder under engine/, agent/, widgets/
# or app/ (agent/tools counts as one with its sub-folders). An entry ending in '/' allows every
# module under that prefix. The table is a layering: lower modules never list higher ones.
ENGINE_BASE = ["engine/process", "engine/cuda"]
ALLOWED = {
    "engine/cupti": [],
    "engine/process": [],
    "engine/cuda": [],
    "engine/model": [],
    "engine/counters": [],
    "engine/diagnostics": ENGINE_BASE,
    "engine/system": ENGINE_BASE + ["engine/diagnostics"],
    "engine/workspace": ENGINE_BASE + ["engine/system"],
    "engine/tasks": ENGINE_BASE + ["engine/system", "engine/workspace"],
    "engine/timeline": ENGINE_BASE + ["engine/diagnostics", "engine/system"],
    "engine/evaluation": ENGINE_BASE + ["engine/diagnostics", "engine/system",
                                        "engine/workspace", "engine/timeline"],
    "engine/screening": ENGINE_BASE + ["engine/diagnostics", "engine/system", "engine/workspace",
                                       "engine/tasks", "engine/timeline", "engine/evaluation"],
    "engine/service": ENGINE_BASE + ["engine/diagnostics", "engine/system", "engine/workspace",
                                     "engine/timeline", "engine/evaluation"],
    "engine/tuning": ENGINE_BASE + ["engine/diagnostics", "engine/system", "engine/workspace",
                                    "engine/timeline", "engine/evaluation", "engine/service"],
    "engine/torch": ["engine/"],
    "agent/llm": ["engine/"],
    "agent/providers": ["engine/", "agent/llm"],
    "agent/store": ["engine/", "agent/llm"],
    "agent/tools": ["engine/", "agent/llm", "agent/store"],
    "agent/session": ["engine/", "agent/"],
    "agent/rollout": ["engine/", "agent/llm", "agent/store", "agent/tools", "agent/session"],
    "widgets/models": ["engine/", "agent/"],
    "widgets/core": ["engine/", "agent/", "widgets/models"],
    "widgets/rollout": ["engine/", "agent/", "widgets/models", "widgets/core"],
    "widgets/common": ["engine/", "agent/", "widgets/core", "widgets/models"],
    "widgets/diff": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common"],
    "widgets/editors": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common",
                        "widgets/diff"],
    "widgets/diagnostics": ["engine/", "agent/", "widgets/core", "widgets/models",
                            "widgets/common", "widgets/editors"],
    "widgets/result": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common"],
    "widgets/timeline": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common"],
    "widgets/counters": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common"],
    "widgets/training": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/rollout",
                         "widgets/runs"],
    "widgets/runs": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common",
                     "widgets/rollout"],
    "widgets/agent": ["engine/", "agent/", "widgets/core", "widgets/models", "widgets/common",
                      "widgets/rollout", "widgets/runs"],
    "widgets/window": ["engine/", "agent/", "widgets/"],
    "app/cli": ["engine/", "agent/"],
    "app/torch_probe": ["engine/"],
    "app/model_worker": ["engine/"],
    "app/gui": ["engine/", "agent/", "widgets/"],
}

# Third-party headers by layer. Qt anywhere outside the GUI breaks the headless build on GPU
# servers; torch headers cost ~20 s per translation unit and clash with Qt's `slots` macro.
QT_HEADER = re.compile(r"^(Q[A-Za-z0-9]+|Qt[A-Za-z]*/.*|Qsci/.*|qt6?/.*)$")
QT_WIDGETS_HEADER = re.compile(
    r"^(QtWidgets/.*|Qsci/.*|Q(Widget|Application|MainWindow|Dialog|Label|PushButton|ToolButton|"
    r"TreeView|TableView|ListView|Splitter|DockWidget|Menu|MenuBar|ToolBar|LineEdit|ComboBox|"
    r"StyledItemDelegate|ScrollArea|HBoxLayout|VBoxLayout|GridLayout|FormLayout|ProgressBar|"
    r"StatusBar|MessageBox|FileDialog|TabWidget|TextEdit|PlainTextEdit|CheckBox|SpinBox|"
    r"HeaderView|Frame|StackedWidget|GroupBox|AbstractScrollArea))$")
TORCH_HEADER = re.compile(r"^(torch|ATen|c10|caffe2)/")
QT_FREE_PREFIXES = ("engine/", "agent/", "app/cli", "app/torch_probe", "app/model_worker")
WIDGET_FREE = ("widgets/core", "widgets/models", "widgets/rollout")
TORCH_MODULES = ("engine/torch", "app/torch_probe", "app/model_worker")

SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")
SCANNED_TOPS = ("engine", "agent", "widgets", "app")
SIZED_TOPS = SCANNED_TOPS + ("tests", "resources", "bench", "tools")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
FOLDER_LIMIT = 15


def module_of(path):
    """engine/evaluation/evaluator.cpp -> engine/evaluation; agent/tools/files/x.h -> agent/tools."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] not in SCANNED_TOPS:
        return None
    if parts[0] == "agent" and parts[1] == "tools":
        return "agent/tools"
    return parts[0] + "/" + parts[1]


def allowed(source_module, target_module):
    if source_module == target_module:
        return True
    for entry in ALLOWED.get(source_module, []):
        if target_module == entry or (entry.endswith("/") and target_module.startswith(entry)):
            return True
    return False


def large_folder_reasons(root):
    """Folders docs/ARCHITECTURE.md allows above the limit: lines '- `folder/` (N files): why'."""
    doc = root / "docs" / "ARCHITECTURE.md"
    if not doc.exists():
        return set()
    return set(re.findall(r"^- `([^`]+)/` \(\d+ files\):", doc.read_text(), re.M))


def check(root, planted):
    problems = []
    files = {}
    for top in SCANNED_TOPS:
        for path in sorted((root / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_text(errors="replace")
    for relative, line in planted:
        files[relative] = files.get(relative, "") + "\n" + line + "\n"

    for relative, text in sorted(files.items()):
        module = module_of(relative)
        if module is None:
            continue
        if module not in ALLOWED:
            problems.append(f"{relative}: folder {module} has no layer in tools/check_layering.py")
            continue
        for match in INCLUDE.finditer(text):
            kind, name = match.groups()
            line_no = text.count("\n", 0, match.start()) + 1
            where = f"{relative}:{line_no}"
            if ".." in name.split("/"):
                problems.append(f"{where}: relative include '{name}' reaches outside its folder")
                continue
            if kind == '"':
                target = module_of(name)
                if target is None:
                    if "/" in name and name.split("/")[0] in SCANNED_TOPS:
                        problems.append(f"{where}: '{name}' is no module's header")
                    continue
                if not allowed(module, target):
                    problems.append(f"{where}: {module} may not include {target} ('{name}')")
                continue
            if QT_HEADER.match(name) and relative.startswith(QT_FREE_PREFIXES):
                problems.append(f"{where}: Qt header <{name}> in the Qt-free {module}")
            elif QT_WIDGETS_HEADER.match(name) and module in WIDGET_FREE:
                problems.append(f"{where}: widget header <{name}> in {module} (Qt Core/Gui only)")
            if TORCH_HEADER.match(name) and module not in TORCH_MODULES:
                problems.append(f"{where}: torch header <{name}> outside {', '.join(TORCH_MODULES)}")

    # Folder sizes count every source file of the project: C++ and Python, tests and resources.
    reasons = large_folder_reasons(root)
    counts = {}
    sources = [p.relative_to(root).as_posix() for top in SIZED_TOPS
               for p in (root / top).rglob("*") if p.suffix in (".cpp", ".cc", ".py")]
    for relative in sources + [r for r, _ in planted]:
        if relative.endswith((".cpp", ".cc", ".py")):
            folder = relative.rsplit("/", 1)[0]
            counts[folder] = counts.get(folder, 0) + 1
    for folder, count in sorted(counts.items()):
        if count > FOLDER_LIMIT and folder not in reasons:
            problems.append(f"{folder}/: {count} source files (limit {FOLDER_LIMIT}; give a "
                            "reason in docs/ARCHITECTURE.md or split it)")
    return problems, len(files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path)
    parser.add_argument("--plant", nargs=2, action="append", default=[],
                        metavar=("PATH", "LINE"))
    args = parser.parse_args()
    problems, count = check(args.root.resolve(), args.plant)
    for problem in problems:
        print(problem)
    if problems:
        print(f"layering: {len(problems)} problem(s) in {count} files")
        return 1
    print(f"layering: {count} files, every include within its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
