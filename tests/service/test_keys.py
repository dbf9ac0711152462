"""API keys: admin endpoint, scopes, immediate revocation and the per-key rate limit."""

from __future__ import annotations

import pytest

from tests.service.helpers import ServiceStack

pytestmark = pytest.mark.service


def test_admin_creates_lists_and_revokes_keys_and_revocation_is_immediate(stack: ServiceStack) -> None:
    with stack.as_("admin") as admin:
        created = admin.post(
            "/v1/keys", json={"team": "acme", "name": "studio laptop", "scopes": ["content"]}
        )
        assert created.status_code == 201, created.text
        token, key_id = created.json()["token"], created.json()["key"]["id"]
        listed = admin.get("/v1/keys", params={"team": "acme"}).json()["items"]
        assert key_id in [k["id"] for k in listed]
        assert all("secret" not in str(k) and token not in str(k) for k in listed)
        with stack.client(token) as user:
            assert user.get("/v1/jobs").status_code == 200
            assert admin.delete(f"/v1/keys/{key_id}").status_code == 200
            refused = user.get("/v1/jobs")
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "invalid_key"
        assert admin.delete("/v1/keys/ffffffffffffffff").status_code == 404
    stored = stack.ctx.storage.get_json(f"keys/{key_id}.json")
    assert stored["revoked_at"] is not None
    assert token.rsplit("_", 1)[-1] not in str(stored), "the secret itself was stored"


def test_only_admin_keys_manage_keys(stack: ServiceStack) -> None:
    for who in ("content", "fitness", "other"):
        with stack.as_(who) as client:
            answer = client.post("/v1/keys", json={"team": "acme", "name": "x", "scopes": ["admin"]})
            assert answer.status_code == 403, (who, answer.text)
            assert client.get("/v1/keys").status_code == 403
    with stack.as_("admin") as admin:
        answer = admin.post("/v1/keys", json={"team": "acme", "name": "x", "scopes": ["root"]})
        assert answer.status_code == 422
        assert "root" in answer.json()["error"]["message"]


def test_a_key_over_its_rate_limit_gets_429_with_retry_after(stack: ServiceStack) -> None:
    with stack.as_("admin") as admin:
        token = admin.post(
            "/v1/keys",
            json={"team": "acme", "name": "tight", "scopes": ["fitness"], "rate_limit_per_minute": 3},
        ).json()["token"]
    with stack.client(token) as client:
        answers = []
        for _ in range(8):
            answers.append(client.get("/v1/routines"))
            if answers[-1].status_code == 429:
                break
    statuses = [a.status_code for a in answers]
    # Three requests fit a minute's window; a window that rolls over mid-test allows at most two more.
    assert statuses[-1] == 429, statuses
    assert 3 <= statuses.count(200) <= 5 and set(statuses[:-1]) == {200}, statuses
    over = answers[-1]
    assert over.json()["error"]["code"] == "rate_limited"
    assert 0 < int(over.headers["retry-after"]) <= 61
