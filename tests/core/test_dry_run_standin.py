"""The corpus ground truth's recording mode: stand-in compiles let a CPU run reach its later kernels."""

from __future__ import annotations

import sys
from pathlib import Path

from tilescope.core.record.recorder import record

KERNELS = """\
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def double(N, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2.0

    return main


@tilelang.jit
def rows(A, factor):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float16")
    B = T.empty((M,), "float16")
    with T.Kernel(M, threads=128) as bx:
        B[bx] = A[bx, 0] * factor
    return B
"""

PROGRAM = """\
import torch
from tilelang.profiler import do_bench

from kernels import double, rows

x = torch.randn(4096, device="cuda")
y = double(4096)(x)
torch.testing.assert_close(y, x * 2)  # the stand-in returned zeros: checks are off while recording
assert y.shape == (4096,)
print("latency", do_bench(lambda: double(4096)(x)))
z = rows(y.view(64, 64).half(), 0.5)
print("shape", tuple(z.shape), z.dtype)
"""


def test_a_cpu_run_goes_past_its_first_compile_to_the_next_kernel(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "run.py").write_text(PROGRAM)
    env = {"TILESCOPE_RECORD_CPU_TENSORS": "1", "TILESCOPE_RECORD_STAND_IN": "1"}
    code, lines = record([sys.executable, "-O", "run.py"], tmp_path, timeout_s=300, env=env, idle_s=60)
    instances = [x for x in lines if x.get("event") == "instance"]
    assert code == 0, lines
    assert [(x["kernel"], x["args"]) for x in instances] == [("double", {"N": 4096}), ("rows", {"factor": 0.5})]
    assert instances[1]["consts"] == {"M": 64, "N": 64}  # from the stand-in's output, shaped (4096,) like B
    assert [x for x in lines if x.get("event") == "exit"] == [{"pid": lines[-1]["pid"], "event": "exit", "error": None}]


def test_without_stand_ins_the_run_stops_at_its_first_compile(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "run.py").write_text(PROGRAM)
    code, lines = record([sys.executable, "run.py"], tmp_path, timeout_s=300, env={"TILESCOPE_RECORD_CPU_TENSORS": "1"})
    assert code != 0
    assert [x["kernel"] for x in lines if x.get("event") == "instance"] == ["double"]
