"""Requests no offered tool serves: off-topic questions (irrelevance) and near-misses (abstention).

Irrelevance questions are drawn from templates over many topics (several thousand distinct
questions), without repeats within a build. A near-miss names something the server's own tools
work with (their objects: accounts, events, files) and asks for an action none of its tools has
(export, print, translate, forecast, ...); actions whose word appears in an offered tool's name are
never used, so the request is one the tools really cannot serve.
"""

from __future__ import annotations

import random

from pipeline.core.records import ToolSpec
from pipeline.language.lexicon import intent_of, plural, singular

COUNTRIES = [
    "Australia",
    "Canada",
    "Kenya",
    "Peru",
    "Norway",
    "Vietnam",
    "Morocco",
    "Chile",
    "Finland",
    "Egypt",
    "Portugal",
    "New Zealand",
    "Iceland",
    "Ghana",
    "Colombia",
    "Thailand",
    "Hungary",
    "Ireland",
    "Nepal",
    "Uruguay",
    "Mongolia",
    "Croatia",
    "Jordan",
    "Senegal",
    "Bolivia",
    "Latvia",
    "Laos",
    "Tunisia",
    "Ecuador",
    "Slovenia",
]
LANGUAGES = [
    "Italian",
    "Japanese",
    "Portuguese",
    "German",
    "Swahili",
    "Korean",
    "Dutch",
    "Greek",
    "Turkish",
    "Polish",
    "Hindi",
    "Welsh",
]
PHRASES = [
    "good morning",
    "thank you very much",
    "where is the station",
    "happy birthday",
    "see you tomorrow",
    "I'm lost",
    "how much is this",
    "nice to meet you",
    "the bill, please",
    "good luck",
]
SUBJECTS = [
    "autumn leaves",
    "a lighthouse",
    "my grandmother's kitchen",
    "the first snow",
    "a sleepy cat",
    "city lights at night",
    "a long train ride",
    "the ocean at dawn",
    "a forgotten umbrella",
    "spring rain",
    "an old bookshop",
    "a mountain lake",
    "Monday mornings",
    "a paper boat",
    "a summer storm",
    "the moon",
    "a busy market",
    "fresh bread",
    "a quiet library",
    "a garden in May",
]
FORMS = ["haiku", "limerick", "short poem", "two-line rhyme", "tiny story", "toast"]
CONCEPTS = [
    "photosynthesis",
    "inflation",
    "black holes",
    "the water cycle",
    "compound interest",
    "plate tectonics",
    "vaccines",
    "blockchain",
    "supply and demand",
    "gravity",
    "rainbows",
    "tides",
    "the greenhouse effect",
    "DNA",
    "electricity",
    "the stock market",
    "jet lag",
    "echoes",
    "fermentation",
    "northern lights",
    "earthquakes",
    "magnets",
    "evolution",
    "the immune system",
    "solar eclipses",
]
WORKS = [
    ("wrote", "Pride and Prejudice"),
    ("painted", "The Starry Night"),
    ("composed", "the Four Seasons"),
    ("wrote", "Don Quixote"),
    ("painted", "Girl with a Pearl Earring"),
    ("directed", "Casablanca"),
    ("wrote", "One Hundred Years of Solitude"),
    ("sculpted", "The Thinker"),
    ("composed", "the Moonlight Sonata"),
    ("wrote", "The Odyssey"),
    ("painted", "The Scream"),
    ("invented", "the telephone"),
    ("discovered", "penicillin"),
    ("wrote", "Hamlet"),
    ("designed", "the Eiffel Tower"),
]
CONVERSIONS = [
    ("minutes", "week"),
    ("ounces", "pound"),
    ("feet", "mile"),
    ("seconds", "day"),
    ("cups", "gallon"),
    ("grams", "kilogram"),
    ("hours", "year"),
    ("inches", "yard"),
    ("millilitres", "litre"),
    ("days", "leap year"),
    ("centimetres", "metre"),
]
ACTIVITIES = [
    "better sleep",
    "learning to juggle",
    "running a first 10k",
    "keeping houseplants alive",
    "public speaking",
    "learning guitar",
    "packing light",
    "staying focused",
    "making friends in a new city",
    "cooking rice",
    "starting a vegetable garden",
    "taking better photos",
    "studying for exams",
    "training a puppy",
    "saving energy at home",
    "writing a cover letter",
    "brewing good coffee",
    "getting over jet lag",
    "painting a room",
    "learning to swim",
]
PAIRS = [
    ("weather", "climate"),
    ("a virus", "a bacterium"),
    ("baking soda", "baking powder"),
    ("a crocodile", "an alligator"),
    ("affect", "effect"),
    ("a latte", "a cappuccino"),
    ("a comet", "an asteroid"),
    ("a lake", "a pond"),
    ("jam", "jelly"),
    ("a hurricane", "a typhoon"),
    ("a turtle", "a tortoise"),
    ("empathy", "sympathy"),
    ("a frog", "a toad"),
    ("a violin", "a viola"),
    ("a moth", "a butterfly"),
]
ANIMALS = [
    "octopuses",
    "penguins",
    "sloths",
    "owls",
    "dolphins",
    "honeybees",
    "giraffes",
    "axolotls",
    "crows",
    "elephants",
    "hummingbirds",
    "sea otters",
    "chameleons",
    "wombats",
    "jellyfish",
    "red pandas",
    "tardigrades",
    "flamingos",
]
THINGS = [
    ("name", "a golden retriever puppy"),
    ("board game", "four players"),
    ("gift", "a coffee lover"),
    ("book", "a long flight"),
    ("movie", "a rainy Sunday"),
    ("name", "a sourdough starter"),
    ("song", "a road trip"),
    ("snack", "a hike"),
    ("hobby", "cold winter evenings"),
    ("title", "a blog post about baking"),
    ("toast", "my sister's wedding"),
]
TEMPLATES = [
    lambda r: f"What's the capital of {r.choice(COUNTRIES)}?",
    lambda r: f"How do you say '{r.choice(PHRASES)}' in {r.choice(LANGUAGES)}?",
    lambda r: f"Can you write me a {r.choice(FORMS)} about {r.choice(SUBJECTS)}?",
    lambda r: f"Explain {r.choice(CONCEPTS)} in one sentence.",
    lambda r: f"Could you explain {r.choice(CONCEPTS)} like I'm ten?",
    lambda r: "Who {} {}?".format(*r.choice(WORKS)),
    lambda r: "How many {} are in a {}?".format(*r.choice(CONVERSIONS)),
    lambda r: f"Any tips for {r.choice(ACTIVITIES)}?",
    lambda r: "What's the difference between {} and {}?".format(*r.choice(PAIRS)),
    lambda r: f"Tell me a fun fact about {r.choice(ANIMALS)}.",
    lambda r: "What's a good {} for {}?".format(*r.choice(THINGS)),
    lambda r: f"Why do {r.choice(ANIMALS)} behave the way they do in winter?",
    lambda r: (
        f"What's the weather usually like in {r.choice(COUNTRIES)} in "
        f"{r.choice(['April', 'July', 'October', 'January'])}?"
    ),
    lambda r: f"Give me three tips for {r.choice(ACTIVITIES)}.",
    lambda r: f"Is it true that {r.choice(ANIMALS)} can recognise faces?",
    lambda r: f"Translate '{r.choice(PHRASES)}' into {r.choice(LANGUAGES)}, please.",
    lambda r: f"What should I read to understand {r.choice(CONCEPTS)} better?",
    lambda r: f"Summarize the history of {r.choice(COUNTRIES)} in two lines.",
]
# actions no tool of a server may serve when its keyword is absent from the offered tool names
NEAR_MISSES = [
    ("export", "export all my {objs} to a spreadsheet"),
    ("print", "print out {the_obj} for me"),
    ("pdf", "turn {the_objs} into a PDF I can download"),
    ("translate", "translate {the_obj} into Spanish"),
    ("forecast", "forecast what my {objs} will look like next quarter"),
    ("merge", "merge two of my {objs} into one"),
    ("undo", "undo every change made to my {objs} last week"),
    ("sync", "sync my {objs} with my phone's calendar app"),
    ("chart", "draw a chart of my {objs} over the last year"),
    ("call", "phone the support team about {the_obj}"),
    ("import", "import {objs} from my old spreadsheet"),
    ("backup", "back up all my {objs} to an external drive"),
    ("audit", "run a full audit of who changed my {objs}"),
    ("predict", "predict which of my {objs} will need attention next month"),
    ("compare", "compare my {objs} with last year's"),
    ("summarize", "write a one-page summary of all my {objs}"),
    ("automate", "automate a weekly email report of my {objs}"),
]
NO_TOOL_REPLIES = [
    "I can't help with that here: none of the tools I have answers it, so I won't call any. {extra}",
    "That's outside what my tools cover, so I won't make any calls. {extra}",
    "Sorry, I have no tool for that, and I won't guess. {extra}",
    "I'm not able to do that with the tools available to me, so I'll leave it. {extra}",
    "No tool I have can do that, so I haven't called anything. {extra}",
]


def irrelevant_request(rng: random.Random, avoid: set[str]) -> str:
    """An off-topic question not in ``avoid`` (which it is added to)."""
    q = ""
    for _ in range(200):
        q = rng.choice(TEMPLATES)(rng)
        if q not in avoid:
            break
    avoid.add(q)
    return q


# how a near-miss request opens, and how it ends
NEAR_MISS_LEADS = [
    ("Could you ", "?"),
    ("Can you ", "?"),
    ("Please ", "."),
    ("I'd like you to ", "."),
    ("Is it possible to ", "?"),
    ("I want to ", "."),
    ("Would you ", "?"),
    ("Any chance you could ", "?"),
    ("I need you to ", "."),
    ("Are you able to ", "?"),
    ("Is there a way to ", "?"),
    ("I'm hoping you can ", "."),
]


def near_miss(tools: list[ToolSpec], rng: random.Random, avoid: set[str]) -> tuple[str, str] | None:
    """(request, keyword): an action on the objects of ``tools`` that none of them performs."""
    names = " ".join(t.name.lower() for t in tools)
    objs = sorted({intent_of(t.name, t.read_only).object for t in tools} - {""})
    actions = [(k, a) for k, a in NEAR_MISSES if k not in names]
    if not objs or not actions:
        return None
    for _ in range(100):
        k, a = rng.choice(actions)
        o = rng.choice(objs)
        text = a.format(objs=plural(o), the_obj=f"my latest {singular(o)}", the_objs=f"my {plural(o)}")
        lead, end = rng.choice(NEAR_MISS_LEADS)
        q = lead + text + end
        if q not in avoid:
            avoid.add(q)
            return q, k
    return None
