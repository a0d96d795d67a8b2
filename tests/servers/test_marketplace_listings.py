"""A seeded marketplace's listings read as different sellers wrote them: each description names its item, its
condition and where it is, in one of several wordings, never one template for all 34."""

from __future__ import annotations

import random

from servers.marketplace import seed_world
from servers.marketplace.world import CONDITION_WORDS


def test_listing_descriptions_vary_and_say_the_item_its_condition_and_its_city():
    w = seed_world(random.Random(7), 7)
    listings = list(w.listings.values())
    for li in listings:
        d = li.description.lower()
        assert li.title.lower() in d, li
        assert CONDITION_WORDS[li.condition] in d, li
        assert w.users[li.seller_id].city.lower() in d, li
    openings = {li.description.replace(li.title, "T").split(" ")[0] for li in listings}
    assert len({li.description.replace(li.title, "T")[-12:] for li in listings}) >= 5, openings
    assert w.listings == seed_world(random.Random(7), 7).listings  # the same seed, the same words
