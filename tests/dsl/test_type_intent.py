"""Type errors keep the caller's intent (#26, dsl.md §6.1): a boolean written as ``0``, ``'false'``
or ``'no'`` is taught as ``= FALSE`` (the true spellings as ``= TRUE``), and a wrong type where an
enum is expected lists every allowed value."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.envelope import post_sql


@pytest.mark.parametrize(
    ("literal", "meant"),
    [("0", "FALSE"), ("'false'", "FALSE"), ("'no'", "FALSE"), ("'off'", "FALSE"),
     ("1", "TRUE"), ("'true'", "TRUE"), ("'yes'", "TRUE")],
)  # fmt: skip
def test_a_boolean_spelt_otherwise_is_taught_as_what_was_meant(
    api: Any, literal: str, meant: str
) -> None:
    body = post_sql(api, f"SELECT * FROM workspace WHERE enable_fuzz = {literal}").json()
    details = body["error"]["details"]
    assert details["reason"] == "type_mismatch"
    assert details["hint"].endswith(f"enable_fuzz = {meant}."), details["hint"]


def test_a_number_for_an_enum_lists_every_allowed_value(api: Any) -> None:
    body = post_sql(api, "SELECT * FROM cards WHERE effort_level = 2").json()
    hint = body["error"]["details"]["hint"]
    assert "'fast', 'medium', 'long'" in hint, hint
