"""domain.md §7: `manage.py export_workspace` / `import_workspace`, run in-process with
call_command and, once, as separate `python manage.py` processes on a file database, the way an
operator (or a black-box suite) runs them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from flashcards.models import Workspace
from tests.contract.domain_support import (
    CARD_COLUMNS,
    REVIEW_EVENT_COLUMNS,
    WORKSPACE_COLUMNS,
    agent,
    client_with,
    create_key,
    insert_card,
    ok,
    review,
    rows,
    sql,
    workspace_row,
)

pytestmark = pytest.mark.django_db

DECK_COLUMNS = ["deck_id", "name", "effort_levels", "tags", "created_at", "updated_at"]


def fill(client: APIClient) -> dict[str, str]:
    """A workspace with every kind of row: reviewed and new cards, a deck, changed settings."""
    ok(
        client.post(
            "/v1/agent/workspace/scheduler-settings",
            {"desired_retention": 0.85, "learning_steps_minutes": [2, 15]},
            format="json",
        )
    )
    reviewed = insert_card(client, "¿Qué tal?", "How are you?", effort_level="medium")
    sql(client, f"UPDATE cards SET tags = ('Spanish', 'greetings') WHERE card_id = '{reviewed}'")
    fresh = insert_card(client, "new card", "")
    deleted = insert_card(client, "deleted", "x")
    ok(review(client, card_id=reviewed, rating=2, reviewed_at="2026-03-05T10:00:00Z"))
    ok(review(client, card_id=reviewed, rating="easy", reviewed_at="2026-03-05T10:02:00Z"))
    sql(client, f"DELETE FROM cards WHERE card_id = '{deleted}'")
    sql(
        client,
        "INSERT INTO decks (name, effort_levels, tags) VALUES ('Es', ('medium'), ('spanish'))",
    )
    return {"reviewed": reviewed, "fresh": fresh, "deleted": deleted}


def export(workspace_id: str, path: Path) -> str:
    out = io.StringIO()
    call_command("export_workspace", workspace_id, str(path), stdout=out)
    return out.getvalue()


def import_file(path: Path, *options: str) -> str:
    out = io.StringIO()
    call_command("import_workspace", str(path), *options, stdout=out)
    return out.getvalue()


def snapshot(client: APIClient) -> dict[str, Any]:
    return {
        "workspace": workspace_row(client),
        "cards": rows(client, "SELECT * FROM cards ORDER BY card_id"),
        "decks": rows(client, "SELECT * FROM decks ORDER BY deck_id"),
        "review_events": rows(client, "SELECT * FROM review_events ORDER BY review_event_id"),
    }


def test_export_writes_the_documented_document_in_select_star_shape(tmp_path):
    client = agent("exporter")
    ids = fill(client)
    workspace_id = workspace_row(client)["workspace_id"]
    path = tmp_path / "ws.json"
    assert workspace_id in export(workspace_id, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["format", "workspace", "cards", "decks", "review_events"]
    assert data["format"] == 1
    assert list(data["workspace"]) == WORKSPACE_COLUMNS
    assert data["workspace"] == workspace_row(client)
    assert all(list(c) == CARD_COLUMNS for c in data["cards"])
    assert all(list(d) == DECK_COLUMNS for d in data["decks"])
    assert all(list(e) == REVIEW_EVENT_COLUMNS for e in data["review_events"])
    # The live rows, exactly as SELECT * shows them.
    by_id = {c["card_id"]: c for c in data["cards"]}
    assert set(by_id) == {ids["reviewed"], ids["fresh"]}
    for row in rows(client, "SELECT * FROM cards"):
        assert by_id[row["card_id"]] == row
    assert data["decks"] == rows(client, "SELECT * FROM decks")
    assert sorted(data["review_events"], key=lambda e: e["review_event_id"]) == rows(
        client, "SELECT * FROM review_events ORDER BY review_event_id"
    )
    assert [e["review_grade"] for e in data["review_events"]] == ["good", "easy"]


def test_export_import_export_is_identical_and_preserves_everything(tmp_path):
    client = agent("roundtrip")
    fill(client)
    workspace_id = workspace_row(client)["workspace_id"]
    before = snapshot(client)
    first = tmp_path / "first.json"
    export(workspace_id, first)
    # A restore into an installation that does not hold the workspace: remove it for good.
    Workspace.objects.filter(pk=workspace_id).delete()
    report = import_file(first, "--owner", "restorer")
    assert workspace_id in report and "restorer" in report
    assert "2 cards" in report and "1 decks" in report and "2 review events" in report
    second = tmp_path / "second.json"
    export(workspace_id, second)
    assert second.read_bytes() == first.read_bytes()
    # The new owner gets a key the documented way and sees the very same rows.
    restored = agent("restorer")
    assert snapshot(restored) == before


def test_import_creates_the_owner_records_changes_and_the_key_works(tmp_path):
    client = agent("source")
    ids = fill(client)
    workspace_id = workspace_row(client)["workspace_id"]
    path = tmp_path / "ws.json"
    export(workspace_id, path)
    Workspace.objects.filter(pk=workspace_id).delete()
    output = import_file(path, "--owner", "newcomer")
    assert "newcomer" in output
    owner = agent("newcomer")
    me = ok(owner.get("/v1/agent/me"))
    assert me["workspace"]["workspace_id"] == workspace_id
    # Sync clients receive the imported data.
    changes = ok(
        owner.post(
            f"/v1/workspaces/{workspace_id}/sync/pull", {"after_change_id": 0}, format="json"
        )
    )["changes"]
    kinds = {(c["entity_type"], c["entity_id"]) for c in changes}
    assert ("card", ids["reviewed"]) in kinds and ("card", ids["fresh"]) in kinds
    assert ("workspace_scheduler_settings", workspace_id) in kinds
    assert sum(1 for t, _ in kinds if t == "review_event") == 2
    # A card restored with its schedule reviews on from it.
    card = ok(review(owner, card_id=ids["reviewed"], rating=2, reviewed_at="2026-04-01T00:00:00Z"))
    assert card["card"]["reps"] == 3


def exported(tmp_path: Path, username: str) -> tuple[dict[str, Any], Path]:
    client = agent(username)
    fill(client)
    workspace_id = workspace_row(client)["workspace_id"]
    path = tmp_path / f"{username}.json"
    export(workspace_id, path)
    return json.loads(path.read_text(encoding="utf-8")), path


def fresh_ids(data: dict[str, Any]) -> dict[str, Any]:
    """The same document under new ids, so it can be imported next to the original."""
    data = json.loads(json.dumps(data))
    mapping: dict[str, str] = {}

    def new(old: str) -> str:
        return mapping.setdefault(old, str(uuid.uuid4()))

    data["workspace"]["workspace_id"] = new(data["workspace"]["workspace_id"])
    for row in data["cards"]:
        row["card_id"] = new(row["card_id"])
    for row in data["decks"]:
        row["deck_id"] = new(row["deck_id"])
    for row in data["review_events"]:
        row["review_event_id"] = new(row["review_event_id"])
        row["card_id"] = new(row["card_id"])
    return data


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def workspace_count() -> int:
    return Workspace.objects.count()


def test_a_renamed_copy_imports_next_to_the_original(tmp_path):
    data, _ = exported(tmp_path, "copier")
    copy = fresh_ids(data)
    output = import_file(write(tmp_path / "copy.json", copy), "--owner", "copier")
    assert copy["workspace"]["workspace_id"] in output


def test_import_refuses_ids_present_in_another_workspace_and_writes_nothing(tmp_path):
    data, path = exported(tmp_path, "holder")
    before = workspace_count()
    with pytest.raises(CommandError):
        import_file(path, "--owner", "thief")
    copy = fresh_ids(data)
    copy["cards"][0]["card_id"] = data["cards"][0]["card_id"]
    for event in copy["review_events"]:
        if event["card_id"] not in {c["card_id"] for c in copy["cards"]}:
            event["card_id"] = data["cards"][0]["card_id"]
    with pytest.raises(CommandError, match="card_id"):
        import_file(write(tmp_path / "clash.json", copy), "--owner", "thief")
    assert workspace_count() == before


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d["review_events"][-1].update(review_grade="again"),
        lambda d: d["review_events"][-1].update(rating=7, review_grade="easy"),
        lambda d: d["cards"][-1].update(front_text="   "),
        lambda d: d["cards"][-1].update(effort_level="huge"),
        lambda d: d["cards"][0].update(fsrs_card_state="new"),
        lambda d: d["decks"][-1].update(name=""),
        lambda d: d["workspace"].update(desired_retention=1.5),
        lambda d: d["workspace"].update(learning_steps_minutes=[10, 1]),
        lambda d: d.update(format=2),
        lambda d: d.pop("decks"),
        lambda d: d["cards"][-1].pop("metadata"),
        lambda d: d["review_events"][-1].update(card_id=str(uuid.uuid4())),
    ],
)
def test_import_validates_every_invariant_all_or_nothing(tmp_path, corrupt):
    data, _ = exported(tmp_path, "validator")
    copy = fresh_ids(data)
    reviewed = next(c for c in copy["cards"] if c["reps"] == 2)
    copy["cards"].remove(reviewed)
    copy["cards"].insert(0, reviewed)
    corrupt(copy)
    before = workspace_count()
    with pytest.raises(CommandError, match="Nothing imported"):
        import_file(write(tmp_path / "bad.json", copy), "--owner", "validator-2")
    assert workspace_count() == before


@pytest.mark.parametrize("content", ["", "{", "[]", '{"format": 1}', "null"])
def test_import_of_a_file_that_is_not_an_export_fails_cleanly(tmp_path, content):
    path = tmp_path / "junk.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError):
        import_file(path)


def test_import_of_a_missing_file_and_export_of_an_unknown_workspace_fail_cleanly(tmp_path):
    with pytest.raises(CommandError):
        import_file(tmp_path / "missing.json")
    with pytest.raises(CommandError):
        export(str(uuid.uuid4()), tmp_path / "out.json")
    with pytest.raises(CommandError):
        export("not-a-uuid", tmp_path / "out.json")


# --- as separate processes, on a file database ----------------------------------------------------


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_manage_py_round_trip_on_a_fresh_file_database(tmp_path):
    client = agent("cli-source")
    fill(client)
    workspace_id = workspace_row(client)["workspace_id"]
    original = tmp_path / "original.json"
    export(workspace_id, original)

    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "AGENT_RATE_LIMIT"}
    }
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.sqlite3'}",
        SECRET_KEY="contract-test-secret-key-not-for-production",
        CACHE_LOCATION=str(tmp_path / "cache"),
    )
    manage(env, "migrate", "--noinput")
    imported = manage(env, "import_workspace", str(original), "--owner", "operator")
    assert workspace_id in imported.stdout
    created = manage(env, "create_api_key", "--user", "operator", "--label", "cli test")
    key = created.stdout.rstrip("\n").splitlines()[-1]
    assert key.startswith("fca_") and len(key) == 39
    again = tmp_path / "again.json"
    manage(env, "export_workspace", workspace_id, str(again))
    assert again.read_bytes() == original.read_bytes()
    streamed = manage(env, "export_workspace", workspace_id, "-")
    assert streamed.stdout.encode() == original.read_bytes()


def test_create_api_key_prints_a_key_that_works_here():
    output, key = create_key("printed")
    assert output.splitlines()[-1] == key
    assert ok(client_with(key).get("/v1/agent/me"))["user"]["username"] == "printed"


def test_export_accepts_a_unique_workspace_name(tmp_path):
    client = agent("named")
    ok(client.post("/v1/agent/workspaces", {"name": "Only Spanish"}, format="json"))
    insert_card(client, "hola")
    by_name, by_id = tmp_path / "by-name.json", tmp_path / "by-id.json"
    export("Only Spanish", by_name)
    export(workspace_row(client)["workspace_id"], by_id)
    assert by_name.read_bytes() == by_id.read_bytes()
    agent("second-personal")
    with pytest.raises(CommandError, match="Several workspaces"):
        export("Personal", tmp_path / "ambiguous.json")
