"""Build a PrimFunc from a loaded file, and the options its build is made with, in the worker.

A factory is called the way its style expects (``@tilelang.jit``'s ``get_tir``, a plain factory, a
module-level ``@T.prim_func``), and a ``@tilelang.jit`` a factory calls builds its PrimFunc and stops
there: nothing is compiled. ``pass_configs``, ``target`` and ``out_idx`` are merged as
``tilelang.compile`` merges them, from the PrimFunc, its decorator, an inner jit, or the file's own
``tilelang.compile(...)`` of the factory.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from typing import Any

from tilescope.core.compiler.discovery import Instantiation


def compile_options(namespace: dict[str, Any], source: str, path: str, kernel: str) -> tuple[dict[str, Any], Any]:
    """``pass_configs`` and ``target`` of the file's first ``tilelang.compile`` of a factory's PrimFunc.

    ``tilelang.compile(gemm(M, N, K), target="ascend", pass_configs={...})``, or of a name the file bound
    to such a call (``program = gemm(...)``): they are part of the build the file makes, as the
    decorator's are for ``@tilelang.jit``. Each keyword is evaluated in the loaded module; one that
    needs the program's run (``target=cli_args.target``) is left out.
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return {}, None
    made = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _calls(node.value, kernel)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "compile" and node.args):
            continue
        first = node.args[0]
        if not (_calls(first, kernel) or (isinstance(first, ast.Name) and first.id in made)):
            continue
        found: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg in ("pass_configs", "target"):
                with contextlib.suppress(Exception):
                    expression = ast.Expression(keyword.value)
                    found[keyword.arg] = eval(compile(expression, path, "eval"), namespace)
        configs = found.get("pass_configs") or {}
        return {str(getattr(k, "value", k)): v for k, v in dict(configs).items()}, found.get("target")
    return {}, None


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == name


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def build_prim_func(namespace: dict[str, Any], inst: Instantiation) -> Any:
    """Call the kernel's factory with the resolved arguments, the way its style expects."""
    obj = namespace[inst.kernel.name]
    style = inst.kernel.style
    inner_jit.clear()  # each build says afresh whether a factory's own jit made it
    if style == "prim_func":
        return obj
    getter = getattr(obj, "get_tir", None)  # @tilelang.jit: build the PrimFunc, compile nothing
    if getter is not None:
        # TileLang keeps each argument set's PrimFunc (``p1_cache``); a build for another target or device
        # profile must run the function again, as a new process would.
        cache = getattr(getattr(obj, "func", None), "p1_cache", None)
        if isinstance(cache, dict):
            cache.clear()
        return getter(**inst.args)
    with _jit_compiles_stop() as built:
        try:
            return obj(**inst.args)
        except _Built:
            return built[0]


inner_jit: dict[str, Any] = {}
"""A factory that compiled a ``@tilelang.jit`` of its own (``return _build()``): that jit's ``target``,
``pass_configs`` and ``out_idx``, which are part of the build, as a decorator's are."""


class _Built(BaseException):
    """Raised through the factory once its inner jit has built the PrimFunc: nothing is compiled."""


@contextlib.contextmanager
def _jit_compiles_stop() -> Iterator[list[Any]]:
    """While a factory runs, a ``@tilelang.jit`` it calls builds its PrimFunc and stops there (compiling
    would need the target's toolkit, nvcc or CANN's bisheng, and proves nothing about the IR)."""
    from tilelang.jit import JITImpl

    built: list[Any] = []
    original = JITImpl.compile

    def compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(self.get_tir(*args, **kwargs))
        inner_jit.update(target=self.target, pass_configs=dict(self.pass_configs or {}), out_idx=self.out_idx)
        raise _Built

    JITImpl.compile = compile
    try:
        yield built
    finally:
        JITImpl.compile = original


def jit_options(namespace: dict[str, Any], inst: Instantiation, prim_func: Any) -> tuple[dict[str, Any], Any, Any]:
    """``pass_configs``, ``target`` and ``out_idx`` as ``tilelang.compile`` would merge them.

    The PrimFunc's own ``tilelang_pass_configs``/``tilelang_out_idx`` attributes come first; the
    ``@tilelang.jit(...)`` decorator's ``pass_configs`` override them, as in TileLang.
    """
    obj = namespace.get(inst.kernel.name)
    attrs = getattr(prim_func, "attrs", None) or {}
    configs: dict[str, Any] = {}
    if "tilelang_pass_configs" in attrs:
        configs.update({str(k): v for k, v in dict(attrs["tilelang_pass_configs"]).items()})
    configs.update({str(getattr(k, "value", k)): v for k, v in (getattr(obj, "pass_configs", None) or {}).items()})
    out_idx = getattr(obj, "out_idx", None)
    if inner_jit:  # the factory's own @tilelang.jit
        configs.update({str(getattr(k, "value", k)): v for k, v in inner_jit["pass_configs"].items()})
        out_idx = out_idx if out_idx is not None else inner_jit["out_idx"]
    if out_idx is None and "tilelang_out_idx" in attrs:
        out_idx = [int(i) for i in attrs["tilelang_out_idx"]]
    return configs, getattr(obj, "target", None) or inner_jit.get("target"), out_idx
