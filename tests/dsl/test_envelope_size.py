"""envelope_size counts the characters of the JSON as the API renders it (compact, non-ASCII
kept), whatever shortcut it takes to get there."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from dsl.runtime.querylog import envelope_size

_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=40)
)
_BODIES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


def _rendered(body: object) -> int:
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


@given(_BODIES)
def test_matches_the_rendered_json(body):
    assert envelope_size({"data": body}) == _rendered({"data": body})


def test_escapes_that_differ_between_the_encodings():
    for text in ("é", "😀", "\x7f", "\x00", "\\u0041", "a\\", '"', "\n\t\r"):
        body = {"rows": [{"front_text": text}]}
        assert envelope_size(body) == _rendered(body), repr(text)
