"""Admin forms. They expose only the writable fields and validate with the same cleaning functions
the services use, so a bad value shows up as a form error next to its field; the admin then hands
the cleaned values to the service functions (flashcards.admin.site), never to `Model.save()`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms

from flashcards.models import EFFORT_LEVELS, ApiKey, Card, Deck, Workspace
from flashcards.services import DomainError, member_workspaces
from flashcards.services.api_keys import clean_label
from flashcards.services.content import (
    CARD_WRITABLE,
    DECK_WRITABLE,
    clean_card_fields,
    clean_deck_fields,
)
from flashcards.services.scheduling import SETTINGS_FIELDS, clean_scheduler_settings
from flashcards.services.workspaces import clean_workspace_name


def run_cleaner(
    form: forms.Form, cleaner: Callable[[], dict[str, Any]], fallback_field: str | None = None
) -> dict[str, Any] | None:
    """Run a service cleaning function; a DomainError becomes an error on the field it names."""
    try:
        return cleaner()
    except DomainError as exc:
        field = exc.field if exc.field in form.fields else fallback_field
        form.add_error(field, exc.message)
        return None


def split_tags(text: str) -> list[str]:
    return [part for part in text.split(",") if part.strip()]


def join_tags(tags: list[str]) -> str:
    return ", ".join(tags)


def _same(name: str, new: object, old: object) -> bool:
    if name == "tags" and isinstance(new, list) and isinstance(old, list):
        return [t.lower() for t in new] == [t.lower() for t in old]
    return new == old


class ServiceForm(forms.ModelForm):
    """A model form whose values go to a service function. Remembers the instance's values as
    loaded, because ModelForm validation overwrites the instance's attributes."""

    service_fields: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.original = (
            {f: getattr(self.instance, f) for f in self.service_fields} if self.instance.pk else {}
        )
        self.service_values: dict[str, Any] = {}

    def changed_service_values(self) -> dict[str, Any]:
        return {
            k: v for k, v in self.service_values.items() if not _same(k, v, self.original.get(k))
        }


class CardAdminForm(ServiceForm):
    service_fields = CARD_WRITABLE
    tags_text = forms.CharField(
        label="Tags",
        required=False,
        help_text="Comma-separated; spelling of an existing tag in the workspace wins.",
    )

    class Meta:
        model = Card
        fields = ["workspace", "front_text", "back_text", "card_type", "effort_level"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "workspace" in self.fields:
            self.fields["workspace"].queryset = Workspace.objects.filter(deleted_at__isnull=True)
        for optional in ("back_text", "card_type"):
            if optional in self.fields:
                self.fields[optional].required = False
        if self.instance.pk:
            self.initial["tags_text"] = join_tags(self.instance.tags)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        values = {
            "front_text": data.get("front_text", ""),
            "back_text": data.get("back_text") or "",
            "card_type": data.get("card_type") or "",
            "effort_level": data.get("effort_level"),
            "tags": split_tags(data.get("tags_text") or ""),
        }
        self.service_values = (
            run_cleaner(self, lambda: clean_card_fields(values, creating=True), "front_text") or {}
        )
        return data


class DeckAdminForm(ServiceForm):
    service_fields = DECK_WRITABLE
    effort_levels_choice = forms.MultipleChoiceField(
        label="Effort levels",
        choices=[(e, e) for e in EFFORT_LEVELS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None selected means any effort.",
    )
    tags_text = forms.CharField(
        label="Tags", required=False, help_text="Comma-separated; empty means any tag."
    )

    class Meta:
        model = Deck
        fields = ["workspace", "name"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "workspace" in self.fields:
            self.fields["workspace"].queryset = Workspace.objects.filter(deleted_at__isnull=True)
        if self.instance.pk:
            self.initial["tags_text"] = join_tags(self.instance.tags)
            self.initial["effort_levels_choice"] = list(self.instance.effort_levels)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        # Keep the enum's order, whatever order the checkboxes came in.
        chosen = set(data.get("effort_levels_choice") or [])
        values = {
            "name": data.get("name", ""),
            "effort_levels": [e for e in EFFORT_LEVELS if e in chosen],
            "tags": split_tags(data.get("tags_text") or ""),
        }
        self.service_values = (
            run_cleaner(self, lambda: clean_deck_fields(values, creating=True), "name") or {}
        )
        return data


def _minutes_text(steps: list[int]) -> str:
    return ", ".join(str(m) for m in steps)


def _parse_minutes(form: forms.Form, field: str) -> list[int] | None:
    text = form.cleaned_data.get(field) or ""
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        form.add_error(field, "Enter whole minutes separated by commas, e.g. 1, 10.")
        return None


class WorkspaceCreateForm(forms.ModelForm):
    class Meta:
        model = Workspace
        fields = ["name"]

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        try:
            return clean_workspace_name(name)
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from exc


class WorkspaceSettingsForm(ServiceForm):
    service_fields = SETTINGS_FIELDS
    learning_steps_text = forms.CharField(
        label="Learning steps (minutes)", help_text="Strictly increasing, e.g. 1, 10."
    )
    relearning_steps_text = forms.CharField(
        label="Relearning steps (minutes)", help_text="Strictly increasing, e.g. 10."
    )

    class Meta:
        model = Workspace
        fields = ["desired_retention", "maximum_interval_days", "enable_fuzz"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initial["learning_steps_text"] = _minutes_text(self.instance.learning_steps_minutes)
        self.initial["relearning_steps_text"] = _minutes_text(
            self.instance.relearning_steps_minutes
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        learning = _parse_minutes(self, "learning_steps_text")
        relearning = _parse_minutes(self, "relearning_steps_text")
        if self.errors:
            return data
        values = {
            "desired_retention": data["desired_retention"],
            "maximum_interval_days": data["maximum_interval_days"],
            "enable_fuzz": data["enable_fuzz"],
            "learning_steps_minutes": learning,
            "relearning_steps_minutes": relearning,
        }
        field_of = {
            "learning_steps_minutes": "learning_steps_text",
            "relearning_steps_minutes": "relearning_steps_text",
        }
        try:
            self.service_values = clean_scheduler_settings(values)
        except DomainError as exc:
            self.add_error(field_of.get(exc.field or "", exc.field), exc.message)
        return data


class ApiKeyCreateForm(forms.ModelForm):
    """Only user and label come from the form; the key id and secret hash are made by
    services.create_api_key."""

    workspace = forms.ModelChoiceField(
        queryset=Workspace.objects.filter(deleted_at__isnull=True),
        required=False,
        help_text="Selected for the key; the user must be a member. Leave empty to let the key "
        "pick the user's only workspace.",
    )

    class Meta:
        model = ApiKey
        fields = ["user", "label"]

    def clean_label(self) -> str:
        try:
            return clean_label(self.cleaned_data["label"])
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from exc

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        user, workspace = data.get("user"), data.get("workspace")
        if user and workspace and not member_workspaces(user).filter(pk=workspace.pk).exists():
            self.add_error("workspace", f"{user} is not a member of this workspace.")
        return data
