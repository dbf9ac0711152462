"""Settings of the service, read from ``CHOREO_*`` environment variables.

The service's settings live apart from :class:`choreo.settings.Settings` (what a
render does) because only the API and the workers need them. Development runs
work with the defaults; test and production refuse the known default secrets.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from choreo.service.forwarded import Network, parse_networks

__all__ = ["KNOWN_DEFAULT_SECRETS", "PLACEHOLDER_SECRET", "ServiceSettings", "get_service_settings"]

PLACEHOLDER_SECRET = "change-me"  # noqa: S105  the placeholder itself, refused outside development
"""The default of every secret; accepted in development only."""

KNOWN_DEFAULT_SECRETS = frozenset({PLACEHOLDER_SECRET, "choreo-dev", "choreo-dev-secret", "minioadmin"})
"""Credentials that ship in this repository or in MinIO's image: refused outside development."""


class ServiceSettings(BaseSettings):
    """Where the service's parts are and the limits it enforces."""

    model_config = SettingsConfigDict(env_prefix="CHOREO_", extra="ignore")

    environment: Literal["development", "test", "production"] = Field(
        default="development", description="test and production refuse the known default secrets."
    )
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", description="Index, broker and results.")
    redis_prefix: str = Field(default="choreo:", description="Prefix of every index key the service writes.")

    s3_endpoint_url: str | None = Field(default=None, description="S3 endpoint; None means AWS.")
    s3_public_endpoint_url: str | None = Field(
        default=None, description="Endpoint in presigned URLs, when clients reach S3 by another name."
    )
    studio_origins: str = Field(
        default="",
        description="Comma-separated web origins of the Studio; the bucket's CORS rules admit them.",
    )
    studio_dir: str = Field(
        default="", description="Folder of the built Studio page; empty means studio/dist of this checkout."
    )
    s3_region: str = Field(default="us-east-1")
    s3_access_key: SecretStr = Field(default=SecretStr(PLACEHOLDER_SECRET))
    s3_secret_key: SecretStr = Field(default=SecretStr(PLACEHOLDER_SECRET))
    s3_bucket: str = Field(default="choreo")
    s3_part_bytes: int = Field(default=8 * 1024 * 1024, ge=5 * 1024 * 1024, description="Multipart part.")

    max_upload_bytes: int = Field(default=200 * 1024 * 1024, gt=0, description="Largest song accepted.")
    presign_expiry_s: int = Field(default=3600, gt=0, le=7 * 24 * 3600, description="Life of presigned URLs.")
    max_request_bytes: int = Field(
        default=1024 * 1024, gt=0, description="Largest body of any request but a song upload."
    )
    rate_limit_per_minute: int = Field(default=600, gt=0, description="Requests per key per minute.")
    auth_failures_per_minute: int = Field(
        default=30,
        gt=0,
        description="Failed authentications per client address per minute; past it that address's "
        "requests without a valid key get 429 (a valid key is still served).",
    )
    trusted_proxies: str = Field(
        default="",
        description="Comma-separated addresses or CIDR networks of the proxies in front of the API: "
        "only their X-Forwarded-For names the client's address (choreo.service.forwarded).",
    )
    dedup_stale_after_s: int = Field(
        default=3600, gt=0, description="A live job unchanged this long no longer deduplicates new requests."
    )
    max_tracks_per_submit: int = Field(default=100, gt=0, description="Largest album in one request.")

    callback_allow_loopback: bool = Field(
        default=False, description="Let callbacks reach loopback receivers (development only)."
    )
    callback_max_attempts: int = Field(default=6, ge=1)
    callback_timeout_s: float = Field(default=10.0, gt=0)

    stage_timeout_s: int = Field(
        default=75,
        gt=0,
        description="Longest one stage (prepare, generate, finish) may run: a decode past it is killed and "
        "its job fails with timeout (worker.isolated); any stage's lease is no longer renewed after it, so "
        "the reaper gives it out again.",
    )
    lease_ttl_s: float = Field(
        default=10.0,
        gt=0,
        description="Life of a running stage's lease, renewed every third of it: a worker that died or "
        "froze loses its stages this long after its last renewal, and the reaper sends them again.",
    )
    reap_interval_s: float = Field(
        default=2.0, gt=0, description="How often the workers' reaper looks for stages that lost their lease."
    )
    stage_max_requeues: int = Field(
        default=3,
        ge=0,
        description="Times the reaper gives one stage of a job out again; lost once more, the job fails "
        "as stalled.",
    )
    visibility_timeout_s: int = Field(
        default=0,
        ge=0,
        description="How long a taken task may go unacknowledged before the broker hands it out again; "
        "0 derives stage_timeout_s + 15. The backstop behind the leases, for a message a worker died "
        "with before it took the lease (choreo.service.reaper).",
    )
    task_max_retries: int = Field(default=8, ge=0, description="Retries of a stage on transient errors.")
    retry_backoff_cap_s: int = Field(
        default=30, gt=0, description="Longest wait between two tries; stays under the visibility timeout."
    )

    @cached_property
    def trusted_proxy_networks(self) -> tuple[Network, ...]:
        """:attr:`trusted_proxies` parsed, once."""
        return parse_networks(self.trusted_proxies)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_parse(cls, value: str) -> str:
        parse_networks(value)
        return value

    @model_validator(mode="after")
    def _derive_and_refuse(self) -> ServiceSettings:
        if self.visibility_timeout_s == 0:
            self.visibility_timeout_s = self.stage_timeout_s + 15
        if self.visibility_timeout_s <= max(self.stage_timeout_s, self.retry_backoff_cap_s):
            raise ValueError(
                f"visibility_timeout_s ({self.visibility_timeout_s}) must exceed stage_timeout_s "
                f"({self.stage_timeout_s}) and retry_backoff_cap_s ({self.retry_backoff_cap_s}), "
                "or a running or waiting stage is handed out twice"
            )
        if self.environment != "development":
            for name in ("s3_access_key", "s3_secret_key"):
                if getattr(self, name).get_secret_value() in KNOWN_DEFAULT_SECRETS:
                    raise ValueError(
                        f"CHOREO_{name.upper()} is a known default; set a secret of your own "
                        f"(CHOREO_ENVIRONMENT={self.environment})"
                    )
        if self.callback_allow_loopback and self.environment == "production":
            raise ValueError("CHOREO_CALLBACK_ALLOW_LOOPBACK is for development; production refuses it")
        return self


@lru_cache
def get_service_settings() -> ServiceSettings:
    """The process's service settings, read once from the environment."""
    return ServiceSettings()
