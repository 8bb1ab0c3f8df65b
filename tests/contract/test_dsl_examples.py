"""dsl.md §10: "The examples every build must run ... Each must succeed as written on a workspace that
holds matching data." The data is seeded over HTTP the way an offline client creates it: a sync
push with client-chosen card ids (the examples name '123e4567-…4000' and '…4001'), then reviews."""

from __future__ import annotations

import pytest

from tests.support.envelope import EXECUTE_URL, QUERY_URL, check_envelope, post_sql

pytestmark = pytest.mark.django_db

CARD_A = "123e4567-e89b-42d3-a456-426614174000"
CARD_B = "123e4567-e89b-42d3-a456-426614174001"
CARD_C = "123e4567-e89b-42d3-a456-426614174002"
SELECT_ENGLISH = (
    "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN ('fast', 'medium') "
    "ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
)
UPDATE_BACK = "UPDATE cards SET back_text = 'Updated answer' WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'"
TAG_COUNTS = "SELECT tag, COUNT(*) AS card_count FROM cards GROUP BY tag ORDER BY card_count DESC LIMIT 20 OFFSET 0"
RATING_COUNTS = "SELECT rating, COUNT(*) AS reviews FROM review_events GROUP BY rating ORDER BY reviews DESC LIMIT 10 OFFSET 0"
GRADE_COUNTS = (
    "SELECT review_grade, COUNT(*) AS total_reviews FROM review_events GROUP BY review_grade "
    "ORDER BY total_reviews DESC LIMIT 10 OFFSET 0"
)
SELECT_ENGLISH_GRAMMAR = (
    "SELECT * FROM cards WHERE tags OVERLAP ('english', 'grammar') AND effort_level IN ('fast', 'medium') "
    "ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
)
INSERT_DECK = "INSERT INTO decks (name, effort_levels, tags) VALUES ('Grammar', ('medium', 'long'), ('english', 'grammar'))"
UPDATE_BACK_AND_TAGS = (
    "UPDATE cards SET back_text = 'Updated answer', tags = ('english', 'verbs') "
    "WHERE card_id = '123e4567-e89b-42d3-a456-426614174000'"
)
DELETE_TWO = (
    "DELETE FROM cards WHERE card_id IN ('123e4567-e89b-42d3-a456-426614174000', "
    "'123e4567-e89b-42d3-a456-426614174001')"
)


@pytest.fixture
def seeded(api, workspace):
    def op(n, entity_type, entity_id, payload, action="upsert", minute=0):
        return {
            "operation_id": f"op-{n}",
            "entity_type": entity_type,
            "entity_id": entity_id,
            "action": action,
            "client_updated_at": f"2026-03-05T10:{minute:02d}:00.000Z",
            "payload": payload,
        }

    operations = [
        op(
            1,
            "card",
            CARD_A,
            {
                "front_text": "go (past)",
                "back_text": "went",
                "tags": ["English", "verbs"],
                "effort_level": "fast",
            },
        ),
        op(
            2,
            "card",
            CARD_B,
            {
                "front_text": "a/an",
                "back_text": "articles",
                "tags": ["english", "grammar"],
                "effort_level": "medium",
            },
        ),
        op(
            3,
            "card",
            CARD_C,
            {
                "front_text": "¿Qué?",
                "back_text": "What?",
                "tags": ["spanish"],
                "effort_level": "long",
            },
        ),
    ]
    for n, (card_id, rating) in enumerate([(CARD_A, 2), (CARD_B, 0), (CARD_C, 2)], start=4):
        operations.append(
            op(
                n,
                "review_event",
                f"223e4567-e89b-42d3-a456-42661417400{n}",
                {
                    "card_id": card_id,
                    "client_event_id": f"e{n}",
                    "rating": rating,
                    "reviewed_at_client": f"2026-03-05T11:0{n}:00.000Z",
                },
                action="append",
                minute=n,
            )
        )
    response = api.post(
        f"/v1/workspaces/{workspace.id}/sync/push",
        {"installation_id": "contract-tests", "platform": "web", "operations": operations},
        format="json",
    )
    assert response.status_code == 200, response.json()
    statuses = [o["status"] for o in response.json()["data"]["operations"]]
    assert statuses == ["applied"] * 6, response.json()


@pytest.mark.parametrize(
    "statement",
    [
        SELECT_ENGLISH,
        UPDATE_BACK,
        TAG_COUNTS,
        RATING_COUNTS,
        GRADE_COUNTS,
        SELECT_ENGLISH_GRAMMAR,
        INSERT_DECK,
        UPDATE_BACK_AND_TAGS,
        DELETE_TWO,
    ],
)
def test_every_example_succeeds_as_written(sql, seeded, statement):
    response = sql(statement)
    body = check_envelope(response)
    assert response.status_code == 200 and body["ok"] is True, body.get("error")


def test_every_example_succeeds_on_its_own_endpoint(api, seeded):
    for statement in (
        SELECT_ENGLISH,
        TAG_COUNTS,
        RATING_COUNTS,
        GRADE_COUNTS,
        SELECT_ENGLISH_GRAMMAR,
    ):
        assert post_sql(api, statement, url=QUERY_URL).status_code == 200
    for statement in (UPDATE_BACK, INSERT_DECK, UPDATE_BACK_AND_TAGS, DELETE_TWO):
        assert post_sql(api, statement, url=EXECUTE_URL).status_code == 200


def test_the_read_examples_return_the_matching_rows(rows, seeded):
    result = rows(SELECT_ENGLISH)
    assert sorted(r["card_id"] for r in result) == [CARD_A, CARD_B]
    assert [r["tags"] for r in result if r["card_id"] == CARD_B] == [["English", "grammar"]]
    assert rows(TAG_COUNTS) == [
        {"tag": "English", "card_count": 2},
        {"tag": "grammar", "card_count": 1},
        {"tag": "spanish", "card_count": 1},
        {"tag": "verbs", "card_count": 1},
    ]
    assert rows(RATING_COUNTS) == [{"rating": 2, "reviews": 2}, {"rating": 0, "reviews": 1}]
    assert rows(GRADE_COUNTS) == [
        {"review_grade": "good", "total_reviews": 2},
        {"review_grade": "again", "total_reviews": 1},
    ]
    assert sorted(r["card_id"] for r in rows(SELECT_ENGLISH_GRAMMAR)) == [CARD_A, CARD_B]


def test_the_write_examples_change_the_matching_rows(ok, rows, seeded):
    assert ok(UPDATE_BACK)["rows"] == [{"card_id": CARD_A}]
    data = ok(INSERT_DECK)
    assert data["affectedCount"] == 1 and list(data["rows"][0]) == ["deck_id"]
    assert rows("SELECT name, effort_levels, tags FROM decks") == [
        {"name": "Grammar", "effort_levels": ["medium", "long"], "tags": ["English", "grammar"]}
    ]
    assert ok(UPDATE_BACK_AND_TAGS)["affectedCount"] == 1
    assert rows(f"SELECT back_text, tags FROM cards WHERE card_id = '{CARD_A}'") == [
        {"back_text": "Updated answer", "tags": ["English", "verbs"]}
    ]
    data = ok(DELETE_TWO)
    assert data["affectedCount"] == 2 and data["rows"] == []
    assert [r["card_id"] for r in rows("SELECT card_id FROM cards")] == [CARD_C]
    assert rows("SELECT COUNT(*) AS n FROM review_events") == [{"n": 3}]
