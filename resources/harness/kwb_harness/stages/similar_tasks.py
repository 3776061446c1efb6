"""Stage ``similar``: near-duplicate tasks by the similarity of their normalized syntax trees,
the decontamination CUDA Agent applied against KernelBench (AST similarity above 0.9 removed).

Nothing is imported or run: each file is parsed with ``ast``. Normalizing drops docstrings and
renames every identifier (variables, arguments, functions, classes, attributes) to its order of
first appearance, so renaming or reformatting a task does not make it new; literal numbers are
kept apart from names but not their values, so a resized copy is still a copy. A task becomes a
list of node tokens; its 4-token shingles form a set; two tasks' similarity is the Jaccard index
of their sets. Pairs whose shingle counts differ by more than the threshold allows are never
compared (their Jaccard index cannot reach it).

Request: "files" (the set, in order) and "against" (other tasks, e.g. KernelBench's), and
"similarity_threshold". Result: "similar": for each file of the set that is a near-duplicate,
the first earlier file of the set or file of "against" it matches, with the similarity; files
that do not parse are listed under "unparsed".
"""

import ast

_SHINGLE = 4


class _Normalizer(ast.NodeVisitor):
    def __init__(self):
        self.tokens = []
        self.names = {}

    def _name(self, text: str) -> str:
        return self.names.setdefault(text, f"n{len(self.names)}")

    def generic_visit(self, node):
        self.tokens.append(type(node).__name__)
        for field, value in ast.iter_fields(node):
            if field in ("id", "arg", "name", "attr") and isinstance(value, str):
                self.tokens.append(self._name(value))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)
            elif field == "value" and isinstance(node, ast.Constant):
                self.tokens.append(type(value).__name__)


def _strip_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]


def shingles(source: str) -> frozenset:
    tree = ast.parse(source)
    _strip_docstrings(tree)
    normalizer = _Normalizer()
    normalizer.visit(tree)
    tokens = normalizer.tokens
    return frozenset(tuple(tokens[i:i + _SHINGLE]) for i in range(max(1, len(tokens) - _SHINGLE + 1)))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def find_similar(files: list, against: list, threshold: float) -> dict:
    parsed, unparsed = {}, []
    for path in list(against) + list(files):
        if path in parsed:
            continue
        try:
            with open(path, "r", encoding="utf-8", errors="replace") as handle:
                parsed[path] = shingles(handle.read())
        except (OSError, SyntaxError, ValueError, RecursionError) as exc:
            unparsed.append({"file": path, "error": f"{type(exc).__name__}: {exc}"[:300]})
    similar = {}
    earlier = [p for p in against if p in parsed]
    for path in files:
        mine = parsed.get(path)
        if mine is None:
            continue
        for other in earlier:
            theirs = parsed[other]
            small, large = sorted((len(mine), len(theirs)))
            if large and small / large < threshold:
                continue
            score = jaccard(mine, theirs)
            if score >= threshold:
                similar[path] = {"like": other, "similarity": round(score, 4)}
                break
        if path not in similar:
            earlier.append(path)
    return {"similar": similar, "unparsed": unparsed}


def run(req, result) -> None:
    result["similar_tasks"] = find_similar(req.files, req.against, req.similarity_threshold)
