"""The read path's two per-process caches: prepared statements (parsed and validated plans per
SQL text and limits, an LRU of 512) and ready SELECTs (per plan and workspace, an LRU of 256:
the SQL Django generated once, run again with each request's own LIMIT / OFFSET and moment).
The workspace id is part of a ready SELECT's key and of its parameters, so one workspace's entry
can never serve another (tests/dsl/test_compiled_cache.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from dsl.language import ast
from dsl.language import plan as p
from dsl.language.parser import Limits
from dsl.runtime import backends, compiler, prepared_reads, ready_sql, rows
from dsl.runtime import clock as statement_clock
from dsl.schema import DATETIME, UUID
from flashcards.models import Workspace

# Parsed and validated statements are immutable and depend only on the text and the limits, so
# repeated requests (an agent paging, a dashboard polling) skip the parser. Long texts are not
# kept, to bound the memory this can take.
PREPARED_CACHE_SIZE = 512
CACHEABLE_SQL_CHARS = 4096
READY_CACHE_SIZE = 256


class PreparedCache:
    """A small thread-safe LRU of (sql, limits) → (batch, plans) for statements that validated."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, Limits], tuple[ast.Batch, tuple[p.Plan, ...]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: tuple[str, Limits]) -> tuple[ast.Batch, tuple[p.Plan, ...]] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, Limits], value: tuple[ast.Batch, tuple[p.Plan, ...]]) -> None:
        if len(key[0]) > CACHEABLE_SQL_CHARS:
            return
        with self._lock:
            self._items[key] = value
            if len(self._items) > self._size:
                self._items.popitem(last=False)


prepared = PreparedCache(PREPARED_CACHE_SIZE)

_ready: OrderedDict[tuple[int, object, object, str], ReadySelect] = OrderedDict()
_ready_lock = threading.Lock()


@dataclass(frozen=True)
class ReadySelect:
    """A SELECT compiled once down to SQL. Django builds the queryset (``dsl.runtime.compiler``) and
    generates its SQL; this keeps that SQL, its parameters with NOW() as late-bound markers, and
    Django's converters of the selected columns, so a repeated read skips queryset construction
    and SQL generation — which cost more than the statement itself on a 20-row page
    (docs/benchmarks.md)."""

    plan: p.SelectPlan
    columns: tuple[compiler.OutputColumn, ...]
    sql: str | None  # None: the WHERE can match nothing (Django's EmptyResultSet)
    params: tuple[Any, ...]
    clock_positions: tuple[int, ...]
    width: int | None  # trim rows to this many columns (Django's extra ordering columns)
    converters: tuple[tuple[int, tuple[Any, ...], Any], ...]
    format_row: Callable[[tuple[Any, ...]], dict[str, Any]]
    stamps_as_text: bool  # uuid / timestamptz fetched as PostgreSQL's text
    # PostgreSQL: the SQL with its parameters written in, split at the clock markers
    # (ready_sql.inline_literals); None runs ``sql`` with ``params``.
    literal_pieces: tuple[str, ...] | None = None
    # Runs per page (offset, count) in this process; a page run often enough is prepared on the
    # connection (dsl.runtime.prepared_reads). The plan fixes its LIMIT and OFFSET, so this holds a page
    # or two. Counted without a lock: a lost increment only delays preparing.
    runs: dict[tuple[int, int], int] = field(default_factory=dict, compare=False, repr=False)
    prepared_id: int = field(default_factory=prepared_reads.new_id, compare=False)

    @classmethod
    def build(cls, plan: p.SelectPlan, workspace: Workspace) -> ReadySelect:
        compiled = compiler.compile_select(plan, workspace, now=None)
        generated = ready_sql.generate(compiled.queryset)
        if generated is None:
            format_row = rows.row_formatter(compiled.columns)
            return cls(plan, compiled.columns, None, (), (), None, (), format_row, False)
        converters = generated.converters
        # PostgreSQL's text for uuid / timestamptz, unless Django converts such a column itself.
        stamps_as_text = backends.is_postgresql() and not any(
            column.type in (UUID, DATETIME) and index in converters
            for index, column in enumerate(compiled.columns)
        )
        overrides: dict[int, Callable[[Any], Any]] = {}
        if connection.vendor == "sqlite":
            converters, overrides = ready_sql.sqlite_shortcuts(converters)
            overrides = {i: f for i, f in overrides.items() if i < len(compiled.columns)}
        format_row = rows.row_formatter(
            compiled.columns, stamps_as_text=stamps_as_text, overrides=overrides
        )
        params = generated.params
        clock_positions = tuple(
            i for i, param in enumerate(params) if isinstance(param, statement_clock.ClockParam)
        )
        return cls(
            plan,
            compiled.columns,
            generated.sql,
            params,
            clock_positions,
            generated.width,
            tuple((pos, tuple(convs), expr) for pos, (convs, expr) in converters.items()),
            format_row,
            stamps_as_text,
            ready_sql.inline_literals(generated.sql, params, clock_positions),
        )

    def fetch(
        self,
        moment: datetime,
        offset: int,
        count: int,
        *,
        timeout_ms: int | None,
        db: Any = connection,
    ) -> list[tuple[Any, ...]]:
        """``count`` rows from ``offset``, as Django would return them from values_list()."""
        if self.sql is None:
            return []
        pieces = self.literal_pieces
        if pieces is not None and timeout_ms is not None and prepared_reads.enabled():
            page = (offset, count)
            runs = self.runs.get(page, 0) + 1
            self.runs[page] = runs
            if runs > prepared_reads.PREPARE_AFTER:
                fetched = self._fetch_prepared(page, moment, timeout_ms, db)
                if fetched is not None:
                    return ready_sql.converted(fetched, self.width, self.converters, db)
        params: tuple[Any, ...] | None
        if pieces is not None:
            text = pieces[0]
            for literal, piece in zip(self._clock_literals(moment, db), pieces[1:], strict=True):
                text += literal + piece
            params = None
        else:
            text, params = self.sql, self.params
            if self.clock_positions:
                params = tuple(statement_clock.bind_clock(params, self.clock_positions, moment, db))
        fetched = ready_sql.fetch_rows(
            ready_sql.paged(text, offset, count, db),
            params,
            timeout_ms=timeout_ms,
            stamps_as_text=self.stamps_as_text,
            db=db,
        )
        return ready_sql.converted(fetched, self.width, self.converters, db)

    def _clock_literals(self, moment: datetime, db: Any) -> list[str]:
        """The request's moment at each clock marker, as timestamptz literals."""
        return [
            ready_sql.clock_literal(self.params[position].bind(moment, db))
            for position in self.clock_positions
        ]

    def _fetch_prepared(
        self, page: tuple[int, int], moment: datetime, timeout_ms: int, db: Any
    ) -> list[tuple[Any, ...]] | None:
        """The page through its prepared statement: the inline text with ``$1``… where the clock
        goes, the bound moments as timestamptz literals."""
        pieces = self.literal_pieces
        assert pieces is not None
        text = pieces[0]
        for number, piece in enumerate(pieces[1:], start=1):
            text += f"${number}" + piece
        offset, count = page
        return prepared_reads.fetch(
            f"dsl_read_{self.prepared_id}_{offset}_{count}",
            ready_sql.paged(text, offset, count, db),
            self._clock_literals(moment, db),
            timeout_ms=timeout_ms,
            stamps_as_text=self.stamps_as_text,
            db=db,
        )


def ready_select(plan: p.SelectPlan, workspace: Workspace, db: Any = connection) -> ReadySelect:
    """The ReadySelect of a plan in a workspace, reused across requests. Plans come from the
    prepared-statement cache, so the same SQL yields the same plan object; the workspace id is
    part of the key because it is a parameter of the scope filter every query starts from."""
    key = (id(plan), workspace.pk, workspace.learning_day, db.vendor)
    with _ready_lock:
        found = _ready.get(key)
        if found is not None and found.plan is plan:
            _ready.move_to_end(key)
            return found
    ready = ReadySelect.build(plan, workspace)
    with _ready_lock:
        _ready[key] = ready
        if len(_ready) > READY_CACHE_SIZE:
            _ready.popitem(last=False)
    return ready
