"""Tiled GEMM, C = A @ B in fp16 with an fp32 accumulator: tiles of A and B are staged in
shared memory and multiplied on the tensor cores by `T.gemm`, one K step at a time.

Speed (H200, 4096^3: about 2x cuBLAS's time; puzzle 13's pipelining closes the rest of the gap):
- 128 x 128 tiles of C with K steps of 64 and 256 threads (two warpgroups, each issuing Hopper's
  wgmma on its half of the tile): a K step of 64 halves the number of copy/multiply turns of 32.
"""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
