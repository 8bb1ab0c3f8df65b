"""Service functions: the only writers of content rows. Import from here."""

from flashcards.services.api_keys import (
    InvalidApiKey,
    authenticate_api_key,
    create_api_key,
    revoke_api_key,
)
from flashcards.services.common import DomainError, NotFoundError, WriteContext, all_or_nothing
from flashcards.services.content import (
    create_cards,
    create_decks,
    delete_cards,
    delete_decks,
    get_live_card,
    update_cards,
    update_decks,
)
from flashcards.services.scheduling import (
    RESET_CONFIRMATION,
    ReviewResult,
    parse_rating,
    reset_progress,
    submit_review,
    update_scheduler_settings,
)
from flashcards.services.timestamps import format_timestamp, now_ms, truncate_ms
from flashcards.services.workspaces import (
    WorkspaceSelectionRequired,
    add_member,
    create_workspace,
    ensure_personal_workspace,
    get_member_workspace,
    member_workspaces,
    rename_workspace,
    resolve_key_workspace,
    resolve_user_workspace,
    select_key_workspace,
    select_user_workspace,
)

__all__ = [
    "RESET_CONFIRMATION",
    "DomainError",
    "InvalidApiKey",
    "NotFoundError",
    "ReviewResult",
    "WorkspaceSelectionRequired",
    "WriteContext",
    "add_member",
    "all_or_nothing",
    "authenticate_api_key",
    "create_api_key",
    "create_cards",
    "create_decks",
    "create_workspace",
    "delete_cards",
    "delete_decks",
    "ensure_personal_workspace",
    "format_timestamp",
    "get_live_card",
    "get_member_workspace",
    "member_workspaces",
    "now_ms",
    "parse_rating",
    "rename_workspace",
    "reset_progress",
    "resolve_key_workspace",
    "resolve_user_workspace",
    "revoke_api_key",
    "select_key_workspace",
    "select_user_workspace",
    "submit_review",
    "truncate_ms",
    "update_cards",
    "update_decks",
    "update_scheduler_settings",
]
