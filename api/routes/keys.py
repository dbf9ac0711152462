"""API keys, for admins: create (the token is shown once), list, revoke (effective at once)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from api.deps import AdminKey, Ctx
from api.errors import ApiError
from api.schemas import KeyCreate, KeyCreated, KeyList, KeyPublic
from choreo.service.keys import create_key, list_keys, revoke_key

__all__ = ["router"]

router = APIRouter(prefix="/v1/keys", tags=["keys"])


@router.post("", status_code=status.HTTP_201_CREATED, response_model=KeyCreated)
def create(body: KeyCreate, ctx: Ctx, admin: AdminKey) -> KeyCreated:
    record, token = create_key(
        ctx,
        team=body.team,
        name=body.name,
        scopes=body.scopes,
        rate_limit_per_minute=body.rate_limit_per_minute,
    )
    return KeyCreated(key=KeyPublic.from_record(record), token=token)


@router.get("", response_model=KeyList)
def list_all(ctx: Ctx, admin: AdminKey, team: Annotated[str | None, Query(max_length=63)] = None) -> KeyList:
    return KeyList(items=[KeyPublic.from_record(r) for r in list_keys(ctx, team=team)])


@router.delete("/{key_id}", response_model=KeyPublic)
def revoke(key_id: Annotated[str, Path(max_length=32)], ctx: Ctx, admin: AdminKey) -> KeyPublic:
    """Revoke a key: the next request with it gets 401."""
    record = revoke_key(ctx, key_id)
    if record is None:
        raise ApiError(404, "not_found", f"no key {key_id!r}")
    return KeyPublic.from_record(record)
