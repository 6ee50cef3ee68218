"""Answers to the device queries a kernel makes while it is built, on a machine without that device.

Kernels of real libraries size themselves by the GPU they build for (``driver.get_num_sms()``,
``torch.cuda.get_device_properties(0).multi_processor_count``, ``determine_target()``). Analysis
runs without a GPU, so when a build fails for want of one it is built again with those queries
answered from a profile: the device a ``tilescope record`` run saw, else the known properties of
the target's usual part (H100/H200 for sm_90, A100 for sm_80, B200 for sm_100, MI300X for gfx942).
The diagnostic says which queries were answered, and from what. Runs in the worker.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

import tilelang  # noqa: F401  (puts the TVM it bundles on the path)
import tvm
from tilescope.core.targets import part
from tilescope.core.worker.lowering import cuda_target


@dataclass
class Profile:
    """A device's properties and where they came from (``recorded`` or ``known``)."""

    target: str
    values: dict[str, Any]
    source: str
    asked: list[str] = field(default_factory=list)

    def queries(self) -> str:
        """The queries answered so far, for a note."""
        return ", ".join(self.asked) or "the device"

    def describe(self) -> str:
        where = "the device 'tilescope record' saw" if self.source == "recorded" else "the known properties of"
        sms = self.values.get("multi_processor_count")
        count = f", {sms} SMs" if sms is not None else ""
        return f"{where} {self.values.get('name', 'the device')} ({self.target}{count})"


def profile(target: str, recorded: dict[str, Any] | None = None) -> Profile | None:
    """The recorded device, else the target's usual part; ``None`` for a target without one (metal)."""
    if recorded:
        return Profile(target, dict(recorded), "recorded")
    known = part(target)
    return Profile(target, known, "known") if known is not None else None


_T = TypeVar("_T")


def retried(target: str, recorded: dict[str, Any] | None, call: Callable[[], _T]) -> tuple[_T, Profile] | None:
    """``call`` again (a load or a build that asked for the GPU) with its device queries answered from the
    recorded device, else the target's part; nothing where the target has no part or the call fails again."""
    found = profile(target, recorded)
    if found is None:
        return None
    try:
        with answering(found):
            return call(), found
    except (Exception, SystemExit):  # asked again, the program still stops: its first answer stands
        return None


def _note(profile: Profile, query: str) -> None:
    if query not in profile.asked:
        profile.asked.append(query)


@contextlib.contextmanager
def answering(profile: Profile) -> Iterator[None]:
    """Inside: the build's device queries answered from ``profile`` and the target current, as
    ``@tilelang.jit(target=...)`` makes it; everything restored after."""
    props = SimpleNamespace(**profile.values)
    patches: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, query: str, answer: Any) -> None:
        if owner is None or not hasattr(owner, name):
            return

        def answered(*args: Any, **kwargs: Any) -> Any:
            _note(profile, query)
            return answer(*args, **kwargs)

        patches.append((owner, name, getattr(owner, name)))
        setattr(owner, name, answered)

    torch_cuda = getattr(sys.modules.get("torch"), "cuda", None)
    patch(torch_cuda, "is_available", "torch.cuda.is_available()", lambda *a, **k: True)
    patch(torch_cuda, "device_count", "torch.cuda.device_count()", lambda *a, **k: 1)
    patch(torch_cuda, "current_device", "torch.cuda.current_device()", lambda *a, **k: 0)
    patch(torch_cuda, "get_device_properties", "torch.cuda.get_device_properties()", lambda *a, **k: props)
    patch(torch_cuda, "get_device_name", "torch.cuda.get_device_name()", lambda *a, **k: props.name)
    capability = (getattr(props, "major", 0), getattr(props, "minor", 0))
    patch(torch_cuda, "get_device_capability", "torch.cuda.get_device_capability()", lambda *a, **k: capability)
    optin = getattr(props, "shared_memory_per_block_optin", None)
    with contextlib.suppress(ImportError):
        from tilelang.carver.arch import driver
        from tilelang.carver.arch.driver import cuda_driver

        for owner in (cuda_driver, driver):
            patch(owner, "get_cuda_device_properties", "get_cuda_device_properties()", lambda *a, **k: props)
            patch(owner, "get_num_sms", "get_num_sms()", lambda *a, **k: props.multi_processor_count)
            patch(owner, "get_device_name", "get_device_name()", lambda *a, **k: props.name)
            patch(
                owner, "get_max_dynamic_shared_size_bytes", "get_max_dynamic_shared_size_bytes()", lambda *a, **k: optin
            )
    target = tvm.target.Target.current(allow_none=True)
    current = tvm.target.Target.current

    def asked_for_target(allow_none: bool = True) -> Any:
        if sys._getframe(1).f_code.co_name == "determine_target":
            _note(profile, "determine_target()")
        return current(allow_none)

    tvm.target.Target.current = staticmethod(asked_for_target)
    try:
        if target is None:
            with cuda_target(profile.target):
                yield
        else:
            yield
    finally:
        tvm.target.Target.current = staticmethod(current)
        for owner, name, original in reversed(patches):
            setattr(owner, name, original)
