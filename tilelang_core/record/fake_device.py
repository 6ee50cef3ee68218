"""A fake GPU (or NPU) for the programs Tilescope runs on the user's behalf, on a machine without one.

Real kernel libraries size their kernels from tensors made on ``cuda``, guard their tests with
``torch.cuda.is_available()`` and read the device's properties. The dry run and ``tilescope record``
on a CPU set ``TILESCOPE_FAKE_DEVICE`` to a device profile (JSON: the recorded GPU, else the
target's usual part, ``targets.PARTS``) and the record hook applies the patches here as torch and
TileLang are imported: ``torch.cuda`` answers from the profile; a tensor asked for on ``cuda`` (or
``npu``) is made on torch's ``meta`` device, shape and dtype only, never allocated, and reports
itself as ``cuda:0``; TileLang's device queries (``get_num_sms``, ``determine_target``, the
compute version) answer likewise. Where the program needs a value such a tensor does not hold
(``.item()``, a branch on a tensor, ``.cpu()``, ``.numpy()``) it raises ``ShapeOnly``, which the
hook reports with the program's line. Nothing here ever touches a real device.

The device queries' answers are ``fake_queries``; which calls carry values the program knows (made
for real on the CPU) is ``fake_values``. Copied next to the record hook (``tilescope_fake_device``);
it must import nothing of Tilescope, and torch and TileLang only as the modules the hook hands it.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import types
from typing import Any

try:
    # Written beside the record hook at run time, so the checker cannot resolve them.
    import tilescope_fake_queries as queries  # pyright: ignore[reportMissingImports]
    import tilescope_fake_values as values  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside the hook
    from tilescope.core.record import fake_queries as queries
    from tilescope.core.record import fake_values as values

PROFILE: dict[str, Any] = json.loads(os.environ.get("TILESCOPE_FAKE_DEVICE") or "{}")
"""The device faked: ``kind`` (``cuda`` or ``npu``), ``target`` (``sm_90``) and the properties
``torch.cuda.get_device_properties`` has (``name``, ``major``, ``multi_processor_count``...)."""
_inside = threading.local()
ZERO_VALUES = os.environ.get("TILESCOPE_FAKE_VALUES") == "zero"
"""The Ascend ground truth's runs only (``benchmarks/ascend/truth.py``): a value read of a shape-only tensor
(``.item()`` of a result check) answers zero instead of stopping the program, so it goes on to its later
kernels; the hook's ``fake-value`` line marks where, so instances built after it can be told apart."""
_ZERO_LIMIT = 1 << 16


class ShapeOnly(RuntimeError):
    """The program needs a value of a tensor the fake device holds only the shape of."""


def short_name() -> str:
    """``H100`` for ``NVIDIA H100 80GB HBM3``: how an argument's source names the fake device."""
    name = str(PROFILE.get("name") or PROFILE.get("target") or "device")
    for prefix in ("NVIDIA ", "AMD Instinct ", "AMD ", "Ascend "):
        name = name.removeprefix(prefix)
    return name.split()[0] if name.split() else name


def patch_torch(torch: Any) -> None:
    """The fake device in torch: ``torch.cuda`` (and ``torch.npu``) answered from the profile, and
    every tensor asked for on the device made on ``meta`` (a ``TorchFunctionMode`` sees every call)."""
    if getattr(torch, "__tilescope_fake_device__", False):
        return
    torch.__tilescope_fake_device__ = True
    meta = torch.device("meta")
    kind = str(PROFILE.get("kind") or "cuda")
    shown = torch.device("cuda", 0) if kind == "cuda" else None
    for name, answer in queries.device_namespace(kind, PROFILE).items():
        with contextlib.suppress(Exception):
            setattr(torch.cuda, name, answer)
    if kind == "npu":
        shown = _fake_npu(torch)
    torch.Generator = _generator(torch)
    mode = _function_mode(torch, meta)
    _shown_device(torch, kind, shown)
    set_default_device = torch.set_default_device
    torch.set_default_device = lambda device: set_default_device(values.meta_if_device(device, meta))
    mode().__enter__()


def _mixes(args: Any, tensor_type: Any) -> bool:
    """Whether a call's operands mix a shape-only tensor with one that holds values: torch computes some
    such calls on the CPU (``einsum`` of a ``meta`` and a CPU tensor allocates the whole CPU result), where
    on the device the result would be the device's, so shape-only."""
    operands = [a for a in args if isinstance(a, tensor_type)]
    for item in args:
        if isinstance(item, list | tuple):
            operands.extend(a for a in item if isinstance(a, tensor_type))
    kinds = {a.is_meta for a in operands}
    return len(kinds) == 2


def _in_place(name: str) -> bool:
    """A call that writes into its first operand (``add_``, ``x[i] = y``, ``copy_``): moving it would lose the write."""
    return (name.endswith("_") and not name.startswith("__")) or name.startswith("__i") or name == "__setitem__"


def _generator(torch: Any) -> Any:
    """``torch.Generator(device="cuda")``, seeding a program's random inputs: a CPU generator (a shape-only
    tensor draws nothing; a small one made with its values draws on the CPU)."""

    class Generator(torch._C.Generator):
        def __new__(cls, device: Any = None) -> Any:
            return super().__new__(cls, device="cpu" if values.on_device(device) else device)

    Generator.__module__ = "torch"
    return Generator


def _function_mode(torch: Any, meta: Any) -> Any:
    """The ``TorchFunctionMode`` that sees every torch call: device tensors on ``meta``, values the program
    gave kept on the CPU, a value read of a shape-only tensor stopped (or answered zero)."""
    tensor_type = torch.Tensor

    def needs_values(what: str) -> ShapeOnly:
        return ShapeOnly(f"{what} needs a value of a tensor the fake {short_name()} holds only the shape of")

    def move_to_meta(value: Any) -> Any:
        if isinstance(value, tensor_type) and value.device.type != "meta":
            return value.to(meta)
        return value

    def keep_values(func: Any, name: str, args: Any, kwargs: dict[str, Any]) -> Any:
        """The call made on the CPU, its result reporting the device (a copy: the CPU original stays as it was)."""
        kwargs.pop("device", None)
        rest = [a for a in args if not (isinstance(a, str | torch.device) and values.on_device(a))]
        made = rest[0] if name in ("cuda", "npu") else func(*rest, **kwargs)
        if isinstance(made, tensor_type):
            made = made.clone() if name in ("cuda", "npu", "to") and made is args[0] else made
            made.__tilescope_on_device__ = True
        return made

    class FakeDevice(torch.overrides.TorchFunctionMode):
        """Device tensors on ``meta``; a call that mixes them with CPU tensors is retried all on ``meta``."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if values.carries_values(name, args, kwargs, tensor_type):  # its values are known: kept, on the CPU
                return keep_values(func, name, args, kwargs)
            if "device" in kwargs:
                kwargs["device"] = values.meta_if_device(kwargs["device"], meta)
            if name in ("cuda", "npu") and args and isinstance(args[0], tensor_type):
                return args[0].to(meta)
            if name == "pin_memory":
                return args[0]
            if name == "backward" and args and getattr(args[0], "is_meta", False):
                try:  # through autograd: a custom Function's backward builds its kernels
                    return func(*args, **kwargs)
                except (RuntimeError, NotImplementedError):
                    with self:  # the program's backward code sees the fake device, as its forward did
                        return _shape_only_backward(torch, args[0])
            if name in ("to", "_to_copy", "new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"):
                args = tuple(values.meta_if_device(a, meta) if isinstance(a, str | torch.device) else a for a in args)
            like_other = name == "to" and len(args) > 1 and isinstance(args[1], tensor_type)
            if like_other and getattr(args[0], "is_meta", False):
                args = (args[0], meta, args[1].dtype, *args[2:])  # ``x.to(other)``: other's dtype, on the device
            if name in values.NEEDS_VALUES and args and isinstance(args[0], tensor_type) and args[0].is_meta:
                if ZERO_VALUES and args[0].numel() <= _ZERO_LIMIT:
                    return _zero(torch, name, args[0])
                raise needs_values(f"`.{name.strip('_')}()`" if not name.startswith("__") else "a branch on a tensor")
            if _mixes(args, tensor_type) and not _in_place(name):  # torch may compute such a call on the CPU
                args, kwargs = torch.utils._pytree.tree_map(move_to_meta, (args, kwargs))
            _inside.depth = getattr(_inside, "depth", 0) + 1
            try:
                return func(*args, **kwargs)
            except (RuntimeError, NotImplementedError) as err:
                text = str(err)
                if "meta" in text and ("device" in text or "expected" in text.lower()):
                    args, kwargs = torch.utils._pytree.tree_map(move_to_meta, (args, kwargs))
                    return func(*args, **kwargs)
                if ZERO_VALUES and name in ("equal", "allclose"):
                    _marked()
                    return True
                no_data = "meta tensor" in text and ("item()" in text or "no data" in text)
                if no_data or "no fake impl or Meta kernel" in text:  # an output sized by values (``bincount``)
                    raise needs_values(f"`{name}`") from None
                raise
            finally:
                _inside.depth -= 1

    return FakeDevice


def _shape_only_backward(torch: Any, root: Any) -> None:
    """``loss.backward()`` of a shape-only ``loss`` where autograd could not run it (a step that needs values,
    a leaf kept with its values on the CPU). The graph is walked from ``loss`` in autograd's order: a custom
    ``autograd.Function``'s backward is called with shape-only gradients of the shapes autograd recorded (a
    library's backward kernels are built there); every leaf reached without a ``.grad`` gets one of its own
    shape and dtype. A shape-only leaf's is shape-only; a leaf kept on the CPU (a small tensor made with its
    values) cannot hold one, and gets zeros: its gradient's values are not known."""
    for node in _backward_order(root.grad_fn):
        function = getattr(node, "_forward_cls", None)
        if function is not None:
            grads = [torch.empty(tuple(m.shape), dtype=m.dtype, device="meta") for m in node._input_metadata]
            function.backward(node, *grads)
        leaf = getattr(node, "variable", None)  # an ``AccumulateGrad``: the leaf it accumulates into
        if leaf is not None and leaf.grad is None:
            leaf.grad = torch.empty_like(leaf, device="meta") if leaf.is_meta else torch.zeros_like(leaf, device="cpu")


def _backward_order(start: Any) -> list[Any]:
    """The nodes of an autograd graph from ``start``, each before every node its gradients flow into."""
    done: set[Any] = set()
    order: list[Any] = []
    stack: list[tuple[Any, bool]] = [(start, False)]
    while stack:
        node, expanded = stack.pop()
        if node is None:
            continue
        if expanded:
            order.append(node)
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        stack.extend((following, False) for following, _ in node.next_functions if following not in done)
    return order[::-1]


def _shown_device(torch: Any, kind: str, shown: Any) -> None:
    """A shape-only tensor reports itself on the faked device (``cuda:0``), outside torch's own code."""
    tensor_type = torch.Tensor
    real_device = torch._C.TensorBase.device

    def device(self: Any) -> Any:
        """``cuda:0`` for a shape-only tensor, outside torch's own code (which must see ``meta``)."""
        found = real_device.__get__(self)
        if getattr(_inside, "depth", 0):
            return found
        return shown if found.type == "meta" or getattr(self, "__tilescope_on_device__", False) else found

    tensor_type.device = property(device)
    tensor_type.is_cuda = property(lambda self: kind == "cuda" and self.device.type == "cuda")


def _marked() -> None:
    """Tell the record that a value was made up here (``ZERO_VALUES``): later instances ran past it."""
    hook = sys.modules.get("tilescope_hook_lines")
    write = getattr(hook, "write", None)
    if callable(write):
        with contextlib.suppress(Exception):
            write({"event": "fake-value"})


def _zero(torch: Any, name: str, tensor: Any) -> Any:
    """The zero a value read of a shape-only ``tensor`` answers under ``ZERO_VALUES``."""
    _marked()
    if name == "__bool__":
        return True  # a check such as ``if not torch.allclose(...)``: the program takes the passing branch
    if name in ("item", "__int__", "__float__", "__index__"):
        return 0 if name in ("__int__", "__index__") or not tensor.dtype.is_floating_point else 0.0
    zeros = torch.zeros(tuple(tensor.shape), dtype=tensor.dtype, device="cpu")
    if name == "tolist":
        return zeros.tolist()
    if name == "numpy":
        return zeros.numpy()
    return zeros


def _fake_npu(torch: Any) -> Any:
    """``torch.npu`` and ``import torch_npu`` (Ascend), when the real ``torch_npu`` is absent: ``npu``
    becomes a device name torch parses, tensors asked for on it are shape-only, queries answer from the profile."""
    with contextlib.suppress(Exception):
        torch.utils.rename_privateuse1_backend("npu")
    npu = types.ModuleType("torch.npu")
    for name, answer in queries.device_namespace("npu", PROFILE).items():
        setattr(npu, name, answer)
    torch.npu = npu
    sys.modules["torch.npu"] = npu
    if importlib.machinery.PathFinder.find_spec("torch_npu") is None:
        fake = types.ModuleType("torch_npu")
        fake.npu = npu  # type: ignore[attr-defined]
        fake.__version__ = "fake"  # type: ignore[attr-defined]
        sys.modules["torch_npu"] = fake
        sys.modules["torch_npu.npu"] = npu
    torch.Tensor.npu = lambda self, *args, **kwargs: self.to("npu")
    torch.Tensor.is_npu = property(lambda self: self.device.type == "npu")
    return torch.device("npu", 0)


def patch_driver(module: Any) -> None:
    """TileLang's ``carver.arch.driver`` (and its ``cuda_driver``): the queries that read ``libcudart``."""
    props = queries.Properties(PROFILE)
    answers = {
        "get_cuda_device_properties": lambda *a, **k: props,
        "get_device_name": lambda *a, **k: props.name,
        "get_num_sms": lambda *a, **k: props.multi_processor_count,
        "get_shared_memory_per_block": lambda *a, **k: props.shared_memory_per_block,
        "get_max_dynamic_shared_size_bytes": lambda *a, **k: getattr(props, "shared_memory_per_block_optin", None),
        "get_registers_per_block": lambda *a, **k: getattr(props, "regs_per_multiprocessor", 65536),
        "get_persisting_l2_cache_max_size": lambda *a, **k: getattr(props, "L2_cache_size", 0),
    }
    for name, answer in answers.items():
        if hasattr(module, name):
            setattr(module, name, answer)


def target() -> dict[str, str]:
    """The target TileLang would detect on the faked device."""
    arch = str(PROFILE.get("target") or "sm_90")
    if arch.startswith("gfx"):
        return {"kind": "hip", "mcpu": arch}
    return {"kind": "cuda", "arch": arch if arch.startswith("sm_") else "sm_90"}  # an NPU's kernels still lower


def patch_target(module: Any) -> None:
    """``tilelang.backend.target``: ``determine_target("auto")`` finds the faked device."""
    if hasattr(module, "auto_detect_target"):
        module.auto_detect_target = lambda *a, **k: target()


def patch_nvcc(module: Any) -> None:
    """``tilelang.contrib.nvcc``: the compute version of the faked device where no target names one."""
    original = getattr(module, "get_target_compute_version", None)
    if original is None:
        return

    def get_target_compute_version(target: Any = None) -> str:
        try:
            return original(target)
        except ValueError:
            return f"{int(PROFILE.get('major', 9))}.{int(PROFILE.get('minor', 0))}"

    module.get_target_compute_version = get_target_compute_version


def patch_triton(module: Any) -> None:
    """``triton.runtime.jit``: a Triton kernel a program launches (``kernel[grid](...)``, its autotuner's
    and heuristics' too) stands in like a compiled TileLang kernel: nothing is compiled, benchmarked or
    run, and its outputs, made by the caller, stay shape-only. Triton's driver needs ``libcuda`` and a
    device; the helpers of libraries such as FLA that sit between a program and its TileLang kernels are
    Triton kernels."""
    interface = getattr(module, "KernelInterface", None)
    if interface is None:
        return

    def launch(self: Any, grid: Any) -> Any:
        return lambda *args, **kwargs: None

    interface.__getitem__ = launch


class NpuFinder(importlib.abc.MetaPathFinder):
    """``import torch_npu`` where it is not installed: import torch, whose patch puts the fake in place."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch_npu" or "torch_npu" in sys.modules:
            return None
        sys.meta_path.remove(self)
        try:
            if importlib.machinery.PathFinder.find_spec(name) is not None:
                return None
            import torch  # noqa: F401  (its patch makes the fake torch_npu)
        finally:
            sys.meta_path.append(self)
        return importlib.machinery.ModuleSpec(name, _Installed())


class _Installed(importlib.abc.Loader):
    """Hands back the fake ``torch_npu`` module the torch patch put in ``sys.modules``."""

    def create_module(self, spec: Any) -> Any:
        return sys.modules["torch_npu"]

    def exec_module(self, module: Any) -> None:
        return None
