"""Every route fuzzed: Schemathesis against the live API, from the API's own OpenAPI document.

Three properties, each with real requests to the session's stack:

- every operation, with a key of each scope, answers no 5xx and only what the document says: a
  declared status, a declared content type, a body that matches the declared schema;
- no operation that takes an id accepts another team's: with the acme team's real ids, a key of
  another team with every scope gets 404 (or 422 for input it refuses first), never the object;
- the document's links chain the operations (upload -> submit -> job -> artifacts, and the
  listings to the objects they list), and a stateful run follows them from the team's listed song
  to a done job's artifacts (a step that submits waits for its jobs to end), checked the same way.

The fuzzing team (``fuzz``) is a team of its own, so what the fuzzer creates, deletes or rotates
(its callback secret) touches no other test's data. The numbers of examples keep the module to
about three minutes on two shared cores; a failure prints the request that reproduces it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from choreo.service.keys import create_key
from tests.service.helpers import Album, ServiceStack, cut_songs, upload

pytestmark = pytest.mark.service

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
"""No 5xx, and every answer as the document declares it."""

FUZZ_TEAM = "fuzz"
SCOPES = {
    "admin": ["admin"],
    "content": ["content"],
    "fitness": ["fitness"],
    "all": ["admin", "content", "fitness"],
    "operator": ["operator", "admin"],
}
"""The fuzzing team's keys: one per scope, every scope together, and the operator's."""


def _quick(examples: int, **more: int) -> settings:
    """Hypothesis settings of a bounded, repeatable run: no deadline, no shrinking, no example store."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
        derandomize=True,
        database=None,
        **more,
    )


def _new_keys(stack: ServiceStack) -> dict[str, str]:
    """Tokens of the fuzzing team by scope, above any request limit."""
    return {
        who: create_key(
            stack.ctx, team=FUZZ_TEAM, name=f"fuzz {who}", scopes=scopes, rate_limit_per_minute=1_000_000
        )[1]
        for who, scopes in SCOPES.items()
    }


@pytest.fixture(scope="module")
def fuzz_song(stack: ServiceStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One short real song of the fuzzing team's; at the end, its jobs that still run are cancelled."""
    (song,) = cut_songs(tmp_path_factory.mktemp("fuzz"), 1, seconds=4)
    with stack.client(_new_keys(stack)["content"]) as client:
        assert upload(client, song).status_code == 201
    yield song
    with stack.client(_new_keys(stack)["content"]) as client:
        for job in client.get("/v1/jobs", params={"limit": 200}).json()["items"]:
            client.post(f"/v1/jobs/{job['id']}/cancel")
    # The fuzzer's requests without a valid key counted against 127.0.0.1, the address every test
    # shares: past the limit, the next module's keyless requests would get 429 instead of 401.
    for counter in stack.ctx.redis.scan_iter(match=stack.ctx.key("rl_auth", "127.0.0.1", "*")):
        stack.ctx.redis.delete(counter)


@pytest.fixture
def fuzz_keys(stack: ServiceStack, fuzz_song: Path) -> dict[str, str]:
    """Fresh keys for each test: the fuzzer revokes the keys it finds listed (as an admin may)."""
    return _new_keys(stack)


@pytest.fixture(scope="module")
def api_schema(stack: ServiceStack) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{stack.api_url}/openapi.json")


def _operations(api_schema: schemathesis.BaseSchema) -> list[schemathesis.APIOperation]:
    return [result.ok() for result in api_schema.get_all_operations()]


def _fuzz(
    operations: list[schemathesis.APIOperation],
    examples: int,
    test: Callable[[schemathesis.Case], None],
    path_parameters: dict[str, str] | None = None,
    modes: tuple[GenerationMode, ...] = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE),
) -> None:
    """Run ``test`` on ``examples`` requests of each operation in each mode; report every failed one.

    ``path_parameters`` fixes those of an operation's path parameters it names.
    """
    failures = []
    for operation in operations:
        fixed = {k: v for k, v in (path_parameters or {}).items() if "{" + k + "}" in operation.path}
        cases = st.one_of(*(operation.as_strategy(mode, path_parameters=fixed) for mode in modes))

        @given(case=cases)
        @_quick(examples)
        def run(case: schemathesis.Case) -> None:
            test(case)

        try:
            run()
        except Exception as exc:  # every operation is tried; the failures are reported together
            failures.append(f"{operation.label}: {exc!s}")
    assert not failures, "\n\n".join(failures)


def test_every_route_answers_as_documented_with_each_scope(
    api_schema: schemathesis.BaseSchema, fuzz_keys: dict[str, str]
) -> None:
    def every_scope(case: schemathesis.Case) -> None:
        for who, token in fuzz_keys.items():
            if who == "operator" and case.operation.path.startswith("/v1/keys") and case.method != "GET":
                # The operator manages every team's keys: ids it saw listed would revoke other tests' keys.
                continue
            case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    _fuzz(_operations(api_schema), 6, every_scope)


def _acme_ids(stack: ServiceStack, album: Album) -> dict[str, str]:
    """A real id of team acme for each path parameter that names an object."""
    job = next(iter(album.jobs.values()))
    with stack.as_("content") as content:
        routine = content.post("/v1/routines", json={"job_id": job["id"], "title": "fuzz target", "tags": []})
        if routine.status_code == 409:  # the session's album: another module may have published it first
            assert routine.json()["error"]["code"] == "already_published", routine.text
            listed = content.get("/v1/routines", params={"limit": 200}).json()["items"]
            routine_id = next(r["id"] for r in listed if r["job_id"] == job["id"])
        else:
            assert routine.status_code in (200, 201), routine.text
            routine_id = routine.json()["id"]
    with stack.as_("admin") as admin:
        key_id = admin.get("/v1/keys").json()["items"][0]["id"]
    return {
        "job_id": job["id"],
        "batch_id": album.submit["batch"]["id"],
        "sha256": job["track_sha256"],
        "routine_id": routine_id,
        "key_id": key_id,
    }


@pytest.fixture(scope="module")
def acme_ids(stack: ServiceStack, album: Album) -> dict[str, str]:
    return _acme_ids(stack, album)


def test_no_route_accepts_another_teams_ids(
    api_schema: schemathesis.BaseSchema, acme_ids: dict[str, str], fuzz_keys: dict[str, str]
) -> None:
    def as_another_team(case: schemathesis.Case) -> None:
        answer = case.call(headers={"Authorization": f"Bearer {fuzz_keys['all']}"})
        # A song's audio and an album's archive are opened by their link's ticket, not by the key.
        refused = (401, 404, 422) if case.path.endswith(("/audio", "/archive")) else (404, 422)
        assert answer.status_code in refused, f"{case.method} {case.formatted_path}: {answer.status_code}"

    by_id = [op for op in _operations(api_schema) if any("{" + name + "}" in op.path for name in acme_ids)]
    assert len(by_id) >= 15, [op.label for op in by_id]
    # Valid requests only: a negative case may drop the key on purpose, and the point is the ids.
    _fuzz(by_id, 4, as_another_team, path_parameters=acme_ids, modes=(GenerationMode.POSITIVE,))


CHAIN = [
    "GET /v1/tracks",
    "GET /v1/tracks/{sha256}",
    "POST /v1/jobs",
    "GET /v1/jobs/{job_id}",
    "GET /v1/jobs/{job_id}/artifacts",
    "GET /v1/jobs/{job_id}/timeline",
    "GET /v1/batches/{batch_id}",
]
"""The operations of the stateful run: the team's song listed, submitted, and what the submit made read
back. No cancel or delete (they would end the chain they are on), no upload (the fuzzer cannot write
a song that decodes: the chain starts from the song listed)."""

RENDER_WAIT_S = 90
"""Longest a submitted job may take to end before the run's next step (a 4 s song takes seconds)."""


def _wait_until_ended(client: httpx.Client, job_ids: list[str]) -> dict[str, str]:
    """Poll the jobs until each has ended; their states."""
    deadline = time.monotonic() + RENDER_WAIT_S
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = {job_id: client.get(f"/v1/jobs/{job_id}").json()["state"] for job_id in job_ids}
        if all(state in ("done", "failed", "cancelled") for state in states.values()):
            return states
        time.sleep(0.25)
    raise AssertionError(f"jobs not ended within {RENDER_WAIT_S} s: {states}")


def test_a_stateful_run_chains_the_listed_song_to_a_done_job_s_artifacts(
    stack: ServiceStack, api_schema: schemathesis.BaseSchema, fuzz_keys: dict[str, str], fuzz_song: Path
) -> None:
    """Following the document's links only, from the team's listed song: submit it (the requestBody
    link), read back the job and its artifacts (each job link), every answer checked against the
    document. A step that submitted waits until its jobs have ended, as a client would before it asks
    for the files, so the chain reaches a done job's artifacts; each of their links downloads."""
    token = fuzz_keys["all"]
    with stack.client(token) as client:  # the fuzzer may have deleted the song it found listed
        assert upload(client, fuzz_song).status_code == 201
    seen: list[tuple[str, int]] = []
    artifacts: list[dict] = []
    chain = api_schema.include(name=CHAIN)
    assert sorted(op.label for op in _operations(chain)) == sorted(CHAIN)
    chain.config.generation.update(modes=[GenerationMode.POSITIVE])

    class Workflow(chain.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, object]:
            return {"headers": {"Authorization": f"Bearer {token}"}}

        def after_call(self, response: schemathesis.Response, case: schemathesis.Case) -> None:
            label = f"{case.method} {case.path}"
            seen.append((label, response.status_code))
            if label == "POST /v1/jobs" and response.status_code == 202:
                with stack.client(token) as client:
                    ended = _wait_until_ended(client, [job["id"] for job in response.json()["jobs"]])
                assert set(ended.values()) == {"done"}, ended
            if label == "GET /v1/jobs/{job_id}/artifacts" and response.status_code == 200:
                artifacts.append(response.json())

        def validate_response(self, response, case, additional_checks=None, **kwargs):  # type: ignore[no-untyped-def]
            case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs)

    started = time.monotonic()
    Workflow.run(settings=_quick(30, stateful_step_count=8))
    took_s = time.monotonic() - started
    print(f"stateful run: {len(seen)} calls in {took_s:.1f} s, {len(artifacts)} artifact reads")
    reached = {op for op, status in seen if 200 <= status < 300}
    assert {"GET /v1/tracks", "POST /v1/jobs", "GET /v1/jobs/{job_id}/artifacts"} <= reached, sorted(
        set(seen)
    )
    # The artifacts of a done job (the only state they are given in), each link a file that downloads.
    for answer in {a["job_id"]: a for a in artifacts}.values():
        kinds = {link["kind"]: link["url"] for link in answer["artifacts"]}
        assert {"bvh", "json"} <= set(kinds), answer
        for kind, url in kinds.items():
            fetched = httpx.get(url, timeout=30)
            assert fetched.status_code == 200 and fetched.content, (kind, fetched.status_code)
        assert httpx.get(kinds["bvh"], timeout=30).text.startswith("HIERARCHY")


# -- what the fuzzer found, kept as ordinary tests -------------------------------------------------------


def test_every_operation_declares_the_one_error_body(stack: ServiceStack) -> None:
    # Found: no operation declared its 401/403/404/409/413/429 answers, and the 422 it declared
    # was FastAPI's validation shape, not the {"error": {"code", "message"}} the API sends.
    with stack.client() as client:
        document = client.get("/openapi.json").json()
        refused = client.post("/v1/jobs", json={"tracks": ["x"]})
    error_ref = "#/components/schemas/ErrorBody"
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status in ("4XX", "5XX"):
                declared = operation["responses"][status]["content"]["application/json"]["schema"]
                assert declared == {"$ref": error_ref}, f"{method.upper()} {path} {status}: {declared}"
            assert "422" not in operation["responses"], f"{method.upper()} {path} declares FastAPI's 422"
    assert refused.status_code == 401 and set(refused.json()["error"]) == {"code", "message"}


def test_binary_answers_declare_their_content_types(stack: ServiceStack) -> None:
    # Found: the album's archive (application/zip) and a song (audio/...) were declared as JSON.
    with stack.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
    archive = paths["/v1/batches/{batch_id}/archive"]["get"]["responses"]["200"]["content"]
    assert list(archive) == ["application/zip"]
    song = paths["/v1/jobs/{job_id}/audio"]["get"]["responses"]
    for status in ("200", "206"):
        assert "audio/ogg" in song[status]["content"] and "application/json" not in song[status]["content"]


def test_a_submit_declares_that_tracks_are_sha256(stack: ServiceStack) -> None:
    # Found: any string was a valid track in the document, every one refused by the API.
    with stack.client() as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["SubmitCreate"]["properties"]["tracks"]["items"]["pattern"] == "^[0-9a-f]{64}$"


def test_the_document_links_upload_submit_job_and_artifacts(stack: ServiceStack) -> None:
    with stack.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
    upload = paths["/v1/tracks"]["post"]["responses"]["201"]["links"]["SubmitTrack"]
    assert upload["requestBody"] == {"tracks": ["$response.body#/sha256"]}
    assert upload["x-schemathesis"] == {"merge_body": False}
    submit = paths["/v1/jobs"]["post"]["responses"]["202"]["links"]
    assert submit["GetJob"]["parameters"] == {"job_id": "$response.body#/jobs/0/id"}
    assert submit["GetArtifacts"]["operationRef"] == "#/paths/~1v1~1jobs~1{job_id}~1artifacts/get"
