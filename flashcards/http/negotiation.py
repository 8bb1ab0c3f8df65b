"""Content negotiation that fails in the envelope: an unknown ``?format=`` is a 404 and an
``Accept`` header no renderer satisfies is a 406, both as JSON with advice about the format.

DRF's own negotiation raises Django's ``Http404`` for an unknown format (which the envelope
handler never saw, so it became a 500) and renders a failure with whatever renderer comes first
(HTML on Swagger UI's route). Here the failure picks the JSON renderer before raising."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.http import Http404
from rest_framework import status
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer

from flashcards.http.envelope import ApiError


def _formats(renderers: Sequence[BaseRenderer]) -> list[str]:
    return sorted({r.format for r in renderers if r.format})


def _media_types(renderers: Sequence[BaseRenderer]) -> list[str]:
    return list(dict.fromkeys(r.media_type for r in renderers))


def unknown_format(requested: str, formats: Sequence[str]) -> ApiError:
    formats = sorted(formats)
    return ApiError(
        "NOT_FOUND",
        f"This route has no {requested!r} format; it answers in {', '.join(formats)}.",
        status_code=status.HTTP_404_NOT_FOUND,
        details={"reason": "unknown_format", "format": requested, "availableFormats": formats},
        instructions=(
            "Drop the ?format= parameter (JSON is the default) or use one of "
            "error.details.availableFormats, then retry."
        ),
    )


def not_acceptable(accept: str, renderers: Sequence[BaseRenderer]) -> ApiError:
    media_types = _media_types(renderers)
    return ApiError(
        "REQUEST_INVALID",
        f"No representation of this route matches Accept: {accept[:200]}; it offers "
        f"{', '.join(media_types)}.",
        status_code=status.HTTP_406_NOT_ACCEPTABLE,
        details={"reason": "not_acceptable", "availableMediaTypes": media_types},
        instructions=(
            "Send an Accept header naming one of error.details.availableMediaTypes (or omit it), "
            "then retry the same request."
        ),
    )


_PLAIN_ACCEPTS = frozenset({"*/*", "application/json"})


class EnvelopeContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Any, renderers: Sequence[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        # What agents send (Accept absent, */* or application/json; no ?format=): the first renderer
        # when it is JSON, as DRF's negotiation would conclude, without parsing media types.
        accept = request.META.get("HTTP_ACCEPT", "*/*")
        if (
            accept in _PLAIN_ACCEPTS
            and not format_suffix
            and renderers
            and type(renderers[0]) is JSONRenderer
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], JSONRenderer.media_type
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except (Http404, NotAcceptable) as exc:
            # The error itself is an envelope, so it must be rendered as JSON whatever was asked.
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
            if isinstance(exc, Http404):
                param = self.settings.URL_FORMAT_OVERRIDE
                requested = format_suffix or request.query_params.get(param)
                raise unknown_format(str(requested), _formats(renderers)) from exc
            raise not_acceptable(request.headers.get("Accept", ""), renderers) from exc
