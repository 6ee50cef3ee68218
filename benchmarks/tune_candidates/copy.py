"""Copy a long vector with many blocks; the last block is only partly inside the vector."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=2048, threads=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
            for i in T.Parallel(block_N):
                if bx * block_N + i < N:
                    B[bx * block_N + i] = A[bx * block_N + i]

    return main
