"""A local OpenAI-compatible endpoint for judge tests (127.0.0.1, ephemeral port)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest


@dataclass
class JudgeStub:
    """Replays scripted ``(status, content)`` replies (default ``###Judge: True``) and records requests."""

    url: str = ""
    script: list[tuple[int, str]] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)


@pytest.fixture
def judge_stub() -> Iterator[JudgeStub]:
    state = JudgeStub()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            status, content = state.script.pop(0) if state.script else (200, "###Judge: True")
            reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            payload = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
