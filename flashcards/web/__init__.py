"""Human-facing pages of the flashcards app: the landing page and the API-key page."""
