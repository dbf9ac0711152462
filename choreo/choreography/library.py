"""The phrase library: retargeted mocap as flat arrays, cut into beat phrases.

Following the motion-matching databases, all clips live in one frame array
with per-clip ranges, and everything the planner searches is precomputed at
build time: one table of beat keys (clip frame, pose features, heading, root,
floor state), one table of phrases (start key, beats, style, period, energy,
displacement, turn, source seconds) and, per key and style, the cheapest keys
to continue from (the transition costs).

Mirror images are not stored as frames: key ``k + n_keys`` is key ``k``
mirrored (:func:`choreo.motion.mirror.mirror` is exact on SMPL), with its own
features and transitions.

The file is an ``.npz`` of float16 rotations and float32 root translations
(no pickles); its SHA-256 goes into every plan and every exported file's
provenance.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from choreo.choreography.downbeats import key_hits, phrase_downbeat_share
from choreo.choreography.phrases import PHRASE_BEATS, ClipKeys, cut_keys
from choreo.choreography.transitions import TRANSITIONS_PER_STYLE, transition_table
from choreo.choreography.warp import STOP_STRETCH_TOLERANCE
from choreo.errors import ParameterError
from choreo.models import SHIPPED_LIBRARY
from choreo.motion.contacts import airborne_frames
from choreo.motion.kinematics import joint_positions
from choreo.motion.mirror import mirror, mirror_permutation
from choreo.motion.motion import Motion
from choreo.motion.resample import resample
from choreo.motion.rotations import aa_to_quat, quat_align_hemisphere
from choreo.motion.skeleton import SMPL

__all__ = [
    "AIRBORNE_BIT",
    "HELD_POSE_FRACTION",
    "LIBRARY_FORMAT",
    "LIBRARY_FPS",
    "MIN_STYLE_S",
    "LibraryClip",
    "PhraseLibrary",
    "build_library",
    "load_library",
    "shipped_library",
]

HELD_POSE_FRACTION = 0.2
"""A phrase whose energy is under this fraction of its style's median is a held pose."""

LIBRARY_FPS = 30
"""Frame rate of the library's frames (the pipeline's native rate)."""

LIBRARY_FORMAT = 2
"""Version of the file layout; a reader refuses other versions."""

AIRBORNE_BIT = 4
"""Bit of ``contacts`` set where the body is in the air (bits 0 and 1: the left and right foot down)."""

MIN_STYLE_S = 30.0
"""A style with less material than this is merged into the nearest style."""


_MIRROR = mirror_permutation(SMPL.names)

_ARRAYS = (
    "clip_styles",
    "clip_credits",
    "clip_start",
    "clip_stop",
    "rotations",
    "root",
    "contacts",
    "pulse_period_s",
    "key_frame",
    "key_clip",
    "key_features",
    "key_heading",
    "key_floor",
    "key_stop",
    "phrase_key",
    "phrase_beats",
    "phrase_energy",
    "phrase_move",
    "phrase_turn",
    "next_key",
    "next_cost",
)


@dataclass(frozen=True)
class LibraryClip:
    """One source clip, retargeted, with its style and credit line."""

    name: str
    style: str
    source: str
    credit: str
    motion: Motion


@dataclass(frozen=True)
class PhraseLibrary:
    """Flat arrays of frames, keys, phrases and transitions (see the module docstring).

    Keys ``0 .. n_keys - 1`` are the original clips' beats; key ``k + n_keys``
    is the mirror image of key ``k``. Phrases are listed for both.
    """

    version: str
    styles: tuple[str, ...]
    merged_styles: dict[str, str]
    clip_names: tuple[str, ...]
    clip_sources: tuple[str, ...]
    clip_styles: np.ndarray  # [C] int index into styles
    clip_credits: np.ndarray  # [C] int index into credits
    credits: tuple[str, ...]
    clip_start: np.ndarray  # [C] first frame in the frame arrays
    clip_stop: np.ndarray  # [C] one past the last frame
    rotations: np.ndarray  # [F, 24, 3] float16 axis-angle
    root: np.ndarray  # [F, 3] float32 metres
    contacts: (
        np.ndarray
    )  # [F] uint8: bit 0 left foot, bit 1 right foot on the ground, AIRBORNE_BIT in the air
    pulse_period_s: np.ndarray  # [C]
    key_frame: np.ndarray  # [2K] frame index into the frame arrays
    key_clip: np.ndarray  # [2K]
    key_features: np.ndarray  # [2K, D] float16
    key_heading: np.ndarray  # [2K] float32, radians
    key_floor: np.ndarray  # [2K] bool
    key_stop: np.ndarray  # [2K] bool, the key is a real speed minimum (a kinematic beat)
    phrase_key: np.ndarray  # [P] start key (end key is start key + beats)
    phrase_beats: np.ndarray  # [P]
    phrase_energy: np.ndarray  # [P] mean squared joint speed, m^2/s^2
    phrase_move: np.ndarray  # [P, 2] root displacement in the start heading frame, m
    phrase_turn: np.ndarray  # [P] heading change, radians
    next_key: np.ndarray  # [2K, S, T] cheapest continuation keys per style
    next_cost: np.ndarray  # [2K, S, T] float16 their transition costs
    sha256: str = ""

    @property
    def n_keys(self) -> int:
        """Keys of the original clips (mirrored keys follow them)."""
        return int(self.key_frame.size // 2)

    @property
    def fps(self) -> int:
        return LIBRARY_FPS

    @cached_property
    def airborne(self) -> np.ndarray:
        """[F] bool, the body is in the air (a library built before this bit existed has none)."""
        return (self.contacts & AIRBORNE_BIT) != 0

    @cached_property
    def phrase_style(self) -> np.ndarray:
        """[P] style index of each phrase."""
        return self.clip_styles[self.key_clip[self.phrase_key]]

    @cached_property
    def phrase_mirrored(self) -> np.ndarray:
        """[P] bool: the phrase plays the mirror image of its clip."""
        return self.phrase_key >= self.n_keys

    @cached_property
    def phrase_frames(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last frame (inclusive, frame arrays) of each phrase."""
        return self.key_frame[self.phrase_key], self.key_frame[self.phrase_key + self.phrase_beats]

    @cached_property
    def phrase_seconds(self) -> tuple[np.ndarray, np.ndarray]:
        """First and last source second of each phrase, counted over the whole library.

        A mirror image uses the same source seconds as its original, so reuse
        rules see through mirroring.
        """
        first, last = self.phrase_frames
        return first // LIBRARY_FPS, last // LIBRARY_FPS

    @cached_property
    def energy_rank(self) -> np.ndarray:
        """[P] each phrase's energy as a quantile (0..1) among its style's phrases."""
        rank = np.zeros(self.phrase_key.size)
        for s in range(len(self.styles)):
            mask = self.phrase_style == s
            if mask.any():
                order = np.argsort(np.argsort(self.phrase_energy[mask]))
                rank[mask] = (order + 0.5) / mask.sum()
        return rank

    @cached_property
    def phrase_still(self) -> np.ndarray:
        """[P] bool: the phrase is a held pose, its energy under the stall fraction of its style's median.

        The fraction (:data:`HELD_POSE_FRACTION`) is the one the stall measure counts by
        (:data:`choreo.metrics.stalls.STALL_FRACTION`, a test keeps them equal): danced over
        music that goes on, such a phrase is a stall.
        """
        still = np.zeros(self.phrase_key.size, dtype=bool)
        for s in range(len(self.styles)):
            mask = self.phrase_style == s
            if mask.any():
                energy = self.phrase_energy[mask]
                still[mask] = energy < HELD_POSE_FRACTION * np.median(energy)
        return still

    @cached_property
    def phrase_pinned_share(self) -> np.ndarray:
        """[2, P] the share of a phrase's beat keys that are stops landing on song beats.

        Row 0 is for beat ratio 1 (and 1/2), where every phrase beat falls on a song
        beat; row 1 for beat ratio 2 (double time), where only the even phrase beats
        do and a stop at an odd one lands between two song beats: those count
        against it. A stop on a song beat counts when the warp pins it: both ends
        when they are stops, an interior stop when the stretch from the phrase's
        start to it and from it to the phrase's end is within
        :data:`~choreo.choreography.warp.STOP_STRETCH_TOLERANCE` of the whole
        phrase's (as :func:`~choreo.choreography.warp.beat_warp` decides, against
        the ends rather than the neighbouring pinned stops).
        """
        key, n = self.phrase_key.astype(np.int64), self.phrase_beats.astype(np.int64)
        frames = self.key_frame.astype(np.float64)
        span = frames[key + n] - frames[key]
        ends = self.key_stop[key].astype(np.float64) + self.key_stop[key + n]
        share = np.stack([ends, ends])
        lo, hi = 1.0 / STOP_STRETCH_TOLERANCE, STOP_STRETCH_TOLERANCE
        for i in range(1, int(n.max())):
            at = np.minimum(key + i, self.key_frame.size - 1)
            stop = (i < n) & self.key_stop[at]
            done = (frames[at] - frames[key]) / span
            with np.errstate(divide="ignore", invalid="ignore"):
                before, after = (i / n) / done, (1 - i / n) / (1 - done)
            pinned = stop & (before >= lo) & (before <= hi) & (after >= lo) & (after <= hi)
            share[0] += pinned
            share[1] += pinned if i % 2 == 0 else -stop.astype(np.float64)
        return share / (n + 1.0)

    @cached_property
    def phrase_downbeat_share(self) -> np.ndarray:
        """[2, P] how much of a phrase's hits fall on the bar's downbeats danced over one bar
        (row 0) and over two (row 1); 0.5 is none more than elsewhere
        (:func:`choreo.choreography.downbeats.phrase_downbeat_share`)."""
        n = self.n_keys
        hits = key_hits(self.rotations, self.root, self.key_frame[:n], self.key_clip[:n], fps=LIBRARY_FPS)
        return phrase_downbeat_share(np.tile(hits, 2), self.phrase_key, self.phrase_beats)

    @cached_property
    def phrase_duration_s(self) -> np.ndarray:
        """[P] seconds from a phrase's first frame to its last."""
        first, last = self.phrase_frames
        return (last - first) / LIBRARY_FPS

    @cached_property
    def start_phrases(self) -> np.ndarray:
        """[2K, lengths] the phrases starting at each key, one column per length, -1 where none."""
        out = np.full((self.key_frame.size, len(PHRASE_BEATS)), -1, dtype=np.int64)
        column = np.searchsorted(np.array(PHRASE_BEATS), self.phrase_beats)
        out[self.phrase_key, column] = np.arange(self.phrase_key.size)
        return out

    @cached_property
    def mirror_phrase(self) -> np.ndarray:
        """[P] the phrase that is each phrase's mirror image (same frames, same beats)."""
        twin_key = (self.phrase_key + self.n_keys) % (2 * self.n_keys)
        column = np.searchsorted(np.array(PHRASE_BEATS), self.phrase_beats)
        return self.start_phrases[twin_key, column]

    @cached_property
    def style_start_keys(self) -> tuple[np.ndarray, ...]:
        """Per style, the keys some phrase of that style starts at."""
        return tuple(np.unique(self.phrase_key[self.phrase_style == s]) for s in range(len(self.styles)))

    @cached_property
    def _style_centroids(self) -> list[np.ndarray]:
        key_style = self.clip_styles[self.key_clip]
        return [self.key_features_f32[key_style == s].mean(axis=0) for s in range(len(self.styles))]

    def styles_by_nearness(self, style: int) -> list[int]:
        """Style indices, ``style`` first, then by the distance of their mean key features."""
        centroids = self._style_centroids
        dist = [float(np.sum((c - centroids[style]) ** 2)) for c in centroids]
        return [int(s) for s in np.argsort(dist, kind="stable")]

    @cached_property
    def key_features_f32(self) -> np.ndarray:
        """[2K, D] the key features in float32, the precision transition costs are computed in."""
        return self.key_features.astype(np.float32)

    def transition_cost(self, from_keys: np.ndarray, to_keys: np.ndarray) -> np.ndarray:
        """Transition costs ``[len(from_keys), len(to_keys)]`` computed afresh (inf across floor states).

        The same measure as the precomputed table, for pairs the table does not hold.
        """
        features = self.key_features_f32
        a, b = features[from_keys], features[to_keys]
        cost = np.mean((a[:, None, :] - b[None, :, :]) ** 2, axis=-1) * 3
        cost[self.key_floor[from_keys][:, None] != self.key_floor[to_keys][None, :]] = np.inf
        return cost

    def style_index(self, name: str) -> int:
        """Index of style ``name`` (a merged style maps to the one it joined)."""
        name = self.merged_styles.get(name, name)
        if name not in self.styles:
            raise ParameterError(f"unknown style {name!r}: the library has {', '.join(self.styles)}")
        return self.styles.index(name)

    def coverage(self) -> dict[str, dict[str, float]]:
        """Minutes of source motion and phrases (mirror images included) per style."""
        out = {}
        frames = self.clip_stop - self.clip_start
        for s, name in enumerate(self.styles):
            out[name] = {
                "minutes": round(float(frames[self.clip_styles == s].sum()) / LIBRARY_FPS / 60.0, 2),
                "clips": int((self.clip_styles == s).sum()),
                "phrases": int((self.phrase_style == s).sum()),
            }
        return out

    @cached_property
    def quaternions(self) -> np.ndarray:
        """[F, 24, 4] the frames' rotations as unit quaternions (x, y, z, w), continuous in time."""
        return quat_align_hemisphere(aa_to_quat(self.rotations.astype(np.float64)), axis=0)

    def frames_quats(self, first: int, last: int, *, mirrored: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Frames ``first..last`` (inclusive) as quaternions ``[n, 24, 4]`` and root ``[n, 3]``.

        A mirror image reflects x -> -x: each joint takes its twin's rotation with
        the y and z components negated (see :mod:`choreo.motion.mirror`).
        """
        quats = self.quaternions[first : last + 1]
        root = self.root[first : last + 1].astype(np.float64)
        if mirrored:
            quats = quats[:, _MIRROR] * np.array([1.0, -1.0, -1.0, 1.0])
            root = root * np.array([-1.0, 1.0, 1.0])
        return quats, root

    def frames_motion(self, first: int, last: int, *, mirrored: bool = False) -> Motion:
        """Library frames ``first..last`` (inclusive) as a motion, mirrored when asked."""
        motion = Motion(
            fps=LIBRARY_FPS,
            root_translation=self.root[first : last + 1].astype(np.float64),
            rotations=self.rotations[first : last + 1].astype(np.float64),
        )
        return mirror(motion) if mirrored else motion

    def save(self, path: Path) -> str:
        """Write the library to ``path`` (``.npz``); returns its SHA-256."""
        arrays = {name: getattr(self, name) for name in _ARRAYS}
        meta = {
            "format": LIBRARY_FORMAT,
            "version": self.version,
            "styles": list(self.styles),
            "merged_styles": self.merged_styles,
            "clip_names": list(self.clip_names),
            "clip_sources": list(self.clip_sources),
            "credits": list(self.credits),
        }
        buffer = io.BytesIO()
        np.savez_compressed(buffer, meta=np.array(json.dumps(meta)), **arrays)
        data = buffer.getvalue()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_bytes(data)
        partial.replace(path)  # whole or not at all: a reader never finds half a library
        return hashlib.sha256(data).hexdigest()


def load_library(path: Path) -> PhraseLibrary:
    """Read a library written by :meth:`PhraseLibrary.save`.

    Raises
    ------
    ParameterError
        Naming the file, when it is missing, not a library, or of another format.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            arrays = {k: npz[k] for k in npz.files if k != "meta"}
    except (OSError, ValueError, KeyError) as exc:
        raise ParameterError(f"{path}: not a phrase library ({exc})") from exc
    if meta.get("format") != LIBRARY_FORMAT:
        raise ParameterError(f"{path}: library format {meta.get('format')} is not {LIBRARY_FORMAT}")
    return PhraseLibrary(
        version=meta["version"],
        styles=tuple(meta["styles"]),
        merged_styles=dict(meta["merged_styles"]),
        clip_names=tuple(meta["clip_names"]),
        clip_sources=tuple(meta["clip_sources"]),
        credits=tuple(meta["credits"]),
        sha256=hashlib.sha256(data).hexdigest(),
        **arrays,
    )


@lru_cache(maxsize=4)
def _cached(path: str, mtime: float) -> PhraseLibrary:
    return load_library(Path(path))


def shipped_library(path: Path | None = None) -> PhraseLibrary:
    """The library at ``path`` (default: the one shipped in the package), loaded once per process."""
    path = Path(path or SHIPPED_LIBRARY)
    if not path.exists():
        raise ParameterError(f"{path}: no phrase library there (build one with `choreo library build`)")
    return _cached(str(path.resolve()), path.stat().st_mtime)


def _style_centroids(styles: np.ndarray, features: np.ndarray, n_styles: int) -> np.ndarray:
    return np.stack([features[styles == s].mean(axis=0) for s in range(n_styles)])


def _merge_small_styles(
    style_names: list[str],
    clip_styles: np.ndarray,
    clip_seconds: np.ndarray,
    key_style: np.ndarray,
    features: np.ndarray,
    min_style_s: float,
) -> tuple[list[str], np.ndarray, dict[str, str]]:
    """Fold styles with under ``min_style_s`` of material into the style with the nearest centroid."""
    seconds = np.array([clip_seconds[clip_styles == s].sum() for s in range(len(style_names))])
    small = [s for s in range(len(style_names)) if seconds[s] < min_style_s]
    big = [s for s in range(len(style_names)) if seconds[s] >= min_style_s]
    if not small or not big:
        return style_names, clip_styles, {}
    centroids = _style_centroids(key_style, features, len(style_names))
    target = {s: min(big, key=lambda b: float(np.sum((centroids[s] - centroids[b]) ** 2))) for s in small}
    kept = [style_names[s] for s in big]
    remap = {s: kept.index(style_names[target.get(s, s)]) for s in range(len(style_names))}
    merged = {style_names[s]: style_names[target[s]] for s in small}
    return kept, np.array([remap[int(s)] for s in clip_styles]), merged


def build_library(
    clips: Sequence[LibraryClip],
    *,
    version: str,
    min_style_s: float = MIN_STYLE_S,
    log: Callable[[str], None] = lambda _msg: None,
) -> PhraseLibrary:
    """Cut ``clips`` into keys and phrases and precompute the transitions.

    A style with less than ``min_style_s`` seconds of motion is merged into
    the style whose mean key pose is nearest.

    Raises
    ------
    ParameterError
        When no clip is long enough for a phrase.
    """
    style_names = sorted({c.style for c in clips})
    rot, root, contacts, starts, stops, periods = [], [], [], [], [], []
    keys: list[tuple[int, ClipKeys, ClipKeys]] = []
    kept: list[LibraryClip] = []
    offset = 0
    for clip in clips:
        motion = resample(clip.motion, LIBRARY_FPS) if clip.motion.fps != LIBRARY_FPS else clip.motion
        try:
            original = cut_keys(motion)
        except ParameterError as exc:
            log(f"skipping {clip.source}: {exc}")
            continue
        if original.frames.size < min(PHRASE_BEATS) + 1:
            log(f"skipping {clip.source}: too few beats")
            continue
        mirrored = cut_keys(mirror(motion), original.pulse)
        keys.append((offset, original, mirrored))
        kept.append(clip)
        rot.append(motion.rotations.astype(np.float16))
        root.append(motion.root_translation.astype(np.float32))
        airborne = airborne_frames(joint_positions(motion)).astype(np.uint8) * AIRBORNE_BIT
        contacts.append(original.contacts | airborne)
        starts.append(offset)
        offset += motion.n_frames
        stops.append(offset)
        periods.append(original.pulse.period_s)
    if not kept:
        raise ParameterError("no clip is long enough to cut a phrase from")

    clip_styles = np.array([style_names.index(c.style) for c in kept])
    key_clip = np.concatenate([np.full(k[1].frames.size, i) for i, k in enumerate(keys)])
    key_frame = np.concatenate([o + k.frames for o, k, _ in keys])
    half = {
        "features": np.concatenate([k.features for _, k, _ in keys]),
        "heading": np.concatenate([k.heading_rad for _, k, _ in keys]),
        "floor": np.concatenate([k.floor for _, k, _ in keys]),
        "root_xz": np.concatenate([k.root_xz for _, k, _ in keys]),
        "stop": np.concatenate([k.stop for _, k, _ in keys]),
    }
    mirror_half = {
        "features": np.concatenate([m.features for _, _, m in keys]),
        "heading": np.concatenate([m.heading_rad for _, _, m in keys]),
        "floor": np.concatenate([m.floor for _, _, m in keys]),
        "root_xz": np.concatenate([m.root_xz for _, _, m in keys]),
        "stop": np.concatenate([m.stop for _, _, m in keys]),
    }
    n_keys = key_frame.size
    clip_seconds = (np.array(stops) - np.array(starts)) / LIBRARY_FPS
    style_names, clip_styles, merged = _merge_small_styles(
        style_names, clip_styles, clip_seconds, clip_styles[key_clip], half["features"], min_style_s
    )
    if merged:
        log("merged styles with too little material: " + ", ".join(f"{a} -> {b}" for a, b in merged.items()))

    features = np.concatenate([half["features"], mirror_half["features"]])
    heading = np.concatenate([half["heading"], mirror_half["heading"]])
    floor = np.concatenate([half["floor"], mirror_half["floor"]])
    root_xz = np.concatenate([half["root_xz"], mirror_half["root_xz"]])
    all_clip = np.concatenate([key_clip, key_clip])

    # phrases: every start key and length that stays inside its clip, originals then mirror images
    p_key, p_beats, p_energy = [], [], []
    key_energy = np.concatenate([np.append(k.energy, 0.0) for _, k, _ in keys])
    cumulative = np.concatenate([[0.0], np.cumsum(key_energy * np.append(np.diff(key_frame), 0))])
    for n in PHRASE_BEATS:
        start = np.arange(n_keys - n)
        ok = key_clip[start] == key_clip[start + n]
        start = start[ok]
        energy = (cumulative[start + n] - cumulative[start]) / np.maximum(
            key_frame[start + n] - key_frame[start], 1
        )
        for shift in (0, n_keys):
            p_key.append(start + shift)
            p_beats.append(np.full(start.size, n))
            p_energy.append(energy)
    phrase_key = np.concatenate(p_key)
    phrase_beats = np.concatenate(p_beats)
    end_key = phrase_key + phrase_beats
    delta = root_xz[end_key] - root_xz[phrase_key]
    c, s = np.cos(-heading[phrase_key]), np.sin(-heading[phrase_key])
    move = np.stack([c * delta[:, 0] + s * delta[:, 1], -s * delta[:, 0] + c * delta[:, 1]], axis=1)
    turn = heading[end_key] - heading[phrase_key]

    can_start = np.zeros(2 * n_keys, dtype=bool)
    can_start[phrase_key] = True
    next_key, next_cost = transition_table(
        features,
        clip_styles[all_clip],
        floor,
        can_start,
        n_styles=len(style_names),
        per_style=TRANSITIONS_PER_STYLE,
    )
    credits = sorted({c.credit for c in kept})
    library = PhraseLibrary(
        version=version,
        styles=tuple(style_names),
        merged_styles=merged,
        clip_names=tuple(c.name for c in kept),
        clip_sources=tuple(c.source for c in kept),
        clip_styles=clip_styles.astype(np.int16),
        clip_credits=np.array([credits.index(c.credit) for c in kept], dtype=np.int16),
        credits=tuple(credits),
        clip_start=np.array(starts, dtype=np.int32),
        clip_stop=np.array(stops, dtype=np.int32),
        rotations=np.concatenate(rot),
        root=np.concatenate(root),
        contacts=np.concatenate(contacts),
        pulse_period_s=np.array(periods, dtype=np.float32),
        key_frame=np.concatenate([key_frame, key_frame]).astype(np.int32),
        key_clip=all_clip.astype(np.int16),
        key_features=features.astype(np.float16),
        key_heading=heading.astype(np.float32),
        key_floor=floor,
        key_stop=np.concatenate([half["stop"], mirror_half["stop"]]),
        phrase_key=phrase_key.astype(np.int32),
        phrase_beats=phrase_beats.astype(np.int8),
        phrase_energy=np.concatenate(p_energy).astype(np.float32),
        phrase_move=move.astype(np.float32),
        phrase_turn=turn.astype(np.float32),
        next_key=next_key,
        next_cost=next_cost,
    )
    return library
