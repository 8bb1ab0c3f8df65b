"""The published shape of the four resources (dsl.md §5): column names in DESCRIBE order, types,
nullability, writability, allowed values and the model field of each — the one source that
DESCRIBE, the dialect's checks, the row formatters, the services' writable lists, export and
import read.

It lives in the domain package so that flashcards (serializers, services, interchange) reads the
same definitions as the dialect without importing ``dsl``; ``dsl.schema`` is the dialect's view
of it. ``Column.field`` is the Django model field path the compiler filters, orders and reads on
and the serializers read from; it is None for expression columns (``review_events.review_grade``,
derived from ``rating``) and for the virtual ``cards.tag`` (one row per (card, tag)). The start-up
system check ``dsl.checks.check_registry_columns`` asserts that every non-None ``field`` exists on
the resource's model.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from flashcards.models import EFFORT_LEVELS, FSRS_STATES, REVIEW_GRADES


class ColumnType(StrEnum):
    """The one list of the published value types: a column's type as DESCRIBE shows it (its value
    is the published name), and DATE, the type of the dialect's DATE(col) values, which no column
    has."""

    UUID = "uuid"
    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATETIME = "datetime"
    JSON = "json"
    STRING_ARRAY = "string[]"
    INTEGER_ARRAY = "integer[]"
    DATE = "date"


# The registry below spells types by these names.
UUID = ColumnType.UUID
STRING = ColumnType.STRING
INTEGER = ColumnType.INTEGER
NUMBER = ColumnType.NUMBER
BOOLEAN = ColumnType.BOOLEAN
DATETIME = ColumnType.DATETIME
JSON = ColumnType.JSON
STRING_ARRAY = ColumnType.STRING_ARRAY
INTEGER_ARRAY = ColumnType.INTEGER_ARRAY

ARRAY_TYPES = frozenset({STRING_ARRAY, INTEGER_ARRAY})
NUMERIC_TYPES = frozenset({INTEGER, NUMBER})


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: ColumnType
    nullable: bool
    writable: bool
    filterable: bool
    sortable: bool
    description: str
    allowed_values: tuple[str, ...] | None
    field: str | None
    required: bool = False
    virtual: bool = False

    def __repr__(self) -> str:
        return f"Column({self.name}: {self.type})"

    @property
    def is_array(self) -> bool:
        return self.type in ARRAY_TYPES

    def describe_row(self) -> dict[str, Any]:
        return {
            "column_name": self.name,
            "type": self.type,
            "nullable": self.nullable,
            "read_only": not self.writable,
            "filterable": self.filterable,
            "sortable": self.sortable,
            "description": self.description,
            "allowed_values": list(self.allowed_values)
            if self.allowed_values is not None
            else None,
        }


@dataclass(frozen=True, slots=True)
class Resource:
    name: str
    writable: bool
    description: str
    columns: tuple[Column, ...]
    default_order: tuple[tuple[str, bool], ...]
    """(column name, descending) pairs; the id column ascending completes every order anyway."""
    id_column: str
    text_columns_for_match: tuple[str, ...]
    explicit_command_hint: str | None

    def __repr__(self) -> str:
        return f"Resource({self.name})"

    def column(self, name: str) -> Column | None:
        return _COLUMN_INDEX[self.name].get(name)

    @property
    def readable_columns(self) -> tuple[Column, ...]:
        """The columns of ``SELECT *`` / ``RETURNING *``, in DESCRIBE order, without virtual ones."""
        return _READABLE[self.name]

    @property
    def writable_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.writable)

    def show_tables_row(self) -> dict[str, Any]:
        return {"table_name": self.name, "writable": self.writable, "description": self.description}


def _col(
    name: str,
    type_: ColumnType,
    description: str,
    *,
    field: str | None = None,
    nullable: bool = False,
    writable: bool = False,
    required: bool = False,
    allowed: tuple[str, ...] | None = None,
    filterable: bool | None = None,
    sortable: bool | None = None,
    virtual: bool = False,
    expression: bool = False,
) -> Column:
    # json is neither filterable nor sortable; arrays filter through their own operators only.
    return Column(
        name=name,
        type=type_,
        nullable=nullable,
        writable=writable,
        filterable=(type_ != JSON) if filterable is None else filterable,
        sortable=(type_ != JSON and type_ not in ARRAY_TYPES) if sortable is None else sortable,
        description=description,
        allowed_values=allowed,
        field=None if (virtual or expression) else (field or name),
        required=required,
        virtual=virtual,
    )


WORKSPACE = Resource(
    name="workspace",
    writable=False,
    description="The selected workspace and its scheduler settings (one row).",
    columns=(
        _col("workspace_id", UUID, "Server-generated id of the workspace.", field="id"),
        _col("name", STRING, "Display name of the workspace."),
        _col("created_at", DATETIME, "When the workspace was created."),
        _col("algorithm", STRING, "Scheduling algorithm, currently fsrs-6."),
        _col("desired_retention", NUMBER, "Target probability of recall used by the scheduler."),
        _col(
            "learning_steps_minutes",
            INTEGER_ARRAY,
            "Learning steps in minutes.",
            filterable=False,
        ),
        _col(
            "relearning_steps_minutes",
            INTEGER_ARRAY,
            "Relearning steps in minutes.",
            filterable=False,
        ),
        _col(
            "maximum_interval_days", INTEGER, "Longest interval the scheduler will assign, in days."
        ),
        _col(
            "enable_fuzz",
            BOOLEAN,
            "Whether the scheduler spreads due dates with a little randomness.",
        ),
        _col(
            "time_zone",
            STRING,
            "IANA time zone of the learner's day (default UTC): DATE(col) and CURRENT_DATE count "
            "in it.",
        ),
        _col(
            "day_starts_at_hour",
            INTEGER,
            "Hour (0-23, local) at which a learning day starts, like Anki's next-day-starts-at "
            "(default 0): a review before it counts for the day before.",
        ),
    ),
    default_order=(("workspace_id", False),),
    id_column="workspace_id",
    text_columns_for_match=(),
    explicit_command_hint=(
        "Scheduler settings change through POST /v1/agent/workspace/scheduler-settings, not through SQL."
    ),
)

CARDS = Resource(
    name="cards",
    writable=True,
    description="Flashcards; soft-deleted cards are never visible.",
    columns=(
        _col("card_id", UUID, "Server-generated id of the card.", field="id"),
        _col(
            "front_text",
            STRING,
            "The prompt only; required on INSERT; trimmed; must not be empty.",
            writable=True,
            required=True,
        ),
        _col(
            "back_text",
            STRING,
            "The answer; required on INSERT; trimmed; may be empty.",
            writable=True,
            required=True,
        ),
        _col("card_type", STRING, "Card type; default basic; blank becomes basic.", writable=True),
        _col(
            "tags",
            STRING_ARRAY,
            "Tags of the card; default (); trimmed, NFC-normalised, case-insensitive duplicates dropped.",
            writable=True,
        ),
        _col(
            "effort_level",
            STRING,
            "How much effort the card takes; default fast.",
            writable=True,
            allowed=EFFORT_LEVELS,
        ),
        _col("metadata", JSON, "{version: 1, source: {...}}; not filterable, not sortable."),
        _col(
            "due_at",
            DATETIME,
            "When the card is next due; null for a new card (never reviewed), so due_at <= NOW() "
            "leaves new cards out: add OR due_at IS NULL to include them.",
            nullable=True,
        ),
        _col("created_at", DATETIME, "When the card was created."),
        _col("updated_at", DATETIME, "When the card was last changed."),
        _col("reps", INTEGER, "Number of reviews."),
        _col("lapses", INTEGER, "Number of times the card was forgotten after being learnt."),
        _col("fsrs_card_state", STRING, "Scheduler state of the card.", allowed=FSRS_STATES),
        _col("fsrs_step_index", INTEGER, "Current (re)learning step, if any.", nullable=True),
        _col(
            "fsrs_scheduled_days",
            INTEGER,
            "Interval of the last scheduling, in days.",
            nullable=True,
        ),
        _col("fsrs_stability", NUMBER, "FSRS memory stability.", nullable=True),
        _col("fsrs_difficulty", NUMBER, "FSRS difficulty.", nullable=True),
        _col("fsrs_last_reviewed_at", DATETIME, "When the card was last reviewed.", nullable=True),
        _col(
            "tag",
            STRING,
            "Virtual: one row per (card, tag) pair; cards without tags yield no row; not in SELECT *.",
            virtual=True,
        ),
    ),
    default_order=(("created_at", True), ("card_id", False)),
    id_column="card_id",
    text_columns_for_match=("front_text", "back_text", "tags"),
    explicit_command_hint=None,
)

DECKS = Resource(
    name="decks",
    writable=True,
    description="Saved filters over effort levels and tags; soft-deleted decks are never visible.",
    columns=(
        _col("deck_id", UUID, "Server-generated id of the deck.", field="id"),
        _col(
            "name",
            STRING,
            "Deck name; required on INSERT; trimmed; not empty.",
            writable=True,
            required=True,
        ),
        _col(
            "effort_levels",
            STRING_ARRAY,
            "A card is in the deck when its effort_level is any of these (and it has any of the "
            "deck's tags); default () = any effort.",
            writable=True,
            allowed=EFFORT_LEVELS,
        ),
        _col(
            "tags",
            STRING_ARRAY,
            "A card is in the deck when it has any of these tags (case-insensitive) and any of "
            "its effort_levels; default () = any tag.",
            writable=True,
        ),
        _col("created_at", DATETIME, "When the deck was created."),
        _col("updated_at", DATETIME, "When the deck was last changed."),
    ),
    default_order=(("created_at", True), ("deck_id", True)),
    id_column="deck_id",
    text_columns_for_match=("name", "tags"),
    explicit_command_hint=None,
)

REVIEW_EVENTS = Resource(
    name="review_events",
    writable=False,
    description="The immutable review log (includes reviews of cards deleted later).",
    columns=(
        _col("review_event_id", UUID, "Server-generated id of the review event.", field="id"),
        _col("card_id", UUID, "The reviewed card."),
        _col("client_event_id", STRING, "Id the client gave the review, for deduplication."),
        _col("rating", INTEGER, "0 again, 1 hard, 2 good, 3 easy."),
        _col(
            "review_grade",
            STRING,
            "The same rating as a word.",
            allowed=REVIEW_GRADES,
            expression=True,
        ),
        _col(
            "reviewed_at_client",
            DATETIME,
            "When the learner answered (scheduling uses this).",
        ),
        _col("reviewed_at_server", DATETIME, "When the server stored the review."),
    ),
    default_order=(("reviewed_at_server", True), ("review_event_id", True)),
    id_column="review_event_id",
    text_columns_for_match=(),
    explicit_command_hint="Reviews are recorded through POST /v1/agent/reviews, not through SQL.",
)

RESOURCES: tuple[Resource, ...] = (WORKSPACE, CARDS, DECKS, REVIEW_EVENTS)
"""In SHOW TABLES order."""

_COLUMN_INDEX: dict[str, dict[str, Column]] = {
    r.name: {c.name: c for c in r.columns} for r in RESOURCES
}
_READABLE: dict[str, tuple[Column, ...]] = {
    r.name: tuple(c for c in r.columns if not c.virtual) for r in RESOURCES
}
