"""The language server of a fresh tools environment on the bundled examples, standard library only.

``python lsp_examples.py PYTHON PROJECT_PYTHON FILE...`` starts ``tilescope lsp`` with PYTHON, its
``python`` setting PROJECT_PYTHON (an interpreter with TileLang; the tools have none), opens each FILE
untrusted and asks for inlay hints; prints the hints, the static diagnostics and which TileLang
release the hover of ``T.gemm`` speaks of. Exits non-zero when a file gets no hint or an error.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

BOOTSTRAP = (
    "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
    "from tilescope.core.cli.main import main\nsys.exit(main(['lsp']))"
)


def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def receive(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while (line := stream.readline().strip()) != b"":
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


class Session:
    def __init__(self, python: str) -> None:
        self.server = subprocess.Popen([python, "-c", BOOTSTRAP], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.server.stdin is not None and self.server.stdout is not None
        self.stdin, self.stdout = self.server.stdin, self.server.stdout
        self.next_id = 0
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        send(self.stdin, {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = receive(self.stdout)
            if message.get("method") == "textDocument/publishDiagnostics":
                self.diagnostics[message["params"]["uri"]] = message["params"]["diagnostics"]
            elif "id" in message and "method" in message:  # a request of the server's: answer it plainly
                send(self.stdin, {"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']['message']}")
                return message["result"]

    def notify(self, method: str, params: Any) -> None:
        send(self.stdin, {"jsonrpc": "2.0", "method": method, "params": params})


def main() -> int:
    python, project, *files = sys.argv[1:]
    session = Session(python)
    session.request("initialize", {"capabilities": {}, "initializationOptions": {"python": project}})
    session.notify("initialized", {})
    failed = False
    gemm_hover = None
    for name in files:
        path = Path(name).resolve()
        text = path.read_text()
        uri = path.as_uri()
        session.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": len(text.splitlines()) + 1, "character": 0}}
        hints = session.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": whole}) or []
        errors = [d for d in session.diagnostics.get(uri, []) if d.get("severity") == 1]
        print(f"{path.name}: {len(hints)} hints, {len(errors)} errors")
        failed = failed or not hints or bool(errors)
        for number, line in enumerate(text.splitlines()):
            found = re.search(r"\bT\.gemm\(", line)
            if found and gemm_hover is None:
                position = {"line": number, "character": found.start() + 3}
                gemm_hover = session.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
    release = re.search(r"\*TileLang ([\d.]+)\*", (gemm_hover or {}).get("contents", {}).get("value", ""))
    print(f"hover of T.gemm: TileLang {release.group(1) if release else 'unknown'}")
    session.request("shutdown", None)
    session.notify("exit", None)
    session.server.wait(timeout=30)
    return 1 if failed or release is None else 0


if __name__ == "__main__":
    sys.exit(main())
