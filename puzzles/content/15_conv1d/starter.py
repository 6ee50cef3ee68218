"""1-D convolution (valid, as deep-learning frameworks define it. Write the body of the kernel."""

import tilelang.language as T


# tilescope: batch=4 L=100000 K=7
def kernel(batch, L, K, block_N=1024, dtype="float32"):
    L_out = L - K + 1

    @T.prim_func
    def main(X: T.Tensor((batch, L), dtype), W: T.Tensor((K,), dtype), Y: T.Tensor((batch, L_out), dtype)):
        with T.Kernel(T.ceildiv(L_out, block_N), batch, threads=256) as (bx, b):
            # Your code: load block_N + K - 1 inputs of row b into shared memory (the halo),
            # accumulate window[i + t] * W[t] over t in a fragment, then store block_N outputs.
            pass

    return main
