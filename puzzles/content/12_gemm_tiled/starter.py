"""Tiled GEMM, C = A @ B in fp16 with an fp32 accumulator. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            # Your code: shared tiles of A (block_M x block_K) and B (block_K x block_N), an
            # fp32 fragment accumulator cleared once, a loop over K tiles that copies both
            # tiles and calls T.gemm, then one copy of the accumulator to C.
            pass

    return main
