"""One song's path through the stages, as plain functions.

- **prepare**: :func:`prepare_song` decodes and analyses the song at the
  synthesizer's rate, :func:`plan_song` plans the dance on its bars;
- **perform**: :func:`choreograph` builds the plan's guide and
  :func:`generate_motion` runs it through a song runner
  (:class:`engines.runner.SongRunner`): the blend, or the guided network, which
  the command line runs alone and a GPU worker through its sequence batcher (both
  cut songs into chunks by one rule, so they give the same dance);
- **finish**: :func:`finish_motion` post-processes the raw dance at the asked
  rate and :func:`export_dance` writes every file and the summary.

``choreo render`` calls :func:`render_song` (:func:`dance_song`, then the
export); ``choreo eval`` and the benchmarks call :func:`perform_song` on songs
they prepared once. The service's Celery tasks call the stages one by one
(:mod:`worker.steps`), so both paths give the same dance from the same song and options.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from choreo.audio import MusicFeatures, analyze_song, song_sha256
from choreo.audio.structure import analyze_structure
from choreo.choreography.guide import Guide, build_guide
from choreo.choreography.library import PhraseLibrary, shipped_library
from choreo.choreography.music_character import music_character
from choreo.choreography.planner import plan_dance
from choreo.choreography.style_choice import choose_style, nearest_style
from choreo.contracts.choices import STYLES
from choreo.contracts.contacts import ContactTrack
from choreo.contracts.generated import GeneratedMotion
from choreo.contracts.options import RenderOptions
from choreo.contracts.plan import Plan
from choreo.contracts.provenance import Provenance
from choreo.contracts.routine import parse_profile
from choreo.contracts.summary import DanceSummary
from choreo.contracts.timing import frames_for_duration
from choreo.errors import EngineError, ParameterError
from choreo.generate import song_inputs
from choreo.metrics.freeze import motion_energy
from choreo.metrics.speed import mean_joint_speed
from choreo.motion import Motion, joint_positions
from choreo.motion.resample import resample
from choreo.postprocess import in_place, postprocess
from choreo.postprocess.contacts import detect_contacts
from choreo.postprocess.facing import face_front
from choreo.postprocess.joint_limits import clamp_joint_limits
from choreo.runners import synth_runner
from choreo.settings import Settings, get_settings
from choreo.workout.safety import LOCK_MIN_PELVIS_M, finish_low_impact, hold_a_foot_down
from engines.runner import SongRunner
from exporters.registry import CONTACT_SHEET_FORMAT, ExportRequest, write_file

__all__ = [
    "Choreography",
    "Dance",
    "choreograph",
    "dance_song",
    "ExportedDance",
    "GeneratedMotion",
    "RenderOptions",
    "RenderResult",
    "export_dance",
    "finish_motion",
    "finished_contacts",
    "follow_intensity",
    "FINISHED_ROUNDS",
    "generate_motion",
    "perform_song",
    "plan_song",
    "prepare_song",
    "render_song",
]


@dataclass(frozen=True)
class ExportedDance:
    """The files :func:`export_dance` wrote, by kind, and the summary for the caller to write."""

    files: dict[str, Path]
    summary: DanceSummary


@dataclass
class RenderResult:
    """What rendering one song produced."""

    song: Path
    files: dict[str, Path]
    summary: DanceSummary
    timings_s: dict[str, float] = field(default_factory=dict)


def prepare_song(path: Path, *, fps: int | None = None, settings: Settings | None = None) -> MusicFeatures:
    """Decode a song and extract its features at the synthesizer's frame rate.

    ``fps`` is the synthesizer's native rate: a runner's ``spec.native_fps``, or by
    default the configured model's (:func:`choreo.runners.model_fps`). Raises ``AudioError``
    for a song that cannot be danced, naming the file.
    """
    if fps is None:
        from choreo.runners import model_fps

        fps = model_fps()
    return analyze_song(Path(path), fps=fps, settings=settings or get_settings())


def plan_song(features: MusicFeatures, options: RenderOptions, library: PhraseLibrary) -> Plan:
    """Plan the dance on the song's bars in the style ``options`` ask for (or ``auto`` chooses); a
    workout (``options.routine``) is planned in 8-counts by :func:`choreo.workout.planner.plan_workout`.

    Raises
    ------
    ParameterError
        When the style is not in the library.
    """
    structure = analyze_structure(features)
    music = music_character(features, structure)
    choice = choose_style(options.style, library, music=music, duration_s=features.duration_s)
    if options.routine is not None:
        from choreo.workout.planner import plan_workout  # a dance's render never imports the planner

        profile, curve = parse_profile(options.routine)
        plan = plan_workout(
            library,
            structure,
            style=choice.style,
            profile=profile,
            curve=curve,
            impact=options.impact,
            energy=options.energy,
            seed=options.seed,
        )
    else:
        plan = plan_dance(library, structure, style=choice.style, energy=options.energy, seed=options.seed)
    return plan if choice.note is None else replace(plan, notes=(*plan.notes, choice.note))


@dataclass(frozen=True)
class Choreography:
    """A song's plan and the guide made from it: what a synthesizer performs.

    ``credits`` are the credit lines of the library the plan was made on: they go into the
    dance's provenance whoever performs it (the network's own training credits join them).
    ``shipped_style`` is the shipped style nearest a team style's material, which the network
    (trained on the shipped styles) is conditioned on to perform it; the plan's own otherwise.
    """

    plan: Plan
    guide: Guide
    credits: tuple[str, ...] = ()
    shipped_style: str | None = None


def choreograph(
    features: MusicFeatures,
    options: RenderOptions,
    library: PhraseLibrary,
    *,
    plan: Plan | None = None,
) -> Choreography:
    """Build the guide of ``plan`` (default: :func:`plan_song`'s) at the features' rate.

    Raises
    ------
    ParameterError
        When the style is not in the library, or a given plan does not fit the library.
    """
    if plan is None:
        plan = plan_song(features, options, library)
    elif plan.library_sha256 != library.sha256:
        raise ParameterError(
            f"the plan was made with library {plan.library_sha256[:12]}, not this one ({library.sha256[:12]})"
        )
    shipped = None
    if plan.style not in STYLES:
        shipped = nearest_style(library, plan.style, shipped_library())
    guide = build_guide(library, plan, features.n_frames, features.fps)
    return Choreography(plan, guide, library.credits, shipped)


def generate_motion(
    runner: SongRunner,
    features: MusicFeatures,
    options: RenderOptions,
    *,
    song_sha256: str,
    choreography: Choreography,
) -> GeneratedMotion:
    """The raw dance for a song at the model's native frame rate, with its provenance.

    Parameters
    ----------
    runner : runs the song's whole-length inputs into poses ``[N, 75]``: the blend
        (:class:`~choreo.choreography.blend.BlendRunner`), or the guided network, which
        the command line runs alone and a GPU worker through its sequence batcher, so
        its songs share engine calls and still get exactly this dance
    features : the song's features at ``runner.spec.native_fps``
    options : the render options (style and seed are used here)
    song_sha256 : SHA-256 of the song file, for the provenance
    choreography : the plan and guide (:func:`choreograph`) the synthesizer performs

    Raises
    ------
    ParameterError
        When the features are not at the model's frame rate.
    EngineError
        When the engine fails or produces non-finite poses.
    """
    spec = runner.spec
    if features.fps != spec.native_fps:
        raise ParameterError(f"features are at {features.fps} fps but the model runs at {spec.native_fps}")
    style = choreography.plan.style
    inputs = song_inputs(
        features.features,
        style=style if style in spec.styles else str(choreography.shipped_style),
        seed=options.seed,
        spec=spec,
        guide=choreography.guide.poses,
        junction=choreography.guide.junction,
    )
    poses = runner.run_song(inputs)
    if not np.isfinite(poses).all():
        raise EngineError("the engine produced non-finite poses")
    provenance = Provenance(
        model_version=spec.version,
        seed=options.seed,
        style=style,
        song_sha256=song_sha256,
        data_credits=tuple(dict.fromkeys((*spec.credits, *choreography.credits))),
        model_trained=spec.trained,
        synthesizer=options.synth,
        energy=options.energy,
        library_sha256=choreography.plan.library_sha256,
    )
    motion = Motion.from_array(poses.astype(np.float64), fps=features.fps)
    contacts = detect_contacts(motion, planted=choreography.guide.feet, bridge_flights=True)
    return GeneratedMotion(motion, provenance, features.timing, choreography.plan, contacts)


def finish_motion(generated: GeneratedMotion, options: RenderOptions) -> Motion:
    """Turn a raw dance to face +Z, bring it to the requested frame rate, and post-process it.

    The feet are locked by the performed dance's contacts (:func:`finished_contacts`),
    the same track the summary reports.
    Resampling comes before post-processing, so that the low-pass filter also
    smooths the kinks slerp leaves at the model's frames when upsampling. The
    result has exactly ``ceil(duration_s * fps)`` frames, so the dance runs from
    the song's first second to its last. A workout's (the plan's) locks never take the pelvis
    under floor work's height (:data:`choreo.workout.safety.LOCK_MIN_PELVIS_M`); a low-impact
    one's never let the last held foot go (``keep_one_foot_down``) and hold each foot where it touched
    down (``lock_at_touch_down``), and a foot is then planted
    wherever the finished motion's own contact track has neither down
    (:func:`choreo.workout.safety.plant_a_foot`). A workout is clamped to the joint limits again
    after that, and a low-impact one keeps a foot on the floor in every frame
    (:func:`choreo.workout.safety.keep_a_foot_down`), those three passes in rounds until the
    track has a foot down everywhere (:func:`choreo.workout.safety.finish_low_impact`).
    """
    motion = face_front(generated.motion)
    n_frames = frames_for_duration(generated.song.duration_s, options.fps)
    if motion.fps != options.fps or motion.n_frames != n_frames:
        motion = resample(motion, options.fps, n_frames=n_frames)
    workout = generated.plan.routine if generated.plan is not None else None
    low_impact = workout is not None and workout.impact == "low"
    motion = postprocess(
        motion,
        contacts=finished_contacts(generated, motion),
        keep_one_foot_down=low_impact,
        lock_at_touch_down=low_impact,
        bounded_let_go=low_impact,
        min_pelvis_m=LOCK_MIN_PELVIS_M if workout is not None else 0.0,
    )
    if low_impact:
        motion = finish_low_impact(motion)
    elif workout is not None:  # the joint limits are a workout's safety rule: after the feet's locks too
        motion = clamp_joint_limits(motion)
    return in_place(motion) if options.in_place else motion


def finished_contacts(generated: GeneratedMotion, motion: Motion) -> ContactTrack:
    """The raw dance's contacts at the finished dance's fps and frame count (what the clean-up locks
    the feet by, and what the summary reports); a low-impact workout's hold a foot down in every
    frame (:func:`choreo.workout.safety.hold_a_foot_down`), so the lock plants it."""
    track = generated.contacts.resampled(motion.fps, motion.n_frames)
    workout = generated.plan.routine if generated.plan is not None else None
    return hold_a_foot_down(track) if workout is not None and workout.impact == "low" else track


def export_dance(
    motion: Motion,
    generated: GeneratedMotion,
    options: RenderOptions,
    out_dir: Path,
    name: str,
    *,
    song_name: str | None = None,
    song_path: Path | None = None,
) -> ExportedDance:
    """Write every requested format and the contact sheet; return them with the summary.

    ``motion`` is the finished dance (:func:`finish_motion` of ``generated``);
    ``song_path``, the song's file, is muxed into an ``mp4`` (without it the video is silent).
    Each format is written through :func:`exporters.registry.write_file` from one request, in
    the order asked, the contact sheet (``png``) last; the files are keyed by format. The summary
    is for the caller to write, once, with whatever only it knows added (the command line its
    timings), see :meth:`DanceSummary.write`.
    """
    provenance, song = generated.provenance, generated.song
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    request = ExportRequest(
        rig=options.rig,
        units=options.units,
        provenance=provenance,
        beat_times=song.beat_times,
        downbeat_times=song.downbeat_times,
        song_path=song_path,
        video_start_s=options.video_start_s,
        video_length_s=options.video_length_s,
        sheet_title=f"{name} ({provenance.style})",
    )
    files = {
        fmt: write_file(fmt, motion, out_dir / f"{name}.{fmt}", request)
        for fmt in (*options.formats, CONTACT_SHEET_FORMAT)
    }
    positions = joint_positions(motion)
    plan = generated.plan
    routine = None
    if plan is not None and plan.routine is not None:
        from choreo.workout.sheet import routine_sheet  # only a workout's summary has a sheet

        contacts = finished_contacts(generated, motion)
        routine = routine_sheet(motion, plan, body_mass_kg=options.body_mass_kg, contacts=contacts)
    summary = DanceSummary.describe(
        generated,
        frames=motion.n_frames,
        fps=motion.fps,
        mean_joint_speed_m_per_s=mean_joint_speed(positions, fps=motion.fps),
        motion_energy_m2_s2=motion_energy(positions, fps=motion.fps),
        routine=routine,
        options=options,
        files=files,
        song_name=song_name or name,
        contacts=finished_contacts(generated, motion),
    )
    return ExportedDance(files, summary)


@dataclass(frozen=True)
class Dance:
    """A song danced through the stages: its plan and guide, the raw and the finished motion.

    ``timings_s`` holds the seconds each stage took, in the order they ran
    (``render_song`` adds the export's and writes them into the summary).
    """

    choreography: Choreography
    generated: GeneratedMotion
    motion: Motion
    timings_s: dict[str, float]


FINISHED_ROUNDS = 2
"""Times a workout is danced again with its 8-counts' body amplitudes corrected from the finished
motion's energy (:func:`follow_intensity`): the post-processing (the feet's locks, the filter, the
joint limits) moves an 8-count's energy by up to a fifth from its guide's, differently for each."""


def follow_intensity(
    runner: SongRunner,
    features: MusicFeatures,
    options: RenderOptions,
    library: PhraseLibrary,
    *,
    song_sha256: str,
    generated: GeneratedMotion,
    rounds: int = FINISHED_ROUNDS,
) -> tuple[Choreography, GeneratedMotion]:
    """A workout's raw dance ``generated`` danced again ``rounds`` times, each time finished
    (:func:`finish_motion`), measured per 8-count (:func:`choreo.workout.intensity.eight_count_energy`,
    the sheet's measure) and its plan's body amplitudes corrected towards the targets
    (:func:`choreo.workout.intensity.retarget`); the last choreography and raw dance. ``choreo
    render`` and the service's perform stage both call it on the workouts they plan themselves (a
    given ``--plan`` is danced as it is), so they give the same dance.

    Raises
    ------
    ParameterError
        When ``generated``'s plan is not a workout's.
    """
    from choreo.workout.intensity import eight_count_energy, retarget  # only a workout's

    if generated.plan is None:
        raise ParameterError("the raw dance has no plan to correct")
    plan, previous = generated.plan, None
    choreography = None
    for _ in range(rounds):
        energy = eight_count_energy(finish_motion(generated, options), plan)
        plan, previous = retarget(plan, energy, previous)
        choreography = choreograph(features, options, library, plan=plan)
        generated = generate_motion(
            runner, features, options, song_sha256=song_sha256, choreography=choreography
        )
    if choreography is None:
        choreography = choreograph(features, options, library, plan=plan)
    return choreography, generated


def perform_song(
    runner: SongRunner,
    features: MusicFeatures,
    options: RenderOptions,
    library: PhraseLibrary,
    *,
    song_sha256: str,
    plan: Plan | None = None,
) -> Dance:
    """Choreograph a prepared song (or follow ``plan``), perform it on ``runner`` and finish it.

    For callers that keep a song's features across renders (``choreo eval``
    dances each song with several seeds); :func:`dance_song` prepares them first.
    ``features`` are at ``runner.spec.native_fps``. A workout planned here is danced again until
    its 8-counts follow their targets (:func:`follow_intensity`).
    """
    timings: dict[str, float] = {}
    start = time.perf_counter()
    choreography = choreograph(features, options, library, plan=plan)
    timings["plan_s"] = time.perf_counter() - start

    start = time.perf_counter()
    generated = generate_motion(runner, features, options, song_sha256=song_sha256, choreography=choreography)
    timings["generate_s"] = time.perf_counter() - start
    if plan is None and choreography.plan.routine is not None:
        start = time.perf_counter()
        choreography, generated = follow_intensity(
            runner, features, options, library, song_sha256=song_sha256, generated=generated
        )
        timings["follow_intensity_s"] = time.perf_counter() - start

    start = time.perf_counter()
    motion = finish_motion(generated, options)
    timings["postprocess_s"] = time.perf_counter() - start
    return Dance(choreography, generated, motion, timings)


def dance_song(
    path: Path,
    options: RenderOptions,
    *,
    runner: SongRunner | None = None,
    settings: Settings | None = None,
    library: PhraseLibrary | None = None,
    plan: Plan | None = None,
) -> Dance:
    """One song's finished dance, as ``choreo render`` makes it, without writing files.

    The dance is planned on ``library`` (default: the shipped one), or follows
    ``plan`` when given; ``options.synth`` says who performs it: ``blend`` (the
    default) joins the phrases, ``model`` runs the guided network with the plan's
    guide and junction timing; ``runner`` is the one :func:`choreo.runners.synth_runner`
    gives for ``options.synth`` unless the caller made it already (a GPU worker's batcher).
    The song is decoded and analysed at the runner's rate (:func:`prepare_song`), then
    :func:`perform_song` dances it.
    """
    settings = settings or get_settings()
    path = Path(path)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    library = library or shipped_library()
    runner = runner or synth_runner(options.synth, library)
    timings["load_engine_s"] = time.perf_counter() - start

    start = time.perf_counter()
    features = prepare_song(path, fps=runner.spec.native_fps, settings=settings)
    timings["analyze_s"] = time.perf_counter() - start

    dance = perform_song(runner, features, options, library, song_sha256=song_sha256(path), plan=plan)
    return replace(dance, timings_s=timings | dance.timings_s)


def render_song(
    path: Path,
    out_dir: Path,
    options: RenderOptions,
    *,
    runner: SongRunner | None = None,
    settings: Settings | None = None,
    library: PhraseLibrary | None = None,
    plan: Plan | None = None,
) -> RenderResult:
    """Render one song into dance files in ``out_dir``, named after the song.

    The dance is :func:`dance_song`'s (the arguments are its); then every requested
    format, the preview picture and the summary, with each stage's time, are written.
    """
    path = Path(path)
    dance = dance_song(path, options, runner=runner, settings=settings, library=library, plan=plan)
    timings = dict(dance.timings_s)

    start = time.perf_counter()
    exported = export_dance(
        dance.motion, dance.generated, options, out_dir, path.stem, song_name=path.name, song_path=path
    )
    timings["export_s"] = time.perf_counter() - start

    # Written once, last, so that the export's own time is in it.
    summary = exported.summary.model_copy(update={"timings_s": {k: round(v, 4) for k, v in timings.items()}})
    files = exported.files | {"json": summary.write(Path(out_dir) / f"{path.stem}.json")}
    return RenderResult(song=path, files=files, summary=summary, timings_s=timings)
