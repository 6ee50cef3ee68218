# TVM ships without type information and lives inside TileLang's package (``tilelang/3rdparty``),
# where no checker looks: every name it has is ``Any`` to the checker.
from typing import Any

def __getattr__(name: str) -> Any: ...
