"""The agent SQL dialect, one package per stage: language (text → plan), teaching (a failed
statement → an error that teaches), runtime (plan → rows) and surfaces (REST, MCP, console)."""
