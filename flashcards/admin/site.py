"""The Django admin (staff only). Every write goes through the service functions — cards and decks
through create/update/delete_* (soft delete), workspaces through create_workspace and
update_scheduler_settings, API keys through create_api_key / revoke_api_key — so an admin edit
gets the same invariants, sync stamps and change-log entries as any other writer. Review events,
the change log, tags and memberships are read-only here; the one membership write is the
workspace action "Add me as a member" (services.add_member)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from flashcards.admin.forms import (
    ApiKeyCreateForm,
    CardAdminForm,
    DeckAdminForm,
    WorkspaceCreateForm,
    WorkspaceSettingsForm,
)
from flashcards.admin.imports import WorkspaceFilesAdminMixin
from flashcards.models import (
    REVIEW_GRADES,
    ApiKey,
    Card,
    ChangeLog,
    Deck,
    Membership,
    ReviewEvent,
    Tag,
    Workspace,
)
from flashcards.services import (
    add_member,
    create_api_key,
    create_cards,
    create_decks,
    create_workspace,
    delete_cards,
    delete_decks,
    revoke_api_key,
    update_cards,
    update_decks,
    update_scheduler_settings,
)
from flashcards.services.common import MAX_BULK
from flashcards.services.content import CARD_WRITABLE, DECK_WRITABLE

MAX_TAG_CHOICES = 200


def adopt(target: Model, saved: Model) -> None:
    """Make the admin's unsaved form instance the row the service wrote: the admin logs the
    change and redirects using this object."""
    for model_field in saved._meta.concrete_fields:
        setattr(target, model_field.attname, getattr(saved, model_field.attname))
    target._state.adding = False
    target._state.db = saved._state.db


class PermittedActionsMixin:
    """An action the user may not run is refused with 403, not silently dropped from the list:
    a POST naming an action of this admin that the user's permissions filter out (a view-only
    staff user and "Add me as a member") is PermissionDenied before anything runs."""

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        name = request.POST.get("action") if request.method == "POST" else None
        if name:
            declared = {action[1] for action in self._get_base_actions()}  # type: ignore[attr-defined]
            if name in declared and name not in self.get_actions(request):  # type: ignore[attr-defined]
                raise PermissionDenied(f"You may not run the action {name!r}.")
        return super().changelist_view(request, extra_context)  # type: ignore[misc]


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class DeletedFilter(admin.SimpleListFilter):
    """Live rows by default; tombstones only on request."""

    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Deleted only"), ("all", "Live and deleted")]

    def choices(self, changelist: Any) -> Iterator[dict[str, Any]]:
        yield {
            "selected": self.value() is None,
            "query_string": changelist.get_query_string(remove=[self.parameter_name]),
            "display": "Live only",
        }
        for lookup, title in self.lookup_choices:
            yield {
                "selected": self.value() == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "all":
            return queryset
        return queryset.filter(deleted_at__isnull=self.value() != "yes")


class TagFilter(admin.SimpleListFilter):
    """Filter by tag key (tags compare case-insensitively). With a workspace filter active, the
    choices are that workspace's tags."""

    title = "tag"
    parameter_name = "tag"
    relation = ""

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        tags = Tag.objects.order_by("key")
        workspace_id = request.GET.get("workspace__id__exact")
        if workspace_id:
            tags = tags.filter(workspace_id=workspace_id)
        choices: dict[str, str] = {}
        for key, name in tags.values_list("key", "name").iterator():
            choices.setdefault(key, name)
            if len(choices) >= MAX_TAG_CHOICES:
                break
        return list(choices.items())

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if not self.value():
            return queryset
        return queryset.filter(**{f"{self.relation}__tag__key": self.value().lower()})


class CardTagFilter(TagFilter):
    relation = "card_tags"


class DeckTagFilter(TagFilter):
    relation = "deck_tags"


class SoftDeletedContentAdmin(PermittedActionsMixin, admin.ModelAdmin):
    """Cards and decks: add / change / delete call the workspace-scoped bulk services."""

    create: Callable[..., list[Any]]
    update: Callable[..., list[Any]]
    delete: Callable[..., list[Any]]
    add_fields: tuple[str, ...] = ()
    edit_fields: tuple[str, ...] = ()
    # What the services write (the published writable columns): read-only on a deleted row.
    content_fields: tuple[str, ...] = ()
    info_fields: tuple[str, ...] = ()

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("workspace")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        if obj is None:
            return self.add_fields
        if obj.deleted_at is not None:
            return (*self.content_fields, *self.info_fields)
        return (*self.edit_fields, *self.info_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        if obj is None:
            return ()
        if obj.deleted_at is not None:
            return (*self.content_fields, *self.info_fields)
        return self.info_fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.deleted_at is not None:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            created = self.create(form.cleaned_data["workspace"], [form.service_values])
            adopt(obj, created[0])
            return
        changes = form.changed_service_values()
        if changes:
            updated = self.update(obj.workspace, [obj.pk], changes)
            if updated:
                adopt(obj, updated[0])

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.delete(obj.workspace, [obj.pk])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        by_workspace: dict[Any, list[Any]] = defaultdict(list)
        for obj in queryset.filter(deleted_at__isnull=True).select_related("workspace"):
            by_workspace[obj.workspace].append(obj.pk)
        for workspace, ids in by_workspace.items():
            for start in range(0, len(ids), MAX_BULK):
                self.delete(workspace, ids[start : start + MAX_BULK])

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, ...]:
        # A soft delete removes nothing else: review events and tag rows stay.
        objs = list(objs)
        opts = self.model._meta
        items = [format_html("{}: {}", opts.verbose_name.capitalize(), obj) for obj in objs]
        return items, {opts.verbose_name_plural: len(objs)}, set(), []


@admin.register(Card)
class CardAdmin(SoftDeletedContentAdmin):
    create = staticmethod(create_cards)
    update = staticmethod(update_cards)
    delete = staticmethod(delete_cards)
    form = CardAdminForm
    add_fields = ("workspace", "front_text", "back_text", "card_type", "tags_text", "effort_level")
    edit_fields = ("front_text", "back_text", "card_type", "tags_text", "effort_level")
    content_fields = CARD_WRITABLE
    info_fields = (
        "id",
        "workspace",
        "metadata",
        "fsrs_card_state",
        "due_at",
        "reps",
        "lapses",
        "fsrs_step_index",
        "fsrs_stability",
        "fsrs_difficulty",
        "fsrs_last_reviewed_at",
        "fsrs_scheduled_days",
        "created_at",
        "updated_at",
        "deleted_at",
        "client_updated_at",
        "last_modified_by_replica_id",
        "last_operation_id",
    )
    list_display = ("front", "effort_level", "fsrs_card_state", "due_at", "updated_at", "workspace")
    list_filter = (
        DeletedFilter,
        "fsrs_card_state",
        "effort_level",
        CardTagFilter,
        ("workspace", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("front_text", "back_text")
    ordering = ("-created_at", "id")

    @admin.display(description="front text", ordering="front_text")
    def front(self, obj: Card) -> str:
        return obj.front_text if len(obj.front_text) <= 80 else obj.front_text[:79] + "…"


@admin.register(Deck)
class DeckAdmin(SoftDeletedContentAdmin):
    create = staticmethod(create_decks)
    update = staticmethod(update_decks)
    delete = staticmethod(delete_decks)
    form = DeckAdminForm
    add_fields = ("workspace", "name", "effort_levels_choice", "tags_text")
    edit_fields = ("name", "effort_levels_choice", "tags_text")
    content_fields = DECK_WRITABLE
    info_fields = (
        "id",
        "workspace",
        "created_at",
        "updated_at",
        "deleted_at",
        "client_updated_at",
        "last_modified_by_replica_id",
        "last_operation_id",
    )
    list_display = ("name", "effort_levels", "tags", "updated_at", "workspace")
    list_filter = (DeletedFilter, DeckTagFilter, ("workspace", admin.RelatedOnlyFieldListFilter))
    search_fields = ("name",)
    ordering = ("-created_at", "-id")


@admin.register(Workspace)
class WorkspaceAdmin(PermittedActionsMixin, WorkspaceFilesAdminMixin, admin.ModelAdmin):
    list_display = ("name", "id", "created_at", "desired_retention", "enable_fuzz", "owners")
    search_fields = ("name",)
    actions = ("add_me_as_member",)
    info_fields = (
        "name",
        "id",
        "created_at",
        "updated_at",
        "algorithm",
        "members",
        "last_change_id",
        "last_review_sequence",
    )
    settings_fields = (
        "desired_retention",
        "learning_steps_text",
        "relearning_steps_text",
        "maximum_interval_days",
        "enable_fuzz",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).prefetch_related("memberships__user")

    def get_form(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        kwargs["form"] = WorkspaceCreateForm if obj is None else WorkspaceSettingsForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        return ("name",) if obj is None else (*self.settings_fields, *self.info_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        return () if obj is None else self.info_fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # No service deletes a workspace (and with it every review event); not from here either.
        return False

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            adopt(obj, create_workspace(request.user, form.cleaned_data["name"]))
            return
        changes = form.changed_service_values()
        if changes:
            adopt(obj, update_scheduler_settings(obj, changes))

    # Joining a workspace gives its cards to read and write: the change permission, not view.
    @admin.action(
        description="Add me as a member of the selected workspaces", permissions=["change"]
    )
    def add_me_as_member(self, request: HttpRequest, queryset: QuerySet) -> None:
        """So an administrator (e.g. made with createsuperuser) can query a workspace in the
        console and the browsable API; the same service as `manage.py add_member`."""
        added = [
            ws.name
            for ws in queryset.filter(deleted_at__isnull=True)
            if add_member(request.user, ws)[1]
        ]
        if added:
            self.message_user(
                request, f"You are now a member of: {', '.join(added)}.", messages.SUCCESS
            )
        else:
            self.message_user(request, "You were already a member of them.", messages.INFO)

    @admin.display(description="owners")
    def owners(self, obj: Workspace) -> str:
        return ", ".join(
            str(m.user) for m in obj.memberships.all() if m.role == Membership.ROLE_OWNER
        )

    @admin.display(description="members")
    def members(self, obj: Workspace) -> str:
        return ", ".join(f"{m.user} ({m.role})" for m in obj.memberships.all())


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    list_display = ("user", "workspace", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("user__username", "workspace__name")
    list_select_related = ("user", "workspace")


@admin.register(ReviewEvent)
class ReviewEventAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "card",
        "rating",
        "grade",
        "reviewed_at_client",
        "reviewed_at_server",
        "sequence",
        "workspace",
    )
    list_filter = ("rating", ("workspace", admin.RelatedOnlyFieldListFilter))
    search_fields = ("client_event_id",)
    list_select_related = ("card", "workspace")
    ordering = ("-reviewed_at_server", "-id")

    @admin.display(description="grade")
    def grade(self, obj: ReviewEvent) -> str:
        return REVIEW_GRADES[obj.rating]


@admin.register(ChangeLog)
class ChangeLogAdmin(ReadOnlyAdmin):
    list_display = (
        "change_id",
        "entity_type",
        "entity_id",
        "action",
        "replica_id",
        "recorded_at",
        "workspace",
    )
    list_filter = ("entity_type", "action", ("workspace", admin.RelatedOnlyFieldListFilter))
    search_fields = ("entity_id", "operation_id")
    list_select_related = ("workspace",)
    ordering = ("-id",)


@admin.register(Tag)
class TagAdmin(ReadOnlyAdmin):
    list_display = ("name", "key", "workspace")
    list_filter = (("workspace", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("name",)
    list_select_related = ("workspace",)
    ordering = ("key",)


@admin.register(ApiKey)
class ApiKeyAdmin(PermittedActionsMixin, admin.ModelAdmin):
    """Keys are created (the plaintext shown once) and revoked, never edited or deleted; the
    secret's hash is never displayed."""

    list_display = (
        "public_prefix",
        "label",
        "user",
        "selected_workspace",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("label", "key_id", "user__username")
    list_select_related = ("user", "selected_workspace")
    actions = ("revoke_keys",)
    info_fields = (
        "public_prefix",
        "label",
        "user",
        "selected_workspace",
        "created_at",
        "last_used_at",
        "revoked_at",
    )

    def get_form(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
        return super().get_form(request, obj, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        return ("user", "label", "workspace") if obj is None else self.info_fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Sequence[str]:
        return () if obj is None else self.info_fields

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("flashcards.change_apikey")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        api_key, plaintext = create_api_key(
            form.cleaned_data["user"],
            form.cleaned_data["label"],
            workspace=form.cleaned_data.get("workspace"),
        )
        adopt(obj, api_key)
        messages.warning(
            request,
            format_html(
                "New API key, shown only this once — copy it now: <code>{}</code>", plaintext
            ),
        )

    @admin.action(description="Revoke selected keys", permissions=["revoke"])
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet) -> None:
        revoked = 0
        for api_key in queryset.filter(revoked_at__isnull=True):
            revoke_api_key(api_key)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} key(s).", messages.SUCCESS)

    @admin.display(description="key")
    def public_prefix(self, obj: ApiKey) -> str:
        return f"fca_{obj.key_id}_…"
