"""The LALR grammar must build cleanly: no shift/reduce or reduce/reduce conflict (PLY would
silently pick a side), no unused token or rule, and no table files written anywhere.

PLY only counts conflicts when built in debug mode, so these builds pass a capturing debug log
(which also keeps PLY from writing parser.out)."""

from __future__ import annotations

from pathlib import Path

from ply import yacc

import dsl
from dsl.language.parser import build_parser


class CapturingLog:
    """A PLY logger that keeps every warning and error instead of printing it."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def _keep(self, message: str, *args: object, **kwargs: object) -> None:
        self.messages.append(message % args if args else message)

    warning = error = critical = _keep

    def info(self, message: str, *args: object, **kwargs: object) -> None:
        pass

    debug = info


def test_grammar_builds_without_conflicts_or_warnings() -> None:
    log, report = CapturingLog(), CapturingLog()
    build_parser(log, report)
    conflicts = [m for m in log.messages + report.messages if "conflict" in m]
    assert conflicts == []
    assert log.messages == []


def test_the_capturing_log_would_see_a_conflict() -> None:
    class Ambiguous:
        tokens = ("NUM", "PLUS")

        def p_expr(self, p: yacc.YaccProduction) -> None:
            """expr : expr PLUS expr
            | NUM"""

        def p_error(self, tok: object) -> None:
            raise AssertionError(tok)

    log = CapturingLog()
    yacc.yacc(
        module=Ambiguous(), debug=True, debuglog=CapturingLog(), write_tables=False, errorlog=log
    )
    assert any("shift/reduce conflict" in m for m in log.messages)


def test_no_generated_tables_are_written() -> None:
    build_parser(CapturingLog(), CapturingLog())
    package = Path(dsl.__file__).parent
    for name in ("parsetab.py", "parser.out", "lextab.py"):
        assert not (package / name).exists()
        assert not (Path.cwd() / name).exists()
