"""The comparison endpoint of the throughput benchmark: a plain DRF list view returning the same
page of cards as the benchmark's dialect SELECT, with the same authentication, workspace
resolution and throttle classes, but no dialect (and no query-log row).

GET /bench/cards?tag=english&effort=fast,medium&limit=20&offset=0"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from bench.handwritten import paged_cards_queryset
from flashcards.api.workspace import request_workspace
from flashcards.models import Card
from flashcards.serializers import CARD_COLUMNS

MAX_LIMIT = 100


class TimestampField(serializers.DateTimeField):
    """UTC with milliseconds and a Z, as the dialect publishes timestamps."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="%Y-%m-%dT%H:%M:%S.%fZ", **kwargs)

    def to_representation(self, value: Any) -> str | None:
        text = super().to_representation(value)
        return None if text is None else text[:-4] + "Z"


class CardRowSerializer(serializers.ModelSerializer):
    card_id = serializers.UUIDField(source="id")
    due_at = TimestampField()
    created_at = TimestampField()
    updated_at = TimestampField()
    fsrs_last_reviewed_at = TimestampField()

    class Meta:
        model = Card
        fields = CARD_COLUMNS


def _int_param(request: Request, name: str, default: int, high: int) -> int:
    try:
        return max(0, min(int(request.query_params.get(name, default)), high))
    except ValueError:
        return default


class PagedCardsView(ListAPIView):
    serializer_class = CardRowSerializer

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        workspace = request_workspace(request)
        efforts = request.query_params.get("effort", "fast,medium").split(",")
        limit = _int_param(request, "limit", 20, MAX_LIMIT) or 20
        offset = _int_param(request, "offset", 0, 10**9)
        queryset = paged_cards_queryset(
            workspace, request.query_params.get("tag", "english"), efforts
        )
        page = list(queryset[offset : offset + limit + 1])
        rows = self.get_serializer(page[:limit], many=True).data
        return Response({"results": rows, "hasMore": len(page) > limit})
