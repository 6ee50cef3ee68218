"""Problems of the analysing environment, not of the kernel: a module it lacks, a GPU it has not.

Both stop a build that would succeed where the program really runs, so each says what is missing
and what to do (install the module in the interpreter used, pick another with ``--python``, or give
the value a GPU query would return in a ``# tilescope:`` directive) instead of a raw traceback.
"""

from __future__ import annotations

import re
import sys
import traceback

from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Span

_GPU_MODULES = re.compile(
    r"[/\\](torch[/\\]cuda|tilelang[/\\]carver[/\\]arch|triton[/\\]runtime|cuda[/\\]bindings)[/\\]"
)
_GPU_MESSAGES = re.compile(
    r"no CUDA GPUs are available|Found no NVIDIA driver|CUDA driver|cudaGetDevice|cudaErrorNoDevice|"
    r"Torch not compiled with CUDA|No registered target detector found an available target|"
    r"invalid device ordinal|CUDA_ERROR_NO_DEVICE|GPU Device is not detected",
    re.IGNORECASE,
)


def gpu_message(text: str) -> bool:
    """Whether an error or a dying process's last words say there is no GPU."""
    return bool(_GPU_MESSAGES.search(text))


def _user_frame(err: BaseException, path: str) -> tuple[int | None, str | None]:
    """The deepest frame in the user's file, and the function it called next."""
    frames = traceback.extract_tb(err.__traceback__)
    line, callee = None, None
    for i, frame in enumerate(frames):
        if frame.filename == path and frame.lineno:
            line = frame.lineno
            callee = frames[i + 1].name if i + 1 < len(frames) else None
    return line, callee


def missing_module(err: BaseException, path: str, python: str | None = None) -> Diagnostic | None:
    """``import einops`` where the analysing interpreter has no einops."""
    if not isinstance(err, ModuleNotFoundError) or not err.name:
        return None
    line, _ = _user_frame(err, path)
    interpreter = python or sys.executable
    top = err.name.split(".")[0]
    return diagnostic(
        "missing-module",
        Span(line=line or 1),
        module=err.name,
        python=interpreter,
        top=top,
        detail="".join(traceback.format_exception(err))[-4000:],
    )


def gpu_query(err: BaseException, path: str, kernel: str | None, kernel_line: int) -> Diagnostic | None:
    """A call that asks the GPU (``driver.get_num_sms()``, ``torch.cuda...``) while the kernel is built."""
    frames = traceback.extract_tb(err.__traceback__)
    in_gpu_code = any(_GPU_MODULES.search(f.filename) for f in frames)
    if not in_gpu_code and not _GPU_MESSAGES.search(str(err)):
        return None
    line, callee = _user_frame(err, path)
    query = next((f.name for f in frames if _GPU_MODULES.search(f.filename)), None)
    who = f"Kernel '{kernel}'" if kernel else "The file"
    named = callee if callee and callee != "<module>" else None
    span = Span(line=line or kernel_line)
    detail = "".join(traceback.format_exception(err))[-4000:]
    if query is not None:
        return diagnostic("needs-gpu", span, kernel=kernel, who=who, function=query, detail=detail)
    if "target detector" in str(err):
        if named is None:
            return diagnostic("needs-gpu", span, form="detect", kernel=kernel, who=who, detail=detail)
        return diagnostic(
            "needs-gpu", span, form="detect_through", kernel=kernel, who=who, function=named, detail=detail
        )
    if named is None:
        return diagnostic("needs-gpu", span, form="plain", kernel=kernel, who=who, detail=detail)
    return diagnostic("needs-gpu", span, kernel=kernel, who=who, function=named, detail=detail)


def exited(err: SystemExit, printed: str, path: str, kernel: str | None, kernel_line: int) -> Diagnostic:
    """User code called ``sys.exit()`` while the file loaded or a kernel was built.

    Examples probe the device at import (``if not torch.cuda.is_available(): print(...); sys.exit(1)``);
    when what it printed says there is no GPU, this is the environment, else the file's own choice.
    The worker survives either way: only this file or kernel is not analysed.
    """
    line, _ = _user_frame(err, path)
    span = Span(line=line or kernel_line)
    said = printed.strip().splitlines()[-1].strip()[:200] if printed.strip() else ""
    printing = {"said": said} if said else {}
    form = "exit_printed" if said else "exit"
    if gpu_message(printed):
        who = f"Building kernel '{kernel}'" if kernel else "Loading the file"
        return diagnostic("needs-gpu", span, form=form, kernel=kernel, who=who, status=err.code, fields=printing)
    if kernel is None:
        return diagnostic("load-error", span, form=form, status=err.code, fields=printing)
    return diagnostic("build-error", span, form=form, kernel=kernel, status=err.code, fields=printing)


EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "compiler": (("tilelang", "tilelang"),),
    "puzzles": (("tilelang", "tilelang"), ("torch", "torch")),
    "plots": (("matplotlib", "matplotlib"),),
    "mcp": (("mcp", "mcp"),),
    "cluster": (("ray", "ray"),),
    "server": (
        ("ray", "ray"),
        ("sqlalchemy", "sqlalchemy"),
        ("alembic", "alembic"),
        ("starlette", "starlette"),
        ("uvicorn", "uvicorn"),
        ("jinja2", "jinja2"),
        ("python_multipart", "python-multipart"),
        ("psycopg", "psycopg[binary]"),
        ("tilelang", "tilelang"),
        ("torch", "torch"),
    ),
}
"""Each extra of ``pyproject.toml`` and what it brings: (import name, distribution) pairs."""


class MissingExtra(Exception):
    """A command needs an extra that is not installed: its message names what is missing and the command that
    installs it. The dispatcher prints it and exits 2 (a usage error: nothing was done)."""


def _absent(module: str) -> bool:
    """Whether ``module`` cannot be imported here, found without importing it (torch takes seconds)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a parent package missing, or a module hidden as ``None``
        return True


def require_extra(extra: str, command: str, only: tuple[str, ...] | None = None, also: str = "") -> None:
    """Raise ``MissingExtra`` unless every module of ``extra`` (or the ``only`` ones among them) imports here;
    ``also`` is another way out, said after the install command."""
    wanted = [(module, dist) for module, dist in EXTRAS[extra] if only is None or module in only]
    missing = [dist for module, dist in wanted if _absent(module)]
    if missing:
        fix = f"{sys.executable} -m pip install 'tilescope[{extra}]'" + (f", {also}" if also else "")
        raise MissingExtra(
            f"tilescope {command} needs {', '.join(missing)} (the '{extra}' extra), which this environment "
            f"({sys.executable}) lacks: {fix}"
        )


def extra_for(err: ModuleNotFoundError) -> str | None:
    """The extra that brings the module an import did not find, if one does."""
    top = (err.name or "").split(".")[0]
    return next((extra for extra, pairs in EXTRAS.items() if any(top == module for module, _ in pairs)), None)
