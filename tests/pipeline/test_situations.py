"""A user turn says why the user asks in the service's words, true to what the turn does, and in natural frames."""

from __future__ import annotations

import random
import re
import string
from collections import Counter

from pipeline.env.environment import builtin_domain
from pipeline.language.requests.step_parts import one_with
from pipeline.language.requests.turn import compose_turn
from pipeline.language.situations import ASIDES, GENERAL, situation, with_situation
from servers.registry import CATALOGUE

BANKING = builtin_domain("banking")
READ = "pull up the balance for account ACC-0003"
WRITE = "transfer 25 from account ACC-0003 to account ACC-0004"


def _said(text: str, pool: list[str]) -> bool:
    low = text.lower()
    return any(s.lower() in low for s in pool)


def test_a_turn_that_only_reads_never_gives_a_reason_to_change_something_and_a_writing_turn_never_a_reading_one():
    reads, writes = BANKING.reasons.reads, BANKING.reasons.writes
    read_turns = [compose_turn([READ], random.Random(s), "retiree", 0, False, BANKING, False) for s in range(300)]
    write_turns = [compose_turn([WRITE], random.Random(s), "retiree", 0, False, BANKING, True) for s in range(300)]
    assert not any(_said(t, writes) for t in read_turns)
    assert not any(_said(t, reads) for t in write_turns)
    # the situation shows up in a good share of first turns, in the service's words
    assert sum(_said(t, reads) for t in read_turns) > 60
    assert sum(_said(t, writes) for t in write_turns) > 60


def test_a_service_without_a_domain_of_its_own_gets_the_general_situations():
    assert situation(None, False, random.Random(1)) in GENERAL[0]
    assert situation(None, True, random.Random(1)) in GENERAL[1]


def test_a_situation_is_said_as_its_own_sentence_before_the_request_or_as_a_reason_after_it():
    forms = {
        with_situation("Could you pull up the balance?", "I'm reconciling my statement", random.Random(s))
        for s in range(60)
    }
    assert "I'm reconciling my statement. Could you pull up the balance?" in forms
    assert "I'm reconciling my statement, so could you pull up the balance?" in forms
    assert "Could you pull up the balance, since I'm reconciling my statement?" in forms
    # a frame with a colon keeps the situation apart: never "...; quick favour: ..." or "so quick favour: ..."
    colon = {with_situation("Quick favour: pull up the balance.", "I'm busy", random.Random(s)) for s in range(60)}
    assert colon == {"I'm busy. Quick favour: pull up the balance."}


def test_the_users_own_voice_is_never_used_with_a_verb_that_says_me():
    turns = [
        compose_turn(["show me the accounts"], random.Random(s), "student", t, False, BANKING)
        for s in range(400)
        for t in (0, 1)
    ]
    own_voice = re.compile(r"(i'd like|i want|i need|looking|trying|way) to show me|(let's|let's also|help me) show me")
    assert not any(own_voice.search(t.lower()) for t in turns), [t for t in turns if own_voice.search(t.lower())][:3]
    own = [
        compose_turn(["cancel order ORD-0017"], random.Random(s), "student", 0, False, builtin_domain("shopping"), True)
        for s in range(400)
    ]
    assert any("I'd like to cancel order ORD-0017" in t or "I want to cancel order ORD-0017" in t for t in own)


def test_with_is_said_once_for_a_run_of_values_and_a_filter_keeps_its_own():
    assert one_with(["with amount 25", "with the PIN 5978", "memo lunch", "with the note hi"]) == [
        "with amount 25",
        "the PIN 5978",
        "memo lunch",
        "with the note hi",
    ]
    assert one_with(["with status open", "with the merchant containing notes"])[1].startswith("with ")


def test_a_services_nouns_are_reworded_but_never_a_value_a_quote_or_a_name_in_brackets():
    from pipeline.language.situations import reword

    text = 'shift the gear for the vehicle VEH-003 (Family vehicle) with the note "my vehicle"'
    vehicle = builtin_domain("vehicle")
    said = {reword(text, vehicle, set(), random.Random(s)) for s in range(20)}
    assert said == {text, 'shift the gear for the car VEH-003 (Family vehicle) with the note "my vehicle"'}
    assert reword("list the vehicles of kind vehicle", vehicle, {"vehicle", "vehicles"}, random.Random(2)) == (
        "list the vehicles of kind vehicle"
    )
    assert reword("list the vehicles", None, set(), random.Random(2)) == "list the vehicles"


def test_a_later_turn_may_say_why_too_but_a_conversation_never_gives_the_same_reason_twice_nor_more_than_two():
    reads = BANKING.reasons.reads
    later_with_reason = 0
    for s in range(200):
        rng, told = random.Random(s), set()
        turns = [compose_turn([READ], rng, "retiree", t, False, BANKING, False, None, told) for t in range(4)]
        said = [r for r in reads for t in turns if r.lower() in t.lower()]
        assert len(said) == len(set(said)) <= 2, turns
        later_with_reason += sum(_said(t, reads) for t in turns[1:])
        # a later turn says it after what it asks, in one sentence: never "..., so good. Could you" or "so and next"
        for t in turns[1:]:
            if _said(t, reads):
                assert re.search(r", (since|because|as) ", t) and not re.search(r"\bso,? (and|good|great)\b", t), t
    assert later_with_reason > 60


def test_a_request_that_opens_with_so_never_gets_a_reason_joined_by_so():
    forms = {with_situation("So next, pull up the balance.", "I'm busy", random.Random(s)) for s in range(80)}
    assert not any(re.search(r"\bso,? so\b", f.lower()) for f in forms), forms
    assert "I'm busy. So next, pull up the balance." in forms


def _pools() -> list[tuple[list[str], list[str]]]:
    """The reasons of every built-in server's domain (reads, writes), then the general pool."""
    return [(d.reasons.reads, d.reasons.writes) for d in map(builtin_domain, (e.name for e in CATALOGUE)) if d] + [
        GENERAL
    ]


def _pool() -> list[str]:
    return [s for reads, writes in _pools() for s in reads + writes] + ASIDES


def _crowded(pool: list[str]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Two-word openings said by more than 5 strings of ``pool`` and word trigrams in more than 3 (words lower-cased,
    punctuation stripped, as bench/language_vs_bfcl.py counts them)."""
    openings, trigrams = Counter(), Counter()
    for s in pool:
        words = [w.strip(string.punctuation).lower() for w in s.split() if w.strip(string.punctuation)]
        openings[" ".join(words[:2])] += 1
        trigrams.update({" ".join(words[i : i + 3]) for i in range(len(words) - 2)})
    return [o for o in openings.items() if o[1] > 5], [g for g in trigrams.items() if g[1] > 3]


def test_the_situations_read_like_many_people_no_opening_said_by_more_than_five_nor_trigram_by_more_than_three():
    pool = _pool()
    assert len(pool) == len(set(pool))
    assert _crowded(pool) == ([], [])
    # the limits bite: the old way of saying them ("I'm checking ...", "I'm looking for ...") fails them
    checking = [f"I'm checking {w}" for w in ("the car", "my balance", "the stock", "a file", "my inbox", "the feed")]
    assert ("i'm checking", 6) in _crowded(pool + checking)[0]
    looking = [f"I'm looking for {w}" for w in ("a gift", "a file", "a room", "a car")]
    assert ("i'm looking for", 4) in _crowded(pool + looking)[1]
    # every list has its share, and a situation fits after "since" and as a sentence: no value, no stop of its own
    assert len(_pools()) == len(CATALOGUE) + 1  # every built-in server gives its own
    assert all(len(reads) >= 20 and len(writes) >= 20 for reads, writes in _pools()[:-1])
    assert not [s for s in pool if re.search(r"\d|[.?!;:]$", s)]
