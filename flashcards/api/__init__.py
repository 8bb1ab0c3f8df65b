"""flashcards' own REST surface: the commands, sync, imports, account and discovery routes."""
