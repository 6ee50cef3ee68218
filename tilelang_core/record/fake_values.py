"""Which torch calls of a program run under the fake device put values the program knows on the device:
``torch.tensor([0, 128, 384], device="cuda")``, a small ``zeros`` filled and read back, a CPU tensor
moved with ``.cuda()``. Those are made for real on the CPU (offsets and lengths that size kernels are
read back); every other device tensor is shape-only. Part of the fake device, copied beside the record
hook (``tilescope_fake_values``): it must import nothing of Tilescope, nor torch.
"""

from __future__ import annotations

from typing import Any

NEEDS_VALUES = ("item", "tolist", "numpy", "cpu", "__bool__", "__int__", "__float__", "__index__")
"""Tensor methods that read values: on a shape-only tensor they stop the program (or answer zero)."""


def on_device(value: Any) -> bool:
    """Whether ``value`` names the faked device (``"cuda"``, ``"cuda:0"``, ``torch.device("npu")``, an index)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    text = str(value)
    return text.startswith(("cuda", "npu")) and type(value).__name__ in ("str", "device")


_SMALL = 1 << 20
"""Elements up to which a tensor whose values the program gave (``torch.tensor([0, 128, 384])``, a CPU
tensor moved with ``.cuda()``) keeps them: offsets and lengths that size kernels are read back."""
_GIVEN = ("tensor", "as_tensor", "arange")


_MADE = ("zeros", "ones", "full", "rand", "randn", "randint", "randperm", "eye")
"""Factories whose small results are made for real on the CPU: a ``cu_seqlens`` made with ``zeros``, filled
by the program and read back with ``.item()`` to size a kernel, holds what the program wrote; block
indices drawn with ``randperm`` and written into one are values as well. Not
``empty``: it holds no value the program knows (a kernel's outputs are made with it, shape-only)."""


def carries_values(name: str, args: Any, kwargs: dict[str, Any], tensor_type: Any) -> bool:
    """Whether the call puts values the program knows on the device (small enough to keep on the CPU)."""
    if name in _GIVEN:
        return "device" in kwargs and on_device(kwargs["device"]) and _small(args)
    if name in _MADE:
        count = _made_count(name, args, kwargs)
        return "device" in kwargs and on_device(kwargs["device"]) and count is not None and count <= _SMALL
    if name in ("cuda", "npu", "to") and args and isinstance(args[0], tensor_type) and not args[0].is_meta:
        moved = name != "to" or any(on_device(a) for a in (*args[1:], kwargs.get("device")) if a is not None)
        return moved and args[0].numel() <= _SMALL
    return False


def _made_count(name: str, args: Any, kwargs: dict[str, Any]) -> int | None:
    """The number of elements a factory call makes (``None``: not plain sizes)."""
    if name == "eye":
        n = args[0] if args else kwargs.get("n")
        m = args[1] if len(args) > 1 else kwargs.get("m", n)
        return n * m if isinstance(n, int) and isinstance(m, int) else None
    if name == "randperm":  # randperm(n): a permutation of block indices written into a kept tensor
        n = args[0] if args else kwargs.get("n")
        return n if isinstance(n, int) and not isinstance(n, bool) else None
    if name == "full":
        sizes: Any = args[0] if args else kwargs.get("size")
    elif name == "randint":  # randint(high, size) or randint(low, high, size)
        sizes = next((a for a in args if isinstance(a, list | tuple)), kwargs.get("size"))
    elif "size" in kwargs:
        sizes = kwargs["size"]
    else:
        sizes = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
    if not isinstance(sizes, list | tuple) or not all(isinstance(d, int) and not isinstance(d, bool) for d in sizes):
        return None
    count = 1
    for d in sizes:
        count *= d
    return count


def _small(args: Any) -> bool:
    """A ``torch.tensor`` / ``arange`` call's result is small: its data, or its range, has few elements."""
    first = args[0] if args else None
    if isinstance(first, list | tuple):
        return len(first) <= _SMALL
    bounds = [b for b in map(_number, args) if b is not None]
    return len(bounds) == len(args) and abs(bounds[-1] if bounds else 0) <= _SMALL


def _number(value: Any) -> float | None:
    """A plain number, or a one-element tensor whose value the program knows (on the CPU): ``arange(n)``
    for each ``n`` of ``lengths.unbind()``; ``None`` for anything else (a shape-only tensor's element)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    tensor: Any = value
    if type(tensor).__name__ in ("Tensor", "Parameter") and not tensor.is_meta and tensor.numel() == 1:
        return float(tensor)
    return None


def meta_if_device(value: Any, meta: Any) -> Any:
    """``meta`` for a value naming the faked device, else the value."""
    return meta if value is not None and on_device(value) else value
