"""The sizes a file runs: the run-along from ``__main__`` through the file's own functions (``flow.py``).

Each fixture is a small program in one of the shapes TileLang's examples take; the values must be
the ones ``python FILE`` would build the kernel with, or stay unknown where the path depends on
something the source does not say.
"""

from __future__ import annotations

import ast

import pytest
from tilescope.core.compiler.discovery import instantiations
from tilescope.core.static import analyze_source
from tilescope.core.static.enums import int_enums
from tilescope.core.static.evaluate import evaluate

HEAD = """import argparse
import itertools

import tilelang
import tilelang.language as T
import torch


@tilelang.jit(out_idx=[-1])
def copy(M, N, block_M=32, dtype=T.float16):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            S = T.alloc_shared((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], S)
            T.copy(S, B[bx * block_M, 0])

    return main

"""


def bound(source: str, kernel: str = "copy") -> dict[str, tuple[object, str, int | None]]:
    found = next(k for k in analyze_source(source).kernels if k.ref.name == kernel)
    return {b.name: (b.value, b.origin, b.line) for b in found.bindings}


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.split("\n"), 1) if text in line)


def test_argparse_defaults_reach_the_kernel_through_main_and_a_wrapper() -> None:
    source = (
        HEAD
        + """
def run(rows, cols):
    kernel = copy(rows * 2, cols)
    return kernel


def main(batch=1, dim=64):
    run(batch, dim)


def run_regression_perf(batch=8, dim=8):
    run(batch, dim)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=132)
    parser.add_argument("--dim", type=int, default=256)
    args = parser.parse_args()
    main(args.batch, dim=args.dim)
"""
    )
    found = bound(source)
    call = line_of(source, "kernel = copy(rows * 2, cols)")
    assert found["M"] == (264, "call", call) and found["N"] == (256, "call", call)
    assert found["block_M"][:2] == (32, "default")
    (inst,) = instantiations(source)
    assert inst.args == {"M": 264, "N": 256} and inst.sources["M"] == "call"


def test_an_autograd_function_runs_forward_with_the_shapes_of_its_tensors() -> None:
    source = (
        HEAD
        + """
class _Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        def maybe_contiguous(t):
            if t.stride(-1) != 1:
                return t.contiguous()
            return t

        x = maybe_contiguous(x)
        rows, cols = x.shape
        dtype = T.float16 if x.dtype == torch.float16 else T.bfloat16
        return copy(rows, cols, dtype=dtype)(x)


copy_op = _Copy.apply


def main():
    x = torch.empty(4, 512, 128, dtype=torch.bfloat16, device="cuda").normal_().view(2048, 128)
    y = torch.randn(2048, 128, dtype=torch.bfloat16, device="cuda").requires_grad_()
    copy_op(y)


if __name__ == "__main__":
    main()
"""
    )
    found = bound(source)
    assert found["M"][:2] == (2048, "call") and found["N"][:2] == (128, "call")
    assert found["dtype"][:2] == ("bfloat16", "call")


def test_backward_of_an_autograd_function_runs_with_what_forward_saved() -> None:
    source = (
        HEAD
        + """
class _Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, block):
        rows, cols = x.shape
        ctx.block = block
        ctx.save_for_backward(x)
        return copy(rows, cols, block_M=block)(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return copy(x.shape[1], x.shape[0], block_M=ctx.block * 2)(grad)


def main():
    x = torch.randn(256, 64, device="cuda", requires_grad=True)
    y = _Copy.apply(x, 16)
    y.backward(torch.ones_like(x))


if __name__ == "__main__":
    main()
"""
    )
    reached = [(i.args["M"], i.args["N"], i.args.get("block_M")) for i in instantiations(source)]
    assert reached == [(256, 64, 16)]  # the first call: forward's
    from tilescope.core.static.context import module_context
    from tilescope.core.static.flow import reached_calls
    from tilescope.core.static.recover import parse_tolerant

    parsed = parse_tolerant(source)
    calls = reached_calls(module_context(parsed.blocks, parsed.lines, "sm_90"), frozenset({"copy"}))["copy"]
    assert [tuple(c.env.values()) for c in calls] == [(256, 64, 16), (64, 256, 32)]
    assert [c.via for c in calls] == [("main", "forward"), ("main", "backward")]


def test_a_loop_over_sizes_builds_its_first_iteration_first() -> None:
    source = HEAD + (
        "\nif __name__ == '__main__':\n"
        "    for m in [256, 512]:\n"
        "        for n in range(64, 256, 64):\n"
        "            copy(m, n, block_M=64)\n"
    )
    found = bound(source)
    assert (found["M"][0], found["N"][0], found["block_M"][0]) == (256, 64, 64)


def test_an_unknown_test_around_the_call_stops_and_an_unknown_branch_forgets_what_it_assigns() -> None:
    around = HEAD + "\nif __name__ == '__main__':\n    if torch.cuda.is_available():\n        copy(128, 128)\n"
    found = bound(around)  # the call in the file is still a call site, but not one the run reached
    assert found["M"][:2] == (128, "call")
    forgot = HEAD + (
        "\nif __name__ == '__main__':\n"
        "    M = 1024\n"
        "    if torch.cuda.get_device_capability()[0] >= 9:\n"
        "        M = 4096\n"
        "    copy(M, 64)\n"
    )
    found = bound(forgot)
    assert found["M"][:2] == (None, "unknown") and found["N"][:2] == (64, "call")
    assert "M" in [m for inst in instantiations(forgot) for m in inst.missing]


def test_a_helper_whose_ways_agree_has_a_value_and_one_whose_ways_differ_has_none() -> None:
    source = HEAD + (
        "\ndef block_for(n):\n"
        "    if not torch.cuda.is_available():\n"
        "        raise RuntimeError('no GPU')\n"
        "    return 64 if n > 1024 else 32\n"
        "\n\ndef arch_block():\n"
        "    if torch.cuda.get_device_capability()[0] >= 9:\n"
        "        return 128\n"
        "    return 64\n"
        "\n\nif __name__ == '__main__':\n"
        "    copy(4096, arch_block(), block_M=block_for(4096))\n"
    )
    found = bound(source)
    assert found["block_M"][:2] == (64, "call")
    assert found["N"][:2] == (None, "unknown")


def test_config_dicts_lists_of_sizes_and_string_parsing() -> None:
    source = HEAD + (
        "\ndef grouped(batch_sizes_list, K, block_M=64):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((sum(batch_sizes_list), K), 'float16')):\n"
        "        with T.Kernel(len(batch_sizes_list), threads=128) as bx:\n"
        "            S = T.alloc_shared((block_M, K), 'float16')\n"
        "            T.copy(A[bx * block_M, 0], S)\n"
        "\n    return main\n"
        "\n\nif __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--sizes', type=str, default='64,128,256')\n"
        "    args = parser.parse_args()\n"
        "    config = {'M': 512, 'N': 256}\n"
        "    config['block_M'] = 128\n"
        "    copy(**config)\n"
        "    grouped([int(s.strip()) for s in args.sizes.split(',') if s.strip()], 4096)\n"
    )
    found = bound(source)
    assert (found["M"][0], found["N"][0], found["block_M"][0]) == (512, 256, 128)
    assert bound(source, "grouped")["batch_sizes_list"][:2] == ((64, 128, 256), "call")
    inst = next(i for i in instantiations(source) if i.kernel.name == "grouped")
    assert inst.args["batch_sizes_list"] == [64, 128, 256]


def test_an_autotuned_kernel_takes_config_zero_of_a_configs_function() -> None:
    source = (
        HEAD.replace(
            "@tilelang.jit(out_idx=[-1])",
            "def get_configs(M):\n"
            "    blocks = [32, 64] if M >= 1024 else [16]\n"
            "    return [{'block_M': b, 'threads': t} for b, t in itertools.product(blocks, [128, 256])]\n"
            "\n\n@tilelang.autotune(configs=get_configs)\n@tilelang.jit(out_idx=[-1])",
        )
        + "\nif __name__ == '__main__':\n    copy(2048, 64)\n"
    )
    found = bound(source)
    assert found["block_M"][:2] == (32, "autotune config 0")
    passing = source.replace("copy(2048, 64)", "copy(2048, 64, block_M=128)")
    assert bound(passing)["block_M"][:2] == (128, "call")  # a tunable passed: TileLang tunes nothing


def test_values_computed_from_known_constants() -> None:
    env = {"storage_dtype": "int8", "SEQ": 256}

    def value(text: str) -> object:
        return evaluate(ast.parse(text, mode="eval").body, env, frozenset({"T"}))

    assert value('int("".join(c for c in storage_dtype if c.isdigit()))') == 8
    assert value('"".join(c for c in storage_dtype if not c.isdigit())') == "int"
    assert value("math.ceil(SEQ / 64)") == 4
    assert value("torch.randn(4, 5, dtype=torch.float16).float().dtype") == "float32"
    assert value("(2 * torch.rand(8, 16) - 1).size(1)") == 16
    assert str(value('int("x" + storage_dtype)')).startswith("int(")  # not a number: unknown
    assert value("torch.tensor([2048, 6144], dtype=torch.int32).max()") == 6144
    assert value("len((64, 128, 256)) + sum((64, 128, 256))") == 451
    assert isinstance(value("torch.tensor([2048, 6144]).normal_().max()"), type(value("x")))  # values replaced


def test_tilelangs_fp8_type_is_known_for_a_cuda_target() -> None:
    source = HEAD.replace("import torch\n", "import torch\nfrom tilelang.language.fp8 import determine_fp8_type\n")
    source += "\nif __name__ == '__main__':\n    copy(64, 64, dtype=determine_fp8_type('e5m2'))\n"
    assert bound(source)["dtype"][:2] == ("float8_e5m2", "call")


def test_an_enum_of_tilelang_is_its_number() -> None:
    if not int_enums().get("GemmWarpPolicy"):
        pytest.skip("no TileLang install to read the enum from")
    source = HEAD.replace(
        "def copy(M, N, block_M=32, dtype=T.float16):", "def copy(M, N, policy, block_M=32, dtype=T.float16):"
    )
    source += "\nif __name__ == '__main__':\n    copy(64, 64, T.GemmWarpPolicy.FullRow)\n"
    assert bound(source)["policy"][:2] == (1, "call")


def test_a_value_passed_that_only_a_run_knows_is_no_default() -> None:
    """``copy(M, N, block_M=x.shape[0])`` and ``copy(M, N, **config())``: the parameter's default is not what
    the program builds, so the value stays unknown (a dry run, or a directive, gives it)."""
    source = HEAD + (
        "\n\ndef heuristic():\n"
        "    return {'block_M': 64} if torch.cuda.get_device_capability()[0] >= 9 else {}\n"
        "\n\nif __name__ == '__main__':\n"
        "    x = torch.load('x.pt')\n"
        "    copy(512, 256, block_M=x.shape[0])\n"
    )
    found = bound(source)
    assert (found["M"][:2], found["block_M"][:2], found["dtype"][1]) == ((512, "call"), (None, "passed"), "default")
    spread = source.replace("copy(512, 256, block_M=x.shape[0])", "copy(512, 256, **heuristic())")
    found = bound(spread)
    assert (found["block_M"][:2], found["dtype"][:2]) == ((None, "passed"), (None, "passed"))
    known = source.replace("copy(512, 256, block_M=x.shape[0])", "copy(512, 256, **{'block_M': 16})")
    assert bound(known)["block_M"][:2] == (16, "call")
