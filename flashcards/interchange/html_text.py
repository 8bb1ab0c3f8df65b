"""Anki field HTML reduced to the text a reader sees: tags dropped, entities decoded, block
elements and <br> as line breaks, table cells apart (`` | ``), images and sounds kept as the references ``[image:name]`` and
``[sound:name]`` (media is not stored, so the reference is all that can be kept)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

BLOCKS = frozenset(
    {
        "p", "div", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
        "blockquote", "pre", "hr", "dl", "dt", "dd", "section", "article", "header", "footer",
    }
)  # fmt: skip
CELLS = frozenset({"td", "th"})
HIDDEN = frozenset({"script", "style", "head", "title", "template"})
MEDIA_TAGS = frozenset({"img", "audio", "video", "source", "embed"})
SOUND = re.compile(r"\[sound:([^\]\r\n]+)\]")
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")


def is_local_media(name: str) -> bool:
    """A file name in the collection's media folder, not a web address or inline data."""
    lowered = name.strip().lower()
    return bool(lowered) and "://" not in lowered and not lowered.startswith(("data:", "//"))


class _TextBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.hidden = 0
        self.media: list[str] = []
        self.cells = 0  # cells started in the current table row

    def _text(self, text: str) -> None:
        self.lines[-1] += text

    def _break(self) -> None:
        self.lines.append("")

    def _block(self) -> None:
        """A block starts or ends on a line of its own, without adding a blank line."""
        if self.lines[-1].strip():
            self.lines.append("")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN:
            self.hidden += 1
        elif tag == "br":
            self._break()
        elif tag in BLOCKS:
            self._block()
            if tag == "tr":
                self.cells = 0
        elif tag in CELLS:
            # Cells of a row stay apart: "verb | yo | ser | soy", not "verbyo / sersoy".
            if self.cells and self.lines[-1].strip():
                self._text(" | ")
            self.cells += 1
        if tag in MEDIA_TAGS and not self.hidden:
            src = dict(attrs).get("src")
            if src and is_local_media(src):
                self.media.append(src.strip())
                if tag == "img":
                    self._text(f"[image:{src.strip()}]")
                else:
                    self._text(f"[sound:{src.strip()}]")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN:
            return
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in BLOCKS:
            self._block()

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            # Source newlines are spaces to a reader; only <br> and blocks break lines.
            self._text(_SPACES.sub(" ", data))


def html_to_text(html: str) -> tuple[str, list[str]]:
    """The visible text and the media file names it references, in order of appearance."""
    if "<" not in html and "&" not in html:
        lines = [_SPACES.sub(" ", html).strip()]
        media: list[str] = []
    else:
        builder = _TextBuilder()
        builder.feed(html)
        builder.close()
        lines = [_SPACES.sub(" ", line).strip() for line in builder.lines]
        media = builder.media
    kept: list[str] = []
    for line in lines:
        if not line and (not kept or not kept[-1]):
            continue  # no leading blank lines, at most one blank line in a row
        kept.append(line)
    text = "\n".join(kept).strip()
    media.extend(name.strip() for name in SOUND.findall(text) if is_local_media(name))
    return text, list(dict.fromkeys(media))
