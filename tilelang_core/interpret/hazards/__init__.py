"""Where a kernel goes wrong, without a GPU: races, barriers, out-of-bounds and uninitialised reads.

The tile interpreter runs a few blocks of the kernel at the file's own sizes and shows every
checked access to a ``Tracker``; what it finds comes with a witness (block, thread or loop
iteration, element) and becomes an error at the user's line. TileLang's own parallel-loop race
check adds suspicions the interpreter could not reproduce, which stay information notes. The
interpreter runs a block's threads in lockstep, statement by statement; ``barriers.py`` reads the final
IR for what lockstep hides: accesses of different threads to one shared byte with no barrier between.
``check.py`` is the worker's entry; nothing here runs outside the worker but ``diagnose.py``.
"""
