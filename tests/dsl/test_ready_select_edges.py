"""Edge inputs through the ready-SQL read path (dsl.runtime.reads.ReadySelect): literals written into
the SQL on PostgreSQL (quotes, percent signs, backslashes, non-ASCII), the clock at its extremes,
conditions that can match nothing, and repeats of each — always the right rows, never a 500."""

from __future__ import annotations

import pytest

from tests.factories import make_card

pytestmark = pytest.mark.django_db

AWKWARD = 'it\'s 50% done \\ "quoted" %s %% ñ 😀 _x_'


def _post(api, sql):
    response = api.post("/v1/agent/sql", {"sql": sql}, format="json")
    assert response.status_code != 500, response.content
    return response


@pytest.mark.parametrize(
    "condition",
    [
        f"front_text = '{AWKWARD.replace(chr(39), chr(39) * 2)}'",
        "front_text LIKE 'it''s 50\\% done%'",
        "front_text ILIKE '%\\_X\\_'",
        "MATCH('50% done')",
        "tags OVERLAP ('odd''tag', '100%')",
    ],
)
def test_awkward_literals_find_their_row_every_time(api, workspace, condition):
    make_card(workspace, front_text=AWKWARD, tags=["odd'tag", "100%"])
    make_card(workspace, front_text="plain", tags=["other"])
    sql = f"SELECT front_text, tags FROM cards WHERE {condition}"
    for _ in range(2):  # compiled, then reused
        response = _post(api, sql)
        assert response.status_code == 200, response.json()
        assert [row["front_text"] for row in response.json()["data"]["rows"]] == [AWKWARD]


@pytest.mark.parametrize(
    "condition, expected",
    [
        ("due_at <= NOW() + INTERVAL '100000 years'", 1),
        ("due_at >= NOW() - INTERVAL '100000 years'", 1),
        ("updated_at < NOW() - INTERVAL '5000 months'", 0),
        ("updated_at BETWEEN NOW() - INTERVAL '1 day' AND NOW() + INTERVAL '1 day'", 2),
        ("tags OVERLAP ()", 0),
        ("NOT tags OVERLAP ()", 2),
        ("card_id IN ('00000000-0000-4000-8000-000000000000')", 0),
    ],
)
def test_extreme_clocks_and_empty_matches(api, workspace, condition, expected):
    from flashcards import services

    card = make_card(workspace, front_text="reviewed")
    services.submit_review(workspace, card.id, "good")
    make_card(workspace, front_text="new")
    sql = f"SELECT card_id FROM cards WHERE {condition}"
    for _ in range(2):
        response = _post(api, sql)
        assert response.status_code == 200, response.json()
        assert response.json()["data"]["rowCount"] == expected, condition
