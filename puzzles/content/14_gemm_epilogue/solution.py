"""GEMM with a fused epilogue, C = relu(A @ B + bias): the bias add and the ReLU run on the
accumulator in registers, before the single store of C, instead of as two more passes over C.

Speed (H200, 8192^3: 0.96x the time of torch.relu(torch.addmm(bias, A, B)) in the search run):
puzzle 13's pipelined 128 x 256 x 64 tiles, with `T.use_swizzle(10)` so blocks running together
share their A and B tiles in L2; the epilogue costs nothing extra, as it runs in registers.
"""

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
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j] + T.cast(bias[bx * block_N + j], accum_dtype), 0)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
