"""OPTIONS answers in the envelope too (dsl.md §2: every response of every /v1/agent/* route has
that shape); DRF's description of the view becomes `data`."""

from __future__ import annotations

from typing import Any

from rest_framework.metadata import SimpleMetadata

from flashcards.http.envelope import success_body


class EnvelopeMetadata(SimpleMetadata):
    def determine_metadata(self, request: Any, view: Any) -> dict[str, Any]:
        described = super().determine_metadata(request, view)
        return success_body(
            request,
            described,
            "This describes the route; see docs.discoveryUrl for every route and its body.",
        )
