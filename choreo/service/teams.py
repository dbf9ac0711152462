"""What a team holds apart from its objects: the secret that signs its callbacks.

Each team has its own HMAC key, so no team's receiver can forge another team's
callbacks. It is made (or replaced: a rotation) by an admin of the team, shown
that once, and kept in storage (``teams/<team>/callback_secret.json``, the
record) and in Redis (the index); workers read it when they sign.
"""

from __future__ import annotations

import secrets

from choreo.service.context import ServiceContext
from choreo.service.records import TeamSecretRecord, team_secret_key

__all__ = ["callback_secret", "index_team_secret", "rotate_callback_secret"]


def index_team_secret(ctx: ServiceContext, record: TeamSecretRecord) -> None:
    """Write a team's secret to Redis only (the rebuild)."""
    ctx.redis.set(ctx.key("callback_secret", record.team), record.model_dump_json())


def rotate_callback_secret(ctx: ServiceContext, team: str) -> TeamSecretRecord:
    """Give ``team`` a new callback secret (the old one stops signing at once); returns it, to show once."""
    record = TeamSecretRecord(team=team, secret=secrets.token_urlsafe(32))
    ctx.storage.put_json(team_secret_key(team), record.model_dump(mode="json"))
    index_team_secret(ctx, record)
    return record


def callback_secret(ctx: ServiceContext, team: str) -> str | None:
    """The secret that signs ``team``'s callbacks, or None while it has none."""
    raw = ctx.redis.get(ctx.key("callback_secret", team))
    return TeamSecretRecord.model_validate_json(raw).secret if raw else None
