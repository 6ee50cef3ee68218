"""What differs between the TileLang releases Tilescope supports, one small adapter per concern.

``releases`` (stdlib only) knows the supported range and reads an interpreter's TileLang version
without importing TileLang. The others run in the worker and import TileLang.
"""
