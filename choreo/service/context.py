"""The connections a process of the service holds: settings, Redis and storage.

API and workers build one :class:`ServiceContext` each through
:func:`get_context`; tests build their own from their own settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import redis

from choreo.service.settings import ServiceSettings, get_service_settings
from choreo.service.storage import Storage

__all__ = ["ServiceContext", "get_context"]


@dataclass
class ServiceContext:
    """Settings plus the Redis client and the storage bucket they point at."""

    settings: ServiceSettings
    redis: redis.Redis
    storage: Storage

    @classmethod
    def from_settings(cls, settings: ServiceSettings) -> ServiceContext:
        client = redis.Redis.from_url(
            settings.redis_url, decode_responses=True, socket_timeout=10, socket_connect_timeout=5
        )
        return cls(settings=settings, redis=client, storage=Storage(settings))

    def key(self, *parts: str) -> str:
        """A Redis key under the service's prefix, e.g. ``key("job", job_id)``."""
        return self.settings.redis_prefix + ":".join(parts)


@lru_cache
def get_context() -> ServiceContext:
    """The process's context, built once from the environment."""
    return ServiceContext.from_settings(get_service_settings())
