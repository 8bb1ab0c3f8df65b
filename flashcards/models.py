"""The domain tables. Only flashcards.services writes content rows (cards, decks, review events,
tags, scheduler settings, the change log); everything else reads."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from flashcards.scheduling.day import LearningDay

EFFORT_LEVELS = ("fast", "medium", "long")
FSRS_STATES = ("new", "learning", "review", "relearning")
REVIEW_GRADES = ("again", "hard", "good", "easy")
SERVER_REPLICA = "server"


def default_learning_steps() -> list[int]:
    return [1, 10]


def default_relearning_steps() -> list[int]:
    return [10]


class Workspace(models.Model):
    """The tenancy and sync boundary. Scheduler settings live here; the two counters hand out the
    per-workspace change and review sequence numbers under a row lock."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)

    algorithm = models.CharField(max_length=20, default="fsrs-6")
    desired_retention = models.FloatField(default=0.9)
    learning_steps_minutes = models.JSONField(default=default_learning_steps)
    relearning_steps_minutes = models.JSONField(default=default_relearning_steps)
    maximum_interval_days = models.IntegerField(default=36500)
    enable_fuzz = models.BooleanField(default=True)
    # The learning day (flashcards.scheduling.day): what DATE(col) and CURRENT_DATE count in.
    time_zone = models.CharField(max_length=64, default="UTC")
    day_starts_at_hour = models.SmallIntegerField(default=0)

    settings_client_updated_at = models.DateTimeField(null=True, blank=True)
    settings_replica_id = models.CharField(max_length=100, blank=True, default="")
    settings_operation_id = models.CharField(max_length=200, blank=True, default="")

    last_change_id = models.BigIntegerField(default=0)
    last_review_sequence = models.BigIntegerField(default=0)

    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces"
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(desired_retention__gt=0) & Q(desired_retention__lt=1),
                name="workspace_retention_range",
            ),
            models.CheckConstraint(
                condition=Q(maximum_interval_days__gte=1), name="workspace_max_interval_positive"
            ),
            models.CheckConstraint(
                condition=Q(day_starts_at_hour__gte=0) & Q(day_starts_at_hour__lte=23),
                name="workspace_day_start_hour_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    @property
    def learning_day(self) -> LearningDay:
        return LearningDay(self.time_zone, self.day_starts_at_hour)


class Membership(models.Model):
    ROLE_OWNER = "owner"
    ROLE_MEMBER = "member"
    ROLES = [(ROLE_OWNER, "owner"), (ROLE_MEMBER, "member")]

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=ROLE_OWNER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace_id} ({self.role})"


class SyncStamped(models.Model):
    """Sync metadata shared by cards and decks: the last accepted write's client timestamp, the
    replica that made it and its operation id, compared in that order for last-writer-wins."""

    client_updated_at = models.DateTimeField()
    last_modified_by_replica_id = models.CharField(max_length=100)
    last_operation_id = models.CharField(max_length=200)

    class Meta:
        abstract = True


class Card(SyncStamped):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="cards")
    front_text = models.TextField()
    back_text = models.TextField(blank=True, default="")
    card_type = models.CharField(max_length=100, default="basic")
    # Ordered display copy of the card's tags; the indexed truth for filtering is CardTag.
    tags = models.JSONField(default=list, blank=True)
    effort_level = models.CharField(
        max_length=10, choices=[(e, e) for e in EFFORT_LEVELS], default="fast"
    )
    metadata = models.JSONField(default=dict, blank=True)

    due_at = models.DateTimeField(null=True, blank=True)
    reps = models.IntegerField(default=0)
    lapses = models.IntegerField(default=0)
    fsrs_card_state = models.CharField(
        max_length=12, choices=[(s, s) for s in FSRS_STATES], default="new"
    )
    fsrs_step_index = models.IntegerField(null=True, blank=True)
    fsrs_stability = models.FloatField(null=True, blank=True)
    fsrs_difficulty = models.FloatField(null=True, blank=True)
    fsrs_last_reviewed_at = models.DateTimeField(null=True, blank=True)
    fsrs_scheduled_days = models.IntegerField(null=True, blank=True)

    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["workspace", "deleted_at", "-created_at", "id"], name="card_default_order"
            ),
            models.Index(fields=["workspace", "deleted_at", "-updated_at"], name="card_updated"),
            models.Index(fields=["workspace", "deleted_at", "due_at"], name="card_due"),
            models.Index(fields=["workspace", "effort_level"], name="card_effort"),
            # The live cards of a workspace, index-only: whole-workspace COUNT(*) and the card
            # side of GROUP BY tag (docs/benchmarks.md §6).
            models.Index(
                fields=["workspace", "id"],
                condition=Q(deleted_at__isnull=True),
                name="card_live_ids",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(
                        fsrs_card_state="new",
                        due_at__isnull=True,
                        fsrs_step_index__isnull=True,
                        fsrs_stability__isnull=True,
                        fsrs_difficulty__isnull=True,
                        fsrs_last_reviewed_at__isnull=True,
                        fsrs_scheduled_days__isnull=True,
                    )
                    | (
                        Q(fsrs_card_state__in=["learning", "review", "relearning"])
                        & Q(fsrs_stability__isnull=False)
                        & Q(fsrs_difficulty__isnull=False)
                        & Q(fsrs_last_reviewed_at__isnull=False)
                        & Q(fsrs_scheduled_days__isnull=False)
                        & (
                            Q(fsrs_card_state="review", fsrs_step_index__isnull=True)
                            | Q(
                                fsrs_card_state__in=["learning", "relearning"],
                                fsrs_step_index__isnull=False,
                            )
                        )
                    )
                ),
                name="card_fsrs_state_consistent",
            ),
            models.CheckConstraint(
                condition=Q(reps__gte=0) & Q(lapses__gte=0), name="card_counts_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(effort_level__in=EFFORT_LEVELS), name="card_effort_level_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.front_text[:60]


class Deck(SyncStamped):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="decks")
    name = models.CharField(max_length=500)
    effort_levels = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["workspace", "deleted_at", "-created_at", "-id"], name="deck_default_order"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Tag(models.Model):
    """One spelling per tag per workspace, fixed by its first use (dsl.md §6.1 tag rules).
    `key` is the case-folded form every comparison uses."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tag_set")
    key = models.CharField(max_length=255)
    name = models.CharField(max_length=255)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "key"], name="tag_unique_key"),
        ]

    def __str__(self) -> str:
        return self.name


class CardTag(models.Model):
    """The indexed tag membership of a card: lets the database answer any-of / all-of / count per
    tag without loading cards. `workspace` is denormalised so tag queries start from an index."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="card_tags")
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="card_tags")
    position = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["card", "tag"], name="cardtag_unique"),
        ]
        indexes = [
            models.Index(fields=["workspace", "tag", "card"], name="cardtag_by_tag"),
            models.Index(fields=["card", "position"], name="cardtag_by_card"),
        ]

    def __str__(self) -> str:
        return f"{self.card_id} #{self.position}: {self.tag_id}"


class DeckTag(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    deck = models.ForeignKey(Deck, on_delete=models.CASCADE, related_name="deck_tags")
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="deck_tags")
    position = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["deck", "tag"], name="decktag_unique"),
        ]
        indexes = [
            models.Index(fields=["workspace", "tag", "deck"], name="decktag_by_tag"),
            models.Index(fields=["deck", "position"], name="decktag_by_deck"),
        ]

    def __str__(self) -> str:
        return f"{self.deck_id} #{self.position}: {self.tag_id}"


class ReviewEvent(models.Model):
    """Append-only. Never updated or deleted while the workspace exists."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="review_events")
    card = models.ForeignKey(Card, on_delete=models.CASCADE, related_name="review_events")
    client_event_id = models.CharField(max_length=200)
    replica_id = models.CharField(max_length=100)
    rating = models.SmallIntegerField()
    reviewed_at_client = models.DateTimeField()
    reviewed_at_server = models.DateTimeField()
    sequence = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "replica_id", "client_event_id"],
                name="review_client_event_unique",
            ),
            models.UniqueConstraint(
                fields=["workspace", "sequence"], name="review_sequence_unique"
            ),
            models.CheckConstraint(
                condition=Q(rating__gte=0) & Q(rating__lte=3), name="review_rating_range"
            ),
        ]
        indexes = [
            models.Index(
                fields=["workspace", "-reviewed_at_server", "-id"], name="review_default_order"
            ),
            models.Index(fields=["card", "reviewed_at_client"], name="review_by_card"),
            # COUNT(*) and GROUP BY rating / review_grade over a workspace's reviews, index-only.
            models.Index(fields=["workspace", "rating"], name="review_rating"),
        ]

    def __str__(self) -> str:
        return f"review {self.id} of {self.card_id} ({self.rating})"


class ChangeLog(models.Model):
    """Per-workspace change feed for sync pull. `change_id` is handed out from
    Workspace.last_change_id under a row lock, so numbers commit in order per workspace."""

    ENTITY_TYPES = ("card", "deck", "workspace_scheduler_settings", "review_event")

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="changes")
    change_id = models.BigIntegerField()
    entity_type = models.CharField(max_length=40)
    entity_id = models.CharField(max_length=64)
    action = models.CharField(max_length=20)
    replica_id = models.CharField(max_length=100)
    operation_id = models.CharField(max_length=200)
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "change_id"], name="change_unique_number"),
        ]
        indexes = [
            models.Index(fields=["workspace", "entity_type", "entity_id"], name="change_by_entity"),
        ]

    def __str__(self) -> str:
        return f"#{self.change_id} {self.action} {self.entity_type} {self.entity_id}"


class Installation(models.Model):
    """A client installation; the server derives the replica id from it (clients never send one)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="installations")
    installation_id = models.CharField(max_length=200)
    platform = models.CharField(max_length=40)
    replica_id = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "installation_id"], name="installation_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform} {self.installation_id} ({self.replica_id})"


class AppliedOperation(models.Model):
    """Idempotency key of sync push operations: (workspace, replica, operation_id)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    replica_id = models.CharField(max_length=100)
    operation_id = models.CharField(max_length=200)
    status = models.CharField(max_length=20)
    resulting_change_id = models.BigIntegerField(null=True)
    applied_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "replica_id", "operation_id"], name="applied_operation_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.replica_id}/{self.operation_id}: {self.status}"


class ApiKey(models.Model):
    """An agent connection. Only a hash of the secret is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys"
    )
    label = models.CharField(max_length=120)
    key_id = models.CharField(max_length=8, unique=True)
    secret_hash = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    selected_workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"fca_{self.key_id}_… ({self.label})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class UserProfile(models.Model):
    """Per-user state outside Django's user: the workspace a browser session acts on."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    selected_workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"profile of {self.user_id}"
