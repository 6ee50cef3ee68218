"""Command lines for Tilescope's Python children, so that no working directory can shadow a module.

``python -m pkg`` puts the working directory first on ``sys.path``: a workspace with its own
``tilescope/``, ``tvm/`` or ``lsp/`` folder would replace ours in the child (``-P`` fixes that only
on 3.11+). Every child is therefore started with ``-c`` and a bootstrap that drops the implicit
``''`` entry before importing anything. The compiler worker's bootstrap also loads the core from its
own folder, so it runs in any interpreter that has TileLang, whether or not Tilescope is installed
there (or another version of it is).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from tilescope.core.sandbox.frames import MARKER

CORE_DIR = Path(__file__).resolve().parents[1]
"""The core package's folder (``tilelang_core``), which the worker's bootstrap loads as ``tilescope.core``."""

NO_DRIVER = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1", "TVM_FFI_DISABLE_TORCH_C_DLPACK": "1"}
"""Against TileLang's import starting the CUDA driver, which holds a thread of its own (on an H200 machine the
zygote held ``cuda00001400006`` beside its own after ``import tilelang``): a compiler worker's zygote must
hold one thread to fork, GPU or not (the child that times a kernel starts the driver itself). ``torch.cuda``
asks NVML, not the driver, whether a device is there, and TVM's FFI does not load torch's C DLPack exchange
(the standard exchange stands in): the two calls of that import that can start it."""
NO_GPU = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": "", **NO_DRIVER}
"""A child's environment additions that hide every GPU from CUDA, HIP and ROCm. Analysis lowers for a
named target and never needs a device; user code that asks for one while a file loads or a kernel
builds (``get_num_sms()``, ``torch.cuda...``) finds none, even on a GPU machine, and becomes a
``needs-gpu`` diagnostic instead of opening a CUDA context there. The dry run hides it likewise.
Hidden devices do not keep the driver from starting: ``NO_DRIVER`` does."""

_SAFE_PATH = "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"

_MODULE = _SAFE_PATH + "import runpy\nrunpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n"

# The core's package shell is registered without running its __init__: the worker imports only the
# modules it needs (stdlib, TileLang and their dependencies), never Tilescope's own requirements.
_WORKER = _SAFE_PATH + (
    "if sys.version_info < (3, 10):\n"
    "    import json\n"
    "    error = 'the compiler tier needs Python 3.10 or newer; this interpreter is %d.%d' % sys.version_info[:2]\n"
    "    body = json.dumps({'ready': False, 'code': 'python-version', 'error': error}).encode()\n"
    f"    sys.stdout.buffer.write({MARKER!r} + b'- %d -\\n' % len(body) + body + b'\\n')\n"
    "    sys.exit(0)\n"
    "import importlib.util, types\n"
    "core = sys.argv.pop(1)\n"
    "root = types.ModuleType('tilescope')\n"
    "root.__path__ = []\n"
    "spec = importlib.util.spec_from_file_location('tilescope.core', core + '/__init__.py', "
    "submodule_search_locations=[core])\n"
    "root.core = importlib.util.module_from_spec(spec)\n"
    "sys.modules.update({'tilescope': root, 'tilescope.core': root.core})\n"
    "from tilescope.core.worker.main import main\n"
    "main()\n"
)


# Importing an installed TileLang exports where its own libraries are (TVM_LIBRARY_PATH, ...) and
# puts its bundled TVM on PYTHONPATH. A process that imported one must not hand those to a worker
# running another release: that one would load the first one's libraries.
_TILELANG_EXPORTS = ("TVM_LIBRARY_PATH", "TL_CUTLASS_PATH", "TL_TEMPLATE_PATH")
_INSTALLED_TILELANG = re.compile(r"[/\\](site|dist)-packages[/\\]tilelang[/\\]")


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without what an installed TileLang exported on import; the worker's sets its own."""
    env = {k: v for k, v in environ.items() if not (k in _TILELANG_EXPORTS and _INSTALLED_TILELANG.search(v))}
    if "PYTHONPATH" in env:
        kept = [p for p in env["PYTHONPATH"].split(os.pathsep) if not _INSTALLED_TILELANG.search(p + os.sep)]
        if kept:
            env["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del env["PYTHONPATH"]
    return env


def module_command(python: str, module: str, *args: str) -> list[str]:
    """``python -m module args`` without the working directory on ``sys.path``."""
    return [python, "-c", _MODULE, module, *args]


def worker_command(python: str) -> list[str]:
    """The compiler worker in ``python``, which needs TileLang but not Tilescope."""
    return [python, "-c", _WORKER, str(CORE_DIR)]
