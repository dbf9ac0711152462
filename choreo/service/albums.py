"""Albums: a batch as its songs, each with its takes (the first render and the renders again).

A batch is an upload: its jobs are the album's songs. Rendering a song again makes a job
outside any batch that names the song's first take (``rerender_of``); here the two are put
together, so that an album is published and downloaded as a whole:

- :func:`publish_album` publishes each song once, as its newest finished take;
- :func:`album_files` lists every file of every take, with its place in the album's archive
  (:func:`choreo.service.archive.zip_stream` streams it from storage).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from choreo.service.context import ServiceContext
from choreo.service.jobs import get_job, rerenders_of
from choreo.service.records import BatchRecord, JobRecord, JobState, RoutineRecord
from choreo.service.routines import publish_job, routines_of_jobs

__all__ = [
    "AlbumFile",
    "AlbumSong",
    "SkippedSong",
    "album_files",
    "album_name",
    "album_songs",
    "publish_album",
    "song_title",
]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


@dataclass(frozen=True)
class AlbumSong:
    """One song of an album: its job in the batch and every take of it, oldest first."""

    job: JobRecord
    takes: list[JobRecord]

    def newest_done(self) -> JobRecord | None:
        """The take most recently rendered among those that finished, or None."""
        done = [take for take in self.takes if take.state == JobState.DONE]
        return max(done, key=lambda take: take.seq) if done else None


@dataclass(frozen=True)
class SkippedSong:
    """A song that publishing the album left out, and why (a sentence)."""

    job_id: str
    track_name: str
    reason: str


@dataclass(frozen=True)
class AlbumFile:
    """One file of the album's archive: where it is stored and where it goes in the archive."""

    name: str
    """Path inside the archive, '/'-separated."""
    storage_key: str
    compress: bool
    """Worth deflating (text: BVH, JSON); the pictures, the video and the binary files are not."""
    modified_at: float | None
    """When its take finished (Unix time)."""


def song_title(track_name: str) -> str:
    """The title a song gets by default: its file name without the extension."""
    return PurePosixPath(track_name).stem or track_name


def album_name(batch: BatchRecord) -> str:
    """The album's name, or one made from its id when the upload gave none."""
    return batch.name or f"Upload {batch.id.removeprefix('bat_')[:8]}"


def album_songs(ctx: ServiceContext, batch: BatchRecord) -> list[AlbumSong]:
    """The album's songs in upload order, each with its takes; deleted jobs are left out."""
    songs = []
    for job_id in batch.job_ids:
        job = get_job(ctx, job_id, team=batch.team)
        if job is not None:
            songs.append(AlbumSong(job=job, takes=[job, *rerenders_of(ctx, job.id)]))
    return songs


def publish_album(
    ctx: ServiceContext, batch: BatchRecord, *, tags: list[str], style: str | None
) -> tuple[list[RoutineRecord], list[SkippedSong]]:
    """Publish each song of the album as a routine: its newest finished take, titled by its name.

    The album's name is added to ``tags``, so the album's routines are found together. A song
    with a take already published, or with no finished take, is skipped, saying why.
    """
    songs = album_songs(ctx, batch)
    published = routines_of_jobs(ctx, [take.id for song in songs for take in song.takes])
    album_tag = batch.name.strip().lower()
    routines, skipped = [], []
    for song in songs:
        already = next((published[t.id] for t in song.takes if t.id in published), None)
        take = song.newest_done()
        if already is not None:
            reason = f"It is already published as “{already.title}”."
        elif take is None:
            reason = "No take of it has finished rendering."
        else:
            routine = publish_job(
                ctx,
                take,
                title=song_title(song.job.track_name),
                tags=[*tags, album_tag] if album_tag else tags,
                style=style,
            )
            routines.append(routine)
            continue
        skipped.append(SkippedSong(job_id=song.job.id, track_name=song.job.track_name, reason=reason))
    return routines, skipped


def _safe(part: str) -> str:
    """A file or folder name any unzip tool accepts: no separators, control or reserved characters."""
    return _UNSAFE.sub("_", part).strip(" .")[:100] or "_"


def album_files(ctx: ServiceContext, batch: BatchRecord) -> tuple[str, list[AlbumFile], bytes]:
    """The album's archive: its folder's name, every file of every finished take, and a manifest.

    The archive holds one folder per song, numbered in upload order, with the first take's files;
    each later take is in a folder of its own inside it, named by its style and seed. The
    manifest (``album.json``, returned as bytes) lists the songs, their takes, the style and
    tempo each was danced in, and the files.
    """
    folder = _safe(album_name(batch))
    files: list[AlbumFile] = []
    manifest: list[dict[str, object]] = []
    for number, song in enumerate(album_songs(ctx, batch), start=1):
        song_folder = f"{folder}/{number:02d} {_safe(song_title(song.job.track_name))}"
        takes = []
        for take_number, take in enumerate(song.takes, start=1):
            if take.state != JobState.DONE:
                continue
            where = song_folder
            if take.id != song.job.id:
                where += f"/take {take_number} ({_safe(take.options.style)}, seed {take.options.seed})"
            names = []
            for kind, key in sorted(take.artifacts.items()):
                name = f"{where}/{_safe(key.rsplit('/', 1)[-1])}"
                files.append(
                    AlbumFile(
                        name=name,
                        storage_key=key,
                        compress=kind in ("bvh", "json"),
                        modified_at=take.finished_at,
                    )
                )
                names.append(name.removeprefix(f"{folder}/"))
            brief = take.summary
            takes.append(
                {
                    "job_id": take.id,
                    "style": brief.style if brief else take.options.style,
                    "style_asked": take.options.style,
                    "tempo_bpm": brief.tempo_bpm if brief else None,
                    "seed": take.options.seed,
                    "files": names,
                }
            )
        title = song_title(song.job.track_name)
        manifest.append({"title": title, "song": song.job.track_name, "takes": takes})
    document = {"album": album_name(batch), "batch_id": batch.id, "songs": manifest}
    return folder, files, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
