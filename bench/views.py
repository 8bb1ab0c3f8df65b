"""The comparison endpoint of the throughput benchmark: the smallest honest DRF view returning the
same page of cards as the benchmark's dialect SELECT — the same authentication, workspace
resolution and throttle classes, the rows straight from ``.values()`` rendered by DRF's JSON
encoder — but no dialect and no query-log row.

GET /bench/cards?tag=english&effort=fast,medium&limit=20&offset=0"""

from __future__ import annotations

from django.db.models import F
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.handwritten import CARD_COLUMNS, paged_cards_queryset
from flashcards.http.workspace import request_workspace

MAX_LIMIT = 100


def _int_param(request: Request, name: str, default: int, high: int) -> int:
    try:
        return max(0, min(int(request.query_params.get(name, default)), high))
    except ValueError:
        return default


class PagedCardsView(APIView):
    def get(self, request: Request) -> Response:
        workspace = request_workspace(request)
        efforts = request.query_params.get("effort", "fast,medium").split(",")
        limit = _int_param(request, "limit", 20, MAX_LIMIT) or 20
        offset = _int_param(request, "offset", 0, 10**9)
        queryset = paged_cards_queryset(
            workspace, request.query_params.get("tag", "english"), efforts
        )
        fields = [field for key, field in CARD_COLUMNS if key != "card_id"]
        page = list(queryset.values(*fields, card_id=F("id"))[offset : offset + limit + 1])
        return Response({"results": page[:limit], "hasMore": len(page) > limit})
