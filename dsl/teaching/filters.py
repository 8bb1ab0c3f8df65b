"""The template filters of habit rows (``{2[0]:unit}``, ``{3:list}``…): each turns a captured text into this language's spelling, or raises ValueError when it does not fit, so the template is skipped."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from dsl import habits
from dsl.schema import get_resource


class TemplateError(LookupError):
    """A template names a field or filter that does not exist: a bug in the row, never caught
    while rendering (a row that cannot render must fail its test, not go quiet)."""


class _Text(str):
    """A string with the format filters habit templates use, e.g. ``{2[0]:unit}``."""

    def __format__(self, spec: str) -> str:
        value = str(self)
        for name in filter(None, spec.split("|")):
            if name not in FILTERS:
                raise TemplateError(f"unknown template filter :{name}")
            value = FILTERS[name](value)
        return value


def _unit(text: str) -> str:
    word = text.strip().strip("'").lower()
    unit = habits.INTERVAL_UNITS.get(word)
    if unit is None:
        raise ValueError(text)
    return unit


def _number(text: str) -> str:
    text = text.strip().strip("'").strip()
    if not re.fullmatch(r"[+-]?\d+", text):
        raise ValueError(text)
    return text


def _interval(text: str) -> str:
    """``'7 day'`` / ``7 DAY`` / ``'1' hour`` → ``7 days``."""
    parts = text.replace("'", " ").split()
    if parts and parts[0].lower() == "interval":
        parts = parts[1:]
    if len(parts) != 2:
        raise ValueError(text)
    amount = _number(parts[0]).lstrip("+")
    return f"{amount.lstrip('-')} {_unit(parts[1])}"


def _strip_sign(text: str) -> str:
    return _number(text).lstrip("+-")


def _sign(text: str) -> str:
    return "-" if _number(text).startswith("-") else "+"


_MIRRORED = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "=", "!=": "!=", "<>": "<>"}


def _minus_one(text: str) -> str:
    """Anki's 1-based ease as this product's 0-based rating."""
    value = int(_number(text)) - 1
    if not 0 <= value <= 3:
        raise ValueError(text)
    return str(value)


def _flip_direction(text: str) -> str:
    """An ORDER BY direction reversed (none is ASC, so it becomes DESC)."""
    return "ASC" if text.strip().lower() == "desc" else "DESC"


_ANKI_QUEUES = {"0": "'new'", "1": "'learning'", "2": "'review'", "3": "'relearning'"}


def _anki_queue(text: str) -> str:
    """Anki's queue number (0 new, 1 learning, 2 review, 3 day-learning) as the state here."""
    return _ANKI_QUEUES[_number(text)]


def _review_log(text: str) -> str:
    """Passes (as nothing) only for review_events: there the id says nothing about time."""
    if text.strip() != "review_events":
        raise ValueError(text)
    return ""


def _mirror(text: str) -> str:
    """The comparison seen from the other side (``a - b > n`` is ``b < a - n``)."""
    return _MIRRORED[text.strip()]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        raise ValueError(text)
    return text[1:-1]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _list(text: str) -> str:
    """An array written the other dialect's way (``ARRAY['a']``, ``'{a,b}'``, ``'["a"]'``,
    ``'a'``) as this language's ``('a', 'b')``."""
    text = re.sub(r"::\s*\w+\s*(\[\s*\])?$", "", text.strip())
    if text.lower().startswith("array"):
        text = text[5:].strip()
    if text[:1] in "[(" and text[-1:] in "])":
        inner = text[1:-1].strip()
        return f"({inner})"
    if text[:1] == "'":
        inner = _unquote(text).replace("''", "'").strip()
        if inner[:1] in "{[" and inner[-1:] in "}]":
            inner = inner[1:-1]
        items = [i.strip().strip('"').strip("'") for i in inner.split(",") if i.strip()]
        if not items:
            return "()"
        return "(" + ", ".join(_quote(i) for i in items) + ")"
    raise ValueError(text)


def _column(text: str) -> str:
    """A column name (not a literal, not a call); a qualifier (``cards.tags``) is dropped."""
    match = re.fullmatch(r"(?:[A-Za-z_]\w*\s*\.\s*)?([A-Za-z_]\w*)", text.strip())
    if match is None:
        raise ValueError(text)
    return match.group(1).lower()


def _clock(text: str) -> str:
    """Only a reading of the clock passes (the template then writes NOW() itself)."""
    word = re.sub(r"\s|\(\)", "", text.lower())
    if word not in habits.CLOCK_WORDS and word not in ("'now'", "now"):
        raise ValueError(text)
    return "NOW()"


def _day_after(text: str) -> str:
    day = date.fromisoformat(_unquote(text)[:10])
    return _quote((day + timedelta(days=1)).isoformat())


def _day(text: str) -> str:
    return _quote(date.fromisoformat(_unquote(text)[:10]).isoformat())


def _like_text(text: str) -> str:
    """A string literal's content, with LIKE's wildcards escaped away (they cannot be)."""
    inner = _unquote(text)
    if "%" in inner or "_" in inner:
        raise ValueError(text)
    return inner


def _upper(text: str) -> str:
    return text.upper()


def _lower(text: str) -> str:
    return text.lower()


def _modifier(text: str) -> str:
    """SQLite's ``'-7 days'`` modifier as ``- INTERVAL '7 days'``."""
    parts = _unquote(text).split()
    if len(parts) != 2:
        raise ValueError(text)
    sign = "-" if parts[0].startswith("-") else "+"
    return f"{sign} INTERVAL '{_strip_sign(parts[0])} {_unit(parts[1])}'"


def _next_year(text: str) -> str:
    return str(int(_number(text)) + 1)


_REGEX_META = set("[](){}|\\+?*")


def _regex_like(text: str) -> str:
    """A plain regular expression (anchors, ``.`` and ``.*`` at most) as a LIKE pattern."""
    inner = _unquote(text).replace("''", "'")
    if "%" in inner or "_" in inner:
        raise ValueError(text)
    start = "" if inner.startswith("^") else "%"
    end = "" if inner.endswith("$") and not inner.endswith("\\$") else "%"
    inner = inner.removeprefix("^")
    if end == "":
        inner = inner[:-1]
    inner = inner.replace(".*", "%")
    if any(c in _REGEX_META for c in inner.replace("%", "")):
        raise ValueError(text)
    inner = inner.replace(".", "_")
    return _quote(f"{start}{inner}{end}".replace("%%", "%"))


def _unwild(text: str) -> str:
    """A LIKE pattern's literal text (``'%eng%'`` → ``eng``)."""
    inner = _unquote(text).strip("%")
    if not inner or "%" in inner or "_" in inner:
        raise ValueError(text)
    return inner.replace("''", "'")


def _json_word(text: str) -> str:
    """A LIKE pattern searching JSON text for one element (``'%"english"%'``) → ``english``."""
    inner = _unquote(text)
    match = re.fullmatch(r'%"([^"%_]+)"%', inner)
    if match is None:
        raise ValueError(text)
    return match.group(1)


def _empty_list(text: str) -> str:
    """Passes only an empty array written as a string (``'[]'``, ``'{}'``)."""
    if _list(text) != "()":
        raise ValueError(text)
    return "()"


def _glob_like(text: str) -> str:
    inner = _unquote(text)
    if "%" in inner or "_" in inner or "[" in inner:
        raise ValueError(text)
    return _quote(inner.replace("''", "'").replace("*", "%").replace("?", "_"))


def _negated_eq(text: str) -> str:
    """``NOT`` (of NOT LIKE) as the comparison it becomes: ``!=``; nothing as ``=``."""
    return "!=" if text.strip().lower() == "not" else "="


def _col_in(text: str) -> str:
    """The column a one-argument call wraps: ``TRIM(back_text)`` → ``back_text``."""
    match = re.fullmatch(r"\w+\s*\(\s*([A-Za-z_]\w*)\s*\)", text.strip())
    if match is None:
        raise ValueError(text)
    return match.group(1).lower()


def _columns(text: str) -> str:
    """The bare column names among a call's arguments, as a select list."""
    inner = text.strip().removeprefix("(").removesuffix(")")
    parts = re.findall(r"'(?:[^']|'')*'|[^,]+", inner)
    names = [p.strip() for p in parts if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", p)]
    if not names:
        raise ValueError(text)
    return ", ".join(n.lower() for n in names)


def _null_meaning(text: str) -> str:
    """What "no value" is for a column that is never NULL (``reps`` → ``reps = 0``)."""
    meaning = habits.NULL_MEANINGS.get(text.strip().lower())
    if meaning is None:
        raise ValueError(text)
    return meaning


def _empty_value(text: str) -> str:
    """The empty value a never-NULL column takes: ``tags = ()``, ``back_text = ''``."""
    name = text.strip().lower()
    if name in ("tags", "effort_levels"):
        return f"{name} = ()"
    if name in ("back_text", "card_type"):
        return f"{name} = ''"
    raise ValueError(text)


_SECOND_UNITS = ((604800, "week"), (86400, "day"), (3600, "hour"), (60, "minute"))


def _seconds(text: str) -> str:
    """A number of seconds as an interval of the largest exact unit (86400 → ``1 day``)."""
    seconds = int(_number(text))
    for size, unit in _SECOND_UNITS:
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("s" if count != 1 else "")
    raise ValueError(text)


def _plain_like(text: str) -> str:
    """A SIMILAR TO pattern that is a LIKE pattern already (no regular-expression parts)."""
    if any(c in _unquote(text) for c in "|()[]*+?{}"):
        raise ValueError(text)
    return text


def _hex_prefix(text: str) -> str:
    """The start of a uuid (at least 4 hexadecimal digits), for ``card_id LIKE '04da5c72%'``."""
    inner = _unquote(text).lower()
    if not re.fullmatch(r"[0-9a-f]{4}[0-9a-f-]{0,31}", inner):
        raise ValueError(text)
    return inner


def _uuid(text: str) -> str:
    inner = _unquote(text)
    if not re.fullmatch(r"[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}", inner):
        raise ValueError(text)
    return text


def _day_format(text: str) -> str:
    """Passes (as nothing) a date format that names the day (``'%Y-%m-%d'``, ``'YYYY-MM-DD'``):
    only then is DATE(column) the same grouping."""
    inner = _unquote(text)
    if not re.search(r"%d|%j|DD|dd", inner) or re.search(r"%H|HH|hh|%M|MI|%S|SS", inner):
        raise ValueError(text)
    return ""


def _unwhere(text: str) -> str:
    """A ``WHERE c`` fragment as the condition ``c``."""
    condition = re.sub(r"(?i)^\s*where\s+", "", text)
    if condition == text or not condition.strip():
        raise ValueError(text)
    return condition.strip()


def _day_unit(text: str) -> str:
    """Passes (as nothing) date_trunc's 'day' unit: only then is DATE(column) the same value."""
    if _unquote(text).strip().lower() not in ("day", "dd", "d", "days"):
        raise ValueError(text)
    return ""


def _underscores(text: str) -> str:
    count = int(_number(text)) + 1
    if not 0 < count <= 1000:
        raise ValueError(text)
    return "_" * count


def _cast_inner(text: str) -> str:
    match = re.fullmatch(
        r"(.+?)\s+as\s+\w+(\s*\([\d\s,]*\))?", text.strip(), re.IGNORECASE | re.DOTALL
    )
    if match is None:
        raise ValueError(text)
    return match.group(1)


def _search(text: str) -> str:
    """The text searched for, as a string literal for MATCH('...')."""
    match = re.search(r"'((?:[^']|'')*)'", text)
    if match is None:
        raise ValueError(text)
    inner = match.group(1).replace("''", "'").strip().strip("*").lstrip("+")
    inner = re.sub(r"(?i)\s+in\s+(boolean|natural language)\s+mode$", "", inner)
    if not inner or any(c in inner for c in '&|!:<>()+-"'):
        raise ValueError(text)
    return _quote(inner)


def _position_column(text: str) -> str:
    parts = re.split(r"\s+in\s+", text.strip(), flags=re.IGNORECASE)
    if len(parts) != 2:
        raise ValueError(text)
    return _column(parts[1])


def _position_text(text: str) -> str:
    parts = re.split(r"\s+in\s+", text.strip(), flags=re.IGNORECASE)
    if len(parts) != 2:
        raise ValueError(text)
    return _like_text(parts[0])


def _unparen(text: str) -> str:
    return _number(text.strip().removeprefix("(").removesuffix(")"))


def _unquote_any(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return text


def _resource_name(text: str) -> str:
    name = habits.resource_for(_unquote_any(text).lower())
    if name is None:
        raise ValueError(text)
    return name


def _id_of(text: str) -> str:
    resource = get_resource(_resource_name(text))
    if resource is None:
        raise ValueError(text)
    return resource.id_column


FILTERS: dict[str, Callable[[str], str]] = {
    # The one registry of template filters: {2[0]:unit} calls FILTERS['unit'].
    "unit": _unit,
    "number": _number,
    "interval": _interval,
    "abs": _strip_sign,
    "sign": _sign,
    "unquote": _unquote,
    "quote": _quote,
    "list": _list,
    "column": _column,
    "clock": _clock,
    "day_after": _day_after,
    "day": _day,
    "like": _like_text,
    "upper": _upper,
    "lower": _lower,
    "mirror": _mirror,
    "anki_queue": _anki_queue,
    "review_log": _review_log,
    "flip_direction": _flip_direction,
    "minus_one": _minus_one,
    "day_unit": _day_unit,
    "unwhere": _unwhere,
    "day_format": _day_format,
    "hex_prefix": _hex_prefix,
    "uuid": _uuid,
    "seconds": _seconds,
    "plain_like": _plain_like,
    "json_word": _json_word,
    "null_meaning": _null_meaning,
    "empty_value": _empty_value,
    "glob_like": _glob_like,
    "negated_eq": _negated_eq,
    "col_in": _col_in,
    "columns": _columns,
    "empty_list": _empty_list,
    "modifier": _modifier,
    "next_year": _next_year,
    "regex_like": _regex_like,
    "unwild": _unwild,
    "underscores": _underscores,
    "cast_inner": _cast_inner,
    "search": _search,
    "position_column": _position_column,
    "position_text": _position_text,
    "unparen": _unparen,
    "unquote_any": _unquote_any,
    "resource_name": _resource_name,
    "id_of": _id_of,
}
