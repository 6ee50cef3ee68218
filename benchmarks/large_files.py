"""The large files the large-file benchmark and tests edit: 1,104 kernels in about 1 MB, and
100,000 one-line statements below one kernel (generated, so nothing large is committed)."""

from __future__ import annotations

HEADER = '"""Many GEMM variants in one file."""\n\nimport tilelang\nimport tilelang.language as T\n\n'
KERNEL = '''
# tilescope: M=1024 N=1024 K=1024
def matmul_{i}(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    """Variant {i}: three pipeline stages, fp32 accumulation, one 128 by 128 tile per block."""

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main

'''
KERNELS = 1104
LINES = 100_000


def many_kernels(count: int = KERNELS) -> str:
    """``count`` kernels, one top-level block each (1,104 make about 1 MB)."""
    return HEADER + "".join(KERNEL.format(i=i) for i in range(count))


def many_lines(count: int = LINES) -> str:
    """One kernel, then ``count`` one-line top-level statements."""
    return HEADER + KERNEL.format(i=0) + "".join(f"value_{i} = {i} * 2\n" for i in range(count))
