"""Copy a short vector with a single block. Write the body of `main`."""

import tilelang.language as T


# tilescope: N=200
def kernel(N, block_N=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=block_N):
            # Your code: every element of A must land in B, and nothing past B's end.
            pass

    return main
