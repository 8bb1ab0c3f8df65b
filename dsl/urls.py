"""Routes of the SQL endpoint."""

urlpatterns: list = []
