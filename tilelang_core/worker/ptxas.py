"""Registers, spills and shared memory from ptxas, without a GPU.

``pip install "tilescope[nvcc]"`` brings nvcc and ptxas as a wheel; a system CUDA works too.
The generated source is compiled to a cubin with ``-Xptxas -v`` and the report parsed, with the
flags TileLang compiles it with (``-O3 -std=c++20 -lineinfo``), so the registers are the ones it gets.
Cubins are kept on disk by source (:func:`cache_dir`), so a kernel is compiled once per machine.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Resources, Span

_USAGE = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")
SPILL_TIMEOUT_S = 120


def _site_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_nvcc() -> Path | None:
    """nvcc from the ``nvidia-cuda-nvcc`` wheel, else from ``$CUDA_HOME`` or ``PATH``."""
    nvidia = _site_dir("nvidia")
    if nvidia is not None:
        for candidate in sorted(nvidia.glob("cu*/bin/nvcc"), reverse=True):
            return candidate
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and (Path(home) / "bin" / "nvcc").exists():
        return Path(home) / "bin" / "nvcc"
    found = shutil.which("nvcc")
    return Path(found) if found else None


def _include_dirs(nvcc: Path) -> list[str]:
    tilelang = _site_dir("tilelang")
    dirs = [str(nvcc.parent.parent / "include")]
    if tilelang is not None:
        dirs += [str(tilelang / "src"), str(tilelang / "3rdparty" / "cutlass" / "include")]
    return dirs


def _arch_flag(arch: str) -> str:
    """Hopper's wgmma and TMA need the arch-specific ``a`` variant."""
    return f"{arch}a" if arch in ("sm_90", "sm_100") else arch


_COMPILE_TIME = re.compile(r"^ptxas info\s*: Compile time = ")
"""ptxas' own wall-clock line: not a fact of the device code, so not kept (two runs then read the same)."""


def parse_report(text: str, arch: str) -> Resources | None:
    """The figures ptxas prints for the kernel entry (the one using the most registers)."""
    registers = [int(m) for m in _USAGE.findall(text)]
    if not registers:
        return None
    spills = [(int(a), int(b)) for a, b in _SPILL.findall(text)] or [(0, 0)]
    smem = [int(m) for m in _SMEM.findall(text)] or [0]
    return Resources(
        registers=max(registers),
        spill_store_bytes=max(s for s, _ in spills),
        spill_load_bytes=max(load for _, load in spills),
        shared_bytes=max(smem),
        arch=arch,
        raw="\n".join(line for line in text.strip().splitlines() if not _COMPILE_TIME.match(line))[-2000:],
    )


@dataclass(frozen=True)
class Compiled:
    """What nvcc made of one source: the cubin (empty on failure), its exit status and its output."""

    cubin: bytes
    returncode: int
    output: str


def cache_dir() -> Path:
    """Where compiled cubins are kept: ``$TILESCOPE_CACHE/ptxas``, else ``~/.cache/tilescope/ptxas``."""
    root = os.environ.get("TILESCOPE_CACHE") or str(Path.home() / ".cache" / "tilescope")
    return Path(root) / "ptxas"


def _command(nvcc: Path, arch: str, cu: Path, cubin: Path) -> list[str]:
    return [
        str(nvcc),
        "-cubin",
        f"-arch={_arch_flag(arch)}",
        "-std=c++20",
        "-lineinfo",
        "-O3",
        "-Xptxas",
        "-v",
        *(f"-I{d}" for d in _include_dirs(nvcc)),
        "-o",
        str(cubin),
        str(cu),
    ]


_CACHE_FORM = "output without the temporary folder"
"""Part of the cache key: entries kept before the output named ``kernel.cu`` alone are not read."""


def compile_cubin(source: str, arch: str) -> Compiled | None:
    """Compile ``source`` to a cubin for ``arch``, kept on disk by source, arch and compiler.

    ptxas on a CUTLASS-heavy kernel takes tens of seconds, and the same kernel is compiled again by
    every ``check --ptxas`` and ``profile``; ``None`` when there is no nvcc. Raises
    ``subprocess.TimeoutExpired`` past :data:`SPILL_TIMEOUT_S`.
    """
    nvcc = find_nvcc()
    if nvcc is None:
        return None
    key = hashlib.sha256("\0".join([_CACHE_FORM, source, arch, str(nvcc), *_include_dirs(nvcc)]).encode()).hexdigest()
    kept = cache_dir() / f"{key}.json"
    if kept.exists():
        try:
            data = json.loads(kept.read_text())
            return Compiled(base64.b64decode(data["cubin"]), int(data["returncode"]), str(data["output"]))
        except (OSError, ValueError, KeyError):
            pass
    with tempfile.TemporaryDirectory(prefix="tilescope-ptxas-") as tmp:
        cu, cubin = Path(tmp) / "kernel.cu", Path(tmp) / "kernel.cubin"
        cu.write_text(source)
        done = subprocess.run(
            _command(nvcc, arch, cu, cubin), capture_output=True, text=True, timeout=SPILL_TIMEOUT_S, check=False
        )
        binary = cubin.read_bytes() if done.returncode == 0 and cubin.exists() else b""
    # The output names the source by its temporary path: kept as ``kernel.cu``, so two compiles of one
    # source say the same (the path is a fact of this run, not of the kernel).
    compiled = Compiled(binary, done.returncode, (done.stdout + done.stderr).replace(tmp + os.sep, ""))
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "cubin": base64.b64encode(binary).decode(),
            "returncode": compiled.returncode,
            "output": compiled.output,
        }
        partial = kept.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(record))
        partial.replace(kept)
    except OSError:
        pass  # a read-only home: compile again next time
    return compiled


def resource_usage(source: str, arch: str, kernel: str, line: int) -> tuple[Resources | None, list[Diagnostic]]:
    """Compile ``source`` for ``arch`` and report its resources; problems become diagnostics."""
    try:
        compiled = compile_cubin(source, arch)
    except subprocess.TimeoutExpired:
        return None, [diagnostic("ptxas-timeout", Span(line), kernel=kernel)]
    if compiled is None:
        return None, []
    output = compiled.output
    if compiled.returncode != 0:
        first = next((ln for ln in output.splitlines() if "error" in ln), output.strip()[:300])
        return None, [diagnostic("ptxas-error", Span(line), kernel=kernel, error=first.strip(), detail=output[-4000:])]
    resources = parse_report(output, arch)
    diagnostics: list[Diagnostic] = []
    if resources is not None and (resources.spill_store_bytes or resources.spill_load_bytes):
        diagnostics.append(
            diagnostic(
                "ptxas-spill",
                Span(line),
                kernel=kernel,
                stored=resources.spill_store_bytes,
                loaded=resources.spill_load_bytes,
                registers=resources.registers,
            )
        )
    return resources, diagnostics
