"""A scripted OpenAI-compatible teacher on loopback (``/v1/chat/completions``), for tests and ``bench/``.

Each prompt gets the same answer every time, whatever the order requests arrive in: the user-turn prompt is
answered from the turns its script carries (each turn's values and actions, in the endpoint's own words), the
reply prompt from its draft, a tool-pair prompt with "no dependency". It can wait before answering (a fixed
latency, or a random one per request), answer 500, 429 or 503 (with ``Retry-After``) to the next requests, and it
counts requests, prompts and the most requests it held at once. Requests are served on threads, as many at once
as arrive (a batching server such as vLLM answers a request in about the same time however many are in flight).
"""

from __future__ import annotations

import ast
import json
import random
import re
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TURNS_RE = re.compile(r"Turns \(one user message per turn, in order\): (.*)\n")
DRAFT_RE = re.compile(r"A plain draft of your reply: (.*)\n")
PAIR_PROMPT = "Two tools of one service."
# the frames of the teacher's user turns (each has " — ", which tells a teacher's turn from the offline writer's)
WITH_VALUES = (
    "{vals} — {todo}, please.",
    "Could you {todo} — {vals}?",
    "I need you to {todo} — {vals}.",
    "{Todo} — {vals}, thanks.",
    "Go ahead and {todo} — {vals}.",
)
WITHOUT_VALUES = ("{Todo} — that's all.", "Just {todo} — nothing else.", "Please {todo} — thanks.")


def answer(prompt: str, ungrounded: bool = False, bad_replies: bool = False) -> str:
    """The scripted teacher's answer to a prompt (a pure function of the prompt)."""
    if prompt.startswith(PAIR_PROMPT):
        return json.dumps({"direction": "none", "kind": "none"})
    draft = DRAFT_RE.search(prompt)
    if draft:  # the reply prompt: the teacher keeps the draft's facts in its own lead-in
        lead = "I found 99.5 webhooks. " if bad_replies else "Here is what I found. "
        return json.dumps({"reply": lead + ast.literal_eval(draft.group(1))})
    msgs = []  # the user-turn prompt: the actions and values of each turn, in the script's own words
    for turn in json.loads(TURNS_RE.search(prompt).group(1)):
        vals = ", ".join(
            f"{k} {', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in turn["values"].items()
        )
        todo = " and ".join(turn["actions"])
        # a teacher words its turns in more than one way (the linter's distinct_frames rule refuses a corpus whose
        # turns share a few frames); which way is a pure function of the turn, so answers stay the same
        frames = WITH_VALUES if vals else WITHOUT_VALUES
        frame = frames[zlib.crc32(json.dumps(turn, sort_keys=True).encode()) % len(frames)]
        msgs.append(frame.format(vals=vals, todo=todo, Todo=todo[:1].upper() + todo[1:]))
    if ungrounded:
        msgs[0] += " And also close account ACC-9999."
    return "Sure:\n" + json.dumps({"turns": msgs})


def send_json(handler: BaseHTTPRequestHandler, code: int, obj: object, headers: dict[str, str] | None = None) -> None:
    """Answer ``handler``'s request with ``obj`` as JSON (the status and headers in one write, the body in another)."""
    data = json.dumps(obj).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


def serve_loopback(handler: type[BaseHTTPRequestHandler], queue_size: int = 256) -> tuple[ThreadingHTTPServer, str]:
    """``handler`` served on a free 127.0.0.1 port from a daemon thread: the server and its ``/v1`` base URL."""

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = queue_size  # many clients connect at once

    httpd = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/v1"


class ScriptedTeacher:
    """The endpoint, serving on 127.0.0.1 from a thread until :meth:`close`."""

    def __init__(self, latency: float | tuple[float, float] = 0.0, seed: int | None = None):
        self.latency = latency
        self.requests = 0
        self.prompts: list[str] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.fail_next = 0  # answer 500 to this many requests
        self.rate_limit_next = 0  # answer 429 with Retry-After: retry_after to this many requests
        self.unavailable_next = 0  # answer 503 with Retry-After: retry_after to this many requests
        self.retry_after = "1"
        self.ungrounded = False
        self.bad_replies = False
        self.times: list[float] = []  # when each request arrived (time.monotonic)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # the status and headers go out in one write, the body in another: with Nagle's algorithm on, the body
            # waits for the client's delayed ACK of the headers (about 40 ms on Linux loopback), each answer
            disable_nagle_algorithm = True

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.times.append(time.monotonic())
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                try:
                    self._answer(body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, body):
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                with server._lock:
                    status = None
                    for attr, code in (("fail_next", 500), ("rate_limit_next", 429), ("unavailable_next", 503)):
                        if getattr(server, attr) > 0:
                            setattr(server, attr, getattr(server, attr) - 1)
                            status = code
                            break
                    wait = server._wait()
                if status == 500:
                    return self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                if status in (429, 503):
                    return self._send(status, {"error": {"message": "slow down"}}, {"Retry-After": server.retry_after})
                prompt = body["messages"][-1]["content"]
                with server._lock:
                    server.prompts.append(prompt)
                time.sleep(wait)
                content = answer(prompt, server.ungrounded, server.bad_replies)
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{server.requests}",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": body.get("model", "m"),
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                        ],
                        "usage": {
                            "prompt_tokens": len(prompt) // 4,
                            "completion_tokens": len(content) // 4,
                            "total_tokens": (len(prompt) + len(content)) // 4,
                        },
                    },
                )

            def _send(self, code, obj, headers=None):
                send_json(self, code, obj, headers)

        self.httpd, self.url = serve_loopback(Handler)
        self.port = self.httpd.server_address[1]

    def _wait(self) -> float:
        if isinstance(self.latency, tuple):
            return self._rng.uniform(*self.latency)
        return float(self.latency)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ScriptedTeacher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
