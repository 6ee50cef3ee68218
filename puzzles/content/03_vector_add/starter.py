"""C = A + B over fp32 vectors. Write the body of the kernel."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=256) as bx:
            # Your code: bring a tile of A and of B into fragments, add them with T.Parallel,
            # and copy the sum out to C.
            pass

    return main
