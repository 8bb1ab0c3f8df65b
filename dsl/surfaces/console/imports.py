"""GET/POST /console/import: the console's page for files — upload an Anki package or CSV/TSV
into a workspace (preview first or import), and download the workspace's cards and review
events as CSV/TSV. A plain multipart form; the import runs through
``flashcards.interchange.run.import_file`` like the REST route, and its report is shown here."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from dsl.surfaces.console.views import _default_workspace_id, _workspaces
from flashcards.interchange.delimited import KNOWN
from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.run import FORMATS, import_file, parse_field_mapping
from flashcards.services import NotFoundError, get_member_workspace

EXPORT_FILES = (
    "cards.csv",
    "cards.tsv",
    "cards.apkg",
    "review_events.csv",
    "review_events.tsv",
)


def export_links(workspace_id: str) -> list[tuple[str, str]]:
    return [
        (
            name,
            reverse(
                "exports",
                kwargs={
                    "workspace_id": workspace_id,
                    "what": name.split(".")[0],
                    "fmt": name.split(".")[1],
                },
            ),
        )
        for name in EXPORT_FILES
    ]


def _import(request: HttpRequest, workspace_id: str) -> dict[str, Any]:
    upload = request.FILES.get("file")
    dry_run = request.POST.get("dry_run") in ("on", "1", "true")
    if upload is None:
        return {"error": {"message": "Choose a file to import.", "problems": []}}
    try:
        workspace = get_member_workspace(request.user, workspace_id)
    except NotFoundError:
        return {
            "error": {
                "message": "Workspace not found (or you are not a member of it).",
                "problems": [],
            }
        }
    try:
        report = import_file(
            workspace,
            upload.file,
            upload.name or "upload",
            format=request.POST.get("format") or None,
            dry_run=dry_run,
            field_mapping=parse_field_mapping(request.POST.get("field_mapping")),
            surface="console",
        )
    except ImportRejected as exc:
        return {
            "error": {"message": exc.message, "problems": exc.problems[:100]},
            "dry_run": dry_run,
        }
    return {"report": report, "dry_run": dry_run}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def console_import(request: HttpRequest) -> HttpResponse:
    workspaces = _workspaces(request.user)
    source = request.POST if request.method == "POST" else request.GET
    workspace_id = source.get("workspace_id") or ""
    if workspace_id not in {str(ws.pk) for ws in workspaces}:
        workspace_id = _default_workspace_id(request, workspaces)
    context: dict[str, Any] = {
        "workspaces": workspaces,
        "workspace_id": workspace_id,
        "formats": FORMATS,
        "header_columns": KNOWN,
        "exports": export_links(workspace_id),
    }
    status = 200
    if request.method == "POST":
        context.update(_import(request, workspace_id))
        status = 400 if "error" in context else 200
    response = render(request, "dsl/console_import.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response
