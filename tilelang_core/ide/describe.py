"""Hover text: everything known about the buffer or ``T.*`` primitive under the cursor, as Markdown."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilescope.core.display import kib, shape_text
from tilescope.core.ide.hints import buffer_facts
from tilescope.core.ide.layout_text import THREAD_MAP_SIZE, layout_label, thread_map_text
from tilescope.core.ide.merge import Facts
from tilescope.core.ide.navigate import symbol_at
from tilescope.core.ide.rest import to_markdown
from tilescope.core.model import KernelModel, Layout, Span, from_dry_run
from tilescope.core.static import catalog
from tilescope.core.static.levels import capacity, level_of, size_text
from tilescope.core.static.records import Binding, BufferDecl, StaticKernel


@dataclass(frozen=True)
class HoverText:
    markdown: str
    span: Span


def describe_at(facts: Facts, line: int, column: int, word: Span | None = None, name: str = "") -> HoverText | None:
    """What is known about the symbol at ``line``/``column``; ``name`` at ``word`` is the identifier
    there, for a kernel parameter (``block_M``), which the static tier does not list as a symbol."""
    symbol = symbol_at(facts.static, line, column)
    if symbol is None:
        kernel = facts.static.kernel_at(line)
        text = parameter_markdown(kernel, name, facts.model(kernel)) if kernel is not None and name else None
        return HoverText(text, word) if text and word is not None else None
    if symbol.kind == "primitive":
        text = primitive_markdown(symbol.name, facts.static.dialect)
        return HoverText(text, symbol.span) if text else None
    assert symbol.kernel is not None
    decl = symbol.kernel.buffer(symbol.name)
    if decl is None:
        return None
    markdown = buffer_markdown(decl, symbol.kernel, facts.model(symbol.kernel), facts.static.dialect)
    return HoverText(markdown, symbol.span)


def primitive_markdown(name: str, dialect: str | None = None) -> str | None:
    """TileLang's own signature and docstring for ``T.<name>``, from the language module the file
    imports (``dialect``: ``ascend`` for ``tilelang.ascend.language``)."""
    table = catalog.default().dialect(dialect)
    primitive = table.lookup(name)
    if primitive is None:
        return None
    if primitive.kind == "dtype":
        return f"```python\nT.{name}\n```\ndtype `{name}`"
    owner = name.rpartition(".")[0]
    header = f"```python\nT.{owner + '.' if owner else ''}{primitive.signature or primitive.name}\n```"
    release = f"\n\n*{table.module}, TileLang {table.version}*" if dialect else f"\n\n*TileLang {table.version}*"
    return (f"{header}\n\n{to_markdown(primitive.doc)}" if primitive.doc else header) + release


def identifier_at(text: str, line: int, column: int) -> tuple[Span | None, str]:
    """The identifier of one line's ``text`` that covers ``column`` (a UTF-8 byte column, as spans
    count), and its span."""
    for found in re.finditer(rb"[A-Za-z_][A-Za-z_0-9]*", text.encode("utf-8", "surrogatepass")):
        if found.start() <= column <= found.end():
            return Span(line, found.start(), line, found.end()), found.group().decode()
    return None, ""


_ORIGIN_WORDS = {
    "directive": "the `# tilescope:` directive",
    "call": "the call that builds the kernel",
    "recorded": "what `tilescope record` saw the program build",
    "autotune config 0": "the autotuner's first config",
    "default": "its default",
    "const": "`T.const`",
}


def parameter_markdown(kernel: StaticKernel, name: str, model: KernelModel | None) -> str | None:
    """A kernel parameter's value, where the value came from, and the buffers whose sizes it sets."""
    binding = next((b for b in kernel.bindings if b.name == name), None)
    if binding is None:
        return None
    compiled = model.args.get(name) if model is not None and not _failed(model) else None
    value = compiled if compiled is not None else binding.value
    lines = ["```python", f"{name} = {value!r}" if value is not None else f"{name}  # value unknown", "```"]
    if binding.value is None:
        chosen = {
            "autotune": "chosen by the autotuner",
            "passed": "the call passes a value only a run knows",
        }.get(binding.origin, "no value found in the file")
        lines.append(f"- parameter of `{kernel.ref.name}`: {chosen}")
    else:
        where = f", line {binding.line}" if binding.line is not None else ""
        lines.append(
            f"- parameter of `{kernel.ref.name}`: from {_ORIGIN_WORDS.get(binding.origin, binding.origin)}{where}"
        )
    if compiled is not None:
        lines.append("- the value the compiler built the kernel with")
    sized = [b.buffer.name for b in kernel.buffers if name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", b.written or "")]
    if sized:
        lines.append(f"- sizes {', '.join(f'`{b}`' for b in sized)}")
    return "\n".join(lines)


def _failed(model: KernelModel) -> bool:
    return any(d.severity == "error" for d in model.diagnostics)


def buffer_markdown(
    decl: BufferDecl, kernel: StaticKernel, model: KernelModel | None, dialect: str | None = None
) -> str:
    """The facts and which tier they come from: a model whose build failed contributes only that.
    In an Ascend kernel (``dialect``), the memory level the scope is and what the buffer takes of it."""
    failure = next((d for d in model.diagnostics if d.severity == "error"), None) if model else None
    if failure is not None:
        model = None
    buffer = buffer_facts(decl, model)
    tier = "compiled" if model is not None else "static"
    level = level_of(buffer.scope) if dialect == "ascend" else None
    scope = f"{level.name} ({buffer.scope})" if level is not None else buffer.scope
    lines = [
        "```text",
        f"{buffer.name}: {shape_text(buffer.shape)} {buffer.dtype} {scope}",
        "```",
        f"- declared at line {decl.name_span.line} with `T.{decl.allocator}` ({tier} facts)",
    ]
    if level is not None:
        lines.append(f"- {level.name}: {level.holds}" + _share(buffer.bytes, capacity(level, kernel), level.name))
    if failure is not None:
        lines.append(f"- the compiler's build failed (line {failure.span.line}: {failure.message.splitlines()[0]})")
    origins = _origins(decl, kernel, model)
    if decl.written and origins:
        lines.append(f"- shape `{decl.written}` with {origins}")
    if buffer.bytes is not None:
        size = f"- {kib(buffer.bytes)} ({buffer.bytes} bytes)"
        if decl.stages > 1:
            size += f", × {decl.stages} pipeline stages = {kib(buffer.bytes * decl.stages)}"
        lines.append(size)
    layout = model.layout(buffer.name) if model else None
    if layout is not None:
        lines.extend(_layout_lines(layout))
    accesses = model.accesses if model and model.accesses else kernel.accesses
    writes = [f"T.{a.op} (line {a.line})" for a in accesses if buffer.name in a.writes]
    reads = [f"T.{a.op} (line {a.line})" for a in accesses if buffer.name in a.reads]
    if writes:
        lines.append(f"- written by {', '.join(writes)}")
    if reads:
        lines.append(f"- read by {', '.join(reads)}")
    return "\n".join(lines)


def _share(size: int | None, limit: int | None, name: str) -> str:
    """``, 64 KB of its 512 KB (12%)``: what one copy of a buffer takes of its level."""
    if size is None or limit is None:
        return ""
    return f"; {size_text(size)} of {name}'s {kib(limit)} ({size / limit:.0%}), before multi-buffering"


def _origins(decl: BufferDecl, kernel: StaticKernel, model: KernelModel | None) -> str:
    """``block_M=128 (default, line 8), M=1024 (directive, line 7)`` for the names a shape uses; a value the
    compiler tier learned from a dry run says so (``M=1024 (dry run of main(), line 212)``)."""
    bound = {b.name: _origin(b) for b in kernel.bindings}
    if model is not None:
        for name, source in model.arg_sources.items():
            if from_dry_run(source) and name in model.args:
                bound[name] = f"{name}={model.args[name]} ({source})"
    names = dict.fromkeys(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", decl.written or ""))
    return ", ".join(bound[name] for name in names if name in bound)


def _origin(binding: Binding) -> str:
    """``M=1024 (call, line 120)``: the value and where it was found."""
    if binding.value is None:
        if binding.origin == "passed":
            return f"{binding.name} passed a value only a run knows"
        return f"{binding.name} chosen by the autotuner" if binding.origin == "autotune" else f"{binding.name} unknown"
    where = f", line {binding.line}" if binding.line is not None else ""
    origin = "recorded in .tilescope/instances.json" if binding.origin == "recorded" else binding.origin
    return f"{binding.name}={binding.value} ({origin}{where})"


def _layout_lines(layout: Layout) -> list[str]:
    lines = [f"- layout: {layout_label(layout) or layout.kind}"]
    variables = ", ".join(layout.input_vars)
    if layout.thread is not None:
        lines.append(f"- thread({variables}) = `{layout.thread}`")
    lines.append(f"- index({variables}) = `{', '.join(layout.index)}`")
    if layout.kind == "fragment":
        grid = thread_map_text(layout)
        if grid:
            lines.extend(
                [
                    "",
                    f"Threads of the top-left {THREAD_MAP_SIZE}×{THREAD_MAP_SIZE} cells:",
                    "```text",
                    grid,
                    "```",
                ]
            )
    return lines
