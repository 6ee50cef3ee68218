"""Softmax with the whole row held in registers: one read and one write of each element."""

import tilelang.language as T


def kernel(M, N, block_M=1, threads=256, dtype="float32"):
    log2e = 1.4426950408889634
    block_N = 1 << max(N - 1, 1).bit_length()

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            row = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), dtype)
            row_sum = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], row)
            for i, j in T.Parallel(block_M, block_N):
                row[i, j] = T.if_then_else(j < N, row[i, j], -T.infinity(dtype))
            T.reduce_max(row, row_max, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                row[i, j] = T.exp2((row[i, j] - row_max[i]) * log2e)
            T.reduce_sum(row, row_sum, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                row[i, j] = row[i, j] / row_sum[i]
            T.copy(row, Y[bx * block_M, 0])

    return main
