"""Property tests over the explicit commands: any JSON body gives an envelope, never a 500, and
never touches another workspace."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flashcards.models import Card, ReviewEvent, Workspace
from tests.factories import make_card

pytestmark = pytest.mark.django_db

PROPERTY_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

FIELDS = [
    "card_id",
    "rating",
    "reviewed_at",
    "client_event_id",
    "review_event_id",
    "workspace_id",
    "desired_retention",
    "learning_steps_minutes",
    "relearning_steps_minutes",
    "maximum_interval_days",
    "enable_fuzz",
    "confirmation",
    "name",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=30),
    st.sampled_from(
        [
            "good",
            "again",
            "reset all progress",
            "2026-03-05",
            "9999-12-31T23:59:59Z",
            "CARD",
            "OTHER",
        ]
    ),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
bodies = st.one_of(
    st.dictionaries(st.sampled_from(FIELDS), values, max_size=6),
    values,
)
routes = st.sampled_from(
    [
        "/v1/agent/reviews",
        "/v1/agent/workspace/scheduler-settings",
        "/v1/agent/workspace/reset-progress",
        "/v1/agent/workspaces",
    ]
)


@PROPERTY_SETTINGS
@given(route=routes, body=bodies)
def test_any_body_gets_an_envelope_and_never_reaches_another_workspace(
    api, workspace, other_workspace, route, body
):
    mine = Card.objects.filter(workspace=workspace).first() or make_card(workspace)
    theirs = Card.objects.filter(workspace=other_workspace).first() or make_card(other_workspace)
    substitutes = {
        "CARD": str(mine.pk),
        "OTHER": str(theirs.pk),
    }
    before = Workspace.objects.get(pk=other_workspace.pk).last_change_id
    raw = json.dumps(body)
    for marker, value in substitutes.items():
        raw = raw.replace(f'"{marker}"', json.dumps(value))
    response = api.post(route, raw, content_type="application/json")
    assert response.status_code < 500, response.content
    envelope = response.json()
    assert envelope["ok"] is (response.status_code == 200)
    assert not ReviewEvent.objects.filter(workspace=other_workspace).exists()
    other = Workspace.objects.get(pk=other_workspace.pk)
    assert (other.desired_retention, other.last_change_id) == (0.9, before)
