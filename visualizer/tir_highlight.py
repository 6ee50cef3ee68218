"""Colour one line of TVMScript (or CUDA) with a single regular expression.

Pygments through rich costs a few milliseconds per line, which is most of the time it takes to
draw a screenful of IR; one compiled pattern costs tens of microseconds and covers what matters in
IR: keywords, ``T.`` builtins, numbers, strings, comments and buffer names being indexed.
"""

from __future__ import annotations

import re

from rich.text import Text

_TOKEN = re.compile(
    r"(?P<comment>#.*$|//.*$)"
    r"|(?P<string>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<keyword>\b(?:for|in|with|if|elif|else|def|class|return|and|or|not|while|break|continue|"
    r"const|void|int|float|half|uint|bool|__global__|__shared__|__syncthreads|extern|__device__)\b)"
    r"|(?P<builtin>\bT\.[A-Za-z_][A-Za-z0-9_]*|\btl::[A-Za-z_][A-Za-z0-9_:]*)"
    r"|(?P<decorator>@[A-Za-z_][\w.]*)"
    r"|(?P<number>\b\d+(?:\.\d*)?(?:e[+-]?\d+)?[fF]?\b)"
    r"|(?P<indexed>\b[A-Za-z_]\w*(?=\[))",
    re.MULTILINE,
)

STYLES = {
    "comment": "#7f848e italic",
    "string": "#98c379",
    "keyword": "#c678dd",
    "builtin": "#61afef",
    "decorator": "#e5c07b",
    "number": "#d19a66",
    "indexed": "#e06c75",
}


def highlight(line: str) -> Text:
    """``line`` as rich Text with a style span per recognised token."""
    text = Text(line, no_wrap=True)
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        if kind is not None:
            text.stylize(STYLES[kind], match.start(), match.end())
    return text
