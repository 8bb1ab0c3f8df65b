"""``POST /v1/workspaces/{workspace_id}/imports`` (a multipart file upload: Anki packages, CSV,
TSV) and ``GET /v1/workspaces/{workspace_id}/exports/{cards,review_events}.{csv,tsv}`` (streamed).
Auth and membership as the sync routes; thin views over ``flashcards.interchange.run``."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from flashcards.api import schemas
from flashcards.api.bodies import invalid
from flashcards.http.envelope import ApiError, success
from flashcards.http.negotiation import EnvelopeContentNegotiation
from flashcards.http.workspace import request_workspace
from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.run import (
    EXPORT_FORMATS,
    EXPORTS,
    FORMATS,
    export_package,
    export_text,
    import_file,
    parse_field_mapping,
    parse_flag,
)

EXPORT_MEDIA_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
}
APKG_MEDIA_TYPE = "application/apkg"
EXPORT_ACCEPTS = (
    "text/csv",
    "text/tab-separated-values",
    "text/plain",
    "text/*",
    APKG_MEDIA_TYPE,
    "application/octet-stream",
    "application/zip",
)
# Lines per chunk of a streamed export.
STREAM_LINES = 500


def rejected(exc: ImportRejected) -> ApiError:
    return ApiError(
        "REQUEST_INVALID",
        exc.message,
        details=exc.details(),
        instructions=(
            "Nothing was imported. Fix the file as error.message and error.details.problems say "
            "(each names the file and the line or note), or preview with dry_run=true, then "
            "upload it again."
        ),
    )


def import_instructions(report: dict[str, Any]) -> str:
    cards = report["cards"]
    counts = ", ".join(f"{cards[k]} {k}" for k in ("created", "updated", "unchanged", "skipped"))
    events = report["reviewEvents"]["created"]
    if report["dryRun"]:
        if cards["rejected"]:
            return (
                f"Dry run, nothing written: {cards['rejected']} rejected line(s) or note(s) are "
                "listed in data.problems; fix them before importing. The rest would be: "
                f"{counts}, {events} review events."
            )
        return (
            f"Dry run, nothing written: the import would give {counts}, {events} review events. "
            "Upload again with dry_run=false to import."
        )
    return (
        f"Imported: {counts}, {events} review events. Query them with SELECT * FROM cards; "
        "syncing clients receive them on their next pull."
    )


_COUNT = schemas.INTEGER
IMPORT_REPORT = schemas.obj(
    {
        "file": schemas.STRING,
        "format": {"type": "string", "enum": ["apkg", "colpkg", "csv", "tsv"]},
        "dryRun": schemas.BOOLEAN,
        "written": schemas.BOOLEAN,
        "cards": schemas.obj(
            {name: _COUNT for name in ("created", "updated", "unchanged", "skipped", "rejected")}
        ),
        "reviewEvents": schemas.obj({"created": _COUNT, "alreadyPresent": _COUNT}),
        "schedulesRebuilt": _COUNT,
        "changes": _COUNT,
        "problems": {"type": "array", "items": {"type": "object"}},
        "items": {"type": "array", "items": {"type": "object"}},
        "itemsOmitted": _COUNT,
        "anki": {"type": "object"},
        "media": {"type": "object"},
        "csv": {"type": "object"},
    },
    required=("file", "format", "dryRun", "written", "cards", "reviewEvents", "problems"),
)


class ImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="The .apkg, .colpkg, .csv or .tsv file (at most 50 MiB)."
    )
    format = serializers.ChoiceField(
        choices=FORMATS, required=False, help_text="Default: from the file name's extension."
    )
    dry_run = serializers.BooleanField(
        required=False, help_text="Preview: report what would happen, write nothing."
    )
    raw = serializers.BooleanField(
        required=False,
        help_text="CSV/TSV: read cells as written; by default a cell an export escaped as a "
        "formula ('=…) is read back without its quote.",
    )
    field_mapping = serializers.CharField(
        required=False,
        help_text='Anki only, JSON: {"note type": ["front field", "back field"]}; default: '
        "each note type's first two fields.",
    )


class ImportView(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="workspace_import",
        summary="Import an Anki package (.apkg, .colpkg) or a CSV/TSV file of cards.",
        description=(
            "Multipart upload; the file in the field `file`. All or nothing: a file with any "
            "rejected line or note imports nothing (400, the problems in error.details). "
            "`dry_run=true` returns the same report without writing. Re-importing the same Anki "
            "package creates nothing twice. See docs/import-export.md."
        ),
        request={"multipart/form-data": ImportRequestSerializer},
        responses={
            200: schemas.envelope(
                "The import report (anki, media and csv keys by format; docs/import-export.md).",
                IMPORT_REPORT,
            ),
        },
    )
    def post(self, request: Request, workspace_id: str) -> Response:
        workspace = request_workspace(request, workspace_id)
        try:
            upload = request.FILES.get("file")
            data = request.data
        except UnsupportedMediaType as exc:
            raise invalid(
                "Send the file as multipart/form-data in the field 'file' "
                "(curl -F file=@deck.apkg).",
                "file",
            ) from exc
        if upload is None:
            raise invalid("file is required: the .apkg, .colpkg, .csv or .tsv file.", "file")
        try:
            report = import_file(
                workspace,
                upload.file,
                upload.name or "upload",
                format=data.get("format") or None,
                dry_run=parse_flag(data.get("dry_run")),
                field_mapping=parse_field_mapping(data.get("field_mapping")),
                surface="rest",
                raw=parse_flag(data.get("raw"), "raw"),
            )
        except ImportRejected as exc:
            raise rejected(exc) from exc
        return success(request, report, import_instructions(report))


class _ExportNegotiation(EnvelopeContentNegotiation):
    """The export's success is a CSV/TSV stream, and only its errors are rendered (as JSON
    envelopes): an Accept naming CSV, TSV or any text is therefore satisfied, while an unknown
    ``?format=`` or an Accept nothing here can answer fails as on every other route."""

    def select_renderer(self, request: Any, renderers: Any, format_suffix: Any = None):
        accept = request.headers.get("Accept", "")
        if not request.query_params.get(self.settings.URL_FORMAT_OVERRIDE) and any(
            media in accept for media in EXPORT_ACCEPTS
        ):
            return JSONRenderer(), JSONRenderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


def _chunks(lines: Iterator[str]) -> Iterator[str]:
    while block := "".join(islice(lines, STREAM_LINES)):
        yield block


class ExportView(APIView):
    content_negotiation_class = _ExportNegotiation
    renderer_classes = [JSONRenderer]

    @extend_schema(
        operation_id="workspace_export",
        summary="Export the workspace's cards or review events as CSV or TSV (streamed).",
        description=(
            "Columns and value formats of the dialect's SELECT * (dsl.md §2.4, §5); tags as "
            "a;b (a JSON list when a tag holds ';'). Cards oldest first, review events in review "
            "order. An exported cards file can be edited and imported back. "
            "cards.apkg (not listed in the enums: an Anki package, application/apkg) writes the "
            "workspace for Anki: cards, tag-derived decks, tags, review history, FSRS state."
        ),
        parameters=[
            OpenApiParameter(
                "raw",
                bool,
                OpenApiParameter.QUERY,
                description="Write cells starting with = + - @ tab or CR unchanged (default: "
                "prefixed with ', OWASP's CSV-injection rule).",
            ),
            OpenApiParameter("what", str, OpenApiParameter.PATH, enum=list(EXPORTS)),
            OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(EXPORT_FORMATS)),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV or TSV text."),
        },
    )
    def get(self, request: Request, workspace_id: str, what: str, fmt: str) -> Any:
        if what == "cards" and fmt == "apkg":
            workspace = request_workspace(request, workspace_id)
            response = StreamingHttpResponse(
                export_package(workspace),
                content_type=APKG_MEDIA_TYPE,
                status=status.HTTP_200_OK,
            )
            response["Content-Disposition"] = 'attachment; filename="cards.apkg"'
            return response
        if what not in EXPORTS or fmt not in EXPORT_FORMATS:
            names = [f"{w}.{f}" for w in EXPORTS for f in EXPORT_FORMATS] + ["cards.apkg"]
            raise ApiError(
                "NOT_FOUND",
                f"No export {what}.{fmt}; the exports are {', '.join(names)}.",
                status_code=status.HTTP_404_NOT_FOUND,
                details={"reason": "unknown_export", "exports": names},
            )
        workspace = request_workspace(request, workspace_id)
        try:
            raw = parse_flag(request.query_params.get("raw"), "raw")
        except ImportRejected as exc:
            raise invalid(exc.message, "raw") from exc
        # The served app runs Django as WSGI (config.asgi), whose server iterates this on the
        # request's own thread, so the rows are read from the database as they are sent.
        response = StreamingHttpResponse(
            _chunks(export_text(workspace, what, fmt, raw)),
            content_type=EXPORT_MEDIA_TYPES[fmt],
            status=status.HTTP_200_OK,
        )
        response["Content-Disposition"] = f'attachment; filename="{what}.{fmt}"'
        return response
