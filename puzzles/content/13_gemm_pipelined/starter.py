"""Pipelined GEMM. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            # Your code: the tiled GEMM of puzzle 12, with the K loop written as
            # T.Pipelined(..., num_stages=num_stages); stage C through shared memory on the way out.
            pass

    return main
