"""Routes of the SQL endpoint, the grammar page and the query console."""

from django.urls import path

from dsl.surfaces.console.imports import console_import
from dsl.surfaces.console.views import console
from dsl.surfaces.grammar import grammar
from dsl.surfaces.rest import SqlExecuteView, SqlQueryView, SqlView

urlpatterns: list = [
    path("v1/agent/grammar", grammar, name="grammar"),
    path("v1/agent/sql", SqlView.as_view(), name="agent-sql"),
    path("v1/agent/sql/query", SqlQueryView.as_view(), name="agent-sql-query"),
    path("v1/agent/sql/execute", SqlExecuteView.as_view(), name="agent-sql-execute"),
    path("console/", console, name="console"),
    path("console/import", console_import, name="console-import"),
]
