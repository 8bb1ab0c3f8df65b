"""The agent SQL dialect: lexer → parser → ast → validator (against the resource registry) → compiler → executor."""
