"""The Django admin of the flashcards app. Admin autodiscovery imports this package; the
registrations live in ``site``."""

from flashcards.admin import site as site
