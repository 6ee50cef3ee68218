"""GEMM with a fused epilogue, C = relu(A @ B + bias). Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        bias: T.Tensor((N,), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            # Your code: the pipelined GEMM of puzzle 13; before storing, add
            # bias[column] to the accumulator and clamp at zero, in a T.Parallel over the tile.
            pass

    return main
