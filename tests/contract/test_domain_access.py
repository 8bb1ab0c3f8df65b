"""domain.md §1 (users, workspaces, settings defaults, API keys), §4 (me, workspaces) and §6
(access, self-healing selection, keys, rate limit), checked over HTTP with keys made by
`manage.py create_api_key`."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.test import override_settings
from rest_framework.test import APIClient

from flashcards import services
from flashcards.models import ApiKey
from tests.contract.domain_support import (
    DEFAULT_SETTINGS,
    WORKSPACE_COLUMNS,
    agent,
    client_with,
    create_key,
    fail,
    insert_card,
    ok,
    rows,
    workspace_row,
)

pytestmark = pytest.mark.django_db

KEY_FORMAT = re.compile(r"^fca_[0-9A-HJKMNP-TV-Z]{8}_[0-9A-HJKMNP-TV-Z]{26}$")


def workspaces(client: APIClient, **params: object) -> dict:
    return ok(client.get("/v1/agent/workspaces", params))


def create_workspace(client: APIClient, name: str) -> dict:
    return ok(client.post("/v1/agent/workspaces", {"name": name}, format="json"))["workspace"]


# --- create_api_key -----------------------------------------------------------------------------


def test_create_api_key_on_a_fresh_database_prints_the_key_alone_on_the_last_line():
    output, key = create_key("bob")
    assert KEY_FORMAT.match(key), output
    assert output.endswith(key + "\n")
    me = ok(client_with(key).get("/v1/agent/me"))
    assert me["user"]["username"] == "bob"
    assert me["workspace"]["name"] == "Personal"
    assert me["apiKey"]["label"]


def test_a_new_user_gets_one_personal_workspace_with_the_default_settings():
    client = agent("carol")
    listed = workspaces(client)["workspaces"]
    assert [w["name"] for w in listed] == ["Personal"]
    row = workspace_row(client)
    assert list(row) == WORKSPACE_COLUMNS
    assert {k: row[k] for k in DEFAULT_SETTINGS} == DEFAULT_SETTINGS
    assert row["workspace_id"] == listed[0]["workspace_id"]


def test_label_and_workspace_options_are_honoured():
    first = agent("dave")
    second_ws = create_workspace(first, "Spanish")
    _, key = create_key("dave", "--workspace", second_ws["workspace_id"], "--label", "my agent")
    me = ok(client_with(key).get("/v1/agent/me"))
    assert me["apiKey"]["label"] == "my agent"
    assert me["workspace"]["workspace_id"] == second_ws["workspace_id"]
    assert ApiKey.objects.get(label="my agent").user.username == "dave"


def test_a_second_key_of_an_existing_user_does_not_add_a_workspace():
    agent("erin")
    client = agent("erin")
    assert [w["name"] for w in workspaces(client)["workspaces"]] == ["Personal"]
    assert get_user_model().objects.filter(username="erin").count() == 1


def test_create_api_key_refuses_a_workspace_the_user_is_not_a_member_of():
    foreign = ok(agent("frank").get("/v1/agent/me"))["workspace"]["workspace_id"]
    with pytest.raises(CommandError):
        call_command("create_api_key", "--user", "grace", "--workspace", foreign)
    assert not ApiKey.objects.filter(user__username="grace").exists()


@pytest.mark.parametrize("label", ["", "x" * 121])
def test_create_api_key_refuses_a_label_outside_1_to_120_characters(label):
    with pytest.raises(CommandError):
        call_command("create_api_key", "--user", "heidi", "--label", label)
    assert not ApiKey.objects.exists()


def test_the_key_is_accepted_with_bearer_lower_case_spaces_and_dashes():
    _, key = create_key("ivan")
    prefix, key_id, secret = key.split("_")
    messy = f"{prefix}_{key_id.lower()}_{secret[:5]}-{secret[5:13]} {secret[13:]}"
    assert ok(client_with(key, "Bearer").get("/v1/agent/me"))["user"]["username"] == "ivan"
    assert ok(client_with(messy).get("/v1/agent/me"))["user"]["username"] == "ivan"


# --- authentication failures --------------------------------------------------------------------


def test_no_credentials_is_401_auth_unauthorized():
    fail(APIClient().get("/v1/agent/me"), 401, "AUTH_UNAUTHORIZED")
    fail(
        APIClient().post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"),
        401,
        "AUTH_UNAUTHORIZED",
    )


@pytest.mark.parametrize(
    "header",
    ["ApiKey nonsense", "ApiKey fca_00000000_00000000000000000000000000", "Basic abc"],
)
def test_a_bad_key_is_401_agent_api_key_invalid(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    fail(client.get("/v1/agent/me"), 401, "AGENT_API_KEY_INVALID")


def test_a_revoked_key_fails_with_401_on_every_route():
    _, key = create_key("judy")
    client = client_with(key)
    ok(client.get("/v1/agent/me"))
    services.revoke_api_key(ApiKey.objects.get(user__username="judy"))
    fail(client.get("/v1/agent/me"), 401, "AGENT_API_KEY_INVALID")
    fail(
        client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"),
        401,
        "AGENT_API_KEY_INVALID",
    )
    fail(client.get("/v1/agent/workspaces"), 401, "AGENT_API_KEY_INVALID")


def test_a_wrong_secret_for_a_real_key_id_is_401():
    _, key = create_key("ken")
    tampered = key[:-1] + ("0" if key[-1] != "0" else "1")
    fail(client_with(tampered).get("/v1/agent/me"), 401, "AGENT_API_KEY_INVALID")


# The test moves last_used_at in the database behind the server's back; a cached key sees such a
# change only once its entry lapses (AUTH_CACHE_SECONDS, tests/flashcards/test_key_cache.py).
@override_settings(AUTH_CACHE_SECONDS=0)
def test_last_used_is_refreshed_at_most_every_five_minutes():
    _, key = create_key("lou")
    api_key = ApiKey.objects.get(user__username="lou")
    assert api_key.last_used_at is None
    ok(client_with(key).get("/v1/agent/me"))
    api_key.refresh_from_db()
    first = api_key.last_used_at
    assert first is not None
    ok(client_with(key).get("/v1/agent/me"))
    api_key.refresh_from_db()
    assert api_key.last_used_at == first
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=first - timedelta(minutes=6))
    ok(client_with(key).get("/v1/agent/me"))
    api_key.refresh_from_db()
    assert api_key.last_used_at > first


# --- me -----------------------------------------------------------------------------------------


def test_me_shows_user_selected_workspace_and_label():
    _, key = create_key("liam", "--label", "notebook")
    me = ok(client_with(key).get("/v1/agent/me"))
    assert me["user"]["username"] == "liam"
    assert list(me["workspace"]) == WORKSPACE_COLUMNS
    assert me["workspace"]["name"] == "Personal"
    assert me["apiKey"]["label"] == "notebook"


# --- workspaces: list, create, select ------------------------------------------------------------


def test_post_workspaces_creates_and_selects():
    client = agent("mia")
    created = create_workspace(client, "  Spanish  ")
    assert created["name"] == "Spanish"
    assert list(created) == WORKSPACE_COLUMNS
    assert {k: created[k] for k in DEFAULT_SETTINGS} == DEFAULT_SETTINGS
    assert ok(client.get("/v1/agent/me"))["workspace"]["workspace_id"] == created["workspace_id"]
    assert workspace_row(client)["workspace_id"] == created["workspace_id"]
    assert rows(client, "SELECT COUNT(*) AS n FROM cards") == [{"n": 0}]


def test_statements_run_in_the_selected_workspace_and_select_switches():
    client = agent("noah")
    personal = ok(client.get("/v1/agent/me"))["workspace"]
    insert_card(client, "in personal")
    spanish = create_workspace(client, "Spanish")
    insert_card(client, "in spanish")
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "in spanish"}]
    selected = ok(client.post(f"/v1/agent/workspaces/{personal['workspace_id']}/select"))
    assert selected["workspace"]["workspace_id"] == personal["workspace_id"]
    assert rows(client, "SELECT front_text FROM cards") == [{"front_text": "in personal"}]
    assert workspace_row(client)["name"] == "Personal"
    assert spanish["workspace_id"] != personal["workspace_id"]


def test_each_key_has_its_own_selection():
    first = agent("olivia")
    second = agent("olivia")
    spanish = create_workspace(first, "Spanish")
    assert workspace_row(first)["workspace_id"] == spanish["workspace_id"]
    # The second key had the only workspace selected when it was made; it keeps it.
    assert workspace_row(second)["name"] == "Personal"


def test_workspace_list_pages_with_limit_and_cursor():
    client = agent("paul")
    names = ["Personal"] + [f"W{i}" for i in range(4)]
    for name in names[1:]:
        create_workspace(client, name)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = workspaces(client, **params)
        assert len(page["workspaces"]) <= 2
        seen += [w["name"] for w in page["workspaces"]]
        pages += 1
        if not page["hasMore"]:
            break
        cursor = page["nextCursor"]
        assert cursor
    assert pages == 3
    assert seen == names
    assert [w["name"] for w in workspaces(client, limit=100)["workspaces"]] == names


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5"])
def test_workspace_list_limit_outside_1_to_100_is_request_invalid(limit):
    fail(agent("quinn").get("/v1/agent/workspaces", {"limit": limit}), 400, "REQUEST_INVALID")


def test_a_garbage_cursor_is_request_invalid():
    response = agent("rita").get("/v1/agent/workspaces", {"cursor": "not-a-cursor"})
    fail(response, 400, "REQUEST_INVALID")


def test_workspace_list_shows_only_the_users_workspaces():
    other = agent("sam")
    create_workspace(other, "Secret")
    listed = workspaces(agent("tina"))["workspaces"]
    assert [w["name"] for w in listed] == ["Personal"]


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "   "}, {"name": 5}, [], "x"])
def test_creating_a_workspace_without_a_name_is_request_invalid(body):
    client = agent("uma")
    fail(client.post("/v1/agent/workspaces", body, format="json"), 400, "REQUEST_INVALID")
    assert len(workspaces(client)["workspaces"]) == 1


def test_selecting_a_foreign_or_unknown_workspace_is_404():
    foreign = ok(agent("victor").get("/v1/agent/me"))["workspace"]["workspace_id"]
    client = agent("wendy")
    mine = ok(client.get("/v1/agent/me"))["workspace"]["workspace_id"]
    for target in (foreign, str(uuid.uuid4()), "not-a-uuid"):
        fail(client.post(f"/v1/agent/workspaces/{target}/select"), 404, "WORKSPACE_NOT_FOUND")
    assert ok(client.get("/v1/agent/me"))["workspace"]["workspace_id"] == mine


def test_an_explicit_foreign_workspace_id_on_a_command_is_404():
    foreign = ok(agent("xena").get("/v1/agent/me"))["workspace"]["workspace_id"]
    client = agent("yuri")
    response = client.post(
        "/v1/agent/workspace/scheduler-settings",
        {"workspace_id": foreign, "enable_fuzz": False},
        format="json",
    )
    fail(response, 404, "WORKSPACE_NOT_FOUND")
    assert workspace_row(agent("xena"))["enable_fuzz"] is True


# --- self-healing selection ---------------------------------------------------------------------


def several_workspaces_and_a_key_without_selection(username: str) -> tuple[APIClient, list[str]]:
    first = agent(username)
    create_workspace(first, "Second")
    output, key = create_key(username)
    assert key in output
    ids = [w["workspace_id"] for w in workspaces(first)["workspaces"]]
    return client_with(key), ids


def test_a_key_with_several_workspaces_and_none_selected_gets_409_with_instructions():
    client, ids = several_workspaces_and_a_key_without_selection("zoe")
    response = client.post("/v1/agent/sql", {"sql": "SELECT * FROM cards"}, format="json")
    error = fail(response, 409, "WORKSPACE_SELECTION_REQUIRED")
    instructions = response.json()["instructions"]
    assert "/v1/agent/workspaces" in instructions
    assert "select" in instructions
    assert error["message"]
    candidates = error["details"]["workspaces"]
    assert [w["workspace_id"] for w in candidates] == ids
    assert [w["name"] for w in candidates] == ["Personal", "Second"]
    for route in ("/v1/agent/reviews", "/v1/agent/workspace/reset-progress"):
        response = client.post(route, {"card_id": str(uuid.uuid4()), "rating": 2}, format="json")
        fail(response, 409, "WORKSPACE_SELECTION_REQUIRED")
    # The list still works and says none is selected; selecting one fixes the key.
    listed = workspaces(client)
    assert listed["selectedWorkspaceId"] is None
    assert not any(w["selected"] for w in listed["workspaces"])
    ok(client.post(f"/v1/agent/workspaces/{ids[1]}/select"))
    assert workspace_row(client)["workspace_id"] == ids[1]


def test_me_without_a_selection_says_how_to_select():
    client, _ = several_workspaces_and_a_key_without_selection("abe")
    response = client.get("/v1/agent/me")
    data = ok(response)
    assert data["workspace"] is None
    assert "select" in response.json()["instructions"]


def test_a_selection_that_became_inaccessible_heals_to_the_only_workspace():
    client = agent("bea")
    personal = ok(client.get("/v1/agent/me"))["workspace"]["workspace_id"]
    second = create_workspace(client, "Second")
    # The user loses access to the selected workspace; exactly one is left.
    get_user_model().objects.get(username="bea").memberships.filter(
        workspace_id=second["workspace_id"]
    ).delete()
    assert workspace_row(client)["workspace_id"] == personal


def test_a_key_of_a_user_with_no_workspace_left_heals_to_a_new_personal():
    client = agent("cyd")
    get_user_model().objects.get(username="cyd").memberships.all().delete()
    row = workspace_row(client)
    assert row["name"] == "Personal"
    assert {k: row[k] for k in DEFAULT_SETTINGS} == DEFAULT_SETTINGS


def test_a_selection_lost_among_several_workspaces_is_cleared_to_409():
    client = agent("dan")
    create_workspace(client, "Second")
    third = create_workspace(client, "Third")
    get_user_model().objects.get(username="dan").memberships.filter(
        workspace_id=third["workspace_id"]
    ).delete()
    response = client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    fail(response, 409, "WORKSPACE_SELECTION_REQUIRED")


# --- rate limit ---------------------------------------------------------------------------------


@pytest.fixture
def fresh_rate_counters():
    cache.clear()
    yield
    cache.clear()


@override_settings(AGENT_RATE_LIMIT=4)
def test_the_per_user_rate_limit_answers_429_with_retry_after(fresh_rate_counters):
    _, key = create_key("eve")
    client = client_with(key)
    ok(client.get("/v1/agent/me"))
    ok(client.get("/v1/agent/workspaces"))
    ok(client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"))
    ok(client.post("/v1/agent/sql/query", {"sql": "SHOW TABLES"}, format="json"))
    response = client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    fail(response, 429, "RATE_LIMITED")
    assert 1 <= int(response["Retry-After"]) <= 60
    # Issue #20: the budget is the user's, so another key of the same user is refused too (it
    # had its own budget before); another user's key has its own; discovery is not limited.
    fail(agent("eve").get("/v1/agent/me"), 429, "RATE_LIMITED")
    ok(agent("frank").get("/v1/agent/me"))
    for _ in range(6):
        ok(APIClient().get("/v1/"))


@override_settings(AGENT_RATE_LIMIT=0)
def test_a_rate_limit_of_zero_disables_it(fresh_rate_counters):
    client = agent("fay")
    for _ in range(130):
        assert client.get("/v1/agent/me").status_code == 200


@override_settings(AGENT_RATE_LIMIT=120)
def test_the_121st_request_in_a_minute_is_refused_at_the_default_budget(
    fresh_rate_counters, frozen_clock
):
    client = agent("gus")
    # The product's clock stands at the start of a minute (tests/conftest.py frozen_clock): no
    # minute boundary falls inside the burst, however long a loaded machine takes for it.
    for _ in range(120):
        assert client.get("/v1/agent/me").status_code == 200
    fail(client.get("/v1/agent/me"), 429, "RATE_LIMITED")


def test_a_member_of_a_shared_workspace_reads_and_writes_it():
    from flashcards.models import Membership

    owner = agent("owner-ann")
    shared = create_workspace(owner, "Shared")
    insert_card(owner, "from the owner")
    member = agent("member-ben")
    Membership.objects.create(
        user=get_user_model().objects.get(username="member-ben"),
        workspace_id=shared["workspace_id"],
        role=Membership.ROLE_MEMBER,
    )
    listed = {w["name"]: w for w in workspaces(member)["workspaces"]}
    assert listed["Shared"]["role"] == "member"
    ok(member.post(f"/v1/agent/workspaces/{shared['workspace_id']}/select"))
    insert_card(member, "from the member")
    fronts = rows(owner, "SELECT front_text FROM cards ORDER BY front_text")
    assert fronts == [{"front_text": "from the member"}, {"front_text": "from the owner"}]
