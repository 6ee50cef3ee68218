"""Trust revoked while a document is still being made ready for the compiler (its static analysis under way):
the build that was about to start never starts, and no worker is made or adopted for it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from tilescope.lsp.compiler_tier import CompilerTier
from tilescope.lsp.settings import Settings


class _SlowDocuments:
    """Documents whose readiness waits for ``release``: the window in which trust is revoked."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.waiting = asyncio.Event()

    async def ready(self, uri: str, target: str) -> None:
        self.waiting.set()
        await self.release.wait()

    def state(self, uri: str, target: str) -> Any:
        return None  # read once it is ready, before the build would start

    def path(self, uri: str) -> str:
        return "/nonexistent/kernel.py"

    def is_open(self, uri: str) -> bool:
        return True


def test_revoking_trust_while_a_document_is_made_ready_starts_no_build() -> None:
    async def scenario() -> None:
        settings = Settings(trusted=True)
        documents = _SlowDocuments()
        tier = CompilerTier(lambda: settings, documents, lambda *_: None, lambda *_: None)  # type: ignore[arg-type]
        analysis = asyncio.ensure_future(tier._analyse("file:///nonexistent/kernel.py"))
        await documents.waiting.wait()
        settings = replace(settings, trusted=False)  # as ``configuration.apply`` does, then stops the tier
        tier.stop()
        documents.release.set()
        assert await analysis is None
        assert tier._analyzer is None, "an analyzer was made for an untrusted workspace"
        tier.close()

    asyncio.run(scenario())
