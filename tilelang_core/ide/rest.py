"""TileLang's docstrings (reStructuredText, numpydoc or Google style) as the Markdown editors render.

Only what those docstrings use: roles (``:func:`copy```), double-backtick literals, section
underlines, ``Args:``-style headings, directives (``.. note::``) and ``::`` literal blocks. Text it
does not recognise passes through unchanged.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_UNDERLINE = re.compile(r"^\s*([-=~^\"'`#*+]{3,})\s*$")
_GOOGLE = re.compile(
    r"^(\s*)(Args|Arguments|Parameters|Params|Returns|Return|Yields|Raises|Examples?|Notes?|Attributes|Warning)"
    r":\s*$"
)
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([a-zA-Z-]+)::\s*(.*)$")
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z_0-9]*)\s*(\([^)]*\))?:\s*(.*)$")
"""``name (type): text``: one item of a Google-style Args section."""
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z_0-9]*)\s+:\s+(.+)$")
"""``name : type``: one item of a numpydoc Parameters section, its text on the lines below."""


def to_markdown(text: str) -> str:
    """``text`` (a docstring) as Markdown."""
    lines = text.splitlines()
    out: list[str] = []
    code: list[str] | None = None
    code_indent = 0
    section: int | None = None
    """Inside an Args/Parameters-like section: the indent of its entries."""
    index = 0
    while index < len(lines):
        line = lines[index]
        if section is not None and code is None:
            ends = index + 1 < len(lines) and _UNDERLINE.match(lines[index + 1]) is not None
            item = None if ends else _section_line(line, section, out)
            if item is not None:
                section = item
                index += 1
                continue
            section = None
        if code is not None:
            indent = len(line) - len(line.lstrip())
            if line.strip() and indent <= code_indent:
                out.extend(["```python", *_dedent(code), "```"])
                code = None
                continue
            code.append(line)
            index += 1
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and _UNDERLINE.match(following) and len(following.strip()) >= len(line.strip()) - 1:
            _heading(out, line.strip())
            section = -1
            index += 2
            continue
        heading = _GOOGLE.match(line)
        directive = _DIRECTIVE.match(line)
        if heading:
            _heading(out, heading.group(2))
            section = -1
        elif directive:
            name, rest = directive.group(2), directive.group(3)
            if name in ("code-block", "code", "sourcecode"):
                code, code_indent = [], len(directive.group(1))
            else:
                out.append(f"**{name.capitalize()}:** {_inline(rest)}".rstrip())
        elif line.rstrip().endswith("::") and not line.strip().startswith(".."):
            kept = line.rstrip()[:-1] if not line.rstrip().endswith(" ::") else line.rstrip()[:-3]
            out.append(_inline(kept.rstrip()))
            code, code_indent = [], len(line) - len(line.lstrip())
        else:
            out.append(_inline(line))
        index += 1
    if code is not None:
        out.extend(["```python", *_dedent(code), "```"])
    return "\n".join(out).strip()


def _heading(out: list[str], title: str) -> None:
    if out and out[-1].strip():
        out.append("")
    out.append(f"**{title}**")


def _section_line(line: str, base: int, out: list[str]) -> int | None:
    """Add one line of a section to ``out``: an entry becomes a list item, a deeper line continues it.
    Returns the section's entry indent, or ``None`` when the line ends the section."""
    if not line.strip():
        out.append("")
        return base
    indent = len(line) - len(line.lstrip())
    if base < 0:
        base = indent
    if indent < base or _GOOGLE.match(line) or _DIRECTIVE.match(line):
        return None
    numpy = _NUMPY_ENTRY.match(line.strip()) if indent == base else None
    entry = _ENTRY.match(line.strip()) if indent == base and numpy is None else None
    if numpy is not None:
        out.append(f"- `{numpy.group(1)}` ({numpy.group(2).strip()}):")
    elif entry is not None:
        name, kind, rest = entry.groups()
        words = f" {kind}" if kind else ""
        out.append(f"- `{name}`{words}: {_inline(rest)}".rstrip())
    elif indent > base and out and out[-1].startswith("- "):
        out[-1] += " " + _inline(line.strip())
    else:
        out.append(_inline(line.strip()))
    return base


def _inline(line: str) -> str:
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", line))


def _dedent(block: list[str]) -> list[str]:
    while block and not block[0].strip():
        block = block[1:]
    while block and not block[-1].strip():
        block = block[:-1]
    indents = [len(line) - len(line.lstrip()) for line in block if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in block]
