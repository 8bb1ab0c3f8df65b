"""The query log in the admin: searchable and filterable, read-only for everyone (superusers
included) because it is an audit trail."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from dsl.models import QueryLog

try:
    import sqlparse
except ImportError:  # pragma: no cover - sqlparse ships with Django, but stays optional
    sqlparse = None  # type: ignore[assignment]

STATEMENT_TYPES = ("select", "show_tables", "describe", "insert", "update", "delete")


def format_sql(sql: str) -> str:
    if sqlparse is None:
        return sql
    return sqlparse.format(sql, reindent=True, keyword_case="upper")


class StatementTypeFilter(admin.SimpleListFilter):
    title = "statement type"
    parameter_name = "statement_type"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(kind, kind) for kind in STATEMENT_TYPES]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value not in STATEMENT_TYPES:
            return queryset
        # statement_types is a comma-separated list; match whole items only ("select" must not
        # match a hypothetical "selectx").
        return queryset.filter(statement_types__regex=rf"(^|,){value}(,|$)")


@admin.register(QueryLog)
class QueryLogAdmin(admin.ModelAdmin):
    date_hierarchy = "created_at"
    list_display = (
        "created_at",
        "outcome",
        "reason",
        "statement_types",
        "resources",
        "surface",
        "workspace",
        "api_key",
        "rows_returned",
        "rows_affected",
        "duration_ms",
        "short_sql",
    )
    list_filter = (
        "outcome",
        "reason",
        StatementTypeFilter,
        "surface",
        "dry_run",
        ("workspace", admin.RelatedOnlyFieldListFilter),
        ("api_key", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("sql", "request_id")
    list_select_related = ("workspace", "api_key")
    fields = (
        "created_at",
        "request_id",
        "surface",
        "user",
        "api_key",
        "workspace",
        "outcome",
        "reason",
        "error_message",
        "status_code",
        "formatted_sql",
        "statement_types",
        "resources",
        "rows_returned",
        "rows_affected",
        "duration_ms",
        "result_size",
        "dry_run",
    )
    readonly_fields = fields

    @admin.display(description="SQL")
    def short_sql(self, obj: QueryLog) -> str:
        return obj.sql if len(obj.sql) <= 80 else obj.sql[:79] + "…"

    @admin.display(description="SQL (formatted)")
    def formatted_sql(self, obj: QueryLog) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", format_sql(obj.sql))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: QueryLog | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: QueryLog | None = None) -> bool:
        return False
