"""Anki cloze deletions (``{{c1::answer::hint}}``, nested ones included): which numbers a text
holds, and the front and back of the card for one number — the deletion hidden as ``[...]`` (or
``[hint]``) on the front, shown on the back, every other deletion shown as plain text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPEN = re.compile(r"\{\{c(\d+)::")


@dataclass
class _Cloze:
    number: int
    parts: list[str | _Cloze] = field(default_factory=list)
    hint: str | None = None


def _parse(text: str) -> list[str | _Cloze]:
    """Text and cloze nodes; an opening without its closing ``}}`` stays literal text."""
    root: list[str | _Cloze] = []
    stack: list[tuple[_Cloze, int]] = []
    at = 0
    buffer = ""

    def current() -> list[str | _Cloze]:
        return stack[-1][0].parts if stack else root

    while at < len(text):
        opening = _OPEN.match(text, at)
        if opening:
            if buffer:
                current().append(buffer)
                buffer = ""
            stack.append((_Cloze(int(opening.group(1))), at))
            at = opening.end()
            continue
        if stack and text.startswith("}}", at):
            if buffer:
                current().append(buffer)
                buffer = ""
            node, _ = stack.pop()
            last = node.parts[-1] if node.parts else None
            if isinstance(last, str) and "::" in last:
                answer, hint = last.split("::", 1)
                node.parts[-1] = answer
                node.hint = hint
            current().append(node)
            at += 2
            continue
        buffer += text[at]
        at += 1
    if buffer:
        current().append(buffer)
    while stack:  # unclosed: put the opening back as text
        node, _ = stack.pop()
        literal: list[str | _Cloze] = [f"{{{{c{node.number}::", *node.parts]
        current().extend(literal)
    return root


def cloze_numbers(text: str) -> list[int]:
    found: set[int] = set()
    pending: list[str | _Cloze] = list(_parse(text))
    while pending:
        node = pending.pop()
        if isinstance(node, _Cloze):
            if node.number > 0:
                found.add(node.number)
            pending.extend(node.parts)
    return sorted(found)


def _render(parts: list[str | _Cloze], number: int, front: bool) -> str:
    out: list[str] = []
    for node in parts:
        if isinstance(node, str):
            out.append(node)
        elif node.number == number and front:
            out.append(f"[{node.hint}]" if node.hint else "[...]")
        else:
            out.append(_render(node.parts, number, front))
    return "".join(out)


def render_cloze(text: str, number: int) -> tuple[str, str]:
    """(front, back) HTML of cloze card ``number``."""
    tree = _parse(text)
    return _render(tree, number, True), _render(tree, number, False)
