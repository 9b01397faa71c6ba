"""The book's checked claims: a sentence the run contradicts fails the book's build and shows a note elsewhere."""

from __future__ import annotations

import pytest

from epsaudit.studies import book


def test_a_claim_that_holds_is_silent(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a))
    monkeypatch.setenv("EPSAUDIT_CLAIMS", "strict")
    assert book.claim("one is less than two", 1 < 2, one=1) is True
    assert shown == []


def test_a_broken_claim_fails_a_strict_run(monkeypatch):
    monkeypatch.setenv("EPSAUDIT_CLAIMS", "strict")
    with pytest.raises(book.ClaimError, match=r"the book says 'the cap is about 4.2', but this run has cap = 3.281"):
        book.claim("the cap is about 4.2", False, cap=3.2814)


def test_a_broken_claim_shows_a_note_elsewhere(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **k: shown.append(obj.data))
    monkeypatch.delenv("EPSAUDIT_CLAIMS", raising=False)
    assert book.claim("the cap is about 4.2", False, cap=3.2814) is False
    assert len(shown) == 1
    assert "the cap is about 4.2" in shown[0] and "cap = 3.281" in shown[0]


@pytest.mark.parametrize("value, text", [("strict", True), ("STRICT ", True), ("", False), ("note", False)])
def test_strictness_comes_from_the_environment(monkeypatch, value, text):
    monkeypatch.setenv("EPSAUDIT_CLAIMS", value)
    assert book.strict_claims() is text


def test_reported_names_a_missing_table():
    with pytest.raises(FileNotFoundError, match="no such reported table"):
        book.reported("no_such_table")


@pytest.mark.parametrize("value, digits, text", [(4.19421, 2, "4.19"), (12345, 2, "12,345"), (float("nan"), 2, "–"),
                                                 (None, 2, "–"), (0.5, 3, "0.500"), (True, 2, "True")])
def test_one_number_format(value, digits, text):
    assert book.number(value, digits) == text
