"""An LSP initialize/shutdown round trip with ``tilescope lsp`` over stdio, standard library only.

Run by ``.ci/install-check`` in a fresh environment: ``python lsp_initialize.py PYTHON`` starts the
server the way the extension does and prints the server's name and version from its answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
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


def main() -> int:
    server = subprocess.Popen([sys.argv[1], "-c", BOOTSTRAP], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    answer = receive(server.stdout)
    while "id" not in answer:
        answer = receive(server.stdout)
    send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    while receive(server.stdout).get("id") != 2:
        pass
    send(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
    server.wait(timeout=30)
    info = answer["result"].get("serverInfo", {})
    print(f"initialize: {info.get('name')} {info.get('version')}, {len(answer['result']['capabilities'])} capabilities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
