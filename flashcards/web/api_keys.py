"""The signed-in user's API-key page (domain.md §6: keys are also created "from a logged-in user's
page"): create a key for one of your workspaces — its plaintext is shown once, on the response to
the POST — see your keys, and revoke one. Human-facing HTML; every write goes through the API-key
services, as from the admin and `manage.py create_api_key`."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from flashcards.models import ApiKey, Workspace
from flashcards.services import (
    DomainError,
    create_api_key,
    ensure_personal_workspace,
    member_workspaces,
    revoke_api_key,
)

DEFAULT_LABEL = "agent"
# The plaintext of a key just created waits here for the GET after the redirect (post/redirect/get:
# a reload never creates a second key); that GET shows it once and drops it.
SESSION_NEW_KEY = "api_keys_new_key"


class NewKeyForm(forms.Form):
    label = forms.CharField(max_length=120, initial=DEFAULT_LABEL)
    workspace = forms.ChoiceField(
        help_text="The workspace the key's statements run in (it can select another later)."
    )

    def __init__(self, *args: object, workspaces: list[Workspace], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.workspaces = {str(ws.pk): ws for ws in workspaces}
        self.fields["workspace"].choices = [(key, ws.name) for key, ws in self.workspaces.items()]

    def clean_workspace(self) -> Workspace:
        return self.workspaces[self.cleaned_data["workspace"]]


def _workspaces(user: AbstractBaseUser) -> list[Workspace]:
    """The user's workspaces, oldest first; a user without one gets `Personal`, as everywhere."""
    ensure_personal_workspace(user)
    return list(member_workspaces(user).order_by("created_at", "id"))


def _page(
    request: HttpRequest, form: NewKeyForm, *, new_key: tuple[ApiKey, str] | None = None
) -> HttpResponse:
    keys = ApiKey.objects.filter(user=request.user).select_related(
        "selected_workspace", "oauth_connection__application"
    )
    response = render(
        request,
        "flashcards/api_keys.html",
        {"form": form, "keys": keys.order_by("-created_at", "-id"), "new_key": new_key},
    )
    # The page may hold a plaintext key: never keep a copy in a browser or proxy cache.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_http_methods(["GET", "POST"])
def api_keys(request: HttpRequest) -> HttpResponse:
    workspaces = _workspaces(request.user)
    if request.method == "GET":
        shown = request.session.pop(SESSION_NEW_KEY, None)
        new_key = None
        if shown:
            found = ApiKey.objects.filter(user=request.user, key_id=shown["key_id"]).first()
            new_key = (found, shown["plaintext"]) if found else None
        return _page(request, NewKeyForm(workspaces=workspaces), new_key=new_key)
    form = NewKeyForm(request.POST, workspaces=workspaces)
    if not form.is_valid():
        return _page(request, form)
    try:
        new_key = create_api_key(
            request.user, form.cleaned_data["label"], workspace=form.cleaned_data["workspace"]
        )
    except DomainError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        return _page(request, form)
    api_key, plaintext = new_key
    request.session[SESSION_NEW_KEY] = {"key_id": api_key.key_id, "plaintext": plaintext}
    return redirect("account-api-keys")


@login_required
@require_http_methods(["GET", "POST"])
def revoke_key(request: HttpRequest, key_id: str) -> HttpResponse:
    """GET asks to confirm (works without JavaScript); POST revokes."""
    api_key = get_object_or_404(ApiKey, user=request.user, key_id=key_id)
    if request.method == "GET":
        return render(request, "flashcards/api_key_revoke.html", {"key": api_key})
    revoke_api_key(api_key)
    messages.success(request, f"Key {api_key.key_id} ({api_key.label}) is revoked.")
    return redirect("account-api-keys")
