"""Tag normalisation and the workspace's one-spelling-per-tag table (dsl.md §6.1 tag rules)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from flashcards.models import CardTag, DeckTag, Tag, Workspace
from flashcards.services.common import DomainError, check_storable

MAX_TAG_LENGTH = 255
MAX_TAGS = 100


def tag_key(tag: str) -> str:
    """The comparison form of a tag: every tag comparison in the product is on this key."""
    return unicodedata.normalize("NFC", tag).strip().lower()


def normalize_tags(raw: object, *, field: str = "tags") -> list[str]:
    """Trim, NFC-normalise, drop empties and case-insensitive repeats (first spelling kept)."""
    if raw is None:
        return []
    if isinstance(raw, str) or not isinstance(raw, (list, tuple)):
        raise DomainError(f"{field} must be a list of strings, e.g. ('tag1', 'tag2').", field=field)
    seen: set[str] = set()
    result: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            raise DomainError(f"{field} must contain only strings; got {item!r}.", field=field)
        tag = unicodedata.normalize("NFC", item).strip()
        if not tag:
            continue
        check_storable(tag, field)
        if len(tag) > MAX_TAG_LENGTH:
            raise DomainError(
                f"A tag may be at most {MAX_TAG_LENGTH} characters long.", field=field
            )
        key = tag.lower()
        if key in seen:
            continue
        seen.add(key)
        result.append(tag)
    if len(result) > MAX_TAGS:
        raise DomainError(f"At most {MAX_TAGS} tags per row.", field=field)
    return result


def resolve_tags(workspace: Workspace, tag_lists: Iterable[Sequence[str]]) -> dict[str, Tag]:
    """Map every tag key used in `tag_lists` to the workspace's Tag row, creating missing ones with
    the spelling of their first use. Costs two or three queries whatever the number of tags."""
    wanted: dict[str, str] = {}
    for tags in tag_lists:
        for tag in tags:
            wanted.setdefault(tag.lower(), tag)
    if not wanted:
        return {}
    existing = {t.key: t for t in Tag.objects.filter(workspace=workspace, key__in=list(wanted))}
    missing = [
        Tag(workspace=workspace, key=k, name=v) for k, v in wanted.items() if k not in existing
    ]
    if missing:
        Tag.objects.bulk_create(missing)
        existing.update(
            {
                t.key: t
                for t in Tag.objects.filter(workspace=workspace, key__in=[m.key for m in missing])
            }
        )
    return existing


def canonical_spelling(tags: Sequence[str], resolved: dict[str, Tag]) -> list[str]:
    return [resolved[tag.lower()].name for tag in tags]


def replace_card_tags(
    workspace: Workspace, tags_by_card: dict[object, list[str]], resolved: dict[str, Tag]
) -> None:
    """Rewrite the indexed tag rows of the given cards in two queries."""
    if not tags_by_card:
        return
    CardTag.objects.filter(card_id__in=list(tags_by_card)).delete()
    CardTag.objects.bulk_create(
        CardTag(workspace=workspace, card_id=card_id, tag=resolved[tag.lower()], position=i)
        for card_id, tags in tags_by_card.items()
        for i, tag in enumerate(tags)
    )


def replace_deck_tags(
    workspace: Workspace, tags_by_deck: dict[object, list[str]], resolved: dict[str, Tag]
) -> None:
    if not tags_by_deck:
        return
    DeckTag.objects.filter(deck_id__in=list(tags_by_deck)).delete()
    DeckTag.objects.bulk_create(
        DeckTag(workspace=workspace, deck_id=deck_id, tag=resolved[tag.lower()], position=i)
        for deck_id, tags in tags_by_deck.items()
        for i, tag in enumerate(tags)
    )
