"""The shipped stub `rlmeta/_native.pyi` describes the built `rlmeta._native` exactly."""

import ast
import inspect
from pathlib import Path

import pytest

import rlmeta
from rlmeta import _native

STUB = Path(_native.__file__).parent / "_native.pyi"


def _stub():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    functions, classes, variables = {}, {}, set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = [a.arg for a in node.args.args + node.args.kwonlyargs]
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = [ast.unparse(b) for b in node.bases]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            variables.add(node.target.id)
        elif isinstance(node, ast.Assign):
            variables.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return functions, classes, {v for v in variables if not v.startswith("_") or v == "__version__"}


def _module():
    functions, classes, variables = {}, {}, set()
    for name, obj in vars(_native).items():
        if name.startswith("_") and name != "__version__":
            continue
        if inspect.isbuiltin(obj) or inspect.isfunction(obj):
            functions[name] = list(inspect.signature(obj).parameters)
        elif isinstance(obj, type):
            classes[name] = [b.__name__ for b in obj.__bases__]
        else:
            variables.add(name)
    return functions, classes, variables


def test_stub_is_shipped():
    assert STUB.is_file()


@pytest.mark.parametrize("part", ["functions", "classes", "variables"])
def test_stub_names_match_the_module(part):
    i = ["functions", "classes", "variables"].index(part)
    stub, module = _stub()[i], _module()[i]
    assert sorted(stub) == sorted(module), f"only in stub: {set(stub) - set(module)}; only in module: {set(module) - set(stub)}"


def test_stub_signatures_and_bases_match():
    stub_functions, stub_classes, _ = _stub()
    functions, classes, _ = _module()
    for name, params in functions.items():
        assert stub_functions.get(name) == params, name
    for name, bases in classes.items():
        assert stub_classes.get(name) == bases, name


def test_package_exports_every_native_class():
    _, classes, _ = _module()
    assert set(classes) <= set(rlmeta.__all__)
    for name in rlmeta.__all__:
        assert hasattr(rlmeta, name), name


def _stub_methods():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and (not item.name.startswith("_") or item.name == "__len__"):
                    methods[item.name] = [a.arg for a in item.args.args[1:]]
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    methods[item.target.id] = None
            out[node.name] = methods
    return out


def test_stub_methods_match_the_native_classes():
    """Every method and property of the native classes (Store, Inspector, ...) is in the stub
    with its parameters, and the stub names nothing the module lacks."""
    checked = 0
    for name, methods in _stub_methods().items():
        cls = getattr(_native, name)
        if issubclass(cls, BaseException):
            continue
        public = {m for m in vars(cls) if not m.startswith("_") or m == "__len__"}
        assert set(methods) == public, f"{name}: only in stub {set(methods) - public}, only in module {public - set(methods)}"
        for m, params in methods.items():
            attr = getattr(cls, m)
            if params is None:
                assert not callable(attr), f"{name}.{m}"
                continue
            sig = list(inspect.signature(attr).parameters)
            assert sig[1:] == params or sig == params, f"{name}.{m}: module {sig}, stub {params}"
            checked += 1
    assert checked >= 30, checked
    print(f"stub: {checked} native methods checked")
