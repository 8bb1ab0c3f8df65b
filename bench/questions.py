"""The questions the HTTP benchmarks ask (bench/peers.py, bench/workers.py): each as the dialect
statement an agent sends and the equivalent hand-written SQL a peer (Datasette) is given."""

from __future__ import annotations

CARD_COLUMNS = (
    "card_id", "front_text", "back_text", "card_type", "tags", "effort_level", "metadata",
    "due_at", "created_at", "updated_at", "reps", "lapses", "fsrs_card_state", "fsrs_step_index",
    "fsrs_scheduled_days", "fsrs_stability", "fsrs_difficulty", "fsrs_last_reviewed_at",
)  # fmt: skip


def _select_list() -> str:
    return ", ".join("c.id AS card_id" if c == "card_id" else f"c.{c}" for c in CARD_COLUMNS)


def questions(workspace_hex: str, now: str) -> dict[str, dict[str, str]]:
    """Each question as the dialect statement and Datasette's SQL (the same rows, 20 and a peek at
    the 21st for "has more", as the dialect reads them)."""
    return {
        "paged read": {
            "dialect": (
                "SELECT * FROM cards WHERE tags OVERLAP ('english') AND effort_level IN "
                "('fast', 'medium') ORDER BY updated_at DESC LIMIT 20 OFFSET 0"
            ),
            "sql": (
                f"SELECT {_select_list()} FROM flashcards_card c WHERE c.workspace_id = :ws "
                "AND c.deleted_at IS NULL AND c.effort_level IN ('fast', 'medium') AND EXISTS "
                "(SELECT 1 FROM flashcards_cardtag ct JOIN flashcards_tag t ON t.id = ct.tag_id "
                "WHERE ct.card_id = c.id AND t.key = 'english') "
                "ORDER BY c.updated_at DESC, c.id LIMIT 21"
            ),
        },
        "due cards": {
            "dialect": (
                "SELECT card_id, front_text, due_at FROM cards WHERE due_at <= NOW() "
                "ORDER BY due_at LIMIT 20"
            ),
            "sql": (
                "SELECT c.id AS card_id, c.front_text, c.due_at FROM flashcards_card c "
                "WHERE c.workspace_id = :ws AND c.deleted_at IS NULL AND c.due_at <= :now "
                "ORDER BY c.due_at, c.id LIMIT 21"
            ),
        },
    }
