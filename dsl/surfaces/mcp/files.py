"""The MCP tools for files: ``import_cards`` (a CSV/TSV text, or any supported file's bytes as
base64) and ``export_cards`` (one page of the CSV/TSV export, or the whole .apkg). Thin adapters over
``flashcards.interchange.run``, answering with the same report and envelope as the REST route;
``dsl.surfaces.mcp.server`` registers them with its own tool runner. An MCP request is capped at 256 KiB like
every other API body, so larger files go through the REST upload (50 MiB)."""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from django.core.handlers.asgi import ASGIRequest
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from flashcards.api.bodies import invalid
from flashcards.api.imports import import_instructions, rejected
from flashcards.http.envelope import success_body
from flashcards.http.workspace import request_workspace
from flashcards.interchange.errors import ImportRejected
from flashcards.interchange.limits import import_limits
from flashcards.interchange.run import (
    FORMATS,
    MAX_EXPORT_OFFSET,
    export_package,
    export_page,
    import_file,
)

Work = Callable[[ASGIRequest], dict[str, Any]]
RunTool = Callable[[Context, Work], Awaitable[CallToolResult]]
WorkspaceArg = Annotated[
    str | None,
    Field(description="Optional workspace_id to act on instead of the key's selected workspace."),
]

IMPORT_DESCRIPTION = (
    "Import cards into the workspace from a file: CSV/TSV as text (header row naming "
    "front_text, back_text, tags as 'a;b' or a JSON list, effort_level, card_type, optional "
    "card_id to update), or an Anki package (.apkg/.colpkg) as base64 bytes with "
    "encoding='base64'. All or nothing (an Anki note over a limit is skipped and listed in "
    "skippedRows); dry_run=true previews line by line (created, updated, unchanged, skipped, "
    "rejected) without writing. Anki review history becomes review events; a card with Anki's "
    "FSRS memory state keeps Anki's stability, difficulty and due, others are replayed; "
    "re-importing a package creates nothing twice and keeps edits made here. The "
    "whole call is limited to 256 KiB. Returns data with counts, problems and items."
)
EXPORT_DESCRIPTION = (
    "One page of the workspace's cards (or review_events) as CSV or TSV text, header included, "
    "in the columns of SELECT * (tags as 'a;b'). Page with offset while data.hasMore; edit and "
    "send back to import_cards to update cards by card_id. format='apkg' (resource cards) returns "
    "the whole workspace as an Anki package, base64 in data.content (up to 8 MiB; larger ones "
    "from GET /v1/workspaces/{id}/exports/cards.apkg), which Anki imports with review history, "
    "FSRS memory state and due dates."
)
# An .apkg answered inside one MCP result (base64): larger packages go through REST.
MAX_MCP_PACKAGE_BYTES = 8 * 1024 * 1024


def import_work(
    content: str,
    filename: str,
    encoding: str,
    format: str | None,
    dry_run: bool,
    field_mapping: dict[str, list[str]] | None,
    workspace_id: str | None,
) -> Work:
    def work(request: ASGIRequest) -> dict[str, Any]:
        workspace = request_workspace(request, workspace_id)
        if encoding == "base64":
            try:
                data = base64.b64decode(content, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise invalid(f"content is not valid base64 ({exc}).", "content") from exc
        else:
            data = content.encode("utf-8", errors="surrogatepass")
        try:
            report = import_file(
                workspace,
                io.BytesIO(data),
                filename,
                format=format,
                dry_run=dry_run,
                field_mapping=field_mapping,
                surface="mcp",
            )
        except ImportRejected as exc:
            raise rejected(exc) from exc
        return success_body(request, report, import_instructions(report))

    return work


def export_work(
    resource: str,
    format: str,
    offset: int,
    limit: int,
    workspace_id: str | None,
    raw: bool = False,
) -> Work:
    def work(request: ASGIRequest) -> dict[str, Any]:
        workspace = request_workspace(request, workspace_id)
        if format == "apkg":
            return _package(request, workspace, resource)
        maximum = import_limits().max_export_page
        if not 1 <= limit <= maximum:
            raise invalid(f"limit must be 1..{maximum}; got {limit}.", "limit")
        if not 0 <= offset <= MAX_EXPORT_OFFSET:
            raise invalid(f"offset must be 0..{MAX_EXPORT_OFFSET}; got {offset}.", "offset")
        text, rows, has_more = export_page(workspace, resource, format, offset, limit, raw)
        data = {
            "resource": resource,
            "format": format,
            "text": text,
            "rowCount": rows,
            "offset": offset,
            "limit": limit,
            "hasMore": has_more,
        }
        instructions = (
            f"More rows exist: call export_cards again with offset={offset + rows}."
            if has_more
            else "That is the last page."
        )
        return success_body(request, data, instructions)

    return work


def _package(request: ASGIRequest, workspace: Any, resource: str) -> dict[str, Any]:
    if resource != "cards":
        raise invalid("format 'apkg' exports resource 'cards' (with their reviews).", "format")
    data = bytearray()
    for block in export_package(workspace):
        data += block
        if len(data) > MAX_MCP_PACKAGE_BYTES:
            raise invalid(
                f"the package is over {MAX_MCP_PACKAGE_BYTES} bytes; download it from "
                f"GET /v1/workspaces/{workspace.pk}/exports/cards.apkg instead.",
                "format",
            )
    body = {
        "resource": "cards",
        "format": "apkg",
        "filename": "cards.apkg",
        "encoding": "base64",
        "content": base64.b64encode(bytes(data)).decode("ascii"),
        "bytes": len(data),
    }
    return success_body(
        request, body, "Decode data.content (base64) to cards.apkg and open it in Anki."
    )


def register_import_tools(server: MCPServer, run_tool: RunTool) -> None:
    async def import_cards(
        ctx: Context,
        content: Annotated[str, Field(description="CSV/TSV text, or base64 bytes of a file.")],
        filename: Annotated[
            str, Field(description="The file's name; its extension gives the format.")
        ] = "cards.csv",
        encoding: Annotated[
            Literal["text", "base64"], Field(description="'base64' for binary files.")
        ] = "text",
        format: Annotated[
            Literal["apkg", "colpkg", "csv", "tsv"] | None,
            Field(description=f"One of {', '.join(FORMATS)}; default from filename."),
        ] = None,
        dry_run: Annotated[bool, Field(description="Preview only; write nothing.")] = False,
        field_mapping: Annotated[
            dict[str, list[str]] | None,
            Field(description='Anki: {"note type": ["front field", "back field"]}.'),
        ] = None,
        workspace_id: WorkspaceArg = None,
    ) -> CallToolResult:
        return await run_tool(
            ctx,
            import_work(content, filename, encoding, format, dry_run, field_mapping, workspace_id),
        )

    async def export_cards(
        ctx: Context,
        resource: Annotated[
            Literal["cards", "review_events"], Field(description="What to export.")
        ] = "cards",
        format: Annotated[
            Literal["csv", "tsv", "apkg"], Field(description="csv, tsv or apkg (Anki).")
        ] = "csv",
        offset: Annotated[int, Field(description="Rows to skip (data.offset + rowCount).")] = 0,
        limit: Annotated[int, Field(description="Rows per page, 1..1000.")] = 100,
        workspace_id: WorkspaceArg = None,
        raw: Annotated[
            bool,
            Field(description="Write cells starting with = + - @ unescaped (default: '=…)."),
        ] = False,
    ) -> CallToolResult:
        return await run_tool(ctx, export_work(resource, format, offset, limit, workspace_id, raw))

    server.add_tool(
        import_cards,
        description=IMPORT_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Import cards from a file",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    server.add_tool(
        export_cards,
        description=EXPORT_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Export cards as CSV/TSV",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
