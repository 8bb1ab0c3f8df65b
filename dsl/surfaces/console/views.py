"""GET/POST /console/: the query console for signed-in humans, a plain HTML form that runs
statements through ``dsl.runtime.service.run_sql`` (surface "console") and renders the envelope.

Works without JavaScript: the form posts ``sql``, ``workspace_id`` and ``dry_run`` and the answer
is rendered here. A GET never runs anything; ``?sql=`` only fills the textarea (the examples and
the sidebar link to it). dsl/static/dsl/console.js only enhances the same forms."""

from __future__ import annotations

import time

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from dsl.runtime.querylog import log_failure
from dsl.runtime.service import run_sql
from dsl.surfaces.console.page import ConsoleRun, history, page_context, run_context
from flashcards.http.envelope import ApiError, docs_for, error_body, request_id_of
from flashcards.http.throttling import check_rate, statement_slot
from flashcards.models import Workspace
from flashcards.services import (
    NotFoundError,
    WorkspaceSelectionRequired,
    ensure_personal_workspace,
    get_member_workspace,
    member_workspaces,
    resolve_user_workspace,
)

SESSION_WORKSPACE = "console_workspace_id"
NOT_A_MEMBER = "Workspace not found (or you are not a member of it): pick one of yours."


def _workspaces(user: AbstractBaseUser) -> list[Workspace]:
    ensure_personal_workspace(user)
    return list(member_workspaces(user).order_by("created_at", "id"))


def _default_workspace_id(request: HttpRequest, workspaces: list[Workspace]) -> str:
    remembered = request.session.get(SESSION_WORKSPACE)
    if any(str(ws.pk) == remembered for ws in workspaces):
        return str(remembered)
    try:
        return str(resolve_user_workspace(request.user).pk)
    except WorkspaceSelectionRequired:
        return str(workspaces[0].pk)


def _run(
    request: HttpRequest, sql: str, workspace_id: str, dry_run: bool
) -> tuple[ConsoleRun, dict[str, str]]:
    """The run to show and the headers of a refusal (a rate limit's Retry-After)."""
    try:
        workspace = get_member_workspace(request.user, workspace_id)
    except NotFoundError:
        body = error_body(request, "WORKSPACE_NOT_FOUND", NOT_A_MEMBER)
        log_failure(request, surface="console", body=body, status_code=404, sql=sql)
        return ConsoleRun(sql=sql, status_code=404, body=body), {}
    request.session[SESSION_WORKSPACE] = str(workspace.pk)
    started = time.perf_counter()
    try:
        # The same per-user budget and bound on statements in flight as the user's API keys.
        check_rate(request)
        with statement_slot(request):
            outcome = run_sql(
                sql=sql,
                workspace=workspace,
                user=request.user,
                api_key=None,
                surface="console",
                mode="any",
                dry_run=dry_run,
                request_id=request_id_of(request),
                docs=docs_for(request),
            )
    except ApiError as refused:
        body = error_body(request, refused.code, refused.message, details=refused.details)
        log_failure(request, surface="console", body=body, status_code=refused.status_code, sql=sql)
        return ConsoleRun(sql=sql, status_code=refused.status_code, body=body), refused.headers
    elapsed = (time.perf_counter() - started) * 1000
    return ConsoleRun(sql, outcome.status_code, outcome.body, elapsed), {}


def normalize_newlines(sql: str) -> str:
    """Browsers send a textarea's lines with CRLF, while the textarea itself (and the caret's
    column) counts LF: the console runs the LF text so every offset means the same in both."""
    return sql.replace("\r\n", "\n").replace("\r", "\n")


@require_http_methods(["GET", "HEAD", "POST"])
def console(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        # A session that expired keeps the typed statement: it comes back in the form after login.
        target = reverse("console")
        if request.method == "POST" and request.POST.get("sql"):
            target += "?" + urlencode({"sql": normalize_newlines(request.POST["sql"])})
        return redirect_to_login(target)
    return _console(request)


def _console(request: HttpRequest) -> HttpResponse:
    workspaces = _workspaces(request.user)
    just_run = None
    refusal_headers: dict[str, str] = {}
    status = 200
    if request.method == "POST":
        sql = normalize_newlines(request.POST.get("sql", ""))
        workspace_id = request.POST.get("workspace_id") or _default_workspace_id(
            request, workspaces
        )
        dry_run = request.POST.get("dry_run") in ("on", "1", "true")
        run, refusal_headers = _run(request, sql, workspace_id, dry_run)
        context = run_context(run, workspace_id=workspace_id, dry_run=dry_run)
        just_run = {
            "sql": sql,
            "workspace_id": workspace_id,
            "outcome": "ok" if run.body.get("ok") else "failed",
            "created_at": timezone.now(),
            "dry_run": dry_run,
        }
        if run.status_code == 429:
            status = 429
    else:
        workspace_id = request.GET.get("workspace_id") or _default_workspace_id(request, workspaces)
        context = {"sql": request.GET.get("sql", ""), "workspace_id": workspace_id}
    context.update(page_context(workspaces, history(request.user, just_run)))
    response = render(request, "dsl/console.html", context, status=status)
    response["Cache-Control"] = "no-store"
    for name, value in refusal_headers.items():
        response[name] = value
    return response
