"""Text → plan, with no database: lexer, parser, syntax tree, syntax errors, literals, the plan
and the validator that checks a parsed statement against the published schema (dsl.md §3-§7)."""
