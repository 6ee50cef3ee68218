# graphviz ships annotations but no ``py.typed`` (and leaves attributes untyped): the part of its API
# the visualizer draws with, typed. Graphviz attributes are strings; positions come first, by position.
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import overload

class Digraph:
    def __init__(
        self,
        name: str | None = None,
        comment: str | None = None,
        filename: str | None = None,
        directory: str | None = None,
        format: str | None = None,
        engine: str | None = None,
        encoding: str | None = "utf-8",
        graph_attr: Mapping[str, str] | None = None,
        node_attr: Mapping[str, str] | None = None,
        edge_attr: Mapping[str, str] | None = None,
        body: Iterable[str] | None = None,
        strict: bool = False,
    ) -> None: ...
    @property
    def source(self) -> str: ...
    def __iter__(self) -> Iterator[str]: ...
    def attr(self, kw: str | None = None, _attributes: Mapping[str, str] | None = None, /, **attrs: str) -> None: ...
    def node(
        self, name: str, label: str | None = None, _attributes: Mapping[str, str] | None = None, /, **attrs: str
    ) -> None: ...
    def edge(
        self,
        tail_name: str,
        head_name: str,
        label: str | None = None,
        _attributes: Mapping[str, str] | None = None,
        /,
        **attrs: str,
    ) -> None: ...
    @overload
    def subgraph(self, graph: Digraph) -> None: ...
    @overload
    def subgraph(
        self,
        graph: None = None,
        name: str | None = None,
        comment: str | None = None,
        graph_attr: Mapping[str, str] | None = None,
        node_attr: Mapping[str, str] | None = None,
        edge_attr: Mapping[str, str] | None = None,
        body: Iterable[str] | None = None,
    ) -> AbstractContextManager[Digraph]: ...
    def pipe(self, format: str | None = None, *, encoding: str | None = None) -> bytes: ...
