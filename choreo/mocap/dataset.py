"""Build the training arrays: retargeted mocap, beat-retimed onto real music.

The mocap has no music. Each clip (and its mirror image) is paired with
windows of real songs: the clip's kinematic beats are warped onto the song's
beats (:mod:`choreo.mocap.timewarp`), and the warped motion is sampled on the
song's 30 fps feature grid, so that row ``k`` of ``motion`` and row ``k`` of
``music`` describe the same instant. Several pairings per clip, with different
songs, windows and tempi, vary what the model hears under one motion. Rare
styles get more pairings so that the styles are less unbalanced.

Some songs and some clips never enter ``train.npz``: ``val.npz`` pairs the
held-out clips with the held-out songs, and ``reference.npz`` holds each
held-out clip retimed onto two different held-out songs, at 30 and 60 fps,
for the metrics.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import gaussian_filter1d

import choreo.audio
from choreo.audio import MusicFeatures, analyze_song
from choreo.contracts.choices import SONG_SUFFIXES, STYLES
from choreo.errors import ParameterError
from choreo.metrics.beat_align import beat_align_score
from choreo.mocap.beats import kinematic_beats
from choreo.mocap.quality import retarget_quality
from choreo.mocap.readers import is_motion_file, read_takes
from choreo.mocap.readers.take import SourceTake
from choreo.mocap.retarget import face_forward, retarget
from choreo.mocap.rigs import detect_rig
from choreo.mocap.sampling import sample_at
from choreo.mocap.shape_rig import SHAPE_RIG
from choreo.mocap.timewarp import MAX_STRETCH, MIN_STRETCH, TimeWarp, fit_warp
from choreo.mocap.trim import active_span
from choreo.motion.kinematics import joint_positions
from choreo.motion.mirror import mirror
from choreo.motion.motion import Motion
from choreo.motion.resample import resample
from choreo.motion.stops import mean_joint_speeds
from exporters.contact_sheet import write_contact_sheet

__all__ = [
    "CMU_CREDIT",
    "DATA_FPS",
    "FOLDER_STYLES",
    "HELD_OUT_CLIPS",
    "HELD_OUT_SONGS",
    "MIN_MOTION_S",
    "Clip",
    "Pair",
    "Song",
    "build_dataset",
    "load_clips",
    "load_songs",
    "retargeted_dance",
    "retargeted_take",
    "retime",
    "take_clip_name",
    "write_reference",
]

DATA_FPS = 30
"""Frame rate of ``motion`` and ``music`` in the training arrays (the model's native rate)."""

CMU_CREDIT = (
    "The data used in this project was obtained from mocap.cs.cmu.edu. "
    "The database was created with funding from NSF EIA-0196217."
)

FOLDER_STYLES = {
    "cmu_60_61_salsa": "salsa",
    "cmu_05_modern": "modern",
    "cmu_85_breakdance": "breakdance",
    "cmu_55_whirl": "whirl",
}
"""Style of each mocap folder; indices follow :data:`choreo.styles.STYLES`."""

HELD_OUT_CLIPS = ("60_15_scaled", "61_15_scaled", "05_20", "85_04_keijiro_neo30fps")
"""Clips kept out of training: a salsa pair (both partners of one take), one modern, one breakdance.
The single whirl clip cannot be spared."""

HELD_OUT_SONGS = (
    "Kevin_MacLeod_-_Vibe_Ace.hq.ogg",
    "hedgewars__Music__hell.ogg",
    "supertux__forest__forest.ogg",
    "supertux__misc__theme.ogg",
    "xmoto__Musics__batcave.ogg",
    "warzone2100__legacy_soundtrack__track10.opus",
)
"""Songs kept out of training: slow to fast, the demo song, and a 12.6-minute piece."""

_PAIRINGS_PER_STYLE = {"salsa": 2, "modern": 4, "breakdance": 6, "whirl": 8}
_CANDIDATES = 4
_REFERENCE_SONGS_PER_CLIP = 2


@dataclass(frozen=True)
class Clip:
    """One retargeted mocap clip at its own frame rate, cut to its dance.

    ``quality`` holds the kept frame range and :func:`choreo.mocap.quality.retarget_quality`.
    """

    name: str
    style: str
    source: str
    motion: Motion
    held_out: bool
    quality: dict


@dataclass(frozen=True)
class Song:
    """A song with its features at :data:`DATA_FPS`."""

    name: str
    licence: str
    features: MusicFeatures
    held_out: bool


@dataclass(frozen=True)
class Pair:
    """A clip retimed onto a song window, sampled on the song's frame grid."""

    clip: str
    style: str
    song: str
    mirrored: bool
    start_frame: int
    motion: Motion
    music: np.ndarray
    warp: TimeWarp
    beat_align: float


MIN_MOTION_S = 2.0
"""A take with less dance than this (after its still ends are cut) is refused: no phrase fits."""

_STILL_SPEED_M_S = 0.2


def _peak_speed(motion: Motion) -> float:
    """The clip's top mean joint speed, m/s, smoothed over a quarter second (a T-pose's snap is not dance)."""
    speed = mean_joint_speeds(joint_positions(motion), motion.fps)
    return float(gaussian_filter1d(speed, 0.25 * motion.fps).max())


def retargeted_take(take: SourceTake) -> tuple[Motion, dict]:
    """One take retargeted to SMPL, cut to its active span, facing +Z and centred on the floor.

    Returns the motion at the take's frame rate and its quality record (the
    kept frame range, the rig and :func:`choreo.mocap.quality.retarget_quality`).

    Raises
    ------
    ParameterError
        Naming the take: its skeleton maps onto no rig, it does not move (a T-pose or a held pose
        only), or it holds under :data:`MIN_MOTION_S` of motion.
    """
    rig = detect_rig(take)
    full = retarget(take, rig)
    if full.n_frames < 3 or _peak_speed(full) < _STILL_SPEED_M_S:
        raise ParameterError(f"{take.label}: nothing moves: a T-pose or a held pose only")
    start, stop = active_span(full)
    span_s = (stop - 1 - start) / full.fps  # from the first kept frame to the last
    if span_s < MIN_MOTION_S:
        raise ParameterError(
            f"{take.label}: {span_s:.1f} s of motion, under the {MIN_MOTION_S:.0f} s a phrase needs"
        )
    cut = face_forward(
        full.replace(rotations=full.rotations[start:stop], root_translation=full.root_translation[start:stop])
    )
    root = cut.root_translation.copy()
    root[:, [0, 2]] -= root[:, [0, 2]].mean(axis=0)
    quality = {"frames_kept": [start, stop, full.n_frames], **retarget_quality(take, rig, full)}
    if rig.name == SHAPE_RIG:
        quality["rig"] = rig.name
    return cut.replace(root_translation=root), quality


def retargeted_dance(path: Path) -> tuple[Motion, dict]:
    """The first take of a motion file, :func:`retargeted_take`; a BVH file has one take only."""
    return retargeted_take(read_takes(path)[0])


def take_clip_name(path: Path, take: SourceTake, n_takes: int) -> str:
    """A clip's name: the file's stem, and for a file of several takes the take's name after it."""
    if n_takes == 1 or not take.take:
        return path.stem
    return f"{path.stem}_{re.sub(r'[^A-Za-z0-9._-]+', '_', take.take).strip('_')}"


def load_clips(mocap_dir: Path, sheets_dir: Path | None = None) -> list[Clip]:
    """Read and retarget every take of every motion file (BVH, FBX, glTF) under the style folders of
    ``mocap_dir``, cut to its dance.

    A contact sheet per clip goes to ``sheets_dir`` when given.
    """
    clips = []
    for folder, style in FOLDER_STYLES.items():
        files = sorted(p for p in (mocap_dir / folder).glob("*") if is_motion_file(p))
        if not files:
            raise ParameterError(f"--mocap {mocap_dir}: no motion files in {folder}/")
        for path in files:
            takes = read_takes(path)
            for take in takes:
                clips.append(_load_clip(path, take, len(takes), style, f"{folder}/{path.name}", sheets_dir))
    return clips


def _load_clip(
    path: Path, take: SourceTake, n_takes: int, style: str, source: str, sheets_dir: Path | None
) -> Clip:
    motion, quality = retargeted_take(take)
    start, stop, n_full = quality["frames_kept"]
    name = take_clip_name(path, take, n_takes)
    clip = Clip(name, style, source, motion, name in HELD_OUT_CLIPS, quality)
    if sheets_dir is not None:
        title = f"{clip.source} ({style}), frames {start}-{stop} of {n_full} kept"
        write_contact_sheet(
            motion,
            sheets_dir / f"{name}.png",
            times_s=np.array([]),
            title=title,
            max_panels=8,
            side_view=True,
            height_plot=True,
        )
    return clip


def _licence(path: Path) -> str:
    text = path.with_suffix("").with_suffix(".txt")
    if text.exists():
        return " ".join(text.read_text(encoding="utf-8").split())[:300]
    if path.parent.name == "gpl":
        package = path.name.split("__")[0]
        return f"GPL (Debian package {package}; see music/gpl/copyright/)"
    return "unknown"


def _audio_code_digest() -> str:
    """Digest of the feature code, so cached features are recomputed when it changes."""
    digest = hashlib.sha256()
    for source in sorted(Path(choreo.audio.__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def load_songs(
    music_dir: Path, cache_dir: Path, log: Callable[[str], None] = print, *, code_digest: str | None = None
) -> list[Song]:
    """Features of every song under ``music_dir`` at :data:`DATA_FPS`, cached in ``cache_dir``.

    The cache key holds the song's name and a digest of :mod:`choreo.audio`'s
    source (``code_digest``, computed here when not given), so a change to the
    feature code never serves stale features.
    """
    paths = sorted(p for p in music_dir.rglob("*") if p.suffix.lower() in SONG_SUFFIXES)
    if not paths:
        raise ParameterError(f"--music {music_dir}: no songs ({', '.join(SONG_SUFFIXES)}) found")
    cache_dir.mkdir(parents=True, exist_ok=True)
    code = code_digest or _audio_code_digest()
    songs = []
    for path in paths:
        cached = cache_dir / f"{path.name}.{DATA_FPS}fps.{code}.npz"
        if cached.exists() and cached.stat().st_mtime >= path.stat().st_mtime:
            features = MusicFeatures.from_npz(cached)
        else:
            log(f"analysing {path.name}")
            features = analyze_song(path, fps=DATA_FPS)
            features.to_npz(cached)
        songs.append(Song(path.name, _licence(path), features, path.name in HELD_OUT_SONGS))
    return songs


def _beat_align(motion: Motion, music_beats_s: np.ndarray) -> float:
    """The metrics' beat-alignment score of ``motion``; 0 when no music beat falls inside it."""
    try:
        return beat_align_score(joint_positions(motion), music_beats_s, fps=motion.fps)
    except ParameterError:
        return 0.0


def retime(motion: Motion, song: MusicFeatures, start_s: float) -> tuple[TimeWarp, int, Motion] | None:
    """Warp ``motion`` onto the beats of ``song``, starting at or after ``start_s`` seconds.

    Returns ``(warp, first song frame, motion sampled on the song's frame grid
    at :data:`DATA_FPS`)`` or None when no warp fits inside the song.
    """
    fps = DATA_FPS
    source_30 = resample(motion, DATA_FPS)
    kin_s = kinematic_beats(source_30) / DATA_FPS
    duration_s = (motion.n_frames - 1) / motion.fps
    window = song.beat_times[
        (song.beat_times >= start_s) & (song.beat_times <= start_s + duration_s * MAX_STRETCH)
    ]
    warp = fit_warp(kin_s, window, duration_s, earliest_start_s=start_s)
    if warp is None or warp.end_s > song.duration_s:
        return None
    first = int(np.ceil(warp.start_s * fps - 1e-9))
    last = int(np.floor(warp.end_s * fps + 1e-9))
    last = min(last, int(np.floor(song.duration_s * fps)) - 1)
    if last - first < fps:
        return None
    times = np.arange(first, last + 1) / fps
    return warp, first, sample_at(motion, warp.motion_time(times), fps)


def _best_pairing(
    motion: Motion, songs: list[Song], rng: np.random.Generator
) -> tuple[Song, TimeWarp, int, Motion, float] | None:
    best = None
    duration_s = (motion.n_frames - 1) / motion.fps
    for _ in range(_CANDIDATES):
        song = songs[rng.integers(len(songs))]
        room = song.features.duration_s - duration_s * MAX_STRETCH - 1.0
        if room <= 0:
            continue
        start_s = float(rng.uniform(0.0, room))
        fitted = retime(motion, song.features, start_s)
        if fitted is None:
            continue
        warp, first, warped = fitted
        score = _beat_align(warped, song.features.beat_times - first / DATA_FPS)
        if best is None or score > best[4]:
            best = (song, warp, first, warped, score)
    return best


def _pairs(
    clips: list[Clip], songs: list[Song], per_style: dict[str, int], rng: np.random.Generator
) -> list[Pair]:
    pairs = []
    for clip in clips:
        for mirrored in (False, True):
            motion = mirror(clip.motion) if mirrored else clip.motion
            for _ in range(per_style[clip.style]):
                found = _best_pairing(motion, songs, rng)
                if found is None:
                    continue
                song, warp, first, warped, score = found
                music = song.features.features[first : first + warped.n_frames]
                pairs.append(
                    Pair(clip.name, clip.style, song.name, mirrored, first, warped, music, warp, score)
                )
    return pairs


def _write_pairs(path: Path, pairs: list[Pair]) -> dict:
    lengths = np.array([p.motion.n_frames for p in pairs], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    arrays: dict[str, Any] = {  # savez takes any array-like; its stubs refuse a typed **dict
        "motion": np.concatenate([p.motion.to_array() for p in pairs]).astype(np.float16),
        "music": np.concatenate([p.music for p in pairs]).astype(np.float16),
        "offsets": offsets,
        "lengths": lengths,
        "style": np.array([STYLES.index(p.style) for p in pairs], dtype=np.int64),
        "styles": np.array(STYLES),
        "clip": np.array([p.clip for p in pairs]),
        "song": np.array([p.song for p in pairs]),
        "song_start_frame": np.array([p.start_frame for p in pairs], dtype=np.int64),
        "mirrored": np.array([p.mirrored for p in pairs]),
        "beat_align": np.array([p.beat_align for p in pairs], dtype=np.float32),
        "fps": np.int64(DATA_FPS),
    }
    np.savez_compressed(path, **arrays)
    stretch = np.concatenate([1.0 / p.warp.slopes() for p in pairs if p.warp.slopes().size])
    return {
        "sequences": len(pairs),
        "frames": int(lengths.sum()),
        "duration_min": round(float(lengths.sum()) / DATA_FPS / 60.0, 2),
        "beat_align_30fps_mean": round(float(np.mean([p.beat_align for p in pairs])), 4),
        "stretch_min": round(float(stretch.min()), 4) if stretch.size else None,
        "stretch_max": round(float(stretch.max()), 4) if stretch.size else None,
        "per_style_frames": {s: int(sum(p.motion.n_frames for p in pairs if p.style == s)) for s in STYLES},
    }


def write_reference(
    path: Path,
    clips: list[Clip],
    songs: list[Song],
    rng: np.random.Generator,
    *,
    styles: tuple[str, ...] = STYLES,
) -> list[dict]:
    """Write ``reference.npz``: each clip retimed onto two different ``songs``, at 30 and 60 fps.

    The metrics' reference rows (``choreo eval --reference``); ``styles`` names the styles the
    rows' indices count in (a team style's reference, the team's own). Returns one entry per row.
    """
    entries = []
    arrays: dict[str, list] = {"motion_30fps": [], "motion_60fps": []}
    rows = []
    fitted = []
    for clip in clips:
        used: set[str] = set()
        for _ in range(_REFERENCE_SONGS_PER_CLIP):
            unused = [s for s in songs if s.name not in used]
            found = _best_pairing(clip.motion, unused, rng) if unused else None
            if found is None:
                break
            used.add(found[0].name)
            fitted.append((clip, *found))
        if not used:
            raise ParameterError(f"no held-out song is long enough to retime clip {clip.name}")
    for clip, song, warp, first, warped, score in fitted:
        start_60 = int(np.ceil(warp.start_s * 60 - 1e-9))
        end_60 = min(int(np.floor(warp.end_s * 60 + 1e-9)), int(np.floor(song.features.duration_s * 60)) - 1)
        motion_60 = sample_at(clip.motion, warp.motion_time(np.arange(start_60, end_60 + 1) / 60.0), 60)
        arrays["motion_30fps"].append(warped.to_array())
        arrays["motion_60fps"].append(motion_60.to_array())
        rows.append((clip, song, first, start_60))
        entries.append(
            {
                "clip": clip.name,
                "style": clip.style,
                "song": song.name,
                "song_start_s_30fps": first / DATA_FPS,
                "song_start_s_60fps": start_60 / 60.0,
                "frames_30fps": warped.n_frames,
                "frames_60fps": motion_60.n_frames,
                "beat_align_30fps": round(score, 4),
            }
        )
    out: dict[str, Any] = {}
    for key, chunks in arrays.items():
        lengths = np.array([len(c) for c in chunks], dtype=np.int64)
        out[key] = np.concatenate(chunks).astype(np.float32)
        out[key.replace("motion", "lengths")] = lengths
        out[key.replace("motion", "offsets")] = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(
            np.int64
        )
    out["clip"] = np.array([c.name for c, *_ in rows])
    out["style"] = np.array([styles.index(c.style) for c, *_ in rows], dtype=np.int64)
    out["song"] = np.array([s.name for _, s, *_ in rows])
    out["song_start_frame_30fps"] = np.array([r[2] for r in rows], dtype=np.int64)
    out["song_start_frame_60fps"] = np.array([r[3] for r in rows], dtype=np.int64)
    out["styles"] = np.array(styles)
    np.savez_compressed(path, **out)
    return entries


def build_dataset(
    mocap_dir: Path,
    music_dir: Path,
    out_dir: Path,
    *,
    cache_dir: Path,
    seed: int = 0,
    sheets_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Write ``train.npz``, ``val.npz``, ``reference.npz`` and ``meta.json`` to ``out_dir``.

    Song features are cached in ``cache_dir``; a contact sheet per clip goes to
    ``sheets_dir`` when given. Returns the content of ``meta.json``.
    """
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    log("retargeting mocap")
    clips = load_clips(mocap_dir, sheets_dir)
    missing = sorted(set(HELD_OUT_CLIPS) - {c.name for c in clips})
    if missing:
        raise ParameterError(f"--mocap {mocap_dir}: held-out clips {missing} not found")
    code_digest = _audio_code_digest()  # once: the feature code may change while this runs
    songs = load_songs(music_dir, cache_dir, log, code_digest=code_digest)
    train_songs = [s for s in songs if not s.held_out]
    test_songs = [s for s in songs if s.held_out]
    if not train_songs or not test_songs:
        raise ParameterError(f"--music {music_dir}: need both training and held-out songs {HELD_OUT_SONGS}")
    train_clips = [c for c in clips if not c.held_out]
    test_clips = [c for c in clips if c.held_out]
    log(f"retiming {len(train_clips)} training clips onto {len(train_songs)} songs")
    train = _write_pairs(out_dir / "train.npz", _pairs(train_clips, train_songs, _PAIRINGS_PER_STYLE, rng))
    val_per_style = {s: 2 for s in STYLES}
    val = _write_pairs(out_dir / "val.npz", _pairs(test_clips, test_songs, val_per_style, rng))
    reference = write_reference(out_dir / "reference.npz", test_clips, test_songs, rng)
    meta = {
        "format": 1,
        "fps": DATA_FPS,
        "styles": list(STYLES),
        "frame_layout": (
            "motion [frames, 75]: 24 SMPL joint rotations as axis-angle (72), root translation (3), "
            "metres, Y up; music [frames, 35]: choreo.audio MusicFeatures columns; row k of a sequence "
            "is song frame song_start_frame + k"
        ),
        "seed": seed,
        "audio_code_digest": code_digest,
        "stretch_bounds": [MIN_STRETCH, MAX_STRETCH],
        "credit": CMU_CREDIT,
        "sources": {
            "mocap": "CMU Graphics Lab Motion Capture Database, mocap.cs.cmu.edu (free for research and "
            "commercial use; the data itself must not be resold)",
            "clips": [
                {"clip": c.name, "style": c.style, "file": c.source, "held_out": c.held_out, **c.quality}
                for c in clips
            ],
            "songs": [{"song": s.name, "licence": s.licence, "held_out": s.held_out} for s in songs],
        },
        "held_out_clips": sorted(c.name for c in test_clips),
        "held_out_songs": sorted(s.name for s in test_songs),
        "train": train,
        "val": val,
        "reference": reference,
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta
