"""Mistake (hostile): the factory returns a kernel that does nothing for long vectors, the timed
shape among them, hoping only the small test shapes are checked."""

import tilelang.language as T


# tilescope: N=1000003
def kernel(N, block_N=1024, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=256) as bx:
            a = T.alloc_fragment((block_N,), dtype)
            b = T.alloc_fragment((block_N,), dtype)
            T.copy(A[bx * block_N], a)
            T.copy(B[bx * block_N], b)
            for i in T.Parallel(block_N):
                a[i] += b[i]
            T.copy(a, C[bx * block_N])

    @T.prim_func
    def nothing(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(32):
                if i < 0:
                    C[i] = A[i]

    return nothing if N >= 1 << 24 else main
