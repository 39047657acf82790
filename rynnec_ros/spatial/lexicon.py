"""Words of other languages in English spatial questions, glossed to the English the rules read.

Writers of English who are not native speakers drop words or short clauses of their own language in
("combien de cm", "est à droite de", "kaç metre uzakta", "bên trái"). The rules read English only, so a
dropped-in word was refused as unread; the glossary (data/foreign_words.yaml, data written by hand)
turns the words of the question families into English before the rest of ``parse.normalise`` runs, and
the answer says what it glossed. Words it does not cover stay as written, for the unread-word checks to
refuse.

The safety rules are checked here when the file loads, not left to the editor: a single glossary word is
never an English word (data/english_words.txt or the file's ``also_english``) nor one the file leaves out
as ambiguous (``left_out``), and a spelling glosses to one English text only across all languages; an
accent-stripped spelling that breaks a rule is dropped (the accented one stays).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources
from typing import Any

import yaml

# libyaml's safe loader where PyYAML was built with it (the same document, parsed about 8 times faster:
# the glossary is the largest data file the spatial front end loads; docs/spatial.md has the figures).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _unique_keys(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[object, object]:
    """A mapping whose keys are all different: YAML requires it, but PyYAML keeps the last of two equal
    keys without a word, so an entry written twice (the second perhaps with another gloss) would pass
    unseen."""
    seen: set[object] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise ValueError(f"foreign_words.yaml, line {key_node.start_mark.line + 1}: {key!r} is a key "
                             "twice in one mapping")
        seen.add(key)
    return loader.construct_mapping(node)


# the safe loader (libyaml's where built), refusing a key written twice in one mapping
_LOADER: Any = type("_UniqueKeyLoader", (_SAFE_LOADER,), {})
_LOADER.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_keys)
# Letters that are not a base letter plus a combining mark, stripped by hand (Vietnamese đ, Polish ł ...).
_BASE = str.maketrans({"đ": "d", "ł": "l", "ø": "o", "ı": "i", "ß": "ss", "æ": "ae", "œ": "oe"})
# Scripts written without spaces between words: an entry in them matches inside a run of letters.
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
# A token is a run of anything but spaces and punctuation (combining marks of Devanagari, Thai ... are
# not ``\w``, so ``\b`` would cut inside words).
_EDGE = r"\s.,;:!?¿¡\"()\[\]{}<>«»“”„、。，？！：；"
# plain English words; "right?" (a tag, "oder?", "nicht wahr") keeps its question mark for the rules
_GLOSS = re.compile(r"[a-z' ]+\??")


def strip_accents(text: str) -> str:
    """``text`` without its diacritics, for Latin script only ("à droite" → "a droite"); other scripts
    (Devanagari vowel signs, Hebrew points) keep theirs, which are letters there, not accents."""
    if not all(c.isascii() or "LATIN" in unicodedata.name(c, "") or not c.isalpha()
               for c in unicodedata.normalize("NFC", text)):
        return text
    decomposed = unicodedata.normalize("NFD", text.translate(_BASE))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def english_words() -> frozenset[str]:
    """The common English words of data/english_words.txt: no glossary word may be one, and the rules'
    language check (``parse.py``) counts them; one reader for both."""
    text = resources.files("rynnec_ros.spatial").joinpath("data/english_words.txt").read_text()
    return frozenset(w for w in map(str.strip, text.splitlines()) if w and not w.startswith("#"))


def _could_be_english(spelling: str, english: frozenset[str]) -> bool:
    # a tag's question mark ("oder?", "verdad?") is part of the spelling, not of the word: "na?" is "na"
    return all(token in english for token in spelling.removesuffix("?").split())


def load(text: str) -> Any:
    """The glossary file's document, read safely; a key written twice in one mapping is an error."""
    return yaml.load(text, Loader=_LOADER)


@cache
def glossary() -> dict[str, str]:
    """Every spelling (lower case, NFC; accented as written and stripped) → its English gloss.

    Raises ``ValueError`` when the file breaks a safety rule as written (an English word as an entry, a
    spelling with two glosses, a gloss that is not plain English words)."""
    data = resources.files("rynnec_ros.spatial").joinpath("data/foreign_words.yaml")
    raw = load(data.read_text(encoding="utf-8"))
    english = english_words() | frozenset(raw["also_english"])
    left_out = frozenset(unicodedata.normalize("NFC", str(w)).lower() for w in raw["left_out"])
    written: dict[str, str] = {}
    for language, entries in raw["languages"].items():
        for word, gloss in entries.items():
            spelling = unicodedata.normalize("NFC", str(word)).lower()
            if not _GLOSS.fullmatch(gloss):
                raise ValueError(f"foreign_words.yaml, {language}: {word!r}'s gloss {gloss!r} is not English")
            if _could_be_english(spelling, english) or spelling in left_out:
                raise ValueError(f"foreign_words.yaml, {language}: {word!r} is English or left out")
            if written.setdefault(spelling, gloss) != gloss:
                raise ValueError(f"foreign_words.yaml: {word!r} is both {written[spelling]!r} and {gloss!r}")
    stripped: dict[str, set[str]] = {}
    for spelling, gloss in written.items():
        plain = strip_accents(spelling)
        if plain != spelling and not _could_be_english(plain, english) and plain not in left_out:
            stripped.setdefault(plain, set()).add(gloss)
    # a stripped spelling two glosses share, or one that is another entry as written, is left out
    extra = {plain: glosses.pop() for plain, glosses in stripped.items()
             if len(glosses) == 1 and plain not in written}
    return written | extra


# A tree of spellings by their letters; the key "" marks a spelling that ends at its node.
_Tree = dict[str, "_Tree"]


def _alternation(spellings: list[str]) -> str:
    """One regular expression that matches any of ``spellings``, longest first, written as a tree of their
    common prefixes ("kiri|kiri kanan|kirinya" as "kiri(?: kanan|nya)?"): Python's engine tries a flat
    alternation's branches one by one at every place a word starts, which with some 5,000 spellings was
    most of the time ``translate`` took; the tree tries each letter once. All the spellings that match at
    one place are prefixes of the text there, one path down the tree, and a longer branch is tried before
    the shorter spelling ends (the group is optional and greedy), so the longest wins, as in a flat
    alternation sorted by length (and, for spaced spellings, the longest that ends a token)."""
    tree: _Tree = {}
    for spelling in spellings:
        node = tree
        for char in spelling:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Tree) -> str:
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        group = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        if "" not in node:
            return group
        return f"(?:{group})?" if len(branches) == 1 and len(group) > 1 else f"{group}?"

    return emit(tree)


@cache
def _pattern() -> re.Pattern[str]:
    spaced: list[str] = []
    unspaced: list[str] = []
    for spelling in glossary():
        (unspaced if _UNSPACED.search(spelling) else spaced).append(spelling)
    whole = rf"(?<![^{_EDGE}])(?:{_alternation(spaced)})(?![^{_EDGE}])"
    return re.compile(f"{whole}|{_alternation(unspaced)}" if unspaced else whole)


def translate(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` (lower case) with every glossary word in English, and the (word as written, gloss) pairs
    used, in order. The gloss is spaced off, so "左边" in a run of Chinese stands as a word."""
    used: list[tuple[str, str]] = []

    def gloss(m: re.Match[str]) -> str:
        english = glossary()[m.group(0)]
        used.append((m.group(0), english))
        return f" {english} "

    return _pattern().sub(gloss, unicodedata.normalize("NFC", text)), used


def stated(question: str) -> str:
    """How the question's foreign words were read, for the answer's text and a refusal's reason
    ("read 'sinistra' as 'left'"), or "" when it has none."""
    used = translate(question.lower())[1]
    return "; ".join(f"read {w!r} as {e!r}" for w, e in dict.fromkeys(used))
