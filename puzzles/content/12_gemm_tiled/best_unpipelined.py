"""The fastest GEMM this puzzle's lesson allows, which its three stars are measured against: no
pipelining (the copy and the multiply take turns), tiles staged in shared memory, `T.gemm` on the
tensor cores. 128 x 128 tiles of C with K steps of 64 and 256 threads, blocks rasterised in panels
of 10 (`T.use_swizzle`) so that neighbouring blocks share their A and B strips in L2, and C written
through shared memory in whole 16-byte stores. Fastest of the unpipelined variants timed on an H200
(`benchmarks/tune_references.py`: 347 µs at 4096^3 against 383 µs for the plain tiled loop)."""

import tilelang.language as T


def kernel(M, N, K, block_M=128, block_N=128, block_K=64, panel=10, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            T.use_swizzle(panel_size=panel)
            T.clear(C_local)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
