"""Throttled sign-in on /admin/login/ and /api-auth/login/ (and any other use of Django's
``authenticate``): failed attempts are counted per account and per address over a window; past
either limit, the sign-in page answers 429 with a message saying so and when to retry, and
``authenticate`` refuses even the right password until the window ends.

Limits (settings): ``LOGIN_FAILURES_PER_ACCOUNT`` (default 5), ``LOGIN_FAILURES_PER_ADDRESS``
(default 20) per ``LOGIN_FAILURE_WINDOW_SECONDS`` (default 900). 0 turns a limit off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils.html import escape

from flashcards.security import counters

LOGIN_PATHS = ("/admin/login/", "/api-auth/login/")


def _window() -> int:
    return int(getattr(settings, "LOGIN_FAILURE_WINDOW_SECONDS", 900))


def _names(request: Any, username: str | None) -> list[tuple[str, int]]:
    names = []
    account_limit = int(getattr(settings, "LOGIN_FAILURES_PER_ACCOUNT", 5))
    address_limit = int(getattr(settings, "LOGIN_FAILURES_PER_ADDRESS", 20))
    if username and account_limit > 0:
        names.append((f"login-account:{username.strip().lower()[:150]}", account_limit))
    if request is not None and address_limit > 0:
        names.append((f"login-address:{counters.client_address(request)}", address_limit))
    return names


def blocked(request: Any, username: str | None) -> str | None:
    """What is throttled ("account" or "address"), or None when a sign-in may be tried."""
    window = _window()
    for name, limit in _names(request, username):
        if counters.count(name, window) >= limit:
            return name.split(":", 1)[0].removeprefix("login-")
    return None


@receiver(user_login_failed)
def _count_failure(sender: Any, credentials: dict[str, Any], request: Any = None, **_: Any) -> None:
    window = _window()
    for name, _limit in _names(request, credentials.get("username")):
        counters.hit(name, window)


@receiver(user_logged_in)
def _forget_account_failures(sender: Any, request: Any, user: Any, **_: Any) -> None:
    counters.clear(f"login-account:{user.get_username().strip().lower()[:150]}", _window())


class ThrottledModelBackend(ModelBackend):
    """Django's backend, refusing every attempt while the account or address is throttled (so
    a guessed password is never confirmed, whichever sign-in form is used)."""

    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kw: Any
    ) -> Any:
        if blocked(request, username):
            raise PermissionDenied("too many failed sign-in attempts")
        return super().authenticate(request, username=username, password=password, **kw)


def refusal(request: HttpRequest, what: str) -> HttpResponse:
    minutes = max(1, round(counters.seconds_left(_window()) / 60))
    subject = "this account" if what == "account" else "your address"
    message = (
        f"Too many failed sign-in attempts for {subject}. Sign-in is paused; try again in about "
        f"{minutes} minute(s)."
    )
    response = HttpResponse(
        "<!DOCTYPE html><html><head><title>Sign-in paused</title></head><body>"
        f"<h1>Sign-in paused</h1><p>{escape(message)}</p></body></html>",
        status=429,
        content_type="text/html; charset=utf-8",
    )
    response["Retry-After"] = str(counters.seconds_left(_window()))
    return response


class LoginThrottleMiddleware:
    """A POST to a sign-in page while throttled is answered 429 with the reason, unread."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in LOGIN_PATHS:
            what = blocked(request, request.POST.get("username"))
            if what:
                return refusal(request, what)
        return self.get_response(request)
