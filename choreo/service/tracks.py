"""Songs: checked by their first bytes, named by their SHA-256, owned per team.

The bytes of a song live once under ``tracks/<sha256>.<ext>`` whoever uploaded
them; each team that uploaded them has its own record
(``teams/<team>/tracks/<sha256>.json``), and only its own record makes the song
visible to it. A song's bytes go only when no team holds it any more.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import cast

from choreo.contracts.choices import AUDIO_EXTENSIONS
from choreo.errors import AudioError, ParameterError
from choreo.service.context import ServiceContext
from choreo.service.records import TrackRecord, song_key, team_track_key

__all__ = [
    "SHA256_PATTERN",
    "check_audio_head",
    "delete_track",
    "extension_of",
    "get_track",
    "index_track",
    "list_tracks",
    "save_track",
    "store_track",
]

SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")


def extension_of(filename: str) -> str:
    """The lowercase extension of an uploaded file's name, checked against the accepted ones.

    Raises
    ------
    ParameterError
        When the name has no extension or one that is not a song format.
    """
    ext = PurePosixPath(filename).suffix.lower().lstrip(".")
    if ext not in AUDIO_EXTENSIONS:
        raise ParameterError(
            f"file {filename!r}: extension {ext or '(none)'!r} is not a song format; "
            f"accepted: {', '.join(AUDIO_EXTENSIONS)}"
        )
    return ext


def _looks_like(ext: str, head: bytes) -> bool:
    if ext == "mp3":
        return head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0)
    if ext in ("ogg", "opus", "oga"):
        return head.startswith(b"OggS")
    if ext == "wav":
        return head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE"
    if ext == "flac":
        return head.startswith(b"fLaC") or head.startswith(b"ID3")
    if ext == "m4a":
        return head[4:8] == b"ftyp"
    if ext == "aac":
        return head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0)
    return False


def check_audio_head(filename: str, ext: str, head: bytes) -> None:
    """Refuse a file whose first bytes are not those of its claimed format.

    This catches a text file named ``.mp3`` at upload time; a file that looks
    right but does not decode fails its job later with ``bad_audio``.

    Raises
    ------
    AudioError
        With code ``empty_file`` or ``not_audio``, naming the file.
    """
    if not head:
        raise AudioError(f"file {filename!r} is empty", code="empty_file")
    if not _looks_like(ext, head):
        raise AudioError(
            f"file {filename!r} does not start like a .{ext} file ({_head_in_words(head)}), "
            "so it is not a song",
            code="not_audio",
        )


def _head_in_words(head: bytes) -> str:
    """What a file's first bytes are, for a person: the text they spell, or their hex."""
    start = head[:24]
    if all(32 <= b < 127 or b in b"\t\r\n" for b in start):
        words = start.decode("ascii").split()
        if len(head) > len(start) and len(words) > 1:  # cut short: drop the broken last word
            words = [*words[:-1], "\u2026"]
        return f"it begins with the text \u201c{' '.join(words)}\u201d"
    return f"its first bytes are {start[:8].hex(' ')}"


def save_track(ctx: ServiceContext, record: TrackRecord) -> None:
    """Write a team's track record to storage and Redis."""
    ctx.storage.put_json(team_track_key(record.team, record.sha256), record.model_dump(mode="json"))
    index_track(ctx, record)


def index_track(ctx: ServiceContext, record: TrackRecord) -> None:
    pipe = ctx.redis.pipeline()
    pipe.set(ctx.key("track", record.team, record.sha256), record.model_dump_json())
    pipe.zadd(ctx.key("tracks", record.team), {record.sha256: record.created_at})
    pipe.sadd(ctx.key("track_teams", record.sha256), record.team)
    pipe.execute()


def store_track(
    ctx: ServiceContext, *, team: str, staged_key: str, sha256: str, size_bytes: int, ext: str, filename: str
) -> TrackRecord:
    """Move a checked upload from its staging key to ``tracks/<sha256>.<ext>`` and record it for ``team``.

    The staging object is deleted. The bytes are copied even when another team
    already stored the same ones, so how long an upload takes says nothing
    about what other teams hold.
    """
    final_key = song_key(sha256, ext)
    ctx.storage.copy(staged_key, final_key)
    ctx.storage.delete(staged_key)
    existing = get_track(ctx, team, sha256)
    if existing is not None and existing.ext == ext:
        return existing
    record = TrackRecord(sha256=sha256, team=team, ext=ext, size_bytes=size_bytes, filename=filename)
    save_track(ctx, record)
    return record


def get_track(ctx: ServiceContext, team: str, sha256: str) -> TrackRecord | None:
    """The team's track, or None: another team's track is as absent as a missing one."""
    raw = ctx.redis.get(ctx.key("track", team, sha256))
    return TrackRecord.model_validate_json(raw) if raw else None


def list_tracks(ctx: ServiceContext, team: str, *, limit: int, before: float | None) -> list[TrackRecord]:
    """The team's tracks, newest first, created strictly before ``before`` when given."""
    top = f"({before}" if before is not None else "+inf"
    shas = cast(
        list[str], ctx.redis.zrevrangebyscore(ctx.key("tracks", team), top, "-inf", start=0, num=limit)
    )
    raws = ctx.redis.mget([ctx.key("track", team, s) for s in shas]) if shas else []
    return [TrackRecord.model_validate_json(r) for r in raws if r]


def delete_track(ctx: ServiceContext, record: TrackRecord) -> None:
    """Drop the team's record; the song's bytes go when no team holds them any more."""
    ctx.storage.delete(team_track_key(record.team, record.sha256))
    pipe = ctx.redis.pipeline()
    pipe.delete(ctx.key("track", record.team, record.sha256))
    pipe.zrem(ctx.key("tracks", record.team), record.sha256)
    pipe.srem(ctx.key("track_teams", record.sha256), record.team)
    pipe.scard(ctx.key("track_teams", record.sha256))
    remaining = pipe.execute()[-1]
    if remaining == 0:
        ctx.storage.delete(record.storage_key)
