import time

import tilelang.language as T


def sleeps_3(N=128, seconds=8.0):
    # A build that takes a while without computing, so a node can be lost while it runs.
    time.sleep(seconds)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A[bx] = A[bx] + 3.0

    return main
