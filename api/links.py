"""Public views that several routers build: a batch's progress and presigned download links."""

from __future__ import annotations

from api.schemas import ArtifactLink, BatchPublic
from choreo.service.context import ServiceContext
from choreo.service.jobs import batch_status
from choreo.service.records import BatchRecord

__all__ = ["artifact_links", "batch_public"]


def batch_public(ctx: ServiceContext, batch: BatchRecord) -> BatchPublic:
    """A batch with its state, mean progress and jobs per state."""
    status = batch_status(ctx, batch)
    return BatchPublic(
        id=batch.id,
        name=batch.name,
        job_ids=batch.job_ids,
        state=str(status["state"]),
        progress=float(status["progress"]),
        counts=dict(status["counts"]),
        created_at=batch.created_at,
    )


def artifact_links(ctx: ServiceContext, keys: dict[str, str]) -> list[ArtifactLink]:
    """Presigned download links for storage keys by kind, expiring after ``presign_expiry_s``."""
    links = []
    for kind, storage_key in sorted(keys.items()):
        filename = storage_key.rsplit("/", 1)[-1]
        url = ctx.storage.presign_get(storage_key, expiry_s=ctx.settings.presign_expiry_s, filename=filename)
        links.append(ArtifactLink(kind=kind, filename=filename, url=url))
    return links
