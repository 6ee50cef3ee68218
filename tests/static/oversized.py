"""Small files that once made the static tier build huge values (shared by the static and LSP tests).

Each is a few KB appended to a kernel file; their names say the attack.
"""

from __future__ import annotations

A = "a" * 2000
ATTACKS = {
    "replace-doubling": f's = "{A}"\ns = s.replace("a", "{A}")\ns = s.replace("a", "{A[:200]}")\n',
    "replace-three-levels": f's = "{A[:1000]}"\n' + f's = s.replace("a", "{A[:1000]}")\n' * 3,
    "split-explosion": f's = "{"a " * 20}"\ns = s.replace("a", "{"a " * 800}")\n'
    f's = s.replace("a", "{"a " * 1000}")\nparts = s.split()\nn = len(parts)\n',
    "nested-repeats": "t = (1, 1)\nfor i in range(16):\n    t = (t, t, t, t, t, t, t, t)\nu = t + 1\n",
    "extend-doubling": "t = [1, 2]\nfor i in range(16):\n" + "    t.extend(t)\n" * 8,
    "characters-of-a-long-text": f's = "{A}"\ns = s.replace("a", "{A}")\npairs = list(zip(s, s))\n',
    "vararg-nesting": "def f(n, *rest):\n    return rest if n == 0 else f(n - 1, rest, rest, rest, rest)\n\n\n"
    "x = f(40)\ny = x + 1\n",
    "deep-recursion-doubling": 'def f(n, s):\n    return s if n == 0 else f(n - 1, s.replace("a", "aaaa"))\n\n\n'
    'x = f(60, "a")\n',
}
"""Each took over 200 MB or 2 s before sizes were bounded (or failed with ``MemoryError``)."""
OVERSIZED = {
    **{name: text for name, text in ATTACKS.items() if name != "extend-doubling"},
    "join-of-repeats": f's = "{A}"\nt = [s for i in range(4000)]\nu = s.join(t)\n',
    "comprehension-of-copies": f's = "{A}"\nt = [s for i in range(100)]\n',
}
"""Values past ``MAX_SIZE``, some of which were built (a join of 8 MB, a list of 200,000 characters).
A list past ``MAX_ITEMS`` items (``extend-doubling``) is unknown without a note, as ``append`` made it."""
