"""Mistake: the derivative forgets the product rule and uses dY * sigmoid(x) alone."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(
        X: T.Tensor((N,), dtype),
        dY: T.Tensor((N,), dtype),
        Y: T.Tensor((N,), dtype),
        dX: T.Tensor((N,), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=256) as bx:
            for i in T.Parallel(block_N):
                n = bx * block_N + i
                if n < N:
                    s = 1.0 / (1.0 + T.exp(-X[n]))
                    Y[n] = X[n] * s
                    dX[n] = dY[n] * s

    return main
