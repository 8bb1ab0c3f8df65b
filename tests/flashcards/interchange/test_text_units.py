"""The pure pieces: HTML to visible text, cloze deletions, the protobuf wire decoder, tags."""

from __future__ import annotations

import pytest

from flashcards.interchange import protowire
from flashcards.interchange.cloze import cloze_numbers, render_cloze
from flashcards.interchange.delimited import format_tags, parse_tags
from flashcards.interchange.html_text import html_to_text


@pytest.mark.parametrize(
    ("html", "text", "media"),
    [
        ("<b>hola</b> mundo", "hola mundo", []),
        ("a<br>b<br/><br>c", "a\nb\n\nc", []),
        ("<div>one</div><div>two</div>", "one\ntwo", []),
        ("x &amp; y&nbsp;&lt;z&gt;", "x & y <z>", []),
        ("<style>p{}</style><script>alert(1)</script>seen", "seen", []),
        (
            '<img src="a b.png"> [sound:c.mp3]',
            "[image:a b.png] [sound:c.mp3]",
            ["a b.png", "c.mp3"],
        ),
        ('<img src="https://x.org/a.png">web', "web", []),
        ("line\n  wrapped   in source", "line wrapped in source", []),
        ("<ul><li>a</li><li>b</li></ul>", "a\nb", []),
    ],
)
def test_html_to_text(html, text, media):
    assert html_to_text(html) == (text, media)


def test_cloze_numbers_hints_and_nesting():
    text = "{{c1::Paris}} in {{c2::France::country}}, {{c1::a {{c3::b}}}} {{c4::open"
    assert cloze_numbers(text) == [1, 2, 3]
    assert render_cloze(text, 1) == (
        "[...] in France, [...] {{c4::open",
        "Paris in France, a b {{c4::open",
    )
    assert render_cloze(text, 2)[0] == "Paris in [country], a b {{c4::open"
    assert render_cloze(text, 3)[0] == "Paris in France, a [...] {{c4::open"


def test_protowire_reads_varints_strings_and_nested_messages():
    nested = b"\x0a\x03abc\x10\x05"
    data = b"\x08\x96\x01" + b"\x12" + bytes([len(nested)]) + nested
    fields = protowire.decode(data)
    assert protowire.first_int(fields, 1) == 150
    assert protowire.first_text(protowire.decode(fields[2][0]), 1) == "abc"
    with pytest.raises(protowire.WireError):
        protowire.decode(b"\x12\x10abc")


@pytest.mark.parametrize("tags", [["a", "b"], [], ["x;y"], ["[z", "w"], ["ünï", "a b"]])
def test_tags_round_trip(tags):
    assert parse_tags(format_tags(tags)) == tags
