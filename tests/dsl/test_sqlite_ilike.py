"""ILIKE on SQLite (dsl.runtime.backends.CaseInsensitiveLike): SQLite's own LIKE answers for ASCII text,
Python-lowered GLOB for the rest. Whichever branch runs, the answer must be the documented one:
the Python-lowered text matched against the Python-lowered pattern (dsl.md: ILIKE folds all of
Unicode), for any text and any pattern — checked by hypothesis against that definition."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.models import CharField, Value
from django.db.models.sql import Query
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.runtime import backends
from flashcards.models import Card

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's rendering of ILIKE"),
]

# Letters whose case mapping is unusual: the Kelvin sign lowers to ASCII 'k', dotted capital I to
# two characters, sharp s has no one-character upper case; plus wildcards and the escape.
SPECIAL = "K\u212ak\u0130iI\u0131\u00df\u1e9e\u00c9\u00e9\u03a3\u03c3\u03c2%_\\*?[]'\x00 "
alphabet = st.one_of(
    st.characters(min_codepoint=32, max_codepoint=126),
    st.sampled_from(SPECIAL),
    st.characters(min_codepoint=0xA0, max_codepoint=0x2FFF),
)
texts = st.text(alphabet, max_size=12)


def reference(text: str, pattern: str) -> bool:
    """ILIKE as documented: both sides lowered (per pattern character), % any run, _ one
    character, backslash makes the next character literal."""
    regex = []
    for part in backends.parse_like_pattern(pattern):
        if part is backends.ANY_RUN:
            regex.append(".*")
        elif part is backends.ONE_CHAR:
            regex.append(".")
        else:
            regex.append(re.escape(part.lower()))  # type: ignore[union-attr]
    return re.fullmatch("".join(regex), text.lower(), re.DOTALL) is not None


def sqlite_ilike(text: str | None, pattern: str) -> bool | None:
    lookup = backends.CaseInsensitiveLike(Value(text, output_field=CharField()), pattern)
    query = Query(Card)
    compiler = query.get_compiler(connection=connection)
    sql, params = lookup.as_sqlite(compiler, connection)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql}", params)
        (value,) = cursor.fetchone()
    return None if value is None else bool(value)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts, pattern=texts)
def test_matches_the_lowered_definition_for_any_text(text, pattern):
    # The lexer refuses NUL in string literals, so no pattern holds one; nor does stored text.
    text, pattern = text.replace("\x00", ""), pattern.replace("\x00", "")
    assert sqlite_ilike(text, pattern) is reference(text, pattern)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts)
def test_a_substring_of_the_text_is_always_found(text):
    text = text.replace("\x00", "")
    piece = text[1:4]
    if piece.isascii():
        piece = piece.swapcase()  # ASCII case never matters
    escaped = "".join("\\" + c if c in "%_\\" else c for c in piece)
    assert sqlite_ilike(text, f"%{escaped}%") is True


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("Photosynthesis", "%SYNTH%", True),  # ASCII: SQLite's LIKE
        ("ÉCOLE", "%école%", True),  # non-ASCII: lowered in Python
        ("école", "ÉCO_E", True),
        ("\u212a", "k", True),  # KELVIN SIGN lowers to ASCII k
        ("k", "\u212a", True),  # and in the pattern too
        ("İ", "_", False),  # lowers to two characters (i + combining dot)
        ("İ", "__", True),
        ("50%", "50\\%", True),
        ("505", "50\\%", False),
        ("a_b", "a\\_b", True),
        ("axb", "a\\_b", False),
        ("STRASSE", "strasse", True),
        ("straße", "STRASSE", False),
        (None, "%", None),
    ],
)
def test_edge_cases(text, pattern, expected):
    assert sqlite_ilike(text, pattern) is expected
    if text is not None:
        assert reference(text, pattern) is expected
