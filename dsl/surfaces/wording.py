"""Surface wording (dsl.md §9.1 "Speak to the surface"): the REST routes and request bodies that
messages, hints and instructions name, as the MCP tools that do the same.

Errors are written once, in REST terms, by the code that raises them; the MCP server passes every
envelope through ``for_mcp`` so an agent there reads tool names it can call. A new route with a
tool is a new row.
"""

from __future__ import annotations

import re
from typing import Any

# Longest phrases first: a route is replaced before any shorter route it starts with.
MCP_WORDING: tuple[tuple[str, str], ...] = (
    ("Send a smaller request body (at most 256 KiB), e.g. split the batch.",
     "Send a smaller MCP request (at most 256 KiB), e.g. split the statements over several sql "
     "calls."),
    (
        "Resend the same body to the endpoint named in error.message (/v1/agent/sql accepts reads "
        "and writes together).",
        "Call the tool named in error.message with the same arguments (the sql tool accepts reads "
        "and writes together).",
    ),
    ("Send reads to /v1/agent/sql/query and writes to /v1/agent/sql/execute.",
     "Send reads to the sql_query tool and writes to the sql_execute tool."),
    ("POST /v1/agent/sql/execute", "the sql_execute tool"),
    ("POST /v1/agent/sql/query", "the sql_query tool"),
    ("POST /v1/agent/sql", "the sql tool"),
    ("/v1/agent/sql/execute", "the sql_execute tool"),
    ("/v1/agent/sql/query", "the sql_query tool"),
    ("/v1/agent/sql", "the sql tool"),
    ("POST /v1/agent/reviews", "the submit_review tool"),
    ("/v1/agent/reviews", "the submit_review tool"),
    ("POST /v1/agent/workspaces/{workspace_id}/select", "the select_workspace tool"),
    ("POST /v1/agent/workspaces/<workspace_id>/select", "the select_workspace tool"),
    ("GET /v1/agent/workspaces", "the list_workspaces tool"),
    ("Fix the request body", "Fix the tool arguments"),
    ("the request body", "the tool arguments"),
    ("request body", "tool arguments"),
    ("retry the same endpoint", "call the same tool again"),
    ("the same endpoint", "the same tool"),
)  # fmt: skip

_PATTERN = re.compile("|".join(re.escape(rest) for rest, _ in MCP_WORDING))
_REPLACEMENT = dict(MCP_WORDING)


def mcp_text(text: str) -> str:
    return _PATTERN.sub(lambda match: _REPLACEMENT[match.group(0)], text)


def for_mcp(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with its prose (instructions, error message, hint, issue messages) in tool terms;
    data rows are left as they are."""
    if isinstance(body.get("instructions"), str):
        body["instructions"] = mcp_text(body["instructions"])
    error = body.get("error")
    if isinstance(error, dict):
        if isinstance(error.get("message"), str):
            error["message"] = mcp_text(error["message"])
        details = error.get("details")
        if isinstance(details, dict):
            # "hint", and the routes WORKSPACE_SELECTION_REQUIRED lists to list and select.
            for key in ("hint", "listWorkspaces", "selectWorkspace"):
                if isinstance(details.get(key), str):
                    details[key] = mcp_text(details[key])
            for issue in details.get("validationIssues") or ():
                if isinstance(issue, dict) and isinstance(issue.get("message"), str):
                    issue["message"] = mcp_text(issue["message"])
    return body
