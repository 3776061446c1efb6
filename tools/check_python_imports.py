#!/usr/bin/env python3
"""Fails when a Python package has an import cycle among its own modules (standard library only).

Every import statement counts, at module level or inside a function: a function-level import
only moves the cycle to run time. Relative imports (``from . import x``, ``from .x import y``,
``from ..x import y``) and absolute imports of the package itself are followed; importing a
module also imports the packages above it, so those count as well.

Usage: check_python_imports.py [PACKAGE_DIR]  (default: resources/harness/kwb_harness)
Exit status: 0 without cycles ("no import cycles in N modules"), 1 with one (each printed with
the file and line of every import on it), 2 when the package cannot be read.
"""

import ast
import os
import sys

DEFAULT_PACKAGE = os.path.join("resources", "harness", "kwb_harness")


def _modules(package_dir: str) -> dict:
    """Dotted module name -> (file path, whether it is a package's __init__)."""
    root = os.path.abspath(package_dir)
    top = os.path.basename(root)
    modules = {}
    for folder, dirs, files in os.walk(root):
        # Only folders that are packages hold modules of this package.
        dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, "__init__.py")))
        parts = [top] + [p for p in os.path.relpath(folder, root).split(os.sep) if p != "."]
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            stem = name[:-3]
            if stem == "__init__":
                modules[".".join(parts)] = (os.path.join(folder, name), True)
            else:
                modules[".".join(parts + [stem])] = (os.path.join(folder, name), False)
    return modules


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def _imports(module: str, path: str, is_package: bool, modules: dict) -> list:
    """(target module, line, whether inside a function) for each intra-package import."""
    with open(path, "r", encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), filename=path)
    top = module.split(".")[0]
    found = []

    def add(target: str, node, nested: bool) -> None:
        # Importing a.b.c runs a/__init__, a/b/__init__ and then c: each is a dependency, except
        # the packages the importer itself sits in (they are already being imported).
        parts = target.split(".")
        own = _package_of(module, is_package)
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name not in modules or name == module:
                continue
            if i < len(parts) and (own == name or own.startswith(name + ".")):
                continue
            found.append((name, node.lineno, nested))

    def visit(node, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == top or alias.name.startswith(top + "."):
                        add(alias.name, child, nested)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = _package_of(module, is_package).split(".")
                    if child.level > 1:
                        base = base[: len(base) - (child.level - 1)]
                    base = ".".join(base)
                    source = f"{base}.{child.module}" if child.module else base
                elif child.module and (child.module == top or child.module.startswith(top + ".")):
                    source = child.module
                else:
                    continue
                # `from P import name` imports the submodule P.name when there is one; otherwise
                # it reads an attribute of P, which needs P's __init__ to have run that far.
                attributes = False
                for alias in child.names:
                    if f"{source}.{alias.name}" in modules:
                        add(f"{source}.{alias.name}", child, nested)
                    else:
                        attributes = True
                own = _package_of(module, is_package)
                if attributes or not (own == source or own.startswith(source + ".")):
                    add(source, child, nested)
            visit(child, inner)

    visit(tree, False)
    return found


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative);
    a module importing itself is no cycle (it is in sys.modules already) and has no edge."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def _path_in(component: list, graph: dict) -> list:
    """One concrete cycle through the component's first module (breadth-first)."""
    members = set(component)
    start = component[0]
    previous = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node]):
            if target not in members:
                continue
            if target == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if target not in previous:
                previous[target] = node
                queue.append(target)
    return component + [start]


def main(argv: list) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 2
    if len(argv) == 2:
        package = argv[1]
    else:
        package = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DEFAULT_PACKAGE)
    if not os.path.isfile(os.path.join(package, "__init__.py")):
        print(f"check_python_imports: {package} is not a package (no __init__.py)", file=sys.stderr)
        return 2
    modules = _modules(package)
    graph = {name: set() for name in modules}
    where = {}
    for name, (path, is_package) in modules.items():
        try:
            edges = _imports(name, path, is_package, modules)
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            print(f"check_python_imports: cannot parse {path}: {exc}", file=sys.stderr)
            return 2
        for target, line, nested in edges:
            graph[name].add(target)
            where.setdefault((name, target), []).append((line, nested))

    components = _cycles(graph)
    if not components:
        print(f"no import cycles in {len(modules)} modules")
        return 0
    base = os.path.dirname(os.path.abspath(package))
    for component in components:
        path = _path_in(component, graph)
        print(f"import cycle: {' -> '.join(path)}")
        for source, target in zip(path, path[1:]):
            file = os.path.relpath(modules[source][0], base)
            lines = ", ".join(f"{line}{' (in a function)' if nested else ''}"
                              for line, nested in sorted(where[(source, target)]))
            print(f"  {source} imports {target}: {file} line {lines}")
        if len(component) > len(path) - 1:
            print(f"  (modules on cycles with these: {', '.join(component)})")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
