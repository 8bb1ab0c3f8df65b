"""The query console for signed-in humans: the page, its view model, statement edits and imports."""
