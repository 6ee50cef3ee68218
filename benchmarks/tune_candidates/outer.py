"""Broadcast: C[i, j] = a[i] + b[j], a 2-D grid of 2-D tiles."""

import tilelang.language as T


# tilescope: M=1000 N=1500
def kernel(M, N, block_M=32, block_N=256, threads=256, dtype="float32"):
    @T.prim_func
    def main(a: T.Tensor((M,), dtype), b: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                row = by * block_M + i
                col = bx * block_N + j
                if row < M and col < N:
                    C[row, col] = a[row] + b[col]

    return main
