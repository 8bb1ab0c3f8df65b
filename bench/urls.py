"""The product's routes plus the comparison endpoint of the throughput benchmark."""

from django.urls import include, path

from bench.views import PagedCardsView

urlpatterns = [
    path("bench/cards", PagedCardsView.as_view(), name="bench-cards"),
    path("", include("config.urls")),
]
