"""The workspace admin's file views: import an Anki package or CSV/TSV into a workspace (preview
first) and download its cards and review events as CSV/TSV. Staff with the change permission on
workspaces use them whether or not they are members; the import runs through
``flashcards.interchange.run.import_file`` like every other surface."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.run import (
    FORMATS,
    export_package,
    export_text,
    import_file,
    parse_field_mapping,
)
from flashcards.models import Workspace

EXPORT_FILES = (
    "cards.csv",
    "cards.tsv",
    "cards.apkg",
    "review_events.csv",
    "review_events.tsv",
)
MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "apkg": "application/apkg",
}


class ImportForm(forms.Form):
    file = forms.FileField(help_text=".apkg, .colpkg, .csv or .tsv, at most 50 MiB.")
    format = forms.ChoiceField(
        choices=[("", "from the file name"), *((f, f) for f in FORMATS)], required=False
    )
    field_mapping = forms.CharField(
        required=False, help_text='Anki only: {"note type": ["front field", "back field"]}'
    )
    dry_run = forms.BooleanField(required=False, initial=True, label="Preview only")


class WorkspaceFilesAdminMixin:
    change_form_template = "admin/flashcards/workspace/change_form.html"

    def get_urls(self) -> list[URLPattern]:
        admin_view = self.admin_site.admin_view  # type: ignore[attr-defined]
        return [
            path(
                "<uuid:object_id>/import/",
                admin_view(self.import_view),
                name="flashcards_workspace_import",
            ),
            path(
                "<uuid:object_id>/export/<str:filename>",
                admin_view(self.export_view),
                name="flashcards_workspace_export",
            ),
            *super().get_urls(),  # type: ignore[misc]
        ]

    def _workspace(self, request: HttpRequest, object_id: object) -> Workspace:
        workspace = Workspace.objects.filter(pk=object_id, deleted_at__isnull=True).first()
        if workspace is None:
            raise Http404("No such workspace.")
        if not self.has_change_permission(request, workspace):  # type: ignore[attr-defined]
            raise PermissionDenied
        return workspace

    def import_view(self, request: HttpRequest, object_id: object) -> HttpResponse:
        workspace = self._workspace(request, object_id)
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": f"Import cards into {workspace.name}",
            "workspace": workspace,
            "opts": Workspace._meta,
            "exports": EXPORT_FILES,
        }
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                context["report"] = import_file(
                    workspace,
                    upload.file,
                    upload.name or "upload",
                    format=form.cleaned_data["format"] or None,
                    dry_run=form.cleaned_data["dry_run"],
                    field_mapping=parse_field_mapping(form.cleaned_data["field_mapping"]),
                    surface="admin",
                )
            except ImportRejected as exc:
                context["error"] = {"message": exc.message, "problems": exc.problems[:100]}
        context["form"] = form
        return TemplateResponse(request, "admin/flashcards/workspace/import.html", context)

    def export_view(self, request: HttpRequest, object_id: object, filename: str) -> HttpResponse:
        workspace = self._workspace(request, object_id)
        if filename not in EXPORT_FILES:
            raise Http404("No such export.")
        what, fmt = filename.split(".")
        content = export_package(workspace) if fmt == "apkg" else export_text(workspace, what, fmt)
        response = StreamingHttpResponse(content, content_type=MEDIA_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
