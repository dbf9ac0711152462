"""Object storage through boto3: MinIO, SeaweedFS and AWS S3 alike.

Every failure becomes a :class:`~choreo.errors.StorageError`. Only the outages,
which trying again could fix (no connection, a timeout, a read cut short, a 5xx
answer, throttling), are marked ``transient`` so workers retry them (boto3's
transfer errors too, which are not botocore's); a refusal (403, a bad key name,
missing credentials) is permanent. A missing object is reported as ``None`` or
:class:`ObjectMissing`, never as an exception from botocore.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
from boto3.exceptions import Boto3Error
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError, IncompleteReadError
from botocore.exceptions import ConnectionError as BotoConnectionError
from s3transfer.exceptions import RetriesExceededError as TransferRetriesExceededError

from choreo.errors import StorageError
from choreo.service.settings import ServiceSettings

__all__ = ["ObjectMissing", "Storage", "StreamingUpload"]

_MISSING_CODES = {"404", "NoSuchKey", "NotFound", "NoSuchUpload"}

_TRANSFER_ERRORS = (ClientError, BotoCoreError, Boto3Error, TransferRetriesExceededError)
"""What boto3's managed transfers raise: besides botocore's own, ``S3UploadFailedError`` (a 5xx
during an upload) and the retries-exceeded errors of a download."""

_OUTAGES = (BotoConnectionError, HTTPClientError, IncompleteReadError, TransferRetriesExceededError)
"""Errors of a store that did not answer: no connection (refused, DNS, TLS, proxy), a connect or
read timeout, a connection closed or a body cut short, a download's retries used up."""

_THROTTLED_CODES = {"SlowDown", "RequestTimeout"}


class ObjectMissing(StorageError):
    """The object asked for does not exist."""

    code = "not_found"


def _wrap(exc: Exception, action: str, key: str) -> StorageError:
    """The :class:`StorageError` for a botocore, boto3 or s3transfer error; transient for outages only."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in _MISSING_CODES:
            return ObjectMissing(f"storage has no object {key!r}")
        transient = status >= 500 or status in (408, 429) or code in _THROTTLED_CODES
        return StorageError(f"storage refused to {action} {key!r}: {code or status}", transient=transient)
    cause = exc.__context__ if isinstance(exc, Boto3Error) and exc.__context__ is not None else exc
    if cause is not exc and isinstance(cause, (ClientError, BotoCoreError)):
        return _wrap(cause, action, key)
    if isinstance(exc, _OUTAGES):
        return StorageError(f"storage unreachable while trying to {action} {key!r}: {exc}", transient=True)
    return StorageError(f"storage could not {action} {key!r}: {exc}")


class Storage:
    """One bucket, with the operations the service needs.

    Parameters
    ----------
    settings : endpoint, keys, bucket and multipart part size
    """

    def __init__(self, settings: ServiceSettings) -> None:
        self.bucket = settings.s3_bucket
        self.part_bytes = settings.s3_part_bytes
        self._client = self._make_client(settings, settings.s3_endpoint_url)
        self._presigner = self._make_client(
            settings, settings.s3_public_endpoint_url or settings.s3_endpoint_url
        )
        self._transfer = TransferConfig(
            multipart_threshold=self.part_bytes, multipart_chunksize=self.part_bytes, max_concurrency=4
        )

    @staticmethod
    def _make_client(settings: ServiceSettings, endpoint_url: str | None) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key.get_secret_value(),
            aws_secret_access_key=settings.s3_secret_key.get_secret_value(),
            config=Config(
                signature_version="s3v4",
                s3={"addressing_style": "path"},
                retries={"max_attempts": 3, "mode": "standard"},
                connect_timeout=5,
                read_timeout=60,
            ),
        )

    # -- bucket -------------------------------------------------------------------------------------------
    def ensure_bucket(self) -> None:
        """Create the bucket if it does not exist yet."""
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except ClientError:
            try:
                self._client.create_bucket(Bucket=self.bucket)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou",):
                    raise _wrap(exc, "create bucket", self.bucket) from exc
        except BotoCoreError as exc:
            raise _wrap(exc, "reach bucket", self.bucket) from exc

    def allow_browser_origins(self, origins: list[str]) -> bool:
        """Let web pages from ``origins`` GET and PUT presigned URLs (the bucket's CORS rules).

        Returns False where the store has no bucket CORS API (MinIO sets CORS
        by its ``MINIO_API_CORS_ALLOW_ORIGIN`` variable instead).
        """
        rules = {
            "CORSRules": [
                {
                    "AllowedOrigins": origins,
                    "AllowedMethods": ["GET", "PUT", "HEAD"],
                    "AllowedHeaders": ["*"],
                    "ExposeHeaders": ["ETag", "Content-Length", "Content-Range"],
                    "MaxAgeSeconds": 3600,
                }
            ]
        }
        try:
            self._client.put_bucket_cors(Bucket=self.bucket, CORSConfiguration=rules)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NotImplemented", "MethodNotAllowed"):
                return False
            raise _wrap(exc, "set CORS of", self.bucket) from exc
        except BotoCoreError as exc:
            raise _wrap(exc, "set CORS of", self.bucket) from exc
        return True

    def ping(self) -> None:
        """Raise :class:`StorageError` unless the bucket answers."""
        try:
            self._client.head_bucket(Bucket=self.bucket)
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "reach bucket", self.bucket) from exc

    # -- small objects ------------------------------------------------------------------------------------
    def put_bytes(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        try:
            self._client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=content_type)
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "write", key) from exc

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "read", key) from exc

    def put_json(self, key: str, obj: Any) -> None:
        self.put_bytes(key, json.dumps(obj, sort_keys=True).encode(), content_type="application/json")

    def get_json(self, key: str) -> Any | None:
        """The parsed JSON object at ``key``, or None when there is none."""
        try:
            return json.loads(self.get_bytes(key))
        except ObjectMissing:
            return None

    # -- files --------------------------------------------------------------------------------------------
    def upload_file(self, path: Path, key: str, *, content_type: str = "application/octet-stream") -> None:
        """Upload a local file; files over one part go up as a multipart upload."""
        try:
            self._client.upload_file(
                str(path), self.bucket, key, ExtraArgs={"ContentType": content_type}, Config=self._transfer
            )
        except _TRANSFER_ERRORS as exc:
            raise _wrap(exc, "upload", key) from exc

    def download_file(self, key: str, path: Path) -> None:
        try:
            self._client.download_file(self.bucket, key, str(path), Config=self._transfer)
        except _TRANSFER_ERRORS as exc:
            raise _wrap(exc, "download", key) from exc

    def size_bytes(self, key: str) -> int | None:
        """The object's size, or None when it does not exist."""
        try:
            return int(self._client.head_object(Bucket=self.bucket, Key=key)["ContentLength"])
        except (ClientError, BotoCoreError) as exc:
            err = _wrap(exc, "inspect", key)
            if isinstance(err, ObjectMissing):
                return None
            raise err from exc

    def open_range(self, key: str, start: int, end: int) -> Iterator[bytes]:
        """Stream bytes ``start..end`` (inclusive) of an object in chunks of up to 256 KiB."""
        try:
            body = self._client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end}")["Body"]
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "read", key) from exc
        return body.iter_chunks(chunk_size=256 * 1024)

    def modified_at(self, key: str) -> float | None:
        """When the object was last written (Unix time), or None when it does not exist."""
        try:
            return self._client.head_object(Bucket=self.bucket, Key=key)["LastModified"].timestamp()
        except (ClientError, BotoCoreError) as exc:
            err = _wrap(exc, "inspect", key)
            if isinstance(err, ObjectMissing):
                return None
            raise err from exc

    def sha256_and_head(self, key: str, *, head_bytes: int = 64) -> tuple[str, int, bytes]:
        """Stream an object once: its SHA-256, its size and its first ``head_bytes`` bytes."""
        digest = hashlib.sha256()
        size = 0
        head = b""
        try:
            body = self._client.get_object(Bucket=self.bucket, Key=key)["Body"]
            for chunk in body.iter_chunks(chunk_size=1024 * 1024):
                if len(head) < head_bytes:
                    head += chunk[: head_bytes - len(head)]
                digest.update(chunk)
                size += len(chunk)
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "read", key) from exc
        return digest.hexdigest(), size, head

    def copy(self, source_key: str, dest_key: str) -> None:
        """Server-side copy within the bucket."""
        try:
            self._client.copy(
                {"Bucket": self.bucket, "Key": source_key}, self.bucket, dest_key, Config=self._transfer
            )
        except _TRANSFER_ERRORS as exc:
            raise _wrap(exc, "copy", source_key) from exc

    # -- listing and deleting -----------------------------------------------------------------------------
    def list_keys(self, prefix: str) -> Iterator[str]:
        try:
            paginator = self._client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                for item in page.get("Contents", []):
                    yield item["Key"]
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "list", prefix) from exc

    def delete(self, key: str) -> None:
        try:
            self._client.delete_object(Bucket=self.bucket, Key=key)
        except (ClientError, BotoCoreError) as exc:
            err = _wrap(exc, "delete", key)
            if not isinstance(err, ObjectMissing):
                raise err from exc

    def delete_prefix(self, prefix: str) -> int:
        """Delete every object under ``prefix``; returns how many went."""
        if not prefix.endswith("/"):
            raise StorageError(f"refusing to delete prefix {prefix!r}: it must end with '/'")
        keys = list(self.list_keys(prefix))
        for start in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[start : start + 1000]]
            try:
                self._client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
            except (ClientError, BotoCoreError) as exc:
                raise _wrap(exc, "delete", prefix) from exc
        return len(keys)

    # -- presigned URLs -----------------------------------------------------------------------------------
    def presign_get(self, key: str, *, expiry_s: int, filename: str | None = None) -> str:
        params: dict[str, Any] = {"Bucket": self.bucket, "Key": key}
        if filename:
            params["ResponseContentDisposition"] = f'attachment; filename="{filename}"'
        return self._presigner.generate_presigned_url("get_object", Params=params, ExpiresIn=expiry_s)

    def presign_put(self, key: str, *, expiry_s: int, size_bytes: int) -> tuple[str, dict[str, str]]:
        """A URL that writes ``key`` once, and the headers every PUT to it must send.

        Both headers are signed: the length (exactly ``size_bytes`` bytes) and
        ``If-None-Match: *``, so a PUT without it fails the signature (403) and
        one to a key that already holds an object is refused (412). Whoever
        leaves an object at ``key`` thereby ends the URL, before its expiry.
        """
        params = {"Bucket": self.bucket, "Key": key, "ContentLength": size_bytes, "IfNoneMatch": "*"}
        url = self._presigner.generate_presigned_url("put_object", Params=params, ExpiresIn=expiry_s)
        return url, {"Content-Length": str(size_bytes), "If-None-Match": "*"}

    # -- streaming ----------------------------------------------------------------------------------------
    def open_upload(self, key: str, *, content_type: str = "application/octet-stream") -> StreamingUpload:
        """A writer that streams bytes to ``key`` in parts, so no body is ever held whole."""
        return StreamingUpload(self, key, content_type)

    @property
    def client(self) -> Any:
        """The boto3 client, for the streaming writer."""
        return self._client


class StreamingUpload:
    """Bytes written in any pieces become one object: one PUT if small, else a multipart upload.

    Call :meth:`write` as data arrives, then :meth:`complete`, or :meth:`abort`
    to leave nothing behind.
    """

    def __init__(self, storage: Storage, key: str, content_type: str) -> None:
        self._storage = storage
        self._key = key
        self._content_type = content_type
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []
        self.size_bytes = 0
        self._digest = hashlib.sha256()
        self.head = b""

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def write(self, data: bytes) -> None:
        self._digest.update(data)
        if len(self.head) < 64:
            self.head += data[: 64 - len(self.head)]
        self.size_bytes += len(data)
        self._buffer += data
        while len(self._buffer) >= self._storage.part_bytes:
            self._flush_part(bytes(self._buffer[: self._storage.part_bytes]))
            del self._buffer[: self._storage.part_bytes]

    def _flush_part(self, data: bytes) -> None:
        client, bucket = self._storage.client, self._storage.bucket
        try:
            if self._upload_id is None:
                created = client.create_multipart_upload(
                    Bucket=bucket, Key=self._key, ContentType=self._content_type
                )
                self._upload_id = created["UploadId"]
            number = len(self._parts) + 1
            answer = client.upload_part(
                Bucket=bucket, Key=self._key, UploadId=self._upload_id, PartNumber=number, Body=data
            )
            self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "upload part of", self._key) from exc

    def complete(self) -> None:
        client, bucket = self._storage.client, self._storage.bucket
        if self._upload_id is None:
            self._storage.put_bytes(self._key, bytes(self._buffer), content_type=self._content_type)
            return
        if self._buffer:
            self._flush_part(bytes(self._buffer))
            self._buffer.clear()
        try:
            client.complete_multipart_upload(
                Bucket=bucket, Key=self._key, UploadId=self._upload_id, MultipartUpload={"Parts": self._parts}
            )
        except (ClientError, BotoCoreError) as exc:
            raise _wrap(exc, "complete upload of", self._key) from exc

    def abort(self) -> None:
        if self._upload_id is not None:
            with contextlib.suppress(ClientError, BotoCoreError):
                self._storage.client.abort_multipart_upload(
                    Bucket=self._storage.bucket, Key=self._key, UploadId=self._upload_id
                )
        self._buffer.clear()
