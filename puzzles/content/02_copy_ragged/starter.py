"""Copy a long vector with many blocks. Choose the grid, then write the body."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        # Your code: how many blocks does a vector of N elements need?
        with T.Kernel(1, threads=256) as bx:
            # Your code: block `bx` copies elements bx * block_N ... bx * block_N + block_N - 1.
            pass

    return main
