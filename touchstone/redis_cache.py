"""Django's Redis cache (settings.CACHES with CACHE_URL: the sessions), with one client per connection pool.

Django's client makes a new `redis.Redis` for every call, and making one sets up its table of some 170 reply
callbacks: a third of reading a session, which every request does. A `redis.Redis` may be shared by threads (it
takes a connection from its pool for each command and gives it back), so each pool gets one, made on first use.
"""

from typing import Any

import redis
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _Client(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, redis.Redis] = {}  # by id() of the pool: pools live as long as this client

    def get_client(self, key: Any = None, *, write: bool = False) -> redis.Redis:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's, left out of its stubs
        client = self._clients.get(id(pool))
        if client is None:  # two threads may both make one: the last kept, both work
            client = self._clients[id(pool)] = redis.Redis(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _Client
