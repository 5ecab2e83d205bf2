"""Sessions kept in the database and read through a shared cache (settings.SESSION_ENGINE when CACHE_URL is set).

Every request reads its session, so reading it from Redis instead of PostgreSQL saves a query on each one.
The database stays the record: Django's cached_db writes every change through to it and deletes a session
from both on logout, so a logged-out session is gone for every web process at once (signed-cookie sessions
could not be revoked; a per-process cache would keep serving a logged-out session to the other processes).

Two additions make the cache a shortcut only, never the thing that decides:
- a cached copy lives at most SESSION_CACHE_SECONDS, so if a logout ever fails to delete it (Redis was
  unreachable at that moment) it outlives the logout by no more than that;
- an unreachable cache is skipped: the session is read from and written to the database alone, and the log
  has one line when the cache is lost and one when it answers again (Redis down is not every page down).
"""

import logging
import threading

from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.core.cache.backends.base import BaseCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


class _CacheState:
    """Whether the session cache answered last time, so an outage is logged once, not once per request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._down = False

    def failed(self, exc: Exception) -> None:
        with self._lock:
            was_down, self._down = self._down, True
        if not was_down:
            log.warning("session cache unavailable, using the database alone until it answers: %s", exc)

    def answered(self) -> None:
        if self._down:
            with self._lock:
                was_down, self._down = self._down, False
            if was_down:
                log.warning("session cache answers again")


_state = _CacheState()


class _TolerantCache:
    """The calls cached_db makes on its cache, each of which shrugs off a cache that cannot be reached."""

    def __init__(self, cache) -> None:
        self._cache = cache

    def _call(self, method: str, *args, default=None):
        try:
            result = getattr(self._cache, method)(*args)
        except (RedisError, OSError) as exc:  # refused, timed out, reset: no cache this time
            _state.failed(exc)
            return default
        _state.answered()
        return result

    def get(self, key: str):
        return self._call("get", key)

    def set(self, key: str, value, timeout: int | None) -> None:
        cap = settings.SESSION_CACHE_SECONDS
        self._call("set", key, value, cap if timeout is None else min(timeout, cap))

    def delete(self, key: str) -> None:
        self._call("delete", key)

    def __contains__(self, key: str) -> bool:
        return self._call("__contains__", key, default=False)

    def __getattr__(self, name: str):
        # The async twins (aget, aset, …), used only by async views, which this app has none of: passed through.
        return getattr(self._cache, name)


class SessionStore(cached_db.SessionStore):
    _cache: BaseCache | _TolerantCache  # cached_db sets Django's cache (the stubs leave it out); wrapped below

    def __init__(self, session_key: str | None = None) -> None:
        super().__init__(session_key)
        self._cache = _TolerantCache(self._cache)
