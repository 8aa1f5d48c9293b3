"""The import graph of the product and the benchmarks, drawn from the source, and the folder table it must keep
(docs/architecture.md, "Folders"). Every function takes its root or its graph, so a test can hand it a toy package
or an injected arrow.

An arrow is every import in a module, those inside functions included, and every string that names a module for
`importlib` to import later: a "module:function" factory (the backend registry's rows, the doctor's rungs), an
f-string of one (its `{NAME}` read from the module's own string constants, any other `{…}` standing for any one
module name), and the string or f-string handed to `importlib.import_module`."""
import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "device", "app", "cli", "bench")
PRODUCT = ("core", "device", "app", "cli")
NAME = r"[a-z_][a-z0-9_]*"
ANY = r"(?!__)[a-z_][a-z0-9_]*"     # a {placeholder}: one module name, never __main__ or __init__


def modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's top-level NAME = "text" (and A, B = "x", "y") assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            names, values = node.targets[0], node.value
            pairs = (zip(names.elts, values.elts) if isinstance(names, ast.Tuple) and isinstance(values, ast.Tuple)
                     else [(names, values)])
            found |= {n.id: v.value for n, v in pairs if isinstance(n, ast.Name) and isinstance(v, ast.Constant)
                      and isinstance(v.value, str)}
    return found


def _pieces(node: ast.AST, constants: dict[str, str]) -> list[str | None] | None:
    """A string node as its literal pieces, None for a piece it cannot know; None if it is no string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return [constants[node.id]] if node.id in constants else None
    if isinstance(node, ast.JoinedStr):
        return [v.value if isinstance(v, ast.Constant) else (_pieces(v.value, constants) or [None])[0]
                for v in node.values]
    return None


def _regex(pieces: list[str | None]) -> str:
    return "".join(ANY if p is None else re.escape(p) for p in pieces)


def _named(node: ast.AST, constants: dict[str, str], names: dict[str, Path]) -> list[str]:
    """The modules a string names: as a "module:function" factory, or as the argument of import_module."""
    call = isinstance(node, ast.Call) and node.args and getattr(node.func, "attr", getattr(node.func, "id", None))
    if call == "import_module":
        pieces = _pieces(node.args[0], constants)
        return [m for m in names if re.fullmatch(_regex(pieces), m)] if pieces and pieces[0] else []
    if not isinstance(node, (ast.Constant, ast.JoinedStr)) or not (pieces := _pieces(node, constants)) \
            or pieces[0] is None:     # a name whose start is unknown could be any module: none is drawn
        return []
    text = "".join("\0" if p is None else p for p in pieces)
    module, colon, function = text.partition(":")
    if not colon or not re.fullmatch(NAME, function.replace("\0", "x")):
        return []
    pattern = _regex([None if p == "\0" else p for p in re.split("(\0)", module) if p])
    return [m for m in names if re.fullmatch(pattern, m) and "." in m]


def import_arrows(root: Path = ROOT, packages=PACKAGES) -> dict[str, dict[str, int]]:
    """module -> {the product module it imports: the first line that does}. `from a import b` is a.b when that is
    a module, else a."""
    names = modules(root, packages)
    graph = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        constants = _constants(tree)
        arrows: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
            else:
                targets = _named(node, constants, names)
            for t in targets:
                if t in names and t != name and node.lineno < arrows.get(t, node.lineno + 1):
                    arrows[t] = node.lineno
        graph[name] = arrows
    return graph


def cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def folder_table(text: str) -> dict[str, list[str]]:
    """The "## Folders" section's table: folder or file -> the paths its "may import" column names in backticks
    (words outside backticks are third-party: NumPy, the standard library)."""
    section = text.split("\n## Folders\n", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|")]
    header = [c.lower() for c in rows[0]]
    where, allowed = header.index("folder"), header.index("may import")
    return {re.fullmatch(r"`([^`]+)`", row[where]).group(1): re.findall(r"`([^`]+)`", row[allowed])
            for row in rows[2:]}


def _under(path: str, item: str) -> bool:
    return path.startswith(item) if item.endswith("/") else path == item


def forbidden_arrows(graph: dict, table: dict[str, list[str]], files: dict[str, str]) -> list[str]:
    """Every arrow that no row of the table allows, as "file:line imports module". `files`: module -> its path
    from the root ("device/link/decoder.py"). A module may import what every row holding it lists, inside every
    folder that holds it, and its own packages (Python runs their __init__ first anyway)."""
    broken = []
    for module, arrows in sorted(graph.items()):
        path = files[module]
        rows = [row for row in table if _under(path, row)]
        allowed = [item for row in rows for item in table[row]] + [row for row in rows if row.endswith("/")]
        for target, line in sorted(arrows.items()):
            ancestor = module.startswith(target + ".")
            if not ancestor and not any(_under(files[target], item) for item in allowed):
                broken.append(f"{path}:{line} imports {target}")
    return broken


def _comment_lines(text: str) -> set[int]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return {t.start[0] for t in tokens if t.type == tokenize.COMMENT}


def local_imports(path: Path) -> list[tuple[int, bool]]:
    """Each import inside a function: (its line, whether a comment says why). The comment is on the import, or
    on the line above it, or on the import just above that heads the same run of imports (blank lines between
    them ignored)."""
    text = path.read_text()
    commented, lines = _comment_lines(text), text.splitlines()
    found, said = [], {}

    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                above = child.lineno - 1
                while above > 1 and not lines[above - 1].strip():    # isort's blank line between groups
                    above -= 1
                said[child.end_lineno] = (any(n in commented for n in range(child.lineno, child.end_lineno + 1))
                                          or lines[above - 1].lstrip().startswith("#") or said.get(above, False))
                found.append((child.lineno, said[child.end_lineno]))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(ast.parse(text, str(path)), False)
    return found
