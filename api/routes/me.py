"""Who the caller's key is and what it may do: the Studio shapes its page from this."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from api.deps import current_key
from choreo.service.records import ApiKeyRecord

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["keys"])

_ABILITIES = {
    "upload": ("content",),
    "submit": ("content",),
    "watch_jobs": ("content",),
    "publish": ("content",),
    "browse_routines": ("content", "fitness"),
    "manage_keys": ("admin",),
}
"""What the page may offer, by the scopes that allow it (the routes check the same scopes)."""


class WhoAmI(BaseModel):
    key_id: str
    name: str
    team: str
    scopes: list[str]
    rate_limit_per_minute: int | None
    can: dict[str, bool] = Field(description=f"What the key may do: {', '.join(_ABILITIES)}.")


@router.get("/me", response_model=WhoAmI)
def whoami(key: Annotated[ApiKeyRecord, Depends(current_key)]) -> WhoAmI:
    """The caller's key (never its secret), its team and scopes, and what they allow."""
    return WhoAmI(
        key_id=key.id,
        name=key.name,
        team=key.team,
        scopes=key.scopes,
        rate_limit_per_minute=key.rate_limit_per_minute,
        can={ability: bool(set(scopes) & set(key.scopes)) for ability, scopes in _ABILITIES.items()},
    )
