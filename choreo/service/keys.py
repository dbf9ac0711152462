"""API keys: created with scopes for one team, stored only as a hash, revoked at once.

A key reads ``chk_<key id>_<secret>``. The id finds the record in one Redis
read; the secret is compared with its stored SHA-256 in constant time. The
secret has 256 random bits, so a plain hash is enough (no password stretching).
Every request reads the record, which is why a revocation needs no restart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import cast

from choreo.errors import ParameterError
from choreo.service.context import ServiceContext
from choreo.service.records import SCOPES, ApiKeyRecord, key_record_key, now_s

__all__ = ["TEAM_PATTERN", "create_key", "get_key", "list_keys", "revoke_key", "save_key", "verify_key"]

TEAM_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
_TOKEN = re.compile(r"^chk_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})$")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def save_key(ctx: ServiceContext, record: ApiKeyRecord) -> None:
    """Write a key record to storage (the record) and Redis (the index)."""
    ctx.storage.put_json(key_record_key(record.id), record.model_dump(mode="json"))
    index_key(ctx, record)


def index_key(ctx: ServiceContext, record: ApiKeyRecord) -> None:
    """Write a key record to Redis only (used by the rebuild)."""
    pipe = ctx.redis.pipeline()
    pipe.set(ctx.key("key", record.id), record.model_dump_json())
    pipe.sadd(ctx.key("keys"), record.id)
    pipe.execute()


def create_key(
    ctx: ServiceContext, *, team: str, name: str, scopes: list[str], rate_limit_per_minute: int | None = None
) -> tuple[ApiKeyRecord, str]:
    """Create a key; returns its record and the token, which is shown this once only.

    Raises
    ------
    ParameterError
        For a malformed team name, an unknown scope or no scope at all.
    """
    if not TEAM_PATTERN.match(team):
        raise ParameterError(f"team {team!r} must be 1-63 lowercase letters, digits, '_' or '-'")
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        names = ", ".join(unknown) or "(none)"
        raise ParameterError(f"unknown scope {names}; choose from {', '.join(SCOPES)}")
    if rate_limit_per_minute is not None and rate_limit_per_minute <= 0:
        raise ParameterError(f"rate limit must be positive, got {rate_limit_per_minute}")
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    record = ApiKeyRecord(
        id=key_id,
        team=team,
        name=name,
        scopes=sorted(set(scopes)),
        secret_sha256=_hash(secret),
        rate_limit_per_minute=rate_limit_per_minute,
    )
    save_key(ctx, record)
    return record, f"chk_{key_id}_{secret}"


def get_key(ctx: ServiceContext, key_id: str) -> ApiKeyRecord | None:
    raw = ctx.redis.get(ctx.key("key", key_id))
    return ApiKeyRecord.model_validate_json(raw) if raw else None


def verify_key(ctx: ServiceContext, token: str) -> ApiKeyRecord | None:
    """The live (unrevoked) key a token belongs to, or None."""
    match = _TOKEN.match(token)
    if not match:
        return None
    record = get_key(ctx, match.group(1))
    if record is None or record.revoked:
        return None
    if not hmac.compare_digest(record.secret_sha256, _hash(match.group(2))):
        return None
    return record


def list_keys(ctx: ServiceContext, *, team: str | None = None) -> list[ApiKeyRecord]:
    """Every key (or one team's), oldest first; secrets are never part of a record."""
    ids = sorted(cast(set[str], ctx.redis.smembers(ctx.key("keys"))))
    raws = ctx.redis.mget([ctx.key("key", i) for i in ids]) if ids else []
    records = [ApiKeyRecord.model_validate_json(r) for r in raws if r]
    if team is not None:
        records = [r for r in records if r.team == team]
    return sorted(records, key=lambda r: (r.created_at, r.id))


def revoke_key(ctx: ServiceContext, key_id: str) -> ApiKeyRecord | None:
    """Revoke a key; it is refused from the next request on. None if there is no such key."""
    record = get_key(ctx, key_id)
    if record is None:
        return None
    if not record.revoked:
        record.revoked_at = now_s()
        save_key(ctx, record)
    return record
