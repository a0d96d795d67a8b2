"""vehicle: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.vehicle.world import (
    CITY_COORDS,
    MODELS,
    PLACE_NAMES,
    ROAD_FACTOR,
    Climate,
    Place,
    SeatHeating,
    Tires,
    Trip,
    Vehicle,
    VehicleWorld,
    Windows,
    _duration,
    _km,
    _plus,
    _update_range,
)

# --------------------------------------------------------------------------- seeding
STREETS = [
    "Main St",
    "Harbor Rd",
    "Station Ave",
    "Market St",
    "Park Lane",
    "Mill Rd",
    "Church St",
    "Bridge St",
    "King St",
]


def _seed_places(w: VehicleWorld, rng: random.Random) -> None:
    """Places around a random city: the depot, offices, customers, chargers and airports."""
    city = rng.choice(CITIES)
    clat, clon = CITY_COORDS[city]
    for cat, names in PLACE_NAMES.items():
        pick = names if cat != "customer" else rng.sample(names, k=8)
        for name in pick:
            pid = w.new_id("PLC")
            spread = 0.28 if cat == "airport" else (0.02 if cat == "depot" else 0.11)
            lat = round(
                clat + rng.uniform(-spread, spread)
                if cat != "airport"
                else clat + rng.choice([-1, 1]) * rng.uniform(0.2, 0.28),
                5,
            )
            lon = round(clon + rng.uniform(-spread, spread) * 1.3, 5)
            charger = cat == "charging_station" or (
                cat in ("depot", "office", "airport") and rng.random() < (1.0 if cat == "depot" else 0.5)
            )
            w.places[pid] = Place(
                place_id=pid,
                name=name,
                category=cat,
                address=f"{rng.randint(1, 400)} {rng.choice(STREETS)}, {city}",  # type: ignore[arg-type]
                lat=lat,
                lon=lon,
                has_charger=charger,
                charger_kw=(rng.choice([50, 150, 250]) if cat == "charging_station" else 11) if charger else None,
            )


def seed_world(rng: random.Random, seed: int) -> VehicleWorld:
    w = VehicleWorld(seed=seed)
    _seed_places(w, rng)
    places = list(w.places.values())
    depot = next(p for p in places if p.category == "depot")
    # at least two electric vehicles and two combustion vehicles, the rest drawn from all models
    ev_models = rng.sample([m for m in MODELS if m[2] == "electric"], k=2)
    ice_models = rng.sample([m for m in MODELS if m[2] in ("gasoline", "diesel")], k=2)
    rest = [m for m in MODELS if m not in ev_models and m not in ice_models]
    models = ev_models + ice_models + rng.sample(rest, k=2)
    rng.shuffle(models)
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    for i, (make, model, pt, tank, l100, kwh, k100, sunroof, rear_heat, kpa) in enumerate(models):
        vid = w.new_id("VEH", 3)
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        at = depot if rng.random() < 0.5 else rng.choice(places)
        v = Vehicle(
            vehicle_id=vid,
            nickname=f"Unit {10 + i * 3 + rng.randint(0, 2)}",
            make=make,
            model=model,
            year=rng.randint(2019, 2025),
            vin="".join(rng.choice(letters + "0123456789") for _ in range(17)),
            plate=f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(10, 99)}-{rng.choice(letters)}{rng.choice(letters)}",
            powertrain=pt,
            driver_name=f"{first} {last}",
            odometer_km=round(rng.uniform(4000, 160000), 1),  # type: ignore[arg-type]
            fuel_pct=round(rng.uniform(8, 95), 1) if tank else None,
            tank_l=tank,
            l_per_100km=l100,
            battery_pct=round(rng.uniform(15, 95), 1) if kwh else None,
            battery_kwh=kwh,
            kwh_per_100km=k100,
            charge_port_open=False if kwh else None,
            charging=False if kwh else None,
            charge_limit_pct=80 if kwh else None,
            windows=Windows(sunroof=0 if sunroof else None),
            seat_heating=SeatHeating(rear_left=0 if rear_heat else None, rear_right=0 if rear_heat else None),
            tires=Tires(
                front_left_kpa=kpa + rng.randint(-8, 6),
                front_right_kpa=kpa + rng.randint(-8, 6),
                rear_left_kpa=kpa + rng.randint(-8, 6),
                rear_right_kpa=kpa + rng.randint(-8, 6),
                recommended_kpa=kpa,
            ),
            location_place_id=at.place_id,
            location_name=at.name,
            lat=at.lat,
            lon=at.lon,
        )
        w.vehicles[vid] = v
        w.remote_pins[vid] = f"{rng.randint(0, 9999):04d}"
    vs = list(w.vehicles.values())
    evs = [v for v in vs if v.powertrain == "electric"]
    ices = [v for v in vs if v.powertrain in ("gasoline", "diesel")]
    # a mix of states that make actions fail
    evs[0].battery_pct = round(rng.uniform(1.5, 4.5), 1)  # too low to start
    evs[1].location_place_id, evs[1].location_name, evs[1].lat, evs[1].lon = (
        depot.place_id,
        depot.name,
        depot.lat,
        depot.lon,
    )
    evs[1].charge_port_open, evs[1].charging, evs[1].charge_limit_pct = True, True, 90  # charging at the depot
    evs[1].battery_pct = round(rng.uniform(30, 60), 1)
    if ices:
        ices[0].aux_battery_v = 11.4  # 12 V battery too weak to crank
        if len(ices) > 1:
            ices[1].fuel_pct = round(rng.uniform(2, 5), 1)  # almost out of fuel
    others = [v for v in vs if v is not evs[0] and v is not evs[1] and not (ices and v is ices[0])]
    rng.shuffle(others)
    if others:  # running, in park, doors unlocked, a window down
        v = others[0]
        v.ignition, v.doors_locked, v.windows.driver_front = "on", False, 40
        v.climate = Climate(climate_on=True, temperature_c=21.5, fan_speed=2)
    if len(others) > 1:  # accessory mode with defrost on
        v = others[1]
        v.ignition = "accessory"
        v.climate = Climate(climate_on=True, temperature_c=23.0, fan_speed=5, defrost=True)
    if len(others) > 2:  # trunk open, unlocked, low rear tire
        v = others[2]
        v.trunk_open, v.doors_locked = True, False
        v.tires.rear_left_kpa = v.tires.recommended_kpa - 65
    for v in vs:
        _update_range(v)
    _seed_trips(w, rng)
    return w


def _seed_trips(w: VehicleWorld, rng: random.Random) -> None:
    """Trip history: three to six trips per vehicle between random places, numbered in time order."""
    places, vs = list(w.places.values()), list(w.vehicles.values())
    log = []
    for v in vs:
        for _ in range(rng.randint(3, 6)):
            a, b = rng.sample(places, 2)
            km = round(_km(a.lat, a.lon, b.lat, b.lon) * ROAD_FACTOR, 1)
            day = rng.randint(16, 28)
            start = f"2026-02-{day:02d}T{rng.randint(7, 18):02d}:{rng.randint(0, 59):02d}:00"
            used = (
                f"{km * (v.kwh_per_100km or 0) / 100:.1f} kWh"
                if v.powertrain == "electric"
                else f"{km * (v.l_per_100km or 0) / 100:.1f} L"
            )
            log.append((start, v, a, b, km, used))
    log.sort(key=lambda t: (t[0], t[1].vehicle_id))
    for start, v, a, b, km, used in log:
        tid = w.new_id("TRP")
        dur = _duration(km)
        w.trips[tid] = Trip(
            trip_id=tid,
            vehicle_id=v.vehicle_id,
            driver_name=v.driver_name,
            from_place_id=a.place_id,
            to_place_id=b.place_id,
            from_name=a.name,
            to_name=b.name,
            distance_km=km,
            duration_min=dur,
            started_at=start,
            ended_at=_plus(start, dur),
            energy_used=used,
        )
