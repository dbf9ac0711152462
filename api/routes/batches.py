"""Batches: an album's jobs and their combined progress."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import Ctx, OwnedBatch
from api.links import batch_public
from api.schemas import BatchPublic

__all__ = ["router"]

router = APIRouter(prefix="/v1/batches", tags=["jobs"])


@router.get("/{batch_id}", response_model=BatchPublic)
def get_one_batch(batch: OwnedBatch, ctx: Ctx) -> BatchPublic:
    """The batch's state (``running`` or ``finished``), mean progress and jobs per state."""
    return batch_public(ctx, batch)
