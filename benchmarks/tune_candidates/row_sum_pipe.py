"""Row sums with the column tiles streamed through shared memory by a pipelined loop."""

import tilelang.language as T


def kernel(M, N, block_M=1, block_N=2048, threads=256, num_stages=2, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_shared((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                T.copy(X[bx * block_M, k * block_N], tile)
                for i, j in T.Parallel(block_M, block_N):
                    acc[i, j] += tile[i, j]
            T.reduce_sum(acc, total, dim=1)
            T.copy(total, Y[bx * block_M])

    return main
