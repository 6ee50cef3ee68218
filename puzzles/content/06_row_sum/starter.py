"""Row sums of an (M, N) matrix. Write the body."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            # Your code: a fragment tile of X, T.reduce_sum along dim=1, a running total per row.
            pass

    return main
