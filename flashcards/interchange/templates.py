"""Anki card templates rendered as Anki renders them (rslib ``template.rs``): ``{{Field}}``,
filters (``{{text:F}}``, ``{{hint:F}}``, ``{{type:F}}``, ``{{cloze:F}}``, chained as
``{{text:hint:F}}``), sections ``{{#F}}…{{/F}}`` and ``{{^F}}…{{/F}}``, the special fields
``{{FrontSide}}``, ``{{Tags}}``, ``{{Deck}}``, ``{{Subdeck}}``, ``{{Card}}``, ``{{Type}}``; the answer
side is what follows ``<hr id=answer>`` (or the answer template without ``{{FrontSide}}``), so
the question is not repeated. Output is HTML; html_text turns it into text."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from flashcards.interchange.cloze import cloze_numbers, render_cloze
from flashcards.interchange.html_text import html_to_text

_TOKEN = re.compile(r"\{\{(.*?)\}\}", re.S)
_ANSWER_RULE = re.compile(r"<hr[^>]*\bid\s*=\s*['\"]?answer['\"]?[^>]*>", re.I)
# Anki's own emptiness test (rslib template.rs field_is_empty): whitespace, <br> and <div> only.
_EMPTY = re.compile(r"^(?:\s|</?(?:br|div) ?/?>)*$", re.I | re.S)
# Furigana "漢字[かんじ]": the reading is dropped, as the kanji: filter does.
_READING = re.compile(r" ?([^ >]+?)\[(.+?)\]")


def field_is_empty(html: str) -> bool:
    return bool(_EMPTY.match(html))


@dataclass(frozen=True)
class Context:
    fields: dict[str, str]
    card_ordinal: int  # 0-based template ordinal, or cloze number - 1
    deck: str = ""
    tags: str = ""
    note_type: str = ""
    card_name: str = ""


@dataclass(frozen=True)
class Rendered:
    question: str
    answer: str
    # Fields the templates show on either side (the rest are kept in the card's metadata).
    used: frozenset[str]
    # Anki would not generate this card: its question shows no non-empty field.
    empty: bool


@functools.lru_cache(maxsize=512)
def _parse(template: str) -> list[object]:
    """(Cached per template text: a package has few templates and many cards; the result is
    never modified.) Text and ("field", name, filters) / ("section", name, inverted, children) nodes."""
    root: list[object] = []
    stack: list[tuple[str, list[object]]] = [("", root)]
    at = 0
    for match in _TOKEN.finditer(template):
        stack[-1][1].append(template[at : match.start()])
        at = match.end()
        inner = match.group(1).strip()
        if inner[:1] in "#^":
            children: list[object] = []
            stack[-1][1].append(("section", inner[1:].strip(), inner[0] == "^", children))
            stack.append((inner[1:].strip(), children))
        elif inner[:1] == "/":
            if len(stack) > 1 and stack[-1][0] == inner[1:].strip():
                stack.pop()
        elif inner[:1] == "!":
            continue
        else:
            *filters, name = inner.split(":")
            stack[-1][1].append(("field", name.strip(), [f.strip() for f in filters]))
    stack[-1][1].append(template[at:])
    return root


def _value(name: str, context: Context, special: dict[str, str]) -> str | None:
    if name in special:
        return special[name]
    return context.fields.get(name)


def _apply(value: str, filters: list[str], context: Context, side: str) -> str:
    for filt in reversed(filters):
        lowered = filt.lower()
        if lowered == "cloze":
            front, back = render_cloze(value, context.card_ordinal + 1)
            value = front if side == "question" else back
        elif lowered == "type":
            # A typing box on the question; the expected answer on the answer side.
            value = "" if side == "question" else value
        elif lowered in ("kanji", "furigana"):
            value = _READING.sub(r"\1", value)
        elif lowered == "kana":
            value = _READING.sub(r"\2", value)
        # text:, hint:, tts-less others: the field's own content (html_text strips HTML).
    return value


def _render(
    nodes: list[object],
    context: Context,
    special: dict[str, str],
    side: str,
    used: set[str],
    shown: list[str],
) -> str:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
            continue
        assert isinstance(node, tuple)
        if node[0] == "section":
            _, name, inverted, children = node
            value = _value(name, context, special) or ""
            if name in context.fields:
                used.add(name)
            if field_is_empty(value) == inverted:
                out.append(_render(children, context, special, side, used, shown))
            continue
        _, name, filters = node
        found = _value(name, context, special)
        if found is None:
            continue
        value = found
        if name in context.fields:
            used.add(name)
            if not field_is_empty(value) and "type" not in [f.lower() for f in filters]:
                shown.append(name)
        out.append(_apply(value, filters, context, side))
    return "".join(out)


def render(question_template: str, answer_template: str, context: Context) -> Rendered:
    """The card's question and answer HTML from its note type's templates."""
    used: set[str] = set()
    shown: list[str] = []
    special = {
        "Tags": context.tags,
        "Deck": context.deck,
        "Subdeck": context.deck.rsplit("::", 1)[-1],
        "Card": context.card_name,
        "Type": context.note_type,
    }
    question = _render(_parse(question_template), context, special, "question", used, shown)
    question_shown = bool(shown)
    rule = _ANSWER_RULE.search(answer_template)
    answer_part = answer_template[rule.end() :] if rule else answer_template
    special["FrontSide"] = "" if rule is None else question
    answer = _render(_parse(answer_part), context, special, "answer", used, [])
    return Rendered(question, answer, frozenset(used), empty=not question_shown)


@dataclass(frozen=True)
class CardRender:
    kind: str  # the product's card_type: basic, reversed, cloze, image-occlusion
    sides: tuple[str, str]  # question and answer HTML
    skip: str | None  # why Anki has no such card, or None
    other_fields: dict[str, str]  # the note's fields this card does not show, as text


def _shown_fields(template: str) -> set[str]:
    names: set[str] = set()
    for node in _parse(template):
        if isinstance(node, tuple) and node[0] == "field":
            names.add(node[1])
    return names


def render_card(
    note_type: Any, ordinal: int, values: list[str], deck: str | None, tags: str
) -> CardRender:
    """One Anki card of ``note_type`` (its ``fields``, ``questions`` and ``answers`` by template
    ordinal, ``is_cloze``) from the note's field ``values``."""
    fields = dict(zip(note_type.fields, [*values, *[""] * len(note_type.fields)], strict=False))
    template_ord = 0 if note_type.is_cloze else ordinal
    question_template = note_type.questions.get(template_ord, "")
    answer_template, card_name = note_type.answers.get(template_ord, ("", ""))
    context = Context(fields, ordinal, deck or "", tags.strip(), note_type.name, card_name)
    if note_type.is_cloze and any("image-occlusion:" in v for v in fields.values()):
        header = next((fields[n] for n in ("Header", "Title") if fields.get(n)), "")
        header_text = html_to_text(header)[0]
        number = ordinal + 1
        if not any(number in cloze_numbers(v) for v in fields.values()):
            return CardRender("image-occlusion", ("", ""), "empty_cloze", {})
        front = f"Image Occlusion card {number}" + (f": {header_text}" if header_text else "")
        front += " (the image and its masks are not kept; study this card in Anki)"
        back = "\n".join(
            html_to_text(fields[n])[0] for n in ("Back Extra", "Comments") if fields.get(n)
        )
        return CardRender("image-occlusion", (front, back), None, {})
    rendered = render(question_template, answer_template, context)
    if note_type.is_cloze:
        cloze_fields = [
            n for n in fields if f"cloze:{n}" in question_template.replace(" ", "")
        ] or list(fields)[:1]
        if not any(ordinal + 1 in cloze_numbers(fields[n]) for n in cloze_fields):
            return CardRender("cloze", ("", ""), "empty_cloze", {})
        kind = "cloze"
    else:
        if rendered.empty:
            return CardRender("basic", ("", ""), "not_generated", {})
        first = _shown_fields(note_type.questions.get(min(note_type.questions, default=0), ""))
        mine = _shown_fields(question_template)
        kind = "reversed" if ordinal > 0 and mine and not (mine & first) else "basic"
    others = {
        name: html_to_text(value)[0]
        for name, value in fields.items()
        if name not in rendered.used and not field_is_empty(value)
    }
    return CardRender(kind, (rendered.question, rendered.answer), None, others)
