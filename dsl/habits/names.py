"""Names: the words agents use for resources, columns and values, and what they are here."""

from __future__ import annotations

from dsl.schema import get_resource

RESOURCE_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        ("card", "flashcards", "flashcard", "notes", "note", "items", "item", "questions",
         "facts", "entries", "cards_table", "words", "vocabulary", "terms"),
        "cards",
    ),
    **dict.fromkeys(
        ("deck", "collections", "collection", "sets", "groups", "playlists", "study_sets",
         "studysets", "card_sets", "lists", "folders"),
        "decks",
    ),
    **dict.fromkeys(
        ("review", "reviews", "review_event", "review_log", "review_logs", "revlog", "reviewlog",
         "review_history", "reviews_log", "history", "events", "logs", "answers", "attempts",
         "study_history", "repetition_log", "study_sessions", "sessions",
         "ratings", "study_log", "repetitions"),
        "review_events",
    ),
    **dict.fromkeys(
        ("workspaces", "settings", "config", "configuration", "preferences", "scheduler",
         "scheduler_settings", "account", "profile", "options"),
        "workspace",
    ),
}  # fmt: skip

# Per resource: a word agents use for a column → the column that answers the same question.
COLUMN_SYNONYMS: dict[str, dict[str, str]] = {
    "cards": {
        **dict.fromkeys(
            ("question", "prompt", "front", "term", "word", "text", "question_text", "front_side",
             "card_front", "frontside", "content", "title", "expression", "clue", "q"),
            "front_text",
        ),
        **dict.fromkeys(
            ("answer", "back", "definition", "meaning", "translation", "answer_text", "back_side",
             "card_back", "backside", "explanation", "solution", "response", "a"),
            "back_text",
        ),
        **dict.fromkeys(
            ("status", "state", "card_state", "queue", "learning_state", "stage", "phase",
             "srs_state", "fsrs_state", "type_state"),
            "fsrs_card_state",
        ),
        **dict.fromkeys(
            ("next_review", "next_review_at", "next_due", "due_date", "due", "due_on", "next_date",
             "next_repetition", "next_rep", "next_review_time", "next_study", "review_due",
             "review_at", "scheduled_at", "next_review_date", "due_time", "next_at"),
            "due_at",
        ),
        **dict.fromkeys(
            ("last_review", "last_reviewed", "last_review_at", "last_studied", "reviewed_at",
             "last_seen", "last_review_date", "last_practiced"),
            "fsrs_last_reviewed_at",
        ),
        **dict.fromkeys(
            ("review_count", "repetitions", "reviews", "times_reviewed", "num_reviews",
             "repetition", "review_total", "count_reviews", "rep_count"),
            "reps",
        ),
        **dict.fromkeys(
            ("lapse_count", "failures", "forgotten", "fail_count", "times_forgotten", "errors"),
            "lapses",
        ),
        **dict.fromkeys(("difficulty", "ease", "ease_factor", "factor", "easiness", "d"), "fsrs_difficulty"),
        **dict.fromkeys(
            ("stability", "memory_strength", "strength"), "fsrs_stability"
        ),
        **dict.fromkeys(("scheduled_days", "interval_days", "days_interval", "interval", "ivl", "interval_days_next"),
            "fsrs_scheduled_days",),
        **dict.fromkeys(
            ("created", "creation_date", "date_created", "created_on", "added", "added_at",
             "inserted_at", "create_time", "created_date"),
            "created_at",
        ),
        **dict.fromkeys(
            ("updated", "modified", "modified_at", "last_modified", "changed_at", "mtime",
             "updated_on", "update_time", "edited_at", "mod"),
            "updated_at",
        ),
        **dict.fromkeys(
            ("tag_list", "labels", "label", "keywords", "categories", "category", "topics",
             "topic", "subjects", "tagged"),
            "tags",
        ),
        **dict.fromkeys(
            ("effort", "difficulty_level", "level", "effort_levels", "time_needed", "size"),
            "effort_level",
        ),
        **dict.fromkeys(("type", "kind", "note_type", "model", "template"), "card_type"),
        **dict.fromkeys(
            ("cardid", "uuid", "card", "note_id", "cid", "pk", "key", "rowid", "oid", "_id"),
            "card_id",
        ),
        **dict.fromkeys(("meta", "extra", "data", "source", "info", "attributes"), "metadata"),
    },
    "decks": {
        **dict.fromkeys(("title", "deck_name", "label", "deck", "description", "deck_title"), "name"),
        **dict.fromkeys(
            ("tag_list", "labels", "keywords", "categories", "category", "topics", "filter",
             "tag_filter", "tag", "filter_tags", "tags_filter", "deck_tags", "topic", "subject",
             "subjects", "label"),
            "tags",
        ),
        **dict.fromkeys(("effort", "effort_level", "levels", "level", "efforts"), "effort_levels"),
        **dict.fromkeys(("deckid", "uuid", "pk", "did", "key", "rowid", "oid", "_id"), "deck_id"),
        **dict.fromkeys(
            ("created", "creation_date", "date_created", "created_on", "added"), "created_at"
        ),
        **dict.fromkeys(("updated", "modified", "modified_at", "last_modified", "mod"), "updated_at"),
    },
    "review_events": {
        **dict.fromkeys(
            ("grade", "answer", "result", "outcome", "response", "score",
             "rating_name", "grade_name", "rating_text", "review_rating"),
            "review_grade",
        ),
        **dict.fromkeys(
            ("reviewed_at", "review_time", "review_date", "time", "timestamp", "date",
             "answered_at", "studied_at", "review_at", "at", "when", "reviewed_on", "review_ts"),
            "reviewed_at_client",
        ),
        **dict.fromkeys(
            ("client_reviewed_at", "local_time", "device_time", "answered"), "reviewed_at_client"
        ),
        **dict.fromkeys(("created_at", "inserted_at", "stored_at", "server_time"), "reviewed_at_server"),
        **dict.fromkeys(("event_id", "review_id", "revlog_id", "uuid", "pk"), "review_event_id"),
        **dict.fromkeys(("card", "cid", "flashcard_id", "note_id"), "card_id"),
        **dict.fromkeys(
            ("rating_value", "rating_number", "grade_number", "button_number", "ease", "button"),
            "rating",
        ),
    },
    "workspace": {
        **dict.fromkeys(("retention", "target_retention", "request_retention"), "desired_retention"),
        **dict.fromkeys(("max_interval", "maximum_interval", "max_ivl"), "maximum_interval_days"),
        **dict.fromkeys(("learning_steps", "steps"), "learning_steps_minutes"),
        **dict.fromkeys(("relearning_steps", "lapse_steps"), "relearning_steps_minutes"),
        **dict.fromkeys(("fuzz", "fuzzing", "use_fuzz"), "enable_fuzz"),
        **dict.fromkeys(("scheduler", "algo", "scheduler_name"), "algorithm"),
        **dict.fromkeys(("uuid", "pk"), "workspace_id"),
        **dict.fromkeys(("title", "workspace_name"), "name"),
    },
}  # fmt: skip

# What "no value" means for a column that is never NULL (a card not yet reviewed).
NULL_MEANINGS: dict[str, str] = {
    "reps": "reps = 0",
    "lapses": "lapses = 0",
    "fsrs_card_state": "fsrs_card_state = 'new'",
}

# Per resource: names that have no column but an explanation (and possibly a first step).
COLUMN_HINTS: dict[str, dict[str, str]] = {
    "cards": {
        **dict.fromkeys(
            (
                "image",
                "images",
                "picture",
                "photo",
                "attachment",
                "attachments",
                "media",
                "media_url",
                "audio",
                "sound",
                "video",
                "file",
                "files",
                "image_url",
                "audio_url",
            ),
            "Cards hold text only (front_text, back_text): there is no image, audio or other media "
            "column. Put a link or a description in the text if the learner needs one.",
        ),
        **dict.fromkeys(
            ("deck", "deck_name", "deck_id", "decks", "deck_title"),
            "Cards have no deck column: a deck is a saved filter (the decks resource) over tags and "
            "effort levels; read it with SELECT tags, effort_levels FROM decks WHERE name = '...', "
            "then filter cards with tags OVERLAP (its tags) AND effort_level IN (its effort_levels) "
            "(an empty list means any).",
        ),
        **dict.fromkeys(
            ("streak", "current_streak", "correct_streak", "streak_count"),
            "Cards have no streak column: read the card's reviews in order (SELECT rating, "
            "reviewed_at_client FROM review_events WHERE card_id = '<id>' ORDER BY "
            "reviewed_at_client DESC) and count the run of ratings above 0 after reading.",
        ),
        **dict.fromkeys(
            (
                "suspended",
                "is_suspended",
                "buried",
                "is_buried",
                "flagged",
                "flag",
                "archived",
                "is_archived",
                "hidden",
                "active",
                "is_active",
                "enabled",
            ),
            "Cards have no such flag: every visible card is active (deleted cards are never "
            "visible), so drop the condition.",
        ),
    },
}

# Words whose nearest column runs the other way (a high ease is an easy card, a high
# fsrs_difficulty a hard one): suggested, explained, never substituted into a correction.
INVERSE_SYNONYMS: dict[str, dict[str, str]] = {
    "cards": dict.fromkeys(
        ("ease", "ease_factor", "factor", "easiness"),
        "fsrs_difficulty runs the other way from ease: a high fsrs_difficulty is a hard card, so "
        "ORDER BY ease ASC is ORDER BY fsrs_difficulty DESC.",
    ),
}

# Words that name a different column when the statement writes (the writable one).
WRITE_SYNONYMS: dict[str, dict[str, str]] = {
    "cards": dict.fromkeys(
        ("difficulty", "level", "effort", "difficulty_level", "size", "time_needed"), "effort_level"
    ),
}

# Read-only columns that a command changes, and what to say instead of "write only ...".
_REVIEW = (
    "{column} is written by the scheduler, one card at a time, when a review is recorded (POST "
    "/v1/agent/reviews with card_id and rating); there is no per-card reschedule. UPDATE writes "
    "only front_text, back_text, card_type, tags and effort_level."
)
_RESET = (
    "{column} is scheduling state: there is no per-card reset (POST "
    "/v1/agent/workspace/reset-progress starts EVERY card of the workspace over), and reviews "
    "(POST /v1/agent/reviews) move it forward. UPDATE writes only front_text, back_text, "
    "card_type, tags and effort_level."
)
SCHEDULING_COMMANDS: dict[str, str] = {
    **{
        c: _REVIEW.format(column=c)
        for c in (
            "due_at",
            "fsrs_last_reviewed_at",
            "fsrs_scheduled_days",
            "fsrs_stability",
            "fsrs_difficulty",
        )
    },
    **{
        c: _RESET.format(column=c) for c in ("fsrs_card_state", "reps", "lapses", "fsrs_step_index")
    },
}

# The value a writable column takes when it is left out (what DEFAULT would write).
COLUMN_DEFAULTS: dict[str, str] = {
    "effort_level": "'fast'",
    "card_type": "'basic'",
    "tags": "()",
    "back_text": "''",
    "effort_levels": "()",
}

# Words for an enum column's values → the value they mean (suggested on invalid_value).
ENUM_SYNONYMS: dict[str, dict[str, str]] = {
    "effort_level": {
        **dict.fromkeys(("mid", "med", "normal", "moderate", "average", "middle"), "medium"),
        **dict.fromkeys(("quick", "short", "easy", "low", "small", "fastest"), "fast"),
        **dict.fromkeys(("slow", "hard", "difficult", "high", "large", "longer"), "long"),
    },
    "fsrs_card_state": {
        **dict.fromkeys(("learn", "learned", "in_learning"), "learning"),
        **dict.fromkeys(("relearn", "lapsed", "relearned"), "relearning"),
        **dict.fromkeys(("unseen", "fresh", "unreviewed", "never_reviewed"), "new"),
        **dict.fromkeys(("mature", "young", "reviewing", "graduated"), "review"),
    },
    "review_grade": {
        **dict.fromkeys(("fail", "failed", "wrong", "forgot", "lapse", "incorrect"), "again"),
        **dict.fromkeys(("difficult", "tough"), "hard"),
        **dict.fromkeys(("ok", "okay", "correct", "right", "pass", "passed"), "good"),
        **dict.fromkeys(("perfect", "trivial", "simple"), "easy"),
    },
}

# String values of an integer column that agents write as words.
VALUE_SYNONYMS: dict[str, dict[str, str]] = {
    "rating": {"again": "0", "hard": "1", "good": "2", "easy": "3"},
}


def resource_for(name: str) -> str | None:
    """The resource ``name`` is, or is a common word for."""
    if get_resource(name) is not None:
        return name
    return RESOURCE_SYNONYMS.get(name)


def column_synonym(resource: str, name: str) -> str | None:
    return COLUMN_SYNONYMS.get(resource, {}).get(name)
