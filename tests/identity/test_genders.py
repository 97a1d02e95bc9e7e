"""The gender word table: enough languages, each sourced, and no word meaning both."""

import unicodedata

import pytest

from workers.identity import genders


def test_at_least_thirty_languages_each_with_both_answers_and_a_source():
    assert len(genders.LANGUAGES) >= 30
    for language, female, male, source in genders.LANGUAGES:
        assert female.split() and male.split(), language
        assert source.startswith("en.wiktionary.org/wiki/"), language


def test_languages_outside_the_latin_script_are_written_in_their_own():
    scripts = {
        unicodedata.name(word[0]).split()[0]
        for _language, female, _male, _source in genders.LANGUAGES
        for word in female.split()
    }
    for script in ("CYRILLIC", "GREEK", "ARABIC", "HEBREW", "DEVANAGARI", "BENGALI", "THAI", "CJK", "HANGUL"):
        assert script in scripts


def test_a_word_meaning_both_stops_the_table_from_loading():
    table = {"nam": "m"}
    with pytest.raises(ValueError, match="both f and m"):
        genders._put(table, "nam", "f")


def test_an_answer_that_loses_its_marks_into_another_answer_matches_only_as_written():
    assert genders.code_of("Nő") == "f"
    assert genders.code_of("no") is None
