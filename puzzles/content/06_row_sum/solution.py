"""Row sums of an (M, N) matrix: each block owns block_M rows and walks across the columns.

Speed (H200, 16384 x 8192 fp32: 0.77x torch.sum's time, at the copy bandwidth):
- each thread keeps its own running sums in registers across the column tiles (`acc`), so the
  loop is only loads and adds; the block reduces across threads once, after the loop, instead of
  once per tile (a reduction costs shuffles and a barrier);
- one row per block and 4096 columns per tile: 16 floats per thread per step, loaded as four
  16-byte vectors by `T.copy`, enough bytes in flight to keep HBM busy.
"""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=1, block_N=4096, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            T.clear(acc)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], tile)  # columns past N are read as 0
                for i, j in T.Parallel(block_M, block_N):
                    acc[i, j] += tile[i, j]
            T.reduce_sum(acc, total, dim=1)  # the one cross-thread reduction
            T.copy(total, Y[bx * block_M])

    return main
