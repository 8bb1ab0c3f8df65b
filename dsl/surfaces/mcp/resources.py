"""What the MCP server offers besides tools: resources a client can read into context and prompts
a user can pick (domain.md §4a).

Resources, all rendered from dsl.surfaces.reference and so from the resource registry, like DESCRIBE and
the grammar page: one per table (`flashcards://tables/<name>`, the DESCRIBE of it), the whole
grammar (`flashcards://grammar`, the grammar page's JSON) and the statements every build runs
(`flashcards://examples`). Prompts: make cards from a text, review what is due, summarise
progress; each names the tools and statements to use, and tests run every statement they quote.
"""

from __future__ import annotations

import json
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from dsl.schema import RESOURCES, Resource
from dsl.settings import dsl_settings
from dsl.surfaces.reference import EXAMPLES, HEADLINE_EXAMPLES, reference, resource_reference

JSON = "application/json"

DUE_CARDS_SQL = (
    "SELECT card_id, front_text, tags, due_at FROM cards WHERE due_at <= NOW() "
    "ORDER BY due_at LIMIT {limit}"
)
NEW_CARDS_SQL = "SELECT COUNT(*) AS new_cards FROM cards WHERE fsrs_card_state = 'new'"
PROGRESS_SQL: tuple[str, ...] = (
    "SELECT review_grade, COUNT(*) AS reviews FROM review_events "
    "WHERE reviewed_at_server >= NOW() - INTERVAL '{days} days' GROUP BY review_grade "
    "ORDER BY reviews DESC",
    "SELECT fsrs_card_state, COUNT(*) AS cards FROM cards GROUP BY fsrs_card_state "
    "ORDER BY cards DESC",
    "SELECT COUNT(*) AS due_now FROM cards WHERE due_at <= NOW()",
    "SELECT tag, COUNT(*) AS cards, SUM(lapses) AS lapses FROM cards GROUP BY tag "
    "ORDER BY lapses DESC LIMIT 10",
)


def _dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def _table_reader(resource: Resource):
    def read() -> str:
        return _dump(resource_reference(resource))

    return read


def add_resources(server: MCPServer) -> None:
    for resource in RESOURCES:
        server.resource(
            f"flashcards://tables/{resource.name}",
            name=resource.name,
            title=f"DESCRIBE {resource.name}",
            description=f"{resource.description} Columns, types, nullability and writability, "
            f"as DESCRIBE {resource.name} answers.",
            mime_type=JSON,
        )(_table_reader(resource))

    @server.resource(
        "flashcards://grammar",
        name="grammar",
        title="The SQL dialect",
        description="Statements, resources and columns, operators, literals, rules and limits of "
        "the dialect the sql tools accept (the grammar page as JSON).",
        mime_type=JSON,
    )
    def grammar() -> str:
        return _dump(reference())

    @server.resource(
        "flashcards://examples",
        name="examples",
        title="Example statements",
        description="Statements that run as written: reads, aggregates, writes.",
        mime_type=JSON,
    )
    def examples() -> str:
        return _dump(list(dict.fromkeys(HEADLINE_EXAMPLES + EXAMPLES)))


def add_prompts(server: MCPServer) -> None:
    writes = dsl_settings.MAX_ROWS_PER_WRITE

    @server.prompt(
        name="make_cards_from_text",
        title="Make cards from a text",
        description="Turn a text (notes, an article, a chapter) into flashcards in the selected "
        "workspace.",
    )
    def make_cards_from_text(
        text: Annotated[str, Field(description="The text to learn from.")],
        tags: Annotated[str, Field(description="Comma-separated tags for the new cards.")] = "",
    ) -> str:
        tag_list = [t.strip() for t in tags.split(",") if t.strip()]
        tag_sql = "(" + ", ".join("'" + t.replace("'", "''") + "'" for t in tag_list) + ")"
        tag_clause = (
            f" Give every card the tags {tag_sql}." if tag_list else " Add a tag or two per card."
        )
        return (
            "Make flashcards from the text below with the flashcards tools.\n"
            "1. Read SELECT front_text FROM cards WHERE front_text ILIKE '%<key term>%' with "
            "sql_query for the main terms, so you do not repeat existing cards.\n"
            "2. Write one card per fact worth remembering: front_text is the prompt only (a "
            "question or a term, never the answer), back_text the answer, short and self-contained."
            f"{tag_clause}\n"
            "3. Insert them with sql_execute, e.g. INSERT INTO cards (front_text, back_text, tags) "
            "VALUES ('Capital of Peru?', 'Lima', ('geography')), (…) — at most "
            f"{writes} rows per statement; run once with dry_run: true if unsure.\n"
            "4. Report how many cards you made and show three of them.\n\n"
            f"Text:\n{text}"
        )

    @server.prompt(
        name="review_due_cards",
        title="Review what is due",
        description="A review session: ask the due cards one at a time and record each answer.",
    )
    def review_due_cards(
        limit: Annotated[int, Field(description="At most this many cards (1..100).")] = 10,
    ) -> str:
        limit = min(max(limit, 1), 100)
        return (
            "Run a flashcard review session with me.\n"
            f"1. Fetch the due cards with sql_query: {DUE_CARDS_SQL.format(limit=limit)}. If none "
            f"are due, say so; {NEW_CARDS_SQL} tells how many new cards wait.\n"
            "2. For each card, show me only front_text and wait for my answer. Then read its "
            "back_text (SELECT back_text FROM cards WHERE card_id = '<card_id>') and show it.\n"
            "3. Ask how it went (again / hard / good / easy), or judge it from my answer if I "
            "ask you to, and record it with submit_review (card_id, rating). Never UPDATE "
            "due_at yourself: the server schedules the next review.\n"
            "4. At the end, tell me how many cards I reviewed and how they went."
        )

    @server.prompt(
        name="summarise_progress",
        title="Summarise my progress",
        description="Reviews, card states and weak tags over the last days.",
    )
    def summarise_progress(
        days: Annotated[int, Field(description="Look back this many days (1..365).")] = 7,
    ) -> str:
        days = min(max(days, 1), 365)
        reads = "\n".join(f"- {sql.format(days=days)}" for sql in PROGRESS_SQL)
        return (
            f"Summarise my flashcard progress over the last {days} days. Run these reads with "
            f"sql_query (one call, separated by ';', is fine):\n{reads}\n"
            "Then write a short summary: how much I reviewed and how well (again means "
            "forgotten), how many cards are new, learning, in review or relearning, what is due "
            "now, and which tags I lapse on most. Suggest one concrete next step."
        )
