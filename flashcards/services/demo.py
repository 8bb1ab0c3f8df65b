"""A demo workspace with realistic content and review history (`manage.py seed_demo`).

Everything is written through the public service functions, so the demo holds exactly what the
product itself could have produced: tags normalised, sync stamps and change-log entries recorded,
scheduling computed by FSRS from reviews submitted in chronological order."""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Min

from flashcards.models import Card, ReviewEvent, Workspace
from flashcards.services.content import create_cards, create_decks
from flashcards.services.scheduling import submit_review
from flashcards.services.timestamps import now_ms
from flashcards.services.workspaces import create_workspace, member_workspaces

DEMO_WORKSPACE_NAME = "Demo"
# A fixed seed keeps the demo the same on every machine apart from the shift to "now".
RANDOM_SEED = 2026

# (front, back, tags, effort)
DEMO_CARDS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("ubiquitous", "present, appearing or found everywhere", ("english", "vocabulary"), "fast"),
    ("ephemeral", "lasting for a very short time", ("english", "vocabulary"), "fast"),
    (
        "meticulous",
        "showing great attention to detail; very careful and precise",
        ("english", "vocabulary"),
        "fast",
    ),
    ("to procrastinate", "to delay or postpone action", ("english", "vocabulary", "verbs"), "fast"),
    (
        "serendipity",
        "the occurrence of events by chance in a happy or beneficial way",
        ("english", "vocabulary"),
        "medium",
    ),
    (
        "to mitigate",
        "to make something less severe, serious or painful",
        ("english", "vocabulary", "verbs"),
        "fast",
    ),
    ("candid", "truthful and straightforward; frank", ("english", "vocabulary"), "fast"),
    (
        "to scrutinize",
        "to examine or inspect closely and thoroughly",
        ("english", "vocabulary", "verbs"),
        "fast",
    ),
    (
        "pragmatic",
        "dealing with things sensibly and realistically",
        ("english", "vocabulary"),
        "fast",
    ),
    ("resilient", "able to recover quickly from difficulties", ("english", "vocabulary"), "fast"),
    (
        "Past tense of 'to go'",
        "went (past participle: gone)",
        ("english", "grammar", "verbs"),
        "fast",
    ),
    ("Past participle of 'to write'", "written", ("english", "grammar", "verbs"), "fast"),
    (
        "Principal parts of 'to bring'",
        "bring, brought, brought",
        ("english", "grammar", "verbs"),
        "fast",
    ),
    (
        "When do you use the present perfect?",
        "For past actions connected to the present: experience (I have visited Rome), change "
        "over time, and unfinished actions with for/since.",
        ("english", "grammar"),
        "medium",
    ),
    (
        "'Fewer' or 'less'?",
        "'Fewer' with countable nouns (fewer apples), 'less' with uncountable nouns (less water).",
        ("english", "grammar"),
        "fast",
    ),
    (
        "'Who' or 'whom'?",
        "'Who' is a subject (Who called?), 'whom' an object (To whom did you write?). "
        "Test: he → who, him → whom.",
        ("english", "grammar"),
        "medium",
    ),
    (
        "Second conditional: form and use",
        "If + past simple, would + base verb, for unreal or unlikely situations: "
        "If I won the lottery, I would travel.",
        ("english", "grammar"),
        "medium",
    ),
    (
        "What is a gerund?",
        "The -ing form of a verb used as a noun: Swimming is fun.",
        ("english", "grammar"),
        "fast",
    ),
    (
        "Reported speech: 'I am tired,' she said.",
        "She said (that) she was tired.",
        ("english", "grammar", "verbs"),
        "medium",
    ),
    (
        "Explain the difference between 'affect' and 'effect'",
        "'Affect' is usually a verb (to influence); 'effect' is usually a noun (a result). "
        "'Effect' as a verb means to bring about: to effect change.",
        ("english", "grammar"),
        "long",
    ),
    (
        "Passive voice of 'They built the bridge in 1990.'",
        "The bridge was built in 1990.",
        ("english", "grammar", "verbs"),
        "medium",
    ),
    (
        "Third conditional: form, use and an example",
        "If + past perfect, would have + past participle, for imagined past situations: "
        "If I had left earlier, I would have caught the train.",
        ("english", "grammar"),
        "long",
    ),
    ("How do you say 'Good morning' in Spanish?", "Buenos días", ("spanish", "phrases"), "fast"),
    (
        "¿Dónde está la estación de tren?",
        "Where is the train station?",
        ("spanish", "phrases"),
        "fast",
    ),
    (
        "How do you say 'Nice to meet you' in Spanish?",
        "Mucho gusto / Encantado (encantada)",
        ("spanish", "phrases"),
        "fast",
    ),
    ("La cuenta, por favor.", "The bill, please.", ("spanish", "phrases"), "fast"),
    (
        "How do you ask 'How much does it cost?' in Spanish?",
        "¿Cuánto cuesta?",
        ("spanish", "phrases"),
        "fast",
    ),
    ("No hablo mucho español.", "I don't speak much Spanish.", ("spanish", "phrases"), "fast"),
    (
        "How do you say 'I would like a coffee with milk' in Spanish?",
        "Me gustaría un café con leche.",
        ("spanish", "phrases"),
        "medium",
    ),
    ("¿Qué hora es?", "What time is it?", ("spanish", "phrases"), "fast"),
    (
        "Conjugate 'ser' in the present tense",
        "soy, eres, es, somos, sois, son",
        ("spanish", "verbs", "grammar"),
        "medium",
    ),
    (
        "Conjugate 'tener' in the present tense",
        "tengo, tienes, tiene, tenemos, tenéis, tienen",
        ("spanish", "verbs", "grammar"),
        "medium",
    ),
    (
        "'Ser' or 'estar': when do you use each?",
        "'Ser' for identity, traits, origin and time (Soy de Madrid); 'estar' for states, "
        "location and feelings (Estoy cansado, Está en casa).",
        ("spanish", "verbs", "grammar"),
        "long",
    ),
    (
        "How do you say 'I have to go' in Spanish?",
        "Tengo que irme.",
        ("spanish", "phrases"),
        "fast",
    ),
    ("Me duele la cabeza.", "I have a headache (my head hurts).", ("spanish", "phrases"), "fast"),
    ("Preterite of 'ir', first person singular", "fui", ("spanish", "verbs"), "fast"),
    ("What does len([1, 2, 3]) return?", "3", ("python", "basics"), "fast"),
    (
        "How do you reverse a list xs in place?",
        "xs.reverse() — or xs[::-1] for a reversed copy.",
        ("python", "basics"),
        "fast",
    ),
    (
        "What is the difference between a list and a tuple?",
        "Lists are mutable; tuples are immutable and can be dict keys when their items are "
        "hashable.",
        ("python", "basics"),
        "medium",
    ),
    (
        "A list comprehension of the squares of 0..9",
        "[n * n for n in range(10)]",
        ("python", "basics"),
        "fast",
    ),
    (
        "What does dict.get(key, default) do?",
        "Returns the value for key if present, else default (None if omitted), without raising "
        "KeyError.",
        ("python", "basics"),
        "fast",
    ),
    (
        "What is a generator?",
        "A function that uses yield to produce values lazily, one at a time, keeping its state "
        "between calls.",
        ("python", "advanced"),
        "medium",
    ),
    (
        "What does the with statement do?",
        "Runs a block inside a context manager, which guarantees clean-up (closing a file, "
        "releasing a lock) through __enter__ and __exit__.",
        ("python", "advanced"),
        "medium",
    ),
    (
        "What does print(0.1 + 0.2 == 0.3) print?",
        "False: binary floating point cannot represent 0.1 and 0.2 exactly; compare with "
        "math.isclose.",
        ("python", "basics"),
        "medium",
    ),
    (
        "Explain *args and **kwargs",
        "*args collects extra positional arguments into a tuple; **kwargs collects extra keyword "
        "arguments into a dict.",
        ("python", "basics"),
        "medium",
    ),
    (
        "What is a decorator? Write a minimal one that logs calls.",
        "A callable that takes a function and returns a replacement:\n"
        "def log(f):\n"
        "    def wrapper(*args, **kwargs):\n"
        "        print(f.__name__)\n"
        "        return f(*args, **kwargs)\n"
        "    return wrapper",
        ("python", "advanced"),
        "long",
    ),
    (
        "What does the GIL mean for CPU-bound threads in CPython?",
        "Only one thread runs Python bytecode at a time, so CPU-bound work does not speed up "
        "with threads; use processes instead.",
        ("python", "advanced"),
        "long",
    ),
    (
        "How do you open a text file for reading as UTF-8?",
        'open(path, encoding="utf-8")',
        ("python", "basics"),
        "fast",
    ),
    (
        "What does enumerate(xs, start=1) yield?",
        "Pairs (index, item) with indices from 1.",
        ("python", "basics"),
        "fast",
    ),
    (
        "What is wrong with def f(xs=[])?",
        "The default list is created once, when the function is defined, and shared by every "
        "call; use xs=None and create the list inside.",
        ("python", "advanced"),
        "medium",
    ),
    ("Capital of Australia", "Canberra", ("geography", "capitals"), "fast"),
    ("Capital of Canada", "Ottawa", ("geography", "capitals"), "fast"),
    ("Capital of Brazil", "Brasília", ("geography", "capitals"), "fast"),
    ("Capital of Japan", "Tokyo", ("geography", "capitals"), "fast"),
    ("Capital of Spain", "Madrid", ("geography", "capitals", "spanish"), "fast"),
    (
        "Longest river in the world",
        "The Nile (about 6,650 km), with the Amazon a close contender.",
        ("geography", "rivers"),
        "fast",
    ),
    (
        "Highest mountain in Africa",
        "Kilimanjaro (5,895 m), in Tanzania.",
        ("geography", "mountains"),
        "fast",
    ),
    (
        "Which countries share the Iberian Peninsula?",
        "Spain, Portugal and Andorra, plus Gibraltar (British) and a sliver of France.",
        ("geography",),
        "medium",
    ),
    (
        "Name the seven continents",
        "Africa, Antarctica, Asia, Australia (Oceania), Europe, North America, South America.",
        ("geography",),
        "medium",
    ),
    ("Largest ocean", "The Pacific Ocean.", ("geography",), "fast"),
    (
        "Why is the Dead Sea so salty?",
        "It is a terminal lake: water flows in but leaves only by evaporation in a hot, dry "
        "climate, which concentrates the salts.",
        ("geography",),
        "long",
    ),
)

DEMO_DECKS: tuple[dict[str, object], ...] = (
    {"name": "English", "tags": ["english"]},
    {"name": "Spanish phrases", "tags": ["spanish", "phrases"]},
    {"name": "Python", "tags": ["python"], "effort_levels": ["fast", "medium"]},
    {"name": "Quick wins", "effort_levels": ["fast"]},
)

# Rating sequences (0 again, 1 hard, 2 good, 3 easy) dealt to the cards in turn, so the demo
# holds new, learning, review and relearning cards, some due now and some later.
REVIEW_PLANS: tuple[tuple[int, ...], ...] = (
    (),
    (2,),
    (2, 2, 2),
    (2, 2, 0),
    (3, 2),
    (1, 2, 2, 2),
    (2, 2, 2, 1),
    (0, 2, 2, 2, 0),
    (),
)


@dataclass(frozen=True)
class DemoResult:
    workspace: Workspace
    created: bool
    cards: int
    decks: int
    reviews: int


def find_demo_workspace(user: AbstractBaseUser) -> Workspace | None:
    return (
        member_workspaces(user)
        .filter(name=DEMO_WORKSPACE_NAME)
        .order_by("created_at", "id")
        .first()
    )


@transaction.atomic
def seed_demo_workspace(user: AbstractBaseUser) -> DemoResult:
    """Create the user's demo workspace, or return the existing one untouched (idempotent)."""
    existing = find_demo_workspace(user)
    if existing is not None:
        return DemoResult(existing, created=False, cards=0, decks=0, reviews=0)
    workspace = create_workspace(user, DEMO_WORKSPACE_NAME)
    cards = create_cards(
        workspace,
        [
            {"front_text": front, "back_text": back, "tags": list(tags), "effort_level": effort}
            for front, back, tags, effort in DEMO_CARDS
        ],
    )
    decks = create_decks(workspace, list(DEMO_DECKS))
    now = now_ms()
    reviews = _replay_history(workspace, [card.id for card in cards], now)
    _date_cards_by_history(workspace, cards, now)
    return DemoResult(workspace, created=True, cards=len(cards), decks=len(decks), reviews=reviews)


def _date_cards_by_history(workspace: Workspace, cards: list[Card], now: datetime) -> None:
    """Each card created shortly before its first review, or within the last week if it has none,
    so that "cards created this week" means something on the demo."""
    rng = random.Random(RANDOM_SEED + 1)
    first_reviews = dict(
        ReviewEvent.objects.filter(workspace=workspace)
        .values("card_id")
        .annotate(first=Min("reviewed_at_client"))
        .values_list("card_id", "first")
    )
    for card in cards:
        first = first_reviews.get(card.id)
        if first is not None:
            card.created_at = first - timedelta(minutes=rng.randint(2, 180))
        else:
            card.created_at = now - timedelta(days=rng.randint(0, 6), minutes=rng.randint(0, 600))
    Card.objects.bulk_update(cards, ["created_at"])


def _replay_history(workspace: Workspace, card_ids: list[object], now: datetime) -> int:
    """Submit every planned review in global chronological order (so review sequence numbers
    follow time): each card starts 10-40 days ago and comes back shortly after it falls due,
    until its plan runs out or its next review would be in the future."""
    rng = random.Random(RANDOM_SEED)
    queue: list[tuple[datetime, int, int]] = []
    for index in range(len(card_ids)):
        if REVIEW_PLANS[index % len(REVIEW_PLANS)]:
            start = now - timedelta(days=rng.randint(10, 40), minutes=rng.randint(0, 600))
            heapq.heappush(queue, (start, index, 0))
    count = 0
    while queue:
        when, index, step = heapq.heappop(queue)
        plan = REVIEW_PLANS[index % len(REVIEW_PLANS)]
        result = submit_review(
            workspace,
            card_ids[index],
            plan[step],
            reviewed_at=when,
            client_event_id=f"seed-demo-{index}-{step}",
        )
        count += 1
        due = result.card.due_at
        if step + 1 < len(plan) and due is not None:
            following = max(due, when) + timedelta(minutes=rng.randint(1, 240))
            if following <= now:
                heapq.heappush(queue, (following, index, step + 1))
    return count
