"""Storage against the real SeaweedFS S3: streamed multipart writes, aborts, copies, presigned URLs, a 403."""

from __future__ import annotations

import hashlib

import httpx
import numpy as np
import pytest

from choreo.client import ChoreoClient
from choreo.errors import StorageError
from choreo.service.settings import ServiceSettings
from choreo.service.storage import ObjectMissing, Storage
from tests.service.helpers import SONGS, Album, ServiceStack
from worker.tasks import is_transient

pytestmark = pytest.mark.service


def test_a_streamed_upload_of_several_parts_arrives_whole(stack: ServiceStack) -> None:
    storage = stack.ctx.storage
    data = np.random.default_rng(3).bytes(2 * storage.part_bytes + 12345)
    upload = storage.open_upload("tests/streamed.bin")
    rng = np.random.default_rng(4)
    position = 0
    while position < len(data):
        step = int(rng.integers(1, 3 * 1024 * 1024))
        upload.write(data[position : position + step])
        position += step
    upload.complete()
    assert upload.sha256 == hashlib.sha256(data).hexdigest()
    assert storage.size_bytes("tests/streamed.bin") == len(data)
    assert storage.sha256_and_head("tests/streamed.bin")[0] == upload.sha256
    storage.copy("tests/streamed.bin", "tests/copied.bin")
    assert storage.get_bytes("tests/copied.bin") == data
    assert storage.delete_prefix("tests/") == 2
    with pytest.raises(ObjectMissing):
        storage.get_bytes("tests/copied.bin")


def test_an_aborted_streamed_upload_leaves_nothing(stack: ServiceStack) -> None:
    storage = stack.ctx.storage
    upload = storage.open_upload("tests/aborted.bin")
    upload.write(np.random.default_rng(5).bytes(storage.part_bytes + 1))
    upload.abort()
    assert storage.size_bytes("tests/aborted.bin") is None


def test_a_403_for_wrong_keys_is_permanent(stack: ServiceStack) -> None:
    """The real store's refusal of a wrong secret: no retry can change it, so a worker fails at once."""
    wrong = Storage(
        ServiceSettings(
            s3_endpoint_url=stack.env["CHOREO_S3_ENDPOINT_URL"],
            s3_access_key=stack.env["CHOREO_S3_ACCESS_KEY"],
            s3_secret_key="not-the-secret",
            s3_bucket=stack.ctx.storage.bucket,
        )
    )
    with pytest.raises(StorageError, match="refused to reach bucket .*403") as info:
        wrong.ping()
    assert not info.value.transient and not is_transient(info.value)
    with pytest.raises(StorageError, match="refused to write") as info:
        wrong.put_bytes("tests/refused.bin", b"x")
    assert not is_transient(info.value)
    assert stack.ctx.storage.size_bytes("tests/refused.bin") is None


def test_the_client_sends_big_songs_through_a_presigned_url(stack: ServiceStack, album: Album) -> None:
    with ChoreoClient(stack.api_url, stack.tokens["content"], presigned_from_bytes=1) as client:
        track = client.upload_track(SONGS["vibe_ace"])
    assert track["sha256"] == album.tracks["vibe_ace"]["sha256"]
    url = stack.ctx.storage.presign_get(f"tracks/{track['sha256']}.ogg", expiry_s=60)
    assert hashlib.sha256(httpx.get(url, timeout=60).content).hexdigest() == track["sha256"]
