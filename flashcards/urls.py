"""Routes of the flashcards app (commands, discovery, sync). The dialect's routes live in dsl.urls."""

urlpatterns: list = []
