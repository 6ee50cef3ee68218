"""The puzzle content's SHA-256 hashes, recorded when the content is written and checked in.

``content.sha256`` (beside this file, in ``sha256sum`` format, paths relative to ``content/``) is
regenerated with ``python -m tilescope.puzzles.manifest`` whenever a puzzle changes, and a test keeps
it current. The grader checks a puzzle's files against it before and after the learner's code runs,
and loads its reference only from bytes it has just verified, so content that anything changed after
the build (an installed file edited, a learner's factory writing where it should not) is never
graded against: the check is refused, naming the file.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

CONTENT = Path(__file__).parent / "content"
"""The puzzle content: one folder per puzzle (the catalogue reads it)."""
MANIFEST = Path(__file__).with_name("content.sha256")
SHIPPED = (".py", ".json", ".md")
"""The content files the package installs (``package-data`` in ``pyproject.toml``)."""


class ContentChanged(Exception):
    """A content file differs from the manifest (or is missing from it, or it from the content)."""

    def __init__(self, changes: list[str]) -> None:
        super().__init__("; ".join(changes))
        self.changes = changes


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SHIPPED and "__pycache__" not in p.parts)


def current(folder: Path = CONTENT) -> dict[str, str]:
    """The hash of every content file under ``folder``, by its path relative to ``content/``."""
    return {p.relative_to(CONTENT).as_posix(): _sha256(p.read_bytes()) for p in _files(folder)}


def recorded() -> dict[str, str]:
    """The hashes the manifest records."""
    entries = {}
    for line in MANIFEST.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if name:
            entries[name] = digest
    return entries


def render(hashes: dict[str, str]) -> str:
    return "".join(f"{digest}  {name}\n" for name, digest in sorted(hashes.items()))


def changes(folder: Path) -> list[str]:
    """What differs between ``folder`` (a puzzle's, or all of ``content/``) and the manifest, in words."""
    prefix = "" if folder == CONTENT else folder.relative_to(CONTENT).as_posix() + "/"
    want = {k: v for k, v in recorded().items() if k.startswith(prefix)}
    have = current(folder)
    found = [
        f"{name} differs from the manifest" for name in sorted(want.keys() & have.keys()) if want[name] != have[name]
    ]
    found += [f"{name} is missing" for name in sorted(want.keys() - have.keys())]
    found += [f"{name} is not in the manifest" for name in sorted(have.keys() - want.keys())]
    return found


def verify(folder: Path) -> None:
    """Raise ``ContentChanged`` unless ``folder`` matches the manifest exactly."""
    found = changes(folder)
    if found:
        raise ContentChanged(found)


def verified_bytes(path: Path) -> bytes:
    """A content file's bytes, read once and checked against the manifest; ``ContentChanged`` otherwise."""
    name = path.resolve().relative_to(CONTENT.resolve()).as_posix()
    data = path.read_bytes()
    want = recorded().get(name)
    if want is None:
        raise ContentChanged([f"{name} is not in the manifest"])
    if _sha256(data) != want:
        raise ContentChanged([f"{name} differs from the manifest"])
    return data


def main(argv: list[str]) -> int:
    """Write the manifest for the content as it is now (``--check``: only say whether it is current)."""
    if "--check" in argv:
        found = changes(CONTENT)
        print("\n".join(found) or "the manifest is current")
        return 1 if found else 0
    MANIFEST.write_text(render(current()))
    print(f"wrote {MANIFEST} ({len(current())} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
