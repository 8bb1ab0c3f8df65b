"""The workspace's learning day (issue #22): time_zone and day_starts_at_hour set through REST,
MCP, sync and export; DATE(col) groups by it and CURRENT_DATE / TODAY() start it, across DST."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flashcards import services
from flashcards.models import Workspace
from flashcards.scheduling.day import LearningDay
from flashcards.services import timestamps, transfer
from tests.factories import make_card
from tests.flashcards.api.test_mcp import call

MADRID = {"time_zone": "Europe/Madrid", "day_starts_at_hour": 4}


def _settings(client, body):
    return client.post("/v1/agent/workspace/scheduler-settings", body, format="json")


def _sql(client, statement):
    response = client.post("/v1/agent/sql", {"sql": statement}, format="json")
    body = response.json()
    assert body["ok"] is True, body
    return body["data"]["rows"]


def _review_at(workspace, card, moment):
    services.submit_review(workspace, card.id, "good", reviewed_at=moment)


def test_learning_day_math_across_madrid_dst():
    day = LearningDay("Europe/Madrid", 4)
    # 02:30 local (CET, +1) on 10 March is 01:30 UTC: the day before.
    assert day.date_of(datetime(2026, 3, 10, 1, 30, tzinfo=UTC)).isoformat() == "2026-03-09"
    assert day.date_of(datetime(2026, 3, 10, 3, 0, tzinfo=UTC)).isoformat() == "2026-03-10"
    # 29 March 2026: clocks go 02:00 -> 03:00; the day from 04:00 CET+1... lasts 23 hours.
    start = day.start(datetime(2026, 3, 29).date())
    after = day.start(datetime(2026, 3, 30).date())
    assert start == datetime(2026, 3, 29, 2, 0, tzinfo=UTC)  # 04:00 CEST
    assert (after - start).total_seconds() == 24 * 3600
    before = day.start(datetime(2026, 3, 28).date())
    assert before == datetime(2026, 3, 28, 3, 0, tzinfo=UTC)  # 04:00 CET
    assert (start - before).total_seconds() == 23 * 3600
    # October: 25 hours.
    assert (
        day.start(datetime(2026, 10, 26).date()) - day.start(datetime(2026, 10, 25).date())
    ).total_seconds() == 24 * 3600
    assert (
        day.start(datetime(2026, 10, 25).date()) - day.start(datetime(2026, 10, 24).date())
    ).total_seconds() == 25 * 3600


def test_settings_are_validated_and_saved_through_rest(client_for, api_key, workspace):
    client = client_for(api_key.plaintext)
    body = _settings(client, {"time_zone": "Mars/Olympus"}).json()
    assert body["ok"] is False and "time_zone" in body["error"]["message"]
    body = _settings(client, {"day_starts_at_hour": 24}).json()
    assert body["ok"] is False and "day_starts_at_hour" in str(body["error"])
    workspace.refresh_from_db()
    assert (workspace.time_zone, workspace.day_starts_at_hour) == ("UTC", 0)
    body = _settings(client, MADRID).json()
    assert body["ok"] is True, body
    assert body["data"]["time_zone"] == "Europe/Madrid"
    assert body["data"]["day_starts_at_hour"] == 4
    [row] = _sql(client, "SELECT time_zone, day_starts_at_hour FROM workspace")
    assert row == MADRID


def test_settings_of_one_workspace_leave_the_other_alone(
    client_for, api_key, workspace, other_workspace
):
    client = client_for(api_key.plaintext)
    assert _settings(client, MADRID).json()["ok"] is True
    other_workspace.refresh_from_db()
    assert (other_workspace.time_zone, other_workspace.day_starts_at_hour) == ("UTC", 0)


def test_date_groups_by_the_learning_day(client_for, api_key, workspace, other_workspace):
    client = client_for(api_key.plaintext)
    card = make_card(workspace, front_text="q")
    theirs = make_card(other_workspace, front_text="theirs")
    with timestamps.clock(lambda: datetime(2026, 3, 12, 12, 0, tzinfo=UTC)):
        # 02:30 Madrid on 10 March (01:30 UTC) counts for 9 March; 05:00 Madrid for 10 March.
        _review_at(workspace, card, datetime(2026, 3, 10, 1, 30, tzinfo=UTC))
        _review_at(workspace, card, datetime(2026, 3, 10, 4, 0, tzinfo=UTC))
        _review_at(other_workspace, theirs, datetime(2026, 3, 10, 1, 30, tzinfo=UTC))
    statement = (
        "SELECT DATE(reviewed_at_client) AS day, COUNT(*) AS n FROM review_events "
        "GROUP BY DATE(reviewed_at_client) ORDER BY day"
    )
    assert _sql(client, statement) == [{"day": "2026-03-10", "n": 2}]
    assert _settings(client, MADRID).json()["ok"] is True
    assert _sql(client, statement) == [{"day": "2026-03-09", "n": 1}, {"day": "2026-03-10", "n": 1}]
    # Twice: the second read takes the ready-SELECT cache.
    assert _sql(client, statement) == [{"day": "2026-03-09", "n": 1}, {"day": "2026-03-10", "n": 1}]


@pytest.mark.parametrize("spelling", ["CURRENT_DATE", "TODAY()"])
def test_current_date_follows_the_zone_and_dst(client_for, api_key, workspace, spelling):
    client = client_for(api_key.plaintext)
    assert _settings(client, MADRID).json()["ok"] is True
    early = make_card(workspace, front_text="early")
    late = make_card(workspace, front_text="late")
    # The learning day of 28 March (04:00 CET = 03:00 UTC) to 29 March 04:00 CEST (02:00 UTC).
    with timestamps.clock(lambda: datetime(2026, 3, 27, 12, 0, tzinfo=UTC)):
        _review_at(workspace, early, datetime(2026, 3, 28, 2, 59, tzinfo=UTC))
        _review_at(workspace, late, datetime(2026, 3, 29, 1, 59, tzinfo=UTC))
    statement = (
        "SELECT card_id FROM review_events WHERE reviewed_at_client >= "
        f"{spelling} AND reviewed_at_client < {spelling} + INTERVAL '1 day'"
    )
    with timestamps.clock(lambda: datetime(2026, 3, 28, 20, 0, tzinfo=UTC)):
        assert _sql(client, statement) == [{"card_id": str(late.id)}]
        assert _sql(client, statement) == [{"card_id": str(late.id)}]
    # 01:30 UTC on 29 March is 02:30 CET, still the learning day of 28 March.
    with timestamps.clock(lambda: datetime(2026, 3, 29, 1, 30, tzinfo=UTC)):
        assert _sql(client, statement) == [{"card_id": str(late.id)}]
    # After 04:00 CEST (02:00 UTC) it is 29 March: nothing reviewed yet.
    with timestamps.clock(lambda: datetime(2026, 3, 29, 2, 30, tzinfo=UTC)):
        assert _sql(client, statement) == []
        yesterday = _sql(
            client,
            f"SELECT card_id FROM review_events WHERE reviewed_at_client >= {spelling} - "
            "INTERVAL '1 day' ORDER BY reviewed_at_client",
        )
        assert yesterday == [{"card_id": str(late.id)}]


def test_utc_current_date_is_midnight(client_for, api_key, workspace):
    client = client_for(api_key.plaintext)
    card = make_card(workspace, front_text="q")
    with timestamps.clock(lambda: datetime(2026, 3, 10, 12, 0, tzinfo=UTC)):
        _review_at(workspace, card, datetime(2026, 3, 9, 23, 59, tzinfo=UTC))
        assert (
            _sql(
                client, "SELECT card_id FROM review_events WHERE reviewed_at_client >= CURRENT_DATE"
            )
            == []
        )
        assert (
            len(
                _sql(
                    client,
                    "SELECT card_id FROM review_events WHERE reviewed_at_client >= CURRENT_DATE - INTERVAL '1 day'",
                )
            )
            == 1
        )


def test_settings_through_mcp(live_server_url, api_key, workspace, other_workspace):
    body = call(live_server_url, api_key.plaintext, "update_scheduler_settings", MADRID)
    assert body["ok"] is True, body
    assert body["data"]["time_zone"] == "Europe/Madrid"
    workspace.refresh_from_db()
    other_workspace.refresh_from_db()
    assert (workspace.time_zone, workspace.day_starts_at_hour) == ("Europe/Madrid", 4)
    assert other_workspace.time_zone == "UTC"
    bad = call(
        live_server_url, api_key.plaintext, "update_scheduler_settings", {"time_zone": "Nowhere"}
    )
    assert bad["ok"] is False and "time_zone" in bad["error"]["message"]


def test_export_and_import_carry_the_learning_day(workspace):
    services.update_scheduler_settings(workspace, dict(MADRID))
    exported = transfer.export_workspace(workspace)
    assert exported["workspace"]["time_zone"] == "Europe/Madrid"
    assert exported["workspace"]["day_starts_at_hour"] == 4
    exported["workspace"]["workspace_id"] = "6f1c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f"
    imported = transfer.import_workspace(exported)
    ws = Workspace.objects.get(pk=imported.workspace_id)
    assert (ws.time_zone, ws.day_starts_at_hour) == ("Europe/Madrid", 4)
    # A file from before these settings imports with the defaults.
    del exported["workspace"]["time_zone"], exported["workspace"]["day_starts_at_hour"]
    exported["workspace"]["workspace_id"] = "7f1c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f"
    ws = Workspace.objects.get(pk=transfer.import_workspace(exported).workspace_id)
    assert (ws.time_zone, ws.day_starts_at_hour) == ("UTC", 0)


def test_me_carries_the_learning_day(client_for, api_key, workspace):
    client = client_for(api_key.plaintext)
    assert _settings(client, MADRID).json()["ok"] is True
    # 02:30 Madrid on 10 March: still the learning day of 9 March.
    with timestamps.clock(lambda: datetime(2026, 3, 10, 1, 30, tzinfo=UTC)):
        data = client.get("/v1/agent/me").json()["data"]
    assert data["learningDay"] == {
        "time_zone": "Europe/Madrid",
        "day_starts_at_hour": 4,
        "current_learning_day": "2026-03-09",
        "current_learning_day_started_at": "2026-03-09T03:00:00.000Z",
        "server_time": "2026-03-10T01:30:00.000Z",
    }
