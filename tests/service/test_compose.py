"""docker-compose.yml must at least validate: the machines here have a Docker client but no engine."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.service.helpers import REPO_ROOT

SERVICES = {"redis", "minio", "minio-bucket", "api", "cpu-worker", "gpu-worker"}


def _compose() -> list[str]:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    pytest.skip("neither 'docker compose' nor 'docker-compose' is installed (apt-get install docker-compose)")


def test_compose_file_validates_and_names_every_service() -> None:
    compose = _compose()
    check = subprocess.run([*compose, "config", "-q"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    services = subprocess.run(
        [*compose, "config", "--services"], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert set(services.stdout.split()) == SERVICES
    rendered = subprocess.run([*compose, "config"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert rendered.count("healthcheck:") == 5, "redis, minio, api and both workers need a health check"
    assert "appendonly" in rendered
    assert "driver: nvidia" in rendered
    assert "CHOREO_CALLBACK_SECRET" not in rendered, "callbacks are signed per team"
    minio = rendered.split("\n  minio:\n", 1)[1].split("\n  minio-bucket:", 1)[0]
    published = [line for line in minio.splitlines() if "9000" in line or "9001" in line or "host_ip" in line]
    assert published and all("0.0.0.0" not in line for line in published), published  # noqa: S104  it checks that nothing is
    assert "127.0.0.1" in minio, "MinIO must be published on loopback only"
