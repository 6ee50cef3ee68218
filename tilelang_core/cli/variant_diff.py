"""What changes between two variants of a kernel: resources, inferred layouts, the pass list."""

from __future__ import annotations

import difflib

from tilescope.core.display import dims_text
from tilescope.core.model import Change, KernelModel, Variant, VariantDiff


def _resources(k: KernelModel | None) -> dict[str, str]:
    if k is None:
        return {}
    facts: dict[str, str] = {"shared_bytes": str(k.shared_bytes), "warp_specialized": str(k.warp_specialized)}
    if k.launch is not None:
        facts["grid"] = dims_text(k.launch.grid_dims())
        facts["threads"] = str(k.launch.threads_after_ws)
    for p in k.pipelines:
        facts[f"stages {p.loop_var}"] = str(p.num_stages)
    if k.resources is not None:
        facts["registers"] = str(k.resources.registers)
        facts["spills"] = f"{k.resources.spill_store_bytes}/{k.resources.spill_load_bytes}"
    for name, value in k.args.items():
        facts[f"arg {name}"] = str(value)
    return facts


def _layouts(k: KernelModel | None) -> dict[str, str]:
    return {} if k is None else {f"layout {layout.buffer}": layout.text for layout in k.layouts}


def _changes(a: dict[str, str], b: dict[str, str]) -> list[Change]:
    keys = [*a, *(k for k in b if k not in a)]
    return [Change(k, a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)]


def diff(a: Variant, b: Variant, a_label: str, b_label: str) -> VariantDiff:
    ka = a.kernels[0] if a.kernels else None
    kb = b.kernels[0] if b.kernels else None
    passes_a = [p.name for p in ka.passes] if ka else []
    passes_b = [p.name for p in kb.passes] if kb else []
    passes: list[Change] = []
    matcher = difflib.SequenceMatcher(a=passes_a, b=passes_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op in ("delete", "replace"):
            passes.extend(Change(f"pass {name}", name, None) for name in passes_a[i1:i2])
        if op in ("insert", "replace"):
            passes.extend(Change(f"pass {name}", None, name) for name in passes_b[j1:j2])
    return VariantDiff(
        a=a_label,
        b=b_label,
        resources=_changes(_resources(ka), _resources(kb)),
        layouts=_changes(_layouts(ka), _layouts(kb)),
        passes=passes,
    )
