"""Cards rendered from the note type's own templates, as Anki renders them: collections built with
the official ``anki`` package, their text compared with Anki's own rendering (HTML removed)."""

from __future__ import annotations

import pytest

from flashcards.interchange.html_text import html_to_text
from flashcards.interchange.templates import Context, render
from flashcards.models import Card

pytest.importorskip("anki")


def _build(tmp_path):
    from anki.collection import Collection, ExportAnkiPackageOptions

    col = Collection(str(tmp_path / "collection.anki2"))
    col.decks.rename(col.decks.get(1), "Vocabulario")
    models = col.models
    # A custom type: four fields, two templates, the second asks the third field.
    vocab = models.new("Vocab")
    for name in ("Word", "Meaning", "Example", "Notes"):
        models.add_field(vocab, models.new_field(name))
    first = models.new_template("Recognise")
    first["qfmt"] = "{{Word}}{{#Notes}}<br><i>has notes</i>{{/Notes}}"
    first["afmt"] = "{{FrontSide}}<hr id=answer>{{Meaning}}<br>{{hint:Example}}"
    second = models.new_template("Use")
    second["qfmt"] = "Use in a sentence: {{Example}}{{^Notes}} (no notes){{/Notes}}"
    second["afmt"] = "{{FrontSide}}<hr id=answer>{{Word}}: {{type:Meaning}}"
    models.add_template(vocab, first)
    models.add_template(vocab, second)
    models.add(vocab)
    # A cloze type whose cloze field is not the first one.
    cloze = models.copy(models.by_name("Cloze"), add=False)
    cloze["name"] = "Cloze late"
    models.add_field(cloze, models.new_field("Source"))
    models.reposition_field(cloze, cloze["flds"][2], 0)
    models.add(cloze)
    notes = []
    note = col.new_note(models.by_name("Vocab"))
    note["Word"], note["Meaning"] = "perro", "dog"
    note["Example"], note["Notes"] = "El <b>perro</b> ladra.", "masculine"
    notes.append(note)
    col.add_note(note, 1)
    note = col.new_note(models.by_name("Cloze late"))
    note["Source"], note["Text"] = "atlas", "{{c1::Lima}} is in {{c2::Peru}}"
    note["Back Extra"] = "<table><tr><td>verb</td><td>yo</td></tr></table>"
    col.add_note(note, 1)
    optional = col.new_note(models.by_name("Basic (optional reversed card)"))
    optional["Front"], optional["Back"], optional["Add Reverse"] = "gato", "cat", "y"
    col.add_note(optional, 1)
    optional["Add Reverse"] = ""
    col.update_note(optional)  # the reverse card stays in the collection, Anki shows none
    rendered = {}
    for cid in col.find_cards(""):
        card = col.get_card(cid)
        output = card.render_output(reload=True)
        answer = output.answer_text
        if "<hr id=answer>" in answer:
            answer = answer.split("<hr id=answer>", 1)[1]
        rendered[(card.note().guid, card.ord)] = (
            html_to_text(col.media.strip_av_tags(output.question_text))[0],
            html_to_text(answer)[0],
            bool(output.question_text.strip()) and card.note_type()["name"],
        )
    out = tmp_path / "types.apkg"
    col.export_anki_package(
        out_path=str(out),
        options=ExportAnkiPackageOptions(
            with_scheduling=True, with_deck_configs=False, with_media=False, legacy=False
        ),
        limit=None,
    )
    col.close()
    return out, rendered


def test_every_card_is_rendered_as_anki_renders_it(upload, workspace, tmp_path):
    path, anki_cards = _build(tmp_path)
    status, body = upload(path)
    assert status == 200, body
    report = body["data"]
    assert report["anki"]["notGenerated"] == 1  # the emptied optional reverse
    assert report["cards"] == {
        "created": 5, "updated": 0, "unchanged": 0, "skipped": 1, "rejected": 0
    }  # fmt: skip
    cards = Card.objects.filter(workspace=workspace)
    got = {(c.metadata["source"]["note_guid"], c.metadata["source"]["card_ord"]): c for c in cards}
    for key, (question, answer, _) in anki_cards.items():
        if key not in got:
            continue
        card = got[key]
        assert card.front_text == question, key
        # Anki shows a typing box on the question side and compares on the answer side.
        # A hint's link label ("Example") is a button in Anki; the hint's text is kept.
        answer = answer.replace("\n", " ").replace("Example El perro", "El perro")
        if "type" not in answer:
            assert card.back_text.replace("\n", " ") == answer.replace("\n", " "), key
    assert len(got) == 5
    use = next(c for c in cards if c.front_text.startswith("Use in a sentence"))
    assert use.front_text == "Use in a sentence: El perro ladra."
    assert use.back_text == "perro: dog" and use.card_type == "reversed"
    recognise = next(c for c in cards if c.front_text.startswith("perro"))
    assert recognise.back_text == "dog\nEl perro ladra."
    lima = next(c for c in cards if "Peru" in c.front_text)
    assert lima.front_text == "[...] is in Peru" and lima.card_type == "cloze"
    assert lima.back_text == "Lima is in Peru\nverb | yo"
    assert lima.metadata["source"]["fields"] == {"Source": "atlas"}
    # The renamed Default deck keeps its deck tag.
    assert all("Vocabulario" in c.tags for c in cards)


def test_sections_filters_and_the_answer_rule():
    context = Context({"A": "x", "B": "", "C": "<b>y</b>"}, 0)
    out = render("{{A}}{{#B}}hidden{{/B}}{{^B}} shown{{/B}}{{!comment}}", "{{FrontSide}}", context)
    assert out.question == "x shown" and out.answer == "" and not out.empty
    out = render("{{B}}", "{{C}}", context)
    assert out.empty
    out = render("{{text:C}}", "{{FrontSide}}<hr id=answer>{{A}} {{type:C}}", context)
    assert out.answer == "x <b>y</b>" and out.used == {"A", "C"}


def test_image_occlusion_notes_say_what_they_are(upload, workspace, tmp_path):
    from anki.collection import Collection, ExportAnkiPackageOptions

    col = Collection(str(tmp_path / "collection.anki2"))
    # Anki's own stock Image Occlusion note type (fields Occlusion, Image, Header, ...).
    assert col.models.by_name("Image Occlusion") is not None
    note = col.new_note(col.models.by_name("Image Occlusion"))
    note["Occlusion"] = "{{c1::image-occlusion:rect:left=.5:top=.2:width=.1:height=.1}}"
    note["Image"], note["Header"] = '<img src="heart.png">', "The heart"
    col.add_note(note, 1)
    out = tmp_path / "io.apkg"
    col.export_anki_package(
        out_path=str(out),
        options=ExportAnkiPackageOptions(
            with_scheduling=False, with_deck_configs=False, with_media=False, legacy=False
        ),
        limit=None,
    )
    col.close()
    status, body = upload(out)
    assert status == 200, body
    assert body["data"]["anki"]["imageOcclusion"] == 1
    card = Card.objects.get(workspace=workspace)
    assert card.card_type == "image-occlusion"
    assert card.front_text.startswith("Image Occlusion card 1: The heart")
    assert "image" in card.front_text and "not kept" in card.front_text
