"""The consent page at /o/authorize/: the signed-in user sees which client asks (its name and the
host it will send the answer to), picks the workspace it may use and a label, and approves or
denies. django-oauth-toolkit's AuthorizationView does the OAuth part (validating the request,
PKCE, the redirect with `code`, `state` and `iss`, or with `error=access_denied`); this view adds
the workspace, refuses a PKCE method other than S256 and a `resource` other than this server's /mcp
(RFC 8707 `invalid_target`) before asking, and binds every grant to /mcp when the client names
none."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import get_application_model
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from flashcards.models import Workspace
from flashcards.oauth.connections import active_connection, default_label
from flashcards.oauth.models import Connection
from flashcards.oauth.resource import is_this_resource, mcp_resource_url
from flashcards.services import ensure_personal_workspace, member_workspaces

# RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters; the grammar allows 43 to 128.
CODE_CHALLENGE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


class ConsentForm(AllowForm):
    workspace = forms.ChoiceField(
        help_text="Statements of this client run here; like an API key, it can select another "
        "of your workspaces later."
    )
    label = forms.CharField(
        max_length=120,
        required=False,  # empty: the client's name
        label="Label",
        help_text="How this connection is listed on your key page.",
    )

    def __init__(self, *args: Any, workspaces: list[Workspace], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.workspaces = {str(ws.pk): ws for ws in workspaces}
        self.fields["workspace"].choices = [(key, ws.name) for key, ws in self.workspaces.items()]

    def clean_workspace(self) -> Workspace:
        return self.workspaces[self.cleaned_data["workspace"]]


def _workspaces(user: AbstractBaseUser) -> list[Workspace]:
    ensure_personal_workspace(user)
    return list(member_workspaces(user).order_by("created_at", "id"))


def _refusal(error: str, description: str, credentials: dict[str, Any]) -> OAuthToolkitError:
    """An error the library redirects back to the (already validated) redirect URI."""
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error=error, description=description, state=credentials.get("state")
        ),
        redirect_uri=credentials.get("redirect_uri"),
    )


def _invalid_target(resource: str, credentials: dict[str, Any]) -> OAuthToolkitError:
    return _refusal(
        "invalid_target",
        f"This server issues tokens only for its MCP endpoint, not {resource!r}.",
        credentials,
    )


def _approved_by_someone(application: Any) -> bool:
    return application is not None and Connection.objects.filter(application=application).exists()


class ConsentView(AuthorizationView):
    template_name = "flashcards/oauth_consent.html"
    form_class = ConsentForm

    def error_response(self, error: Any, application: Any, **kwargs: Any) -> Any:
        """An error is sent back to the client's redirect URI only once some user has approved
        that client; before that anyone may have registered it, so redirecting would make this
        server an open redirector to any URI they listed: the error is shown here instead."""
        if application is None:
            client_id = self.request.GET.get("client_id") or self.request.POST.get("client_id")
            if client_id:
                application = (
                    get_application_model().objects.filter(client_id=str(client_id)[:200]).first()
                )
        if _approved_by_someone(application):
            return super().error_response(error, application, **kwargs)
        oauthlib_error = error.oauthlib_error
        context = self.get_context_data(error=oauthlib_error, application=application, form=None)
        context["client_name"] = (application.name if application else "") or "An unknown client"
        return self.render_to_response(context, status=oauthlib_error.status_code or 400)

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        # The library refuses "plain" only once the user has approved; say so before asking.
        if credentials.get("code_challenge_method") != "S256" or not credentials.get(
            "code_challenge"
        ):
            raise _refusal(
                "invalid_request", "PKCE with code_challenge_method=S256 is required.", credentials
            )
        if not CODE_CHALLENGE.fullmatch(credentials["code_challenge"]):
            raise _refusal(
                "invalid_request",
                "code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~' "
                "(RFC 7636 §4.2).",
                credentials,
            )
        for resource in request.GET.getlist("resource"):
            if not is_this_resource(request, resource):
                raise _invalid_target(resource, credentials)
        return scopes, credentials

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs["workspaces"] = _workspaces(self.request.user)
        return kwargs

    def get_initial(self) -> dict[str, Any]:
        initial = super().get_initial()
        application = self.oauth2_data.get("application")
        if application is not None:
            initial["label"] = default_label(application)
            existing = active_connection(self.request.user.pk, application.pk)
            if existing is not None:
                initial["label"] = existing.api_key.label
                if existing.api_key.selected_workspace_id:
                    initial["workspace"] = str(existing.api_key.selected_workspace_id)
        return initial

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        if application is None and self.request.method == "POST":
            client_id = self.request.POST.get("client_id", "")
            application = get_application_model().objects.filter(client_id=client_id).first()
            context["application"] = application
        redirect_uri = context.get("redirect_uri") or self.request.POST.get("redirect_uri", "")
        context["client_name"] = (application.name if application else "") or "An unnamed client"
        context["redirect_host"] = urlsplit(redirect_uri).netloc if redirect_uri else ""
        context["mcp_url"] = mcp_resource_url(self.request)
        return context

    def form_valid(self, form: ConsentForm) -> Any:
        self._consent = {
            "workspace": form.cleaned_data["workspace"],
            "connection_label": form.cleaned_data["label"],
        }
        return super().form_valid(form)

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> Any:
        for resource in credentials.get("resource") or ():
            if not is_this_resource(request, resource):
                raise _invalid_target(resource, credentials)
        # Every grant, and so every token, is bound to /mcp (RFC 8707), named or not.
        credentials["resource"] = [mcp_resource_url(request)]
        credentials.update(getattr(self, "_consent", {}))
        return super().create_authorization_response(request, scopes, credentials, allow)
