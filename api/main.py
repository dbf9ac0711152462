"""The FastAPI application: ``uvicorn --factory api.main:create_app``.

The app validates input, stores songs, records jobs and enqueues the workers'
tasks by name; it never imports an engine or runs a pipeline stage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from api.errors import install_error_handlers
from api.guard import RequestGuard
from api.metrics import install_metrics
from api.openapi_links import install_links
from api.routes import audio, batches, health, jobs, keys, libraries, me, routines, studio, tracks
from api.schemas import ERROR_RESPONSES
from choreo import __version__
from choreo.service.context import ServiceContext, get_context
from choreo.service.queue import make_celery

__all__ = ["create_app"]


def create_app(ctx: ServiceContext | None = None) -> FastAPI:
    """An app bound to ``ctx`` (by default the one built from the environment)."""
    ctx = ctx or get_context()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        ctx.storage.ensure_bucket()
        origins = [o.strip() for o in ctx.settings.studio_origins.split(",") if o.strip()]
        if origins:
            ctx.storage.allow_browser_origins(origins)
        yield

    app = FastAPI(
        title="Choreo",
        version=__version__,
        description="Songs in, beat-synchronous 3D dances out. Send `Authorization: Bearer <key>`.",
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
    )
    app.state.ctx = ctx
    app.state.celery = make_celery(ctx.settings, name="choreo-api")
    install_error_handlers(app)
    # The guard runs inside the metrics middleware, so refused requests are counted too.
    app.add_middleware(RequestGuard, ctx=ctx)
    install_metrics(app, ctx, app.state.celery)
    install_links(app)
    for module in (health, tracks, jobs, audio, batches, routines, keys, me, studio, libraries):
        app.include_router(module.router)
    studio.install_studio(app, studio.studio_dir(ctx.settings.studio_dir))
    return app
