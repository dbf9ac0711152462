"""Unit tests of the service's pure parts: options, fingerprints, signatures, sniffing, settings."""

from __future__ import annotations

import time
from ipaddress import ip_network

import pytest
from pydantic import ValidationError

from choreo.errors import AudioError, ParameterError
from choreo.service.callbacks import sign, verify
from choreo.service.forwarded import client_address, parse_networks
from choreo.service.records import JobOptions
from choreo.service.settings import ServiceSettings
from choreo.service.tracks import check_audio_head, extension_of
from worker.steps import artifact_name

SHA = "ab" * 32


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"fps": 29}, "fps 29"),
        ({"formats": ["obj"]}, "obj"),
        ({"style": "polka"}, "polka"),
        ({"rig": "x"}, "rig"),
    ],
)
def test_job_options_refuse_bad_values_naming_them(options: dict, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        JobOptions(**options)


def test_job_options_refuse_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="speed"):
        JobOptions(speed=2)


def test_fingerprint_ignores_format_order_but_not_seed_fps_or_track() -> None:
    base = JobOptions(formats=["bvh", "glb"])
    assert base.fingerprint(SHA) == JobOptions(formats=["glb", "bvh", "glb"]).fingerprint(SHA)
    assert base.fingerprint(SHA) != JobOptions(formats=["bvh", "glb"], seed=1).fingerprint(SHA)
    assert base.fingerprint(SHA) != JobOptions(formats=["bvh", "glb"], fps=60).fingerprint(SHA)
    assert base.fingerprint(SHA) != base.fingerprint("cd" * 32)


def test_callback_signature_verifies_and_catches_tampering_and_age() -> None:
    body = b'{"event":"job.finished"}'
    now = int(time.time())
    signature = sign("s3cret", now, body)
    assert signature.startswith("sha256=")
    assert verify("s3cret", now, body, signature)
    assert not verify("s3cret", now, body + b" ", signature)
    assert not verify("other", now, body, signature)
    assert not verify("s3cret", now - 3600, body, sign("s3cret", now - 3600, body))


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("a.mp3", b"ID3\x04\x00"),
        ("a.mp3", b"\xff\xfb\x90\x00"),
        ("a.ogg", b"OggS\x00\x02"),
        ("a.wav", b"RIFF\x24\x00\x00\x00WAVEfmt "),
        ("a.flac", b"fLaC\x00"),
        ("a.m4a", b"\x00\x00\x00\x20ftypM4A "),
    ],
)
def test_real_song_heads_pass(name: str, head: bytes) -> None:
    check_audio_head(name, extension_of(name), head)


def test_text_named_mp3_and_empty_files_are_refused_with_their_codes() -> None:
    with pytest.raises(AudioError, match="notes.mp3") as info:
        check_audio_head("notes.mp3", "mp3", b"hello, this is text")
    assert info.value.code == "not_audio"
    with pytest.raises(AudioError) as info:
        check_audio_head("x.ogg", "ogg", b"")
    assert info.value.code == "empty_file"
    with pytest.raises(ParameterError, match="readme"):
        extension_of("readme")


def test_settings_refuse_default_secrets_outside_development_and_a_short_visibility_timeout() -> None:
    with pytest.raises(ValidationError, match="CHOREO_S3_ACCESS_KEY"):
        ServiceSettings(environment="production")
    for default in ("choreo-dev", "minioadmin"):
        with pytest.raises(ValidationError, match="known default"):
            ServiceSettings(environment="test", s3_access_key="k", s3_secret_key=default)
    assert ServiceSettings(s3_access_key="choreo-dev").environment == "development"
    with pytest.raises(ValidationError, match="ALLOW_LOOPBACK"):
        ServiceSettings(
            environment="production", s3_access_key="k", s3_secret_key="s", callback_allow_loopback=True
        )
    ok = ServiceSettings(environment="production", s3_access_key="k", s3_secret_key="s", stage_timeout_s=100)
    assert ok.visibility_timeout_s == 115
    with pytest.raises(ValidationError, match="visibility_timeout_s"):
        ServiceSettings(stage_timeout_s=100, visibility_timeout_s=50)


def test_artifact_names_are_safe_file_stems() -> None:
    assert artifact_name("My Song (live).mp3") == "My_Song_live"
    assert artifact_name("../../etc/passwd.ogg") == "passwd"
    assert artifact_name("....ogg") == "dance"


def test_storage_errors_say_whether_retrying_can_help() -> None:
    from choreo.errors import StorageError
    from choreo.service.storage import Storage
    from tests.harness.localstack import free_ports

    (port,) = free_ports(1)
    nobody = Storage(
        ServiceSettings(s3_endpoint_url=f"http://127.0.0.1:{port}", s3_access_key="a", s3_secret_key="b")
    )
    with pytest.raises(StorageError, match="unreachable") as info:
        nobody.ping()
    assert info.value.transient, "an unreachable endpoint is worth retrying"
    # Refusals that no retry changes, found before anything is sent.
    with pytest.raises(StorageError, match="Invalid length for parameter Key") as info:
        nobody.put_bytes("", b"x")
    assert not info.value.transient, "a bad key name stays bad"
    with pytest.raises(StorageError, match="must end with '/'") as info:
        nobody.delete_prefix("jobs")
    assert not info.value.transient


@pytest.mark.parametrize(
    ("status", "code", "transient"),
    [
        (403, "AccessDenied", False),
        (403, "SignatureDoesNotMatch", False),
        (400, "InvalidArgument", False),
        (412, "PreconditionFailed", False),
        (408, "RequestTimeout", True),
        (429, "TooManyRequests", True),
        (500, "InternalError", True),
        (503, "SlowDown", True),
        (503, "ServiceUnavailable", True),
    ],
)
def test_storage_answers_are_transient_only_for_outages(status: int, code: str, transient: bool) -> None:
    from botocore.exceptions import ClientError

    from choreo.service.storage import _wrap

    answer = {"Error": {"Code": code}, "ResponseMetadata": {"HTTPStatusCode": status}}
    err = _wrap(ClientError(answer, "PutObject"), "write", "k")
    assert (err.code, err.transient) == ("storage_error", transient)


def test_a_job_lock_held_by_another_writer_is_transient(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock lapses by itself, so a writer that waited it out in vain may try again later."""
    from choreo.errors import StorageError
    from choreo.service import jobs
    from choreo.service.context import ServiceContext
    from tests.service.helpers import REDIS_URL

    monkeypatch.setattr(jobs, "_WRITE_LOCK_S", 1)  # the wait is two terms of the lock: 2 s here
    ctx = ServiceContext.from_settings(ServiceSettings(redis_url=REDIS_URL))
    lock = ctx.key("job_lock", "job_locked")
    ctx.redis.set(lock, "another writer", ex=30)
    try:
        with pytest.raises(StorageError, match="stayed locked by another writer") as info:
            jobs.update_job(ctx, "job_locked", lambda job: True)
        assert info.value.transient
    finally:
        ctx.redis.delete(lock)


def test_the_apis_own_refusals_are_in_the_error_tree() -> None:
    from api.errors import ApiError
    from choreo.errors import ChoreoError
    from worker.tasks import is_transient

    err = ApiError(429, "rate_limited", "retry in 3 s", headers={"Retry-After": "3"})
    assert isinstance(err, ChoreoError) and not is_transient(err)
    assert (err.status, err.code, err.message, err.headers) == (
        429,
        "rate_limited",
        "retry in 3 s",
        {"Retry-After": "3"},
    )
    missing = ApiError.not_found("job", "job_1")
    assert (missing.status, missing.code) == (404, "not_found")
    assert missing.message == "no job 'job_1' for this key's team"


def test_routine_levels_come_from_the_met_value_of_the_motion_energy() -> None:
    from choreo.models.energy import energy_calibration, intensity_level
    from choreo.service.records import RoutineRecord
    from choreo.service.routines import scored

    cal = energy_calibration()
    assert [intensity_level(m) for m in (1.3, 2.99, 3.0, 5.99, 6.0, 9.0)] == [
        "light",
        "light",
        "moderate",
        "moderate",
        "vigorous",
        "vigorous",
    ]
    base = {"id": "rtn_1", "team": "t", "job_id": "job_1", "title": "x", "style": "salsa"}
    calm = scored(
        RoutineRecord(
            **base, tempo_bpm=120, duration_s=60, intensity=0.5, intensity_level="", motion_energy_m2_s2=0.3
        )
    )
    hard = scored(calm.model_copy(update={"motion_energy_m2_s2": 4.0}))
    assert calm.met == pytest.approx(cal.met(0.3), abs=0.01) and calm.intensity_level == "light"
    assert hard.met > 6 and hard.intensity_level == "vigorous"
    assert hard.kcal_per_min == pytest.approx(hard.met * 3.5 * 70 / 200, abs=0.01)
    assert calm.calibration == cal.version


def test_job_summary_is_typed_and_an_old_empty_one_reads_as_none() -> None:
    from choreo.contracts.summary import DanceBrief
    from choreo.service.records import JobRecord

    record = {
        "id": "job_1",
        "team": "t",
        "track_sha256": SHA,
        "track_ext": "ogg",
        "track_name": "a.ogg",
        "options": {},
        "fingerprint": "f",
    }
    assert JobRecord.model_validate(record | {"summary": {}}).summary is None
    summary = DanceBrief(
        tempo_bpm=120.0,
        duration_s=3.0,
        style="salsa",
        mean_joint_speed_m_per_s=1.2,
        frames=90,
        fps=30,
        model_version="m",
        model_trained=True,
    )
    assert JobRecord.model_validate(record | {"summary": summary.model_dump()}).summary == summary
    with pytest.raises(ValidationError, match="model_trained"):
        DanceBrief.model_validate(summary.model_dump(exclude={"model_trained"}))


def test_client_messages_lose_paths_urls_hosts_and_storage_keys() -> None:
    from choreo.service.redact import public_message, safe_url

    logged = (
        "file /tmp/choreo-prepare-1x/broken.ogg: storage refused to upload 'jobs/job_1/work/prepared.npz' "
        'at "http://127.0.0.1:9000/choreo/jobs/job_1"; Error 111 connecting to redis:6379'
    )
    shown = public_message(logged)
    for secret in ("/tmp", "choreo-prepare", "jobs/", "127.0.0.1", "redis:6379", "http://"):  # noqa: S108  a path to redact
        assert secret not in shown, (secret, shown)
    assert "broken.ogg" in shown and "prepared.npz" in shown
    assert public_message("fps 31 is not supported; tempo 120/4") == "fps 31 is not supported; tempo 120/4"
    assert safe_url("https://user:pw@hooks.example/x?y=1") == "https://***@hooks.example/x?y=1"
    assert safe_url("https://hooks.example/x") == "https://hooks.example/x"


def test_boto3_transfer_errors_are_storage_errors_and_a_5xx_under_them_is_transient() -> None:
    from boto3.exceptions import S3UploadFailedError
    from botocore.exceptions import ClientError

    from choreo.service.storage import _wrap
    from worker.tasks import is_transient

    def upload_failure(status: int) -> S3UploadFailedError:
        answer = {"Error": {"Code": "InternalError"}, "ResponseMetadata": {"HTTPStatusCode": status}}
        try:
            try:
                raise ClientError(answer, "PutObject")
            except ClientError as exc:
                raise S3UploadFailedError("Failed to upload") from exc
        except S3UploadFailedError as exc:
            return exc

    assert is_transient(_wrap(upload_failure(500), "upload", "k"))
    assert not is_transient(_wrap(upload_failure(403), "upload", "k"))
    assert is_transient(ConnectionResetError("reset by peer"))
    from kombu.exceptions import OperationalError

    assert is_transient(OperationalError("publish failed"))


def test_later_stages_go_before_first_stages_and_priority_orders_the_rest() -> None:
    from choreo.service.queue import GPU_QUEUE, TASK_FINISH, TASK_PERFORM, TASK_PREPARE, broker_priority

    # The Redis transport serves step 0 first.
    assert broker_priority(0, TASK_FINISH) == broker_priority(9, TASK_FINISH) == 0
    prepares = [broker_priority(p, TASK_PREPARE) for p in range(10)]
    assert all(1 <= step <= 9 for step in prepares)
    assert prepares == sorted(prepares, reverse=True) and prepares[9] < prepares[0]
    assert broker_priority(5, TASK_PERFORM, GPU_QUEUE) == broker_priority(5, TASK_PREPARE)
    assert broker_priority(5, TASK_PERFORM) == 0  # a blend performs on the CPU queue, before any prepare


@pytest.mark.parametrize("state", ["done", "failed", "cancelled"])
def test_advance_job_refuses_to_end_a_job(state: str) -> None:
    from choreo.service.context import ServiceContext
    from choreo.service.jobs import advance_job
    from choreo.service.records import JobState

    ctx = ServiceContext.from_settings(ServiceSettings())
    with pytest.raises(ParameterError, match=f"not to '{state}'"):
        advance_job(ctx, "no-such-job", JobState(state))


def test_routine_filters_tell_dances_from_workouts_by_impact_and_profile() -> None:
    from choreo.service.records import RoutineRecord
    from choreo.service.routines import RoutineFilter

    base = {
        "team": "t",
        "job_id": "job_1",
        "title": "x",
        "style": "salsa",
        "tempo_bpm": 120,
        "duration_s": 60,
    }
    dance = RoutineRecord(id="rtn_1", **base, intensity=1.0, intensity_level="moderate")
    workout = dance.model_copy(
        update={"id": "rtn_2", "kind": "workout", "profile": "pyramid", "impact": "low"}
    )
    for flt, expected in (
        (RoutineFilter(kind="workout"), ["rtn_2"]),
        (RoutineFilter(kind="dance"), ["rtn_1"]),
        (RoutineFilter(impact="low"), ["rtn_2"]),
        (RoutineFilter(impact="high"), []),
        (RoutineFilter(profile="pyramid", intensity="moderate"), ["rtn_2"]),
        (RoutineFilter(profile="steady"), []),
    ):
        assert [r.id for r in (dance, workout) if flt.matches(r)] == expected, flt


_PROXIES = parse_networks("10.0.0.0/8, 192.0.2.1")


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "client"),
    [
        ("203.0.113.5", None, "203.0.113.5"),
        # A peer that is not a trusted proxy is the client, whatever it says it forwarded.
        ("203.0.113.5", "198.51.100.1", "203.0.113.5"),
        ("192.0.2.1", "198.51.100.1", "198.51.100.1"),
        # Two trusted hops; what the client wrote itself, left of them, is not believed.
        ("10.1.1.1", "6.6.6.6, 198.51.100.1, 10.2.2.2", "198.51.100.1"),
        # Nothing but trusted hops: the farthest one is the client.
        ("10.1.1.1", "10.2.2.2, 10.3.3.3", "10.2.2.2"),
        # Garbage where an address should be ends the walk at the last hop that was one.
        ("10.1.1.1", "198.51.100.1, not-an-ip, 10.2.2.2", "10.2.2.2"),
        ("10.1.1.1", "", "10.1.1.1"),
        ("::1", "198.51.100.1", "::1"),
    ],
)
def test_the_client_address_comes_from_trusted_proxies_only(
    peer: str, forwarded_for: str | None, client: str
) -> None:
    assert client_address(peer, forwarded_for, _PROXIES) == client


def test_trusted_proxies_that_are_not_addresses_are_refused_by_name() -> None:
    assert ServiceSettings(trusted_proxies="10.0.0.0/8, ::1").trusted_proxy_networks == (
        ip_network("10.0.0.0/8"),
        ip_network("::1"),
    )
    with pytest.raises(ValidationError, match="'lb.internal' is not an IP address"):
        ServiceSettings(trusted_proxies="10.0.0.1, lb.internal")
