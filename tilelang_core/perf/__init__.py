"""Performance arithmetic from the model alone: shared-memory banks, occupancy, datasheet peaks, the
last profile of a kernel, and the plain-text lines every front end prints for them.

Pure data, no TVM: runs wherever it is imported (host, editor, worker). May import the ground floor
only.
"""
