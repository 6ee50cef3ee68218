"""The interpreter computes what TileLang's rules say, and reports bad accesses exactly."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

from tests.interpret.conftest import Build, line_of

COPY_RAGGED = """
def kernel(M, N, block=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            s = T.alloc_shared((block, block), "float32")
            T.copy(A[by * block, bx * block], s)
            T.copy(s, B[by * block, bx * block])
    return main
"""


def test_copy_masks_ragged_edges_like_tilelang(build: Build) -> None:
    kernel, _ = build(COPY_RAGGED, M=45, N=70)
    a = torch.randn(45, 70)
    b = torch.full((45, 70), float("nan"))
    run = kernel(a, b, outputs={"B"})
    assert torch.equal(a, b)
    assert run.findings == [] and run.unwritten == {"B": 0}


def test_reads_past_a_shared_tile_are_reported_with_index_and_line(build: Build) -> None:
    kernel, path = build(
        """
        def kernel(N, block=64):
            @T.prim_func
            def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
                with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
                    w = T.alloc_shared((block,), "float32")
                    T.copy(X[bx * block], w)
                    for i in T.Parallel(block):
                        Y[bx * block + i] = w[i + 1]  # past the end
            return main
        """,
        N=100,
    )
    run = kernel(torch.randn(100), torch.empty(100), outputs={"Y"})
    (finding,) = run.findings
    assert (finding.kind, finding.buffer, finding.index, finding.shape) == ("out-of-bounds-read", "w", [64], [64])
    assert finding.line == line_of(path, "past the end") and finding.count == 2


def test_global_accesses_are_guarded_unless_the_kernel_turns_the_guard_off(build: Build) -> None:
    source = """
    def kernel(N, guard):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=64):
                for i in T.Parallel(64):
                    B[i] = A[i]
        return main if guard else main.with_attr("tilelang_pass_configs", {"tl.disable_safe_memory_legalize": True})
    """
    guarded, _ = build(source, N=10, guard=True)
    a = torch.randn(10)
    b = torch.empty(10)
    assert guarded(a, b, outputs={"B"}).findings == []
    assert torch.equal(a, b)
    bare, _ = build(source, N=10, guard=False)
    kinds = {(f.kind, f.buffer, tuple(f.index), f.count) for f in bare(a, b, outputs={"B"}).findings}
    assert kinds == {("out-of-bounds-read", "A", (10,), 54), ("out-of-bounds-write", "B", (10,), 54)}


def test_an_uncleared_accumulator_is_an_uninitialised_read(build: Build) -> None:
    kernel, path = build(
        """
        def kernel(M=16, N=16, K=16):
            @T.prim_func
            def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
                with T.Kernel(1, threads=128):
                    a = T.alloc_shared((M, K), "float16")
                    b = T.alloc_shared((K, N), "float16")
                    c = T.alloc_fragment((M, N), "float32")
                    T.copy(A, a)
                    T.copy(B, b)
                    T.gemm(a, b, c)  # accumulates into c
                    T.copy(c, C)
            return main
        """
    )
    run = kernel(torch.randn(16, 16).half(), torch.randn(16, 16).half(), torch.empty(16, 16), outputs={"C"})
    (finding,) = run.findings
    assert (finding.kind, finding.buffer, finding.index, finding.count) == ("uninitialised-read", "c", [0, 0], 256)
    assert finding.line == line_of(path, "accumulates into c")


GEMM = """
def kernel(M, N, K, ta, tb, dtype="float16", accum="float32"):
    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    @T.prim_func
    def main(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared(a_shape, dtype)
            b = T.alloc_shared(b_shape, dtype)
            c = T.alloc_fragment((M, N), accum)
            T.copy(A, a)
            T.copy(B, b)
            T.fill(c, 1)
            T.gemm(a, b, c, transpose_A=ta, transpose_B=tb)
            T.gemm(a, b, c, transpose_A=ta, transpose_B=tb)
            T.copy(c, C)
    return main
"""


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_transposes_and_accumulates(build: Build, ta: bool, tb: bool) -> None:
    kernel, _ = build(GEMM, M=32, N=16, K=48, ta=ta, tb=tb)
    a = torch.randn((48, 32) if ta else (32, 48)).half()
    b = torch.randn((16, 48) if tb else (48, 16)).half()
    c = torch.empty(32, 16)
    assert kernel(a, b, c, outputs={"C"}).findings == []
    lhs = a.float().T if ta else a.float()
    rhs = b.float().T if tb else b.float()
    torch.testing.assert_close(c, 1 + 2 * (lhs @ rhs), atol=1e-4, rtol=1e-5)


def test_reduce_without_clear_combines_with_the_destination(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(M=8, N=40):
            @T.prim_func
            def main(X: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), H: T.Tensor((M,), "float32")):
                with T.Kernel(1, threads=128):
                    x = T.alloc_fragment((M, N), "float32")
                    s = T.alloc_fragment((M,), "float32")
                    h = T.alloc_fragment((M,), "float32")
                    T.copy(X, x)
                    T.fill(s, 10)
                    T.fill(h, 100)
                    T.reduce_sum(x, s, dim=1, clear=False)
                    T.reduce_max(x, h, dim=1, clear=False)
                    T.copy(s, S)
                    T.copy(h, H)
            return main
        """
    )
    x = torch.randn(8, 40)
    s, h = torch.empty(8), torch.empty(8)
    kernel(x, s, h, outputs={"S", "H"})
    torch.testing.assert_close(s, 10 + x.sum(1))
    assert torch.equal(h, torch.full((8,), 100.0))


def test_casts_round_like_the_gpu(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(N=64):
            @T.prim_func
            def main(X: T.Tensor((N,), "float32"), H: T.Tensor((N,), "bfloat16"), E: T.Tensor((N,), "float8_e4m3fn")):
                with T.Kernel(1, threads=64):
                    for i in T.Parallel(N):
                        H[i] = T.cast(X[i], "bfloat16")
                        E[i] = T.cast(X[i] * 100, "float8_e4m3fn")
            return main
        """
    )
    x = torch.randn(64) * 10
    h = torch.empty(64, dtype=torch.bfloat16)
    e = torch.empty(64, dtype=torch.float8_e4m3fn)
    assert kernel(x, h, e, outputs={"H", "E"}).findings == []
    assert torch.equal(h, x.to(torch.bfloat16))
    expected = np.clip((x * 100).numpy(), -448, 448).astype(ml_dtypes.float8_e4m3fn)
    assert np.array_equal(e.view(torch.uint8).numpy(), expected.view(np.uint8))


def test_atomic_add_accumulates_across_blocks(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(M=64, N=16, block=16):
            @T.prim_func
            def main(X: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32")):
                with T.Kernel(M // block, threads=128) as bx:
                    x = T.alloc_fragment((block, N), "float32")
                    s = T.alloc_fragment((N,), "float32")
                    T.copy(X[bx * block, 0], x)
                    T.reduce_sum(x, s, dim=0)
                    T.atomic_add(S, s)
            return main
        """
    )
    x = torch.randn(64, 16)
    s = torch.zeros(16)
    assert kernel(x, s).findings == []
    torch.testing.assert_close(s, x.sum(0))


def test_writing_an_input_is_reported(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(N=32):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
                with T.Kernel(1, threads=32):
                    for i in T.Parallel(N):
                        B[i] = A[i]
                        A[i] = 0
            return main
        """
    )
    run = kernel(torch.randn(32), torch.empty(32), outputs={"B"})
    assert [(f.kind, f.buffer, f.count) for f in run.findings] == [("input-write", "A", 32)]


def test_per_thread_code_runs_each_thread_with_its_own_locals_and_warp_shuffles(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(N=256):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), S: T.Tensor((N // 32,), "float32")):
                with T.Kernel(1, threads=N):
                    tx = T.get_thread_binding()
                    acc = T.alloc_local((1,), "float32")
                    acc[0] = A[tx]
                    B[N - 1 - tx] = acc[0] * 2
                    for d in T.serial(5):
                        acc[0] += T.shfl_xor(acc[0], 1 << d)
                    if tx % 32 == 0:
                        S[tx // 32] = acc[0]
            return main
        """
    )
    a = torch.randn(256)
    b, s = torch.empty(256), torch.empty(8)
    assert kernel(a, b, s, outputs={"B", "S"}).findings == []
    assert torch.equal(b, (a * 2).flip(0))
    torch.testing.assert_close(s, a.view(8, 32).sum(1))


def test_what_per_thread_code_cannot_express_is_refused_with_its_line(build: Build) -> None:
    from tilescope.core.interpret import NotInterpretable

    with pytest.raises(NotInterpretable) as caught:
        build(
            """
            def kernel(N=128):
                @T.prim_func
                def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
                    with T.Kernel(1, threads=128):
                        tx = T.get_thread_binding()
                        for j in T.Parallel(N):
                            B[tx, j] = A[tx, j]
                return main
            """
        )
    assert "T.Parallel or vectorised loop in per-thread code" in str(caught.value)
    assert str(caught.value).endswith(f"at line {caught.value.line}") and caught.value.line > 0


def test_element_atomics_land_every_update_even_on_the_same_index(build: Build) -> None:
    kernel, _ = build(
        """
        def kernel(N=96):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32"), H: T.Tensor((4,), "float32")):
                with T.Kernel(3, threads=32) as bx:
                    for i in T.Parallel(32):
                        T.atomic_add(H[i % 4], A[bx * 32 + i])
            return main
        """
    )
    a = torch.randn(96)
    h = torch.zeros(4)
    assert kernel(a, h).findings == []
    torch.testing.assert_close(h, a.view(-1, 4).sum(0))
