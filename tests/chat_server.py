"""A chat-completions server on loopback that speaks the OpenAI protocol and answers by a fixed rule: the stand-in
for a model endpoint in the machine-judge tests (no network, no key leaves the machine)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def grade_by_marker(prompt: str) -> str:
    """The rule: a document saying GRADE2 / GRADE1 gets that grade, any other 0; with a reason line first."""
    document = prompt.split("Document:", 1)[-1]
    found = re.search(r"GRADE([0-9])", document)
    grade = found.group(1) if found else "0"
    return f"The document {'mentions' if found else 'does not address'} the topic.\n##final answer: {grade}"


@dataclass
class ChatServer:
    answer: Callable[[str], str] = grade_by_marker
    # Statuses to answer before the rule, in order (e.g. [429, 500]): each request takes the next one.
    failures: list[int] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def calls(self) -> int:
        return len(self.requests)


@contextmanager
def chat_server(**options) -> Iterator[ChatServer]:
    state = ChatServer(**options)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
                status = state.failures.pop(0) if state.failures else 200
            if self.path != "/v1/chat/completions":
                status = 404
            if status != 200:
                payload = json.dumps({"error": {"message": f"status {status}"}}).encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "0")
            else:
                prompt = body["messages"][-1]["content"]
                text = state.answer(prompt)
                payload = json.dumps({
                    "id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(text) // 4,
                              "total_tokens": len(prompt) // 4 + len(text) // 4},
                }).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
