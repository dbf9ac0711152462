"""API keys and the team's callback secret, for admins.

An admin key manages its own team: create keys (the token is shown once), list,
revoke (effective at once), and make or rotate the callback secret (shown once).
Another team's keys are managed only with the ``operator`` scope, which only an
operator (or the server host's ``choreo keys``) can grant.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from api.deps import AdminKey, Ctx
from api.errors import ApiError
from api.schemas import CallbackSecretCreated, KeyCreate, KeyCreated, KeyList, KeyPublic
from choreo.service.keys import create_key, get_key, list_keys, revoke_key
from choreo.service.records import ApiKeyRecord
from choreo.service.teams import rotate_callback_secret

__all__ = ["router"]

router = APIRouter(tags=["keys"])


def _operator(key: ApiKeyRecord) -> bool:
    return "operator" in key.scopes


@router.post("/v1/keys", status_code=status.HTTP_201_CREATED, response_model=KeyCreated)
def create(body: KeyCreate, ctx: Ctx, admin: AdminKey) -> KeyCreated:
    """Create a key for the admin's team (an operator: for any team)."""
    if not _operator(admin):
        if body.team != admin.team:
            raise ApiError(403, "forbidden", f"an admin key of team {admin.team} manages only that team")
        if "operator" in body.scopes:
            raise ApiError(403, "forbidden", "only an operator key can grant the operator scope")
    record, token = create_key(
        ctx,
        team=body.team,
        name=body.name,
        scopes=body.scopes,
        rate_limit_per_minute=body.rate_limit_per_minute,
    )
    return KeyCreated(key=KeyPublic.from_record(record), token=token)


@router.get("/v1/keys", response_model=KeyList)
def list_all(ctx: Ctx, admin: AdminKey, team: Annotated[str | None, Query(max_length=63)] = None) -> KeyList:
    """The admin's team's keys (an operator: every team's, or ``team``'s)."""
    if not _operator(admin):
        team = admin.team
    return KeyList(items=[KeyPublic.from_record(r) for r in list_keys(ctx, team=team)])


@router.delete("/v1/keys/{key_id}", response_model=KeyPublic)
def revoke(key_id: Annotated[str, Path(max_length=32)], ctx: Ctx, admin: AdminKey) -> KeyPublic:
    """Revoke a key: the next request with it gets 401. Another team's key is 404 to an admin."""
    found = get_key(ctx, key_id)
    if found is None or (found.team != admin.team and not _operator(admin)):
        raise ApiError(404, "not_found", f"no key {key_id!r}")
    record = revoke_key(ctx, key_id)
    if record is None:
        raise ApiError(404, "not_found", f"no key {key_id!r}")
    return KeyPublic.from_record(record)


@router.post(
    "/v1/team/callback-secret", status_code=status.HTTP_201_CREATED, response_model=CallbackSecretCreated
)
def make_callback_secret(ctx: Ctx, admin: AdminKey) -> CallbackSecretCreated:
    """Make (or rotate) the secret that signs the team's callbacks; it is shown this once."""
    record = rotate_callback_secret(ctx, admin.team)
    return CallbackSecretCreated(team=record.team, secret=record.secret, created_at=record.created_at)
