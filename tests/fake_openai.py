"""A loopback HTTP server that speaks enough of the OpenAI chat and embeddings protocol for tests.

Tests script it: `server.chat_replies` is a queue of callables or dicts consumed per chat request
(each returns (status, json_body) or raises TimeoutError-ish delays via {"sleep": s}); when empty,
`server.default_chat(request_json)` answers. Embeddings are deterministic pseudo-vectors from the text hash.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import numpy as np

Reply = tuple[int, dict[str, Any]]


def chat_completion(content: str, model: str = "fake-model") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def fake_embedding(text: str, dim: int = 16) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng(seed).normal(size=dim)
    return (v / np.linalg.norm(v)).tolist()


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.chat_replies: deque[Reply | Callable[[dict[str, Any]], Reply] | dict[str, Any]] = deque()
        self.default_chat: Callable[[dict[str, Any]], Reply] = lambda req: (200, chat_completion("{}"))
        self.embedding_dim = 16
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with owner._lock:
                    owner.requests.append((self.path, body))
                status, payload = owner._answer(self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [b for p, b in self.requests if p.endswith("/chat/completions")]

    def _answer(self, path: str, body: dict[str, Any]) -> Reply:
        if path.endswith("/embeddings"):
            inputs = body.get("input", [])
            if isinstance(inputs, str):
                inputs = [inputs]
            data = [{"object": "embedding", "index": i, "embedding": fake_embedding(t, self.embedding_dim)} for i, t in enumerate(inputs)]
            return 200, {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": {"prompt_tokens": 1, "total_tokens": 1}}
        if path.endswith("/chat/completions"):
            with self._lock:
                item = self.chat_replies.popleft() if self.chat_replies else None
            if item is None:
                return self.default_chat(body)
            if isinstance(item, dict) and "sleep" in item:
                time.sleep(float(item["sleep"]))
                return self.default_chat(body)
            if callable(item):
                return item(body)
            return item  # (status, payload)
        return 404, {"error": {"message": f"no route {path}"}}

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
