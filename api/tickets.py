"""Download tickets: links a browser can follow without the API key in them.

An ``<audio>`` element or a download link cannot send an ``Authorization`` header, so the page
first asks (with its key) for a ticket: a random, short-lived token kept in Redis that admits
GETs of one object (a job's song, a batch's archive) and nothing else, for as long as the key
that asked is live. Scripts may send the key as a header instead.
"""

from __future__ import annotations

import json
import secrets
import time

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials

from api.deps import current_key
from api.errors import ApiError
from choreo.service.context import ServiceContext
from choreo.service.keys import get_key
from choreo.service.records import ApiKeyRecord

__all__ = ["issue_ticket", "team_admitted"]


def issue_ticket(ctx: ServiceContext, kind: str, object_id: str, key: ApiKeyRecord) -> tuple[str, float]:
    """A new ticket admitting ``kind`` GETs of ``object_id`` for ``presign_expiry_s``; returns it and
    when it expires (Unix time)."""
    token = secrets.token_urlsafe(24)
    expiry_s = ctx.settings.presign_expiry_s
    grant = {"id": object_id, "team": key.team, "key_id": key.id}
    ctx.redis.set(ctx.key(f"{kind}-ticket", token), json.dumps(grant), ex=expiry_s)
    return token, time.time() + expiry_s


def team_admitted(
    ctx: ServiceContext,
    request: Request,
    credentials: HTTPAuthorizationCredentials | None,
    *,
    kind: str,
    object_id: str,
    ticket: str | None,
) -> str:
    """The team whose ``object_id`` the request may read: by its ticket, or by a content key.

    Raises
    ------
    ApiError
        401 for an expired or foreign ticket, a revoked key behind it, or no key; 403 for a key
        without the ``content`` scope.
    """
    if ticket is not None:
        raw = ctx.redis.get(ctx.key(f"{kind}-ticket", ticket))
        grant = json.loads(raw) if raw else None
        if grant is None or grant["id"] != object_id:
            raise ApiError(401, "invalid_ticket", f"the {kind} link has expired; ask for a new one")
        if (key := get_key(ctx, grant["key_id"])) is None or key.revoked:
            raise ApiError(401, "invalid_key", "the API key that asked for this link was revoked")
        return str(grant["team"])
    key = current_key(request, credentials)
    if "content" not in key.scopes:
        raise ApiError(403, "forbidden", f"this key has scopes {', '.join(key.scopes)}; this needs content")
    return key.team
