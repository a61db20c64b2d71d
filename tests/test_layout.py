"""The package's shape: no import cycle (static or lazy imports), each layer
imports only the layers below it, and the top level holds the public surface
only (docs/architecture.md)."""

import ast
import pathlib

import distboost

ROOT = pathlib.Path(distboost.__file__).parent


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["distboost", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: pathlib.Path, modules) -> set[str]:
    """Modules of the package that ``module`` imports anywhere (also inside functions).

    ``from pkg import sub`` depends on ``pkg.sub``, not on ``pkg``'s ``__init__``.
    """
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + [node.module or ""]
                            if node.level else [node.module]).strip(".")
            subs = {f"{base}.{a.name}" for a in node.names} & modules.keys()
            out |= subs | ({base} if len(subs) < len(node.names) else set())
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return (out & modules.keys()) - {module}


def _graph():
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_scan_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    assert _cycles(_graph()) == []


LAYERS = ("kernels", "trees", "callbacks", "inputs", "binning", "metrics", "xgboost_format",
          "model_file", "engine", "learners", "training", "estimators", "inspection", "plotting", "dashboard",
          "demo_data")
"""The library's packages and public modules, lowest first (docs/architecture.md):
kernels (numpy in, numpy out) < trees (built on the driver) < what users hand in
< the engine < learners < training < estimators < the surface that uses them. ``distboost/__init__``
re-exports and sits above them all."""


def _layer(module: str) -> int:
    name = module.split(".")
    return len(LAYERS) if len(name) == 1 else LAYERS.index(name[1])


def _upward_imports(graph) -> list[tuple[str, str]]:
    """Imports of a module from a layer above its own."""
    return sorted((m, i) for m, imported in graph.items() for i in imported
                  if _layer(i) > _layer(m))


def test_every_package_and_top_module_has_a_layer():
    assert {m.split(".")[1] for m in _modules() if m != "distboost"} == set(LAYERS)


def test_the_layer_check_finds_an_upward_import():
    graph = {"distboost.kernels.tree": {"distboost.engine.group"},
             "distboost.engine.group": {"distboost.kernels.tree"}}
    assert _upward_imports(graph) == [("distboost.kernels.tree", "distboost.engine.group")]


def test_each_layer_imports_only_the_layers_below_it():
    assert _upward_imports(_graph()) == []


def test_learners_say_what_a_row_is_and_leave_the_walking_to_the_engine():
    """A learner is called by the engine (``learners.Learner``, and the
    per-partition functions of ``Engine.each_partition``); it imports nothing
    of the engine's."""
    graph = _graph()
    assert sorted((m, i) for m, imported in graph.items() if m.startswith("distboost.learners")
                  for i in imported if i.startswith("distboost.engine")) == []


def test_the_top_level_is_the_public_surface():
    """At most a dozen modules at the top of ``distboost/``, none private."""
    top = sorted(p.stem for p in ROOT.glob("*.py"))
    assert len(top) <= 12, top
    assert not [t for t in top if t.startswith("_") and t != "__init__"], top


def test_the_library_never_imports_the_application():
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "flows" or n.startswith("flows.") for n in names), path


PUBLIC_MODULES = ("binning", "callbacks", "dashboard", "demo_data", "inspection", "metrics",
                  "model_file", "plotting", "xgboost_format")
"""The library's public modules: the top-level ones. Their public names are
their ``__all__``; the packages (engine, estimators, inputs, kernels,
learners, training) are the library's own."""


def _public(module: str, name: str | None) -> bool:
    """Whether ``from module import name`` (or ``import module``) takes a public name."""
    import importlib

    parts = module.split(".")
    if parts[0] != "distboost":
        return True
    if len(parts) == 1:
        return name is None or name == "__version__" or name in PUBLIC_MODULES or (
            name in importlib.import_module("distboost").__all__)
    if len(parts) > 2 or parts[1] not in PUBLIC_MODULES:
        return False
    return name is None or name in importlib.import_module(module).__all__


def _non_public_library_imports(path: pathlib.Path) -> list[str]:
    """The distboost names ``path`` imports that are not public (``_public``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if not _public(a.name, None)]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found += [f"{node.module}.{a.name}" for a in node.names
                      if not _public(node.module, a.name)]
    return found


def test_the_application_imports_only_public_library_names(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("from distboost._input import Schema\nimport distboost.engine.group\n"
                       "from distboost.model_file import _labels, load_model\n"
                       "from distboost.inputs import constraints\n"
                       "from distboost import __version__, binning, Tree, _x\n")
    assert _non_public_library_imports(planted) == [
        "distboost._input.Schema", "distboost.engine.group", "distboost.model_file._labels",
        "distboost.inputs.constraints", "distboost._x"]
    flows = ROOT.parent / "flows"
    for path in sorted(flows.glob("*.py")):
        assert _non_public_library_imports(path) == [], path


def test_public_modules_say_what_is_public():
    import importlib

    for name in PUBLIC_MODULES:
        module = importlib.import_module(f"distboost.{name}")
        assert all(hasattr(module, n) for n in module.__all__), name


def _too_long(path: pathlib.Path, max_module: int = 800, max_function: int = 80) -> list[str]:
    """The module itself if it has more than ``max_module`` lines, and its
    functions of more than ``max_function``."""
    source = path.read_text()
    out = [str(path)] if source.count("\n") > max_module else []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.end_lineno - node.lineno + 1 > max_function):
            out.append(f"{path}:{node.name}")
    return out


def test_modules_and_functions_are_short(tmp_path):
    planted = tmp_path / "long.py"
    planted.write_text("def f():\n" + "    x = 1\n" * 80 + "\n\ndef g():\n    pass\n")
    assert _too_long(planted) == [f"{planted}:f"]
    assert _too_long(planted, max_module=10) == [str(planted), f"{planted}:f"]
    for root in (ROOT, ROOT.parent / "flows"):
        assert [t for p in sorted(root.rglob("*.py")) for t in _too_long(p)] == []


def _long_classes(path: pathlib.Path, max_class: int = 250) -> list[str]:
    """Classes of ``path`` longer than ``max_class`` lines."""
    return [f"{path}:{node.name}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > max_class]


def test_no_class_of_the_tree_building_code_is_long(tmp_path):
    """Tree building (``trees``, ``kernels``): each class one concept, at most
    250 lines (growth policies apart from the grower and its bookkeeping)."""
    planted = tmp_path / "long.py"
    planted.write_text("class C:\n" + "    x = 1\n" * 250 + "\n\nclass D:\n    pass\n")
    assert _long_classes(planted) == [f"{planted}:C"]
    paths = sorted((ROOT / "trees").rglob("*.py")) + sorted((ROOT / "kernels").rglob("*.py"))
    assert [c for p in paths for c in _long_classes(p)] == []
