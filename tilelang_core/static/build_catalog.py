"""Regenerate ``primitives.json``: the names, signatures and docstrings of ``tilelang.language``.

The static tier must answer hover, completion and argument checks in milliseconds without
importing TileLang (2.5 s, and it would run code the user never asked to run), so the catalog is
taken once from the installed TileLang and shipped as data. ``tests/static`` checks that it still
matches the installed version. Run: ``python -m tilescope.core.static.build_catalog``.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

CATALOG_PATH = Path(__file__).with_name("primitives.json")


def _param_json(param: inspect.Parameter) -> dict[str, Any]:
    default = None if param.default is inspect.Parameter.empty else repr(param.default)
    return {"name": param.name, "kind": param.kind.name.lower(), "default": default}


def _entry(name: str, obj: Any) -> dict[str, Any]:
    if isinstance(obj, str):
        return {"name": name, "kind": "dtype", "doc": "", "value": str(obj)}
    kind = "module" if inspect.ismodule(obj) else "class" if inspect.isclass(obj) else "value"
    if kind == "value" and callable(obj):
        kind = "function"
    entry: dict[str, Any] = {"name": name, "kind": kind, "doc": inspect.getdoc(obj) or ""}
    if kind == "value":
        entry["doc"] = ""
        entry["value"] = str(obj)[:80]
    if kind in ("function", "class"):
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            signature = None
        if signature is not None:
            entry["signature"] = f"{name}{signature}"
            entry["params"] = [_param_json(p) for p in signature.parameters.values()]
    return entry


def build() -> dict[str, Any]:
    """Read every public name of ``tilelang.language`` from the installed TileLang."""
    import tilelang
    import tilelang.language as language

    names = sorted(n for n in dir(language) if not n.startswith("_"))
    return {
        "tilelang_version": tilelang.__version__,
        "names": {n: _entry(n, getattr(language, n)) for n in names},
    }


def main() -> None:
    CATALOG_PATH.write_text(json.dumps(build(), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
