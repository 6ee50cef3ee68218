"""The device queries a program asks of ``torch.cuda`` (or ``torch.npu``), answered from the fake device's
profile: properties, capability, memory, streams and events that record nothing. Part of the fake
device, copied beside the record hook (``tilescope_fake_queries``): it must import nothing of
Tilescope, nor torch.
"""

from __future__ import annotations

import contextlib
from typing import Any

_GIB = 1 << 30


class Properties:
    """What ``torch.cuda.get_device_properties`` returns, from the profile."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.name = str(values.get("name") or "NVIDIA GPU")
        self.multi_processor_count = int(values.get("multi_processor_count") or 132)
        self.shared_memory_per_block = int(values.get("shared_memory_per_block") or 49152)
        self.max_threads_per_block = 1024
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.__dict__.update({k: v for k, v in values.items() if k not in ("kind", "target")})
        self.total_memory = int(values.get("total_memory") or 80 * _GIB)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"_CudaDeviceProperties({fields})"


class Event:
    """``torch.cuda.Event``: records nothing; every interval is a millisecond (the dry run times nothing)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        return None

    def record(self, *args: Any, **kwargs: Any) -> None:
        return None

    def wait(self, *args: Any, **kwargs: Any) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True

    def elapsed_time(self, other: Any) -> float:
        return 1.0


class Stream:
    """``torch.cuda.Stream``: a context that changes nothing."""

    cuda_stream = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.device = "cuda:0"

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def wait_stream(self, *args: Any) -> None:
        return None

    def wait_event(self, *args: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> Any:
        return event if event is not None else Event()

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True


def _returns(value: Any) -> Any:
    """A new function answering ``value`` (each its own object: ``torch._dynamo`` refuses one function
    standing for two of torch's)."""

    def answer(*args: Any, **kwargs: Any) -> Any:
        return value

    return answer


def device_namespace(kind: str, profile: dict[str, Any]) -> dict[str, Any]:
    """The functions of ``torch.cuda`` (or ``torch.npu``) a program asks, answered from ``profile``."""
    props = Properties(profile)
    capability = (int(profile.get("major", 9)), int(profile.get("minor", 0)))
    total = props.total_memory
    stream = Stream()
    answers = {
        "is_available": True,
        "is_initialized": True,
        "device_count": 1,
        "current_device": 0,
        "get_device_properties": props,
        "get_device_capability": capability,
        "get_device_name": props.name,
        "get_arch_list": [f"sm_{capability[0]}{capability[1]}"] if kind == "cuda" else [],
        "is_bf16_supported": True,
        "current_stream": stream,
        "default_stream": stream,
        "stream": stream,
        "device": contextlib.nullcontext(),
        "mem_get_info": (total, total),
    }
    nothing = ("_lazy_init", "init", "set_device", "synchronize", "reset_peak_memory_stats", "empty_cache")
    answers.update(dict.fromkeys(("memory_allocated", "max_memory_allocated", "memory_reserved"), 0))
    answers.update(dict.fromkeys((*nothing, "manual_seed", "manual_seed_all", "seed"), None))
    return {"Event": Event, "Stream": Stream, **{name: _returns(value) for name, value in answers.items()}}
