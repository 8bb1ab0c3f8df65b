from __future__ import annotations

import pytest

from flashcards.models import ChangeLog, Workspace
from flashcards.rows import WORKSPACE_COLUMNS
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok, select_rows

pytestmark = pytest.mark.django_db

URL = "/v1/agent/workspace/scheduler-settings"


def post(client, body):
    return client.post(URL, body, format="json")


def test_changed_keys_are_saved_and_omitted_keys_keep_their_value(api, workspace):
    data = assert_envelope_ok(
        post(api, {"desired_retention": 0.85, "learning_steps_minutes": [2, 20, 60]})
    )
    assert tuple(data) == WORKSPACE_COLUMNS
    assert data["workspace_id"] == str(workspace.pk)
    assert data["desired_retention"] == 0.85
    assert data["learning_steps_minutes"] == [2, 20, 60]
    assert data["relearning_steps_minutes"] == [10]
    assert data["maximum_interval_days"] == 36500
    assert data["enable_fuzz"] is True
    workspace.refresh_from_db()
    assert (workspace.desired_retention, workspace.learning_steps_minutes) == (0.85, [2, 20, 60])
    assert ChangeLog.objects.filter(
        workspace=workspace, entity_type="workspace_scheduler_settings"
    ).exists()

    data = assert_envelope_ok(post(api, {"enable_fuzz": False, "maximum_interval_days": 365}))
    assert (data["enable_fuzz"], data["maximum_interval_days"]) == (False, 365)
    assert data["desired_retention"] == 0.85


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"desired_retention": 1}, "desired_retention"),
        ({"desired_retention": 0}, "desired_retention"),
        ({"desired_retention": "0.9"}, "desired_retention"),
        ({"learning_steps_minutes": []}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [10, 1]}, "learning_steps_minutes"),
        ({"learning_steps_minutes": [0]}, "learning_steps_minutes"),
        ({"relearning_steps_minutes": [1440]}, "relearning_steps_minutes"),
        ({"relearning_steps_minutes": "10"}, "relearning_steps_minutes"),
        ({"maximum_interval_days": 0}, "maximum_interval_days"),
        ({"maximum_interval_days": True}, "maximum_interval_days"),
        ({"enable_fuzz": "yes"}, "enable_fuzz"),
        ({"algorithm": "sm-2"}, "algorithm"),
        ({"name": "Renamed"}, "name"),
    ],
)
def test_invalid_settings_are_400_and_change_nothing(api, workspace, body, field):
    error = assert_envelope_error(post(api, body), 400, "REQUEST_INVALID")
    assert error["details"]["field"] == field
    fresh = Workspace.objects.get(pk=workspace.pk)
    assert (fresh.desired_retention, fresh.name, fresh.maximum_interval_days) == (
        0.9,
        "Personal",
        36500,
    )
    assert not ChangeLog.objects.filter(workspace=workspace).exists()


@pytest.mark.parametrize("raw", ["[]", "{bad json", '"x"'])
def test_a_malformed_body_is_400(api, raw):
    response = api.post(URL, raw, content_type="application/json")
    assert_envelope_error(response, 400, "REQUEST_INVALID")


def test_settings_of_another_users_workspace_cannot_change(api, other_workspace):
    body = {"desired_retention": 0.7, "workspace_id": str(other_workspace.pk)}
    assert_envelope_error(post(api, body), 404, "WORKSPACE_NOT_FOUND")
    other_workspace.refresh_from_db()
    assert other_workspace.desired_retention == 0.9


def test_only_the_selected_workspace_changes(api, workspace, other_workspace):
    assert_envelope_ok(post(api, {"desired_retention": 0.8}))
    other_workspace.refresh_from_db()
    assert other_workspace.desired_retention == 0.9


def test_the_new_settings_are_visible_to_the_dialect_at_once(api):
    data = assert_envelope_ok(post(api, {"relearning_steps_minutes": [5, 30]}))
    assert select_rows(api, "SELECT * FROM workspace") == [data]
