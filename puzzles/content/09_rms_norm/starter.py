"""RMS norm. Write the body of the kernel."""

import tilelang.language as T


# tilescope: M=1000 N=3000
def kernel(M, N, block_M=8, block_N=512, eps=1e-6, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            # Your code: sum x^2 across each row (tiles, T.reduce_sum), turn it into
            # rsqrt(sum / N + eps), then write x * that * W.
            pass

    return main
