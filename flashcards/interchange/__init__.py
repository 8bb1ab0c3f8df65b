"""Files in and out of a workspace: Anki packages and CSV/TSV imported as cards and review
history, cards and review events exported as CSV/TSV. Readers here parse and check files;
``flashcards.services.imports`` writes. Every surface (REST, MCP, console, admin, the
``import_cards`` command) calls ``import_file`` and ``export_text`` from ``run``."""
