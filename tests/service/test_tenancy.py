"""Teams stay apart: admin keys per team, an operator scope, callback secrets and targets, dedup."""

from __future__ import annotations

import threading

import pytest

from tests.service.helpers import SONGS, ServiceStack, upload

pytestmark = pytest.mark.service


def test_an_admin_manages_only_its_own_team(stack: ServiceStack) -> None:
    with stack.as_("operator") as operator:
        theirs = operator.post("/v1/keys", json={"team": "globex", "name": "g", "scopes": ["content"]})
        assert theirs.status_code == 201, theirs.text
        globex_key = theirs.json()["key"]["id"]
        assert {k["team"] for k in operator.get("/v1/keys").json()["items"]} >= {"acme", "globex", "ops"}
    with stack.as_("admin") as admin:
        other_team = admin.post("/v1/keys", json={"team": "globex", "name": "x", "scopes": ["content"]})
        assert other_team.status_code == 403, other_team.text
        escalate = admin.post("/v1/keys", json={"team": "acme", "name": "x", "scopes": ["operator"]})
        assert escalate.status_code == 403, escalate.text
        listed = admin.get("/v1/keys", params={"team": "globex"}).json()["items"]
        assert listed and {k["team"] for k in listed} == {"acme"}
        assert admin.delete(f"/v1/keys/{globex_key}").status_code == 404
    assert stack.ctx.storage.get_json(f"keys/{globex_key}.json")["revoked_at"] is None


def test_the_callback_secret_is_per_team_shown_once_and_rotates(stack: ServiceStack) -> None:
    with stack.as_("admin") as admin:
        first = admin.post("/v1/team/callback-secret")
        assert first.status_code == 201, first.text
        second = admin.post("/v1/team/callback-secret").json()
    assert first.json()["team"] == second["team"] == "acme"
    assert first.json()["secret"] != second["secret"]
    with stack.as_("content") as content:
        assert content.post("/v1/team/callback-secret").status_code == 403
    from choreo.service.teams import callback_secret

    assert callback_secret(stack.ctx, "acme") == second["secret"]
    assert callback_secret(stack.ctx, "globex") != second["secret"]
    stack.callback_secrets["acme"] = second["secret"]


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/hook",
        "http://224.0.0.1/hook",
        "http://0.0.0.0/hook",
    ],
)
def test_callbacks_to_private_link_local_and_multicast_hosts_are_refused(
    stack: ServiceStack, url: str
) -> None:
    with stack.as_("content") as client:
        sha = upload(client, SONGS["hungarian"]).json()["sha256"]
        answer = client.post("/v1/jobs", json={"tracks": [sha], "callback_url": url, "force": True})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "callback_refused"


def test_loopback_callbacks_need_the_development_setting() -> None:
    from choreo.service.callbacks import CallbackRefused, check_target

    with pytest.raises(CallbackRefused, match="not a public address"):
        check_target("http://127.0.0.1:9/hook", allow_loopback=False)
    with pytest.raises(CallbackRefused):
        check_target("http://user:pw@[::1]:9/hook", allow_loopback=False)
    check_target("http://127.0.0.1:9/hook", allow_loopback=True)
    check_target("https://93.184.216.34/hook", allow_loopback=False)
    with pytest.raises(CallbackRefused, match="10.0.0.1"):
        check_target("http://10.0.0.1/hook", allow_loopback=True)


def test_a_callback_url_needs_the_teams_secret(stack: ServiceStack) -> None:
    from choreo.service.keys import create_key

    token = create_key(stack.ctx, team="initech", name="fresh", scopes=["content"])[1]
    with stack.client(token) as client:
        sha = upload(client, SONGS["hungarian"]).json()["sha256"]
        answer = client.post("/v1/jobs", json={"tracks": [sha], "callback_url": "https://93.184.216.34/h"})
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "no_callback_secret"


def test_twenty_identical_submits_at_once_make_one_job(stack: ServiceStack) -> None:
    with stack.as_("content") as client:
        sha = upload(client, SONGS["vibe_ace"]).json()["sha256"]
    body = {"tracks": [sha], "options": {"seed": 424242, "formats": ["bvh"]}}
    answers: list[dict] = []
    start = threading.Barrier(20)

    def submit() -> None:
        with stack.as_("content") as client:
            start.wait()
            answer = client.post("/v1/jobs", json=body)
            assert answer.status_code == 202, answer.text
            answers.append(answer.json()["jobs"][0])

    threads = [threading.Thread(target=submit) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers) == 20
    assert len({a["id"] for a in answers}) == 1, "the same request rendered more than once"
    assert sum(not a["deduplicated"] for a in answers) == 1
    with stack.as_("content") as client:
        assert client.post(f"/v1/jobs/{answers[0]['id']}/cancel").status_code == 200


def test_a_stuck_job_does_not_trap_its_requests(stack: ServiceStack) -> None:
    from choreo.service.jobs import create_job
    from choreo.service.records import JobOptions, JobRecord, JobState, new_id, now_s

    with stack.as_("content") as client:
        sha = upload(client, SONGS["hungarian"]).json()["sha256"]
    options = JobOptions(seed=515151)
    # A live job whose messages were lost: unchanged for longer than dedup_stale_after_s (never enqueued).
    stuck = create_job(
        stack.ctx,
        JobRecord(
            id=new_id("job"),
            team="acme",
            track_sha256=sha,
            track_ext="ogg",
            track_name="stuck.ogg",
            options=options,
            fingerprint=options.fingerprint(sha),
            state=JobState.GENERATING,
            updated_at=now_s() - stack.ctx.settings.dedup_stale_after_s - 60,
        ),
    )
    body = {"tracks": [sha], "options": options.model_dump()}
    with stack.as_("content") as client:
        again = client.post("/v1/jobs", json=body).json()["jobs"][0]
        assert again["id"] != stuck.id and again["deduplicated"] is False
        third = client.post("/v1/jobs", json=body).json()["jobs"][0]
        assert third["id"] == again["id"] and third["deduplicated"] is True
        for job_id in (stuck.id, again["id"]):
            assert client.post(f"/v1/jobs/{job_id}/cancel").status_code == 200
