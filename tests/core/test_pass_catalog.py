"""The pass catalogue covers the real CUDA pipeline and names its anonymous passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from tilescope.core.pass_catalog import catalog, describe, resolve

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _recorded_pass_names(arch: str) -> list[str]:
    import tilelang
    from tilelang import tvm

    spec = importlib.util.spec_from_file_location("gemm_example", EXAMPLES / "gemm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names: list[str] = []

    @tvm.instrument.pass_instrument
    class Names:
        def run_after_pass(self, mod, info):
            names.append(info.name)

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target, tvm.transform.PassContext(instruments=[Names()]):
        tilelang.lower(module.matmul(1024, 1024, 1024), target=target)
    return names


@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_every_pass_the_gemm_runs_is_catalogued(arch):
    names = _recorded_pass_names(arch)
    assert len(names) > 80
    infos = resolve(names)
    missing = sorted({n for n, info in zip(names, infos, strict=True) if info is None})
    assert missing == []


def test_anonymous_passes_are_named_by_position():
    infos = resolve(["pass_fn", "pass_fn", "pass_fn", "tirx.BindTarget", "tl.Simplify", "pass_fn"])
    assert [i.name for i in infos] == [
        "tl.NestedLoopChecker",
        "tl.ParallelLocalIndexChecker",
        "tl.FragmentLoopChecker",
        "tirx.BindTarget",
        "tl.Simplify",
        "tl.HoistBroadcastValues",
    ]


def test_entries_say_what_to_look_for_in_plain_words():
    for info in catalog().values():
        assert info.what.strip() and info.look_for.strip(), info.name
        assert info.kind in ("transform", "check")
    assert "layout" in describe("tl.LayoutInference").what.lower()
    assert describe("no.SuchPass") is None
