"""Calls to an OpenAI-compatible chat-completions endpoint: retries with backoff, a rate limit, no key in sight.

A call is paid, so what it returns is handed back whole (text, tokens, attempts) for the caller to record at once.
429 and 5xx answers and network errors are retried with exponential backoff (the endpoint's Retry-After first);
other 4xx answers are not, since the same request would fail the same way. The key travels only in the
Authorization header: no message, log line or recorded error carries it.
"""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

RETRIED = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_WAIT_SECONDS = 60.0


class CallFailed(Exception):
    """No answer after every attempt (or an answer that a retry cannot change): a recorded failure, not a label."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    duration_ms: int


class RateLimit:
    """At most ``per_minute`` calls started a minute, spaced evenly, across the threads that share it (0: none)."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.clock, self.sleep = clock, sleep
        self.next_start = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = self.clock()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
        if start > now:
            self.sleep(start - now)


class ChatEndpoint:
    def __init__(
        self, *, base_url: str, model: str, key: str, parameters: Mapping[str, Any], max_attempts: int,
        backoff: float = 1.0, timeout: float = 120.0, rate: RateLimit | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.key, self.parameters = model, key, dict(parameters)
        self.max_attempts, self.backoff, self.timeout = max_attempts, backoff, timeout
        self.rate = rate or RateLimit(0)
        self.sleep = sleep

    def complete(self, *, system: str, user: str) -> Reply:
        body = json.dumps({
            **self.parameters, "model": self.model,
            "messages": ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}],
        }).encode()
        started = time.monotonic()
        problem = ""
        for attempt in range(1, self.max_attempts + 1):
            self.rate.wait()
            try:
                answer = self._post(body)
            except _Retry as exc:
                problem = str(exc)
                if attempt < self.max_attempts:
                    self.sleep(exc.wait if exc.wait is not None else self._backoff(attempt))
                continue
            except _Refused as exc:
                raise CallFailed(str(exc), attempts=attempt) from None
            return _reply(answer, attempts=attempt, started=started)
        raise CallFailed(f"{problem} (after {self.max_attempts} attempts)", attempts=self.max_attempts)

    def _backoff(self, attempt: int) -> float:
        return min(MAX_WAIT_SECONDS, self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 2))

    def _post(self, body: bytes) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _short(exc.read().decode("utf-8", "replace"))
            if exc.code in RETRIED:
                raise _Retry(f"HTTP {exc.code} from the endpoint: {detail}", wait=_retry_after(exc.headers.get("Retry-After"))) from None
            raise _Refused(f"HTTP {exc.code} from the endpoint: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            raise _Retry(f"the endpoint could not be reached: {getattr(exc, 'reason', exc)}") from None
        try:
            answer = json.loads(raw)
        except ValueError:
            raise _Retry(f"the endpoint answered what is not JSON: {_short(raw.decode('utf-8', 'replace'))}") from None
        if not isinstance(answer, dict):
            raise _Refused("the endpoint answered JSON that is not an object")
        return answer


class _Retry(Exception):
    def __init__(self, message: str, *, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


class _Refused(Exception):
    pass


def _retry_after(value: str | None) -> float | None:
    try:
        return min(MAX_WAIT_SECONDS, max(0.0, float(value))) if value else None
    except ValueError:
        return None


def _reply(answer: dict, *, attempts: int, started: float) -> Reply:
    try:
        text = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise CallFailed("the endpoint's answer has no choices[0].message.content", attempts=attempts) from None
    usage = answer.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return Reply(
        text=str(text or ""), prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0), attempts=attempts,
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:300] + "…"
