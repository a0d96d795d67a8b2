"""maps: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.maps.world import (
    CATEGORIES,
    CITIES,
    DIAL,
    HOURS_BY_CATEGORY,
    REVIEW_TEXTS,
    WEEKDAYS,
    MapsWorld,
    Place,
    Review,
    SavedPlace,
)
from servers.names import FIRST_NAMES, LAST_NAMES


def seed_world(rng: random.Random, seed: int) -> MapsWorld:
    w = MapsWorld(seed=seed)
    for city, country, clat, clon, zone, streets in CITIES:
        used: set[str] = set()
        for _ in range(rng.randint(5, 7)):  # street addresses
            street = rng.choice(streets)
            num = rng.randint(1, 240)
            while f"{num} {street}" in used:
                num = rng.randint(1, 240)
            used.add(f"{num} {street}")
            pid = w.new_id("PLC")
            w.places[pid] = Place(
                place_id=pid,
                kind="address",
                name=f"{num} {street}",
                formatted_address=f"{num} {street}, {city}, {country}",
                city=city,
                country=country,
                lat=round(clat + rng.uniform(-0.025, 0.025), 5),
                lon=round(clon + rng.uniform(-0.03, 0.03), 5),
                zone=zone,
            )
        cats = list(CATEGORIES)
        picks = rng.sample(cats, k=8 if city != "Almada" else 5) + ["restaurant", "cafe"]
        names: set[str] = set()
        for cat in picks:
            kinds, words = CATEGORIES[cat]
            name = f"{rng.choice(words)} {rng.choice(kinds)}"
            if cat in ("museum", "library", "train_station", "hospital") and rng.random() < 0.6:
                name = f"{city} {rng.choice(words)} {rng.choice(kinds)}"
            if name in names:
                name = f"{name} {city}"
            if name in names:
                continue
            names.add(name)
            base = rng.choice(HOURS_BY_CATEGORY[cat])
            hours = {d: base for d in WEEKDAYS}
            if cat in ("restaurant", "museum", "library") and rng.random() < 0.6:
                hours[rng.choice(["monday", "sunday"])] = "closed"
            if cat in ("cafe", "pharmacy", "supermarket", "library") and rng.random() < 0.5:
                hours["sunday"] = "closed" if rng.random() < 0.5 else "10:00-14:00"
            pid = w.new_id("PLC")
            street = rng.choice(streets)
            w.places[pid] = Place(
                place_id=pid,
                kind="poi",
                name=name,
                formatted_address=f"{rng.randint(1, 240)} {street}, {city}, {country}",
                city=city,
                country=country,
                lat=round(clat + rng.uniform(-0.03, 0.03), 5),
                lon=round(clon + rng.uniform(-0.035, 0.035), 5),
                zone=zone,
                category=cat,
                phone=f"+{DIAL[country]} {rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
                website=None
                if rng.random() < 0.3
                else f"https://{name.lower().replace(' ', '').replace(chr(39), '').replace('.', '')}.example.com",
                rating=round(rng.uniform(2.6, 4.9), 1),
                price_level=rng.randint(1, 4) if cat in ("restaurant", "bar", "cafe", "hotel") else None,
                opening_hours=hours,
                permanently_closed=rng.random() < 0.05,
            )
            for _ in range(rng.randint(0, 4)):
                stars = rng.choice([5, 5, 4, 4, 4, 3, 3, 2, 1])
                rid = w.new_id("REV")
                w.reviews[rid] = Review(
                    review_id=rid,
                    place_id=pid,
                    author=f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)[0]}.",
                    rating=stars,
                    text=rng.choice(REVIEW_TEXTS[stars]),
                    date=f"202{rng.randint(4, 6)}-{rng.randint(1, 2):02d}-{rng.randint(1, 28):02d}",
                )
    pois = [p for p in w.places.values() if p.kind == "poi"]
    for p in rng.sample(pois, k=8):
        w.saved[p.place_id] = SavedPlace(
            place_id=p.place_id,
            name=p.name,
            list_name=rng.choice(["favorites", "favorites", "want_to_go", "want_to_go", "other"]),  # type: ignore[arg-type]
            note=rng.choice([None, "Try on the weekend", "Recommended by Ana", "Good for meetings", None]),
            saved_on=f"2026-02-{rng.randint(1, 28):02d}",
        )
    homes = [p for p in w.places.values() if p.kind == "address"]
    for lst, p in zip(("home", "work"), rng.sample(homes, k=2)):
        w.saved[p.place_id] = SavedPlace(place_id=p.place_id, name=p.name, list_name=lst, saved_on="2025-11-03")  # type: ignore[arg-type]
    return w
