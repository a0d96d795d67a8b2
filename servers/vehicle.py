"""vehicle: a small connected-car fleet: ignition, gears, locks, windows, climate, charging, navigation, trips."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import (
    EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found, sensitive,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

NOW = "2026-03-02T08:30:00"
AVG_SPEED_KMH = 38.0
ROAD_FACTOR = 1.3
MIN_START_BATTERY_PCT = 5
MIN_PRECONDITION_BATTERY_PCT = 20
MIN_CRANK_VOLTS = 11.8
TIRE_MIN_KPA = 200

Powertrain = Literal["gasoline", "diesel", "electric", "plug_in_hybrid"]
Ignition = Literal["off", "accessory", "on"]
Gear = Literal["park", "reverse", "neutral", "drive"]
Headlights = Literal["off", "auto", "low", "high"]
WindowName = Literal["driver_front", "passenger_front", "rear_left", "rear_right", "sunroof"]
Seat = Literal["driver", "passenger", "rear_left", "rear_right"]
PlaceCategory = Literal["depot", "office", "customer", "charging_station", "fuel_station", "service_center", "airport"]

CITY_COORDS = {
    "Lisbon": (38.7223, -9.1393), "Denver": (39.7392, -104.9903), "Austin": (30.2672, -97.7431), "Leeds": (53.8008, -1.5491),
    "Lyon": (45.7640, 4.8357), "Porto": (41.1579, -8.6291), "Boston": (42.3601, -71.0589), "Dublin": (53.3498, -6.2603),
    "Seattle": (47.6062, -122.3321), "Madrid": (40.4168, -3.7038), "Oslo": (59.9139, 10.7522), "Toronto": (43.6532, -79.3832),
}
# make, model, powertrain, tank_l, l_per_100km, battery_kwh, kwh_per_100km, sunroof, rear seat heating, recommended kPa
MODELS = [
    ("Ford", "Transit Custom", "diesel", 70, 8.4, None, None, False, False, 290),
    ("Toyota", "Corolla Touring", "gasoline", 43, 5.9, None, None, True, False, 230),
    ("Skoda", "Octavia Combi", "diesel", 45, 5.2, None, None, False, True, 240),
    ("Tesla", "Model 3", "electric", None, None, 60, 15.5, True, True, 290),
    ("Hyundai", "Ioniq 5", "electric", None, None, 77, 18.0, True, True, 250),
    ("Volkswagen", "ID. Buzz Cargo", "electric", None, None, 77, 21.5, False, False, 300),
    ("Renault", "Kangoo E-Tech", "electric", None, None, 45, 19.5, False, False, 270),
    ("Toyota", "RAV4 Plug-in", "plug_in_hybrid", 55, 6.8, 18, 17.0, True, True, 240),
    ("Kia", "Niro PHEV", "plug_in_hybrid", 43, 5.5, 11, 16.0, False, False, 240),
]
PLACE_NAMES: dict[str, list[str]] = {
    "depot": ["Fleet Depot"],
    "office": ["Head Office", "North Branch Office", "Riverside Office"],
    "customer": ["Harbor Logistics", "Greenleaf Market", "Summit Clinic", "Bluebird Bakery", "Atlas Hardware", "Northwind Hotel",
                 "Pinecrest School", "Orchard Apartments", "Civic Library", "Lakeside Gym"],
    "charging_station": ["VoltHub Central", "ChargePoint Mall", "Ionity Ring Road", "FastCharge Airport Park"],
    "fuel_station": ["Shell Main St", "BP Eastgate", "Galp Westside"],
    "service_center": ["City Auto Service"],
    "airport": ["International Airport"],
}


class Place(BaseModel):
    place_id: str
    name: str
    category: PlaceCategory
    address: str
    lat: float
    lon: float
    has_charger: bool
    charger_kw: int | None = None


class Climate(BaseModel):
    climate_on: bool = False
    temperature_c: float = 21.0
    fan_speed: int = 3
    defrost: bool = False


class Windows(BaseModel):
    driver_front: int = 0
    passenger_front: int = 0
    rear_left: int = 0
    rear_right: int = 0
    sunroof: int | None = None


class SeatHeating(BaseModel):
    driver: int = 0
    passenger: int = 0
    rear_left: int | None = None
    rear_right: int | None = None


class Tires(BaseModel):
    front_left_kpa: int
    front_right_kpa: int
    rear_left_kpa: int
    rear_right_kpa: int
    recommended_kpa: int


class Navigation(BaseModel):
    place_id: str
    destination_name: str
    from_place_id: str | None
    distance_km: float
    duration_min: int
    eta: str
    route_summary: str
    set_at: str


class Vehicle(BaseModel):
    vehicle_id: str
    nickname: str
    make: str
    model: str
    year: int
    vin: str
    plate: str
    powertrain: Powertrain
    driver_name: str
    odometer_km: float
    fuel_pct: float | None = None
    tank_l: float | None = None
    battery_pct: float | None = None
    battery_kwh: float | None = None
    range_km: float = 0.0
    aux_battery_v: float = 12.6
    ignition: Ignition = "off"
    gear: Gear = "park"
    doors_locked: bool = True
    trunk_open: bool = False
    charge_port_open: bool | None = None
    charging: bool | None = None
    charge_limit_pct: int | None = None
    windows: Windows = Windows()
    climate: Climate = Climate()
    seat_heating: SeatHeating = SeatHeating()
    headlights: Headlights = "auto"
    hazard_lights: bool = False
    tires: Tires
    navigation: Navigation | None = None
    location_place_id: str | None = None
    location_name: str
    lat: float
    lon: float
    l_per_100km: float | None = None
    kwh_per_100km: float | None = None


class Trip(BaseModel):
    trip_id: str
    vehicle_id: str
    driver_name: str
    from_place_id: str | None
    to_place_id: str
    from_name: str
    to_name: str
    distance_km: float
    duration_min: int
    started_at: str
    ended_at: str
    energy_used: str


class VehicleWorld(World):
    clock: str = NOW
    places: dict[str, Place] = {}
    vehicles: dict[str, Vehicle] = {}
    remote_pins: dict[str, str] = {}
    trips: dict[str, Trip] = {}


# --------------------------------------------------------------------------- geometry and energy
def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r = 6371.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def _road_km(v: Vehicle, p: Place) -> float:
    return round(_km(v.lat, v.lon, p.lat, p.lon) * ROAD_FACTOR, 1)


def _ev_range(v: Vehicle) -> float:
    if v.battery_pct is None or not v.battery_kwh or not v.kwh_per_100km:
        return 0.0
    return v.battery_pct / 100 * v.battery_kwh / v.kwh_per_100km * 100


def _fuel_range(v: Vehicle) -> float:
    if v.fuel_pct is None or not v.tank_l or not v.l_per_100km:
        return 0.0
    return v.fuel_pct / 100 * v.tank_l / v.l_per_100km * 100


def _update_range(v: Vehicle) -> None:
    v.range_km = round(_ev_range(v) + _fuel_range(v), 1)


def _plus(ts: str, minutes: float) -> str:
    return (datetime.fromisoformat(ts) + timedelta(minutes=minutes)).isoformat(timespec="seconds")


def _duration(km: float) -> int:
    return max(3, int(round(km / AVG_SPEED_KMH * 60)))


# --------------------------------------------------------------------------- seeding
def seed_world(rng: random.Random, seed: int) -> VehicleWorld:
    w = VehicleWorld(seed=seed)
    city = rng.choice(CITIES)
    clat, clon = CITY_COORDS[city]
    streets = ["Main St", "Harbor Rd", "Station Ave", "Market St", "Park Lane", "Mill Rd", "Church St", "Bridge St", "King St"]
    for cat, names in PLACE_NAMES.items():
        pick = names if cat != "customer" else rng.sample(names, k=8)
        for name in pick:
            pid = w.new_id("PLC")
            spread = 0.28 if cat == "airport" else (0.02 if cat == "depot" else 0.11)
            lat = round(clat + rng.uniform(-spread, spread) if cat != "airport" else clat + rng.choice([-1, 1]) * rng.uniform(0.2, 0.28), 5)
            lon = round(clon + rng.uniform(-spread, spread) * 1.3, 5)
            charger = cat == "charging_station" or (cat in ("depot", "office", "airport") and rng.random() < (1.0 if cat == "depot" else 0.5))
            w.places[pid] = Place(place_id=pid, name=name, category=cat, address=f"{rng.randint(1, 400)} {rng.choice(streets)}, {city}",  # type: ignore[arg-type]
                                  lat=lat, lon=lon, has_charger=charger,
                                  charger_kw=(rng.choice([50, 150, 250]) if cat == "charging_station" else 11) if charger else None)
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
            vehicle_id=vid, nickname=f"Unit {10 + i * 3 + rng.randint(0, 2)}", make=make, model=model, year=rng.randint(2019, 2025),
            vin="".join(rng.choice(letters + "0123456789") for _ in range(17)),
            plate=f"{rng.choice(letters)}{rng.choice(letters)}-{rng.randint(10, 99)}-{rng.choice(letters)}{rng.choice(letters)}",
            powertrain=pt, driver_name=f"{first} {last}", odometer_km=round(rng.uniform(4000, 160000), 1),  # type: ignore[arg-type]
            fuel_pct=round(rng.uniform(8, 95), 1) if tank else None, tank_l=tank, l_per_100km=l100,
            battery_pct=round(rng.uniform(15, 95), 1) if kwh else None, battery_kwh=kwh, kwh_per_100km=k100,
            charge_port_open=False if kwh else None, charging=False if kwh else None, charge_limit_pct=80 if kwh else None,
            windows=Windows(sunroof=0 if sunroof else None),
            seat_heating=SeatHeating(rear_left=0 if rear_heat else None, rear_right=0 if rear_heat else None),
            tires=Tires(front_left_kpa=kpa + rng.randint(-8, 6), front_right_kpa=kpa + rng.randint(-8, 6),
                        rear_left_kpa=kpa + rng.randint(-8, 6), rear_right_kpa=kpa + rng.randint(-8, 6), recommended_kpa=kpa),
            location_place_id=at.place_id, location_name=at.name, lat=at.lat, lon=at.lon,
        )
        w.vehicles[vid] = v
        w.remote_pins[vid] = f"{rng.randint(0, 9999):04d}"
    vs = list(w.vehicles.values())
    evs = [v for v in vs if v.powertrain == "electric"]
    ices = [v for v in vs if v.powertrain in ("gasoline", "diesel")]
    # a mix of states that make actions fail
    evs[0].battery_pct = round(rng.uniform(1.5, 4.5), 1)                      # too low to start
    evs[1].location_place_id, evs[1].location_name, evs[1].lat, evs[1].lon = depot.place_id, depot.name, depot.lat, depot.lon
    evs[1].charge_port_open, evs[1].charging, evs[1].charge_limit_pct = True, True, 90   # charging at the depot
    evs[1].battery_pct = round(rng.uniform(30, 60), 1)
    if ices:
        ices[0].aux_battery_v = 11.4                                             # 12 V battery too weak to crank
        if len(ices) > 1:
            ices[1].fuel_pct = round(rng.uniform(2, 5), 1)                       # almost out of fuel
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
    # trip history
    log = []
    for v in vs:
        for _ in range(rng.randint(3, 6)):
            a, b = rng.sample(places, 2)
            km = round(_km(a.lat, a.lon, b.lat, b.lon) * ROAD_FACTOR, 1)
            day = rng.randint(16, 28)
            start = f"2026-02-{day:02d}T{rng.randint(7, 18):02d}:{rng.randint(0, 59):02d}:00"
            used = (f"{km * (v.kwh_per_100km or 0) / 100:.1f} kWh" if v.powertrain == "electric"
                    else f"{km * (v.l_per_100km or 0) / 100:.1f} L")
            log.append((start, v, a, b, km, used))
    log.sort(key=lambda t: (t[0], t[1].vehicle_id))
    for start, v, a, b, km, used in log:
        tid = w.new_id("TRP")
        dur = _duration(km)
        w.trips[tid] = Trip(trip_id=tid, vehicle_id=v.vehicle_id, driver_name=v.driver_name, from_place_id=a.place_id, to_place_id=b.place_id,
                            from_name=a.name, to_name=b.name, distance_km=km, duration_min=dur, started_at=start,
                            ended_at=_plus(start, dur), energy_used=used)
    return w


# --------------------------------------------------------------------------- helpers


def _vehicle(w: VehicleWorld, vehicle_id: str) -> Vehicle:
    v = w.vehicles.get(vehicle_id)
    if v is None:
        raise not_found("vehicle", vehicle_id, "list_vehicles shows the fleet's vehicle ids")
    return v


def _place(w: VehicleWorld, place_id: str) -> Place:
    p = w.places.get(place_id)
    if p is None:
        raise not_found("place", place_id, "list_places shows valid place ids")
    return p


def _label(v: Vehicle) -> str:
    return f"vehicle {v.vehicle_id} ({v.nickname}, {v.make} {v.model})"


def _in_park(v: Vehicle, action: str) -> None:
    if v.gear != "park":
        raise StateConflict(f"{_label(v)} is not in park (gear '{v.gear}'); {action} only in park: shift_gear to 'park' first")


def _ignition_on(v: Vehicle, action: str, allow_accessory: bool = False) -> None:
    ok = ("on", "accessory") if allow_accessory else ("on",)
    if v.ignition not in ok:
        need = "'accessory' or 'on'" if allow_accessory else "'on'"
        raise StateConflict(f"ignition is {v.ignition!r} on {_label(v)}; {action} needs ignition {need}: use set_ignition first")


def _chargeable(v: Vehicle) -> None:
    if v.battery_kwh is None:
        raise InvalidArgument(f"{_label(v)} is a {v.powertrain} vehicle without a charge port; "
                              "charging needs an electric or plug_in_hybrid vehicle (list_vehicles powertrain='electric')")


# --------------------------------------------------------------------------- parameter and result types
VehicleId = Annotated[str, Field(description="Vehicle id, e.g. 'VEH-001' (from list_vehicles)")]
PlaceId = Annotated[str, Field(description="Place id, e.g. 'PLC-0004' (from list_places)")]
Pin = Annotated[str, sensitive("The vehicle's 4-digit remote-access PIN", pattern=r"^\d{4}$")]


class VehicleSummary(BaseModel):
    vehicle_id: str
    nickname: str
    make: str
    model: str
    plate: str
    powertrain: Powertrain
    driver_name: str
    fuel_pct: float | None
    battery_pct: float | None
    range_km: float
    ignition: Ignition
    gear: Gear
    doors_locked: bool
    charging: bool | None
    location_place_id: str | None
    location_name: str


class VehicleList(BaseModel):
    vehicles: list[VehicleSummary]
    total: int


class TireReading(BaseModel):
    tire: Literal["front_left", "front_right", "rear_left", "rear_right"]
    pressure_kpa: int
    status: Literal["ok", "low", "high"]


class TireReport(BaseModel):
    vehicle_id: str
    recommended_kpa: int
    tires: list[TireReading]
    warnings: list[str]


class PlaceWithDistance(Place):
    distance_km: float | None = None


class PlaceList(BaseModel):
    places: list[PlaceWithDistance]
    total: int


class Route(BaseModel):
    vehicle_id: str
    place_id: str
    destination_name: str
    distance_km: float
    duration_min: int
    eta: str
    route_summary: str
    range_km: float
    range_sufficient: bool


class NavigationCancelled(BaseModel):
    vehicle_id: str
    cancelled: bool
    place_id: str | None = None


class TripResult(BaseModel):
    trip_id: str
    vehicle_id: str
    place_id: str
    location_name: str
    distance_km: float
    duration_min: int
    arrived_at: str
    fuel_pct: float | None
    battery_pct: float | None
    range_km: float
    odometer_km: float
    refuelled_l: float | None = None
    warnings: list[str]


class TripList(BaseModel):
    trips: list[Trip]
    total: int


def _summary(v: Vehicle) -> VehicleSummary:
    return VehicleSummary(**{k: getattr(v, k) for k in VehicleSummary.model_fields})


def _route(v: Vehicle, nav: Navigation) -> Route:
    return Route(vehicle_id=v.vehicle_id, place_id=nav.place_id, destination_name=nav.destination_name, distance_km=nav.distance_km,
                 duration_min=nav.duration_min, eta=nav.eta, route_summary=nav.route_summary, range_km=v.range_km,
                 range_sufficient=v.range_km >= nav.distance_km)


def _tire_warnings(v: Vehicle) -> list[TireReading]:
    t = v.tires
    out = []
    for name in ("front_left", "front_right", "rear_left", "rear_right"):
        kpa = getattr(t, f"{name}_kpa")
        status = "low" if kpa < t.recommended_kpa - 25 else ("high" if kpa > t.recommended_kpa + 25 else "ok")
        out.append(TireReading(tire=name, pressure_kpa=kpa, status=status))  # type: ignore[arg-type]
    return out


TOOLS: ToolSet[VehicleWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_vehicles(
    w: VehicleWorld,
    powertrain: Annotated[Powertrain | None, Field(description="Only vehicles with this powertrain")] = None,
    driver_name: Annotated[str | None, Field(description="Case-insensitive part of the assigned driver's name")] = None,
) -> VehicleList:
    """List the fleet's vehicles with energy level, range, ignition, gear, lock state and location."""
    out = [_summary(v) for v in w.vehicles.values()
           if (powertrain is None or v.powertrain == powertrain)
           and (driver_name is None or driver_name.lower() in v.driver_name.lower())]
    return VehicleList(vehicles=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_vehicle_status(w: VehicleWorld, vehicle_id: VehicleId) -> Vehicle:
    """Get the full status of a vehicle: ignition, gear, locks, trunk, windows, climate, seats, lights, charging, tires, navigation, location."""
    return _vehicle(w, vehicle_id)


@TOOLS.tool(read_only=True)
def get_tire_pressure(w: VehicleWorld, vehicle_id: VehicleId) -> TireReport:
    """Read the tire pressures of a vehicle against the recommended pressure, with warnings for low or high tires."""
    v = _vehicle(w, vehicle_id)
    tires = _tire_warnings(v)
    warns = [f"{t.tire} tire at {t.pressure_kpa} kPa is {t.status} (recommended {v.tires.recommended_kpa} kPa)" for t in tires if t.status != "ok"]
    return TireReport(vehicle_id=vehicle_id, recommended_kpa=v.tires.recommended_kpa, tires=tires, warnings=warns)

# ---------------------------------------------------------------- ignition and gear
@TOOLS.tool(idempotent=True)
def set_ignition(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    ignition: Annotated[Ignition, Field(description="'on' starts the engine/drive system, 'accessory' powers the cabin only, 'off' shuts down")],
    brake_pressed: Annotated[bool, Field(description="Whether the brake pedal is held; required to switch ignition 'on'")] = False,
) -> Vehicle:
    """Switch the ignition off, to accessory or on. Starting needs park, the brake, locked doors and enough battery/fuel; switching off needs park."""
    v = _vehicle(w, vehicle_id)
    if ignition == v.ignition:
        return v
    if ignition == "on":
        _in_park(v, "the engine can be started")
        if not brake_pressed:
            raise StateConflict(f"starting {_label(v)} needs the brake pedal held: call again with brake_pressed=true")
        if not v.doors_locked:
            raise StateConflict(f"the doors of {_label(v)} are unlocked; lock_doors before starting")
        if v.charging:
            raise StateConflict(f"{_label(v)} is charging; stop charging with set_charging(charging=false) before starting")
        if v.powertrain == "electric" and (v.battery_pct or 0) < MIN_START_BATTERY_PCT:
            raise StateConflict(f"battery too low to start {_label(v)}: {v.battery_pct}% (needs at least {MIN_START_BATTERY_PCT}%); "
                                "charge it first")
        if v.powertrain in ("gasoline", "diesel") and v.aux_battery_v < MIN_CRANK_VOLTS:
            raise StateConflict(f"12 V battery too low to crank {_label(v)}: {v.aux_battery_v} V (needs {MIN_CRANK_VOLTS} V); "
                                "a jump start or service is needed")
        if v.powertrain in ("gasoline", "diesel") and (v.fuel_pct or 0) <= 0:
            raise StateConflict(f"the fuel tank of {_label(v)} is empty")
    else:
        _in_park(v, f"ignition can be switched to {ignition!r}")
        if ignition == "off":
            v.climate.climate_on = False
            v.climate.defrost = False
            v.seat_heating = SeatHeating(rear_left=0 if v.seat_heating.rear_left is not None else None,
                                         rear_right=0 if v.seat_heating.rear_right is not None else None)
            if v.headlights == "high":
                v.headlights = "auto"
        else:  # accessory: seat heating needs the engine
            v.seat_heating = SeatHeating(rear_left=0 if v.seat_heating.rear_left is not None else None,
                                         rear_right=0 if v.seat_heating.rear_right is not None else None)
    v.ignition = ignition
    return v


@TOOLS.tool(idempotent=True)
def shift_gear(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    gear: Annotated[Gear, Field(description="Target gear")],
    brake_pressed: Annotated[bool, Field(description="Whether the brake pedal is held; required to shift out of park")] = False,
) -> Vehicle:
    """Shift the gear (park, reverse, neutral, drive). Needs ignition on; leaving park needs the brake, a closed trunk and a closed charge port."""
    v = _vehicle(w, vehicle_id)
    if gear == v.gear:
        return v
    _ignition_on(v, "shifting gear")
    if v.gear == "park":
        if not brake_pressed:
            raise StateConflict(f"shifting {_label(v)} out of park needs the brake pedal held: call again with brake_pressed=true")
        if v.trunk_open:
            raise StateConflict(f"the trunk of {_label(v)} is open; close it with set_trunk(open=false) before leaving park")
        if v.charging or v.charge_port_open:
            raise StateConflict(f"the charge port of {_label(v)} is {'in use' if v.charging else 'open'}; "
                                "stop charging and close it with set_charge_port(open=false) before leaving park")
    v.gear = gear
    return v

# ---------------------------------------------------------------- doors, trunk, charge port
@TOOLS.tool(idempotent=True)
def lock_doors(w: VehicleWorld, vehicle_id: VehicleId) -> Vehicle:
    """Lock all doors of a vehicle."""
    v = _vehicle(w, vehicle_id)
    v.doors_locked = True
    return v


@TOOLS.tool(idempotent=True)
def unlock_doors(w: VehicleWorld, vehicle_id: VehicleId, pin: Pin) -> Vehicle:
    """Unlock all doors of a vehicle remotely; needs the vehicle's remote-access PIN. Not possible while in gear."""
    v = _vehicle(w, vehicle_id)
    if w.remote_pins.get(vehicle_id) != pin:
        raise PermissionDenied(f"the PIN does not match the remote-access PIN of {_label(v)}")
    _in_park(v, "doors can be unlocked")
    v.doors_locked = False
    return v


@TOOLS.tool(idempotent=True)
def set_trunk(w: VehicleWorld, vehicle_id: VehicleId, open: Annotated[bool, Field(description="true to open the trunk, false to close it")]) -> Vehicle:
    """Open or close the power trunk/tailgate. Opening works only in park."""
    v = _vehicle(w, vehicle_id)
    if open and not v.trunk_open:
        _in_park(v, "the trunk opens")
    v.trunk_open = open
    return v


@TOOLS.tool(idempotent=True)
def set_charge_port(w: VehicleWorld, vehicle_id: VehicleId, open: Annotated[bool, Field(description="true to open the charge port door, false to close it")]) -> Vehicle:
    """Open or close the charge port door of an electric or plug-in hybrid vehicle. Opening works only in park; closing needs charging stopped."""
    v = _vehicle(w, vehicle_id)
    _chargeable(v)
    if open and not v.charge_port_open:
        _in_park(v, "the charge port opens")
    if not open and v.charging:
        raise StateConflict(f"{_label(v)} is charging; stop it with set_charging(charging=false) before closing the charge port")
    v.charge_port_open = open
    return v


@TOOLS.tool(idempotent=True)
def set_charging(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    charging: Annotated[bool, Field(description="true to start a charging session, false to stop it")],
    charge_limit_pct: Annotated[int, Field(description="Charge limit in percent for a new session", ge=50, le=100)] = 80,
) -> Vehicle:
    """Start or stop charging. Starting needs park, ignition off or accessory, an open charge port and a charger at the vehicle's location.

    Stopping ends the session: the fleet simulator credits the battery up to the session's charge limit."""
    v = _vehicle(w, vehicle_id)
    _chargeable(v)
    if not charging:
        if v.charging:
            v.charging = False
            v.battery_pct = max(v.battery_pct or 0.0, float(v.charge_limit_pct or 80))
            _update_range(v)
        return v
    if v.charging:
        v.charge_limit_pct = charge_limit_pct
        return v
    _in_park(v, "charging starts")
    if v.ignition == "on":
        raise StateConflict(f"ignition is 'on' on {_label(v)}; switch it to 'off' or 'accessory' with set_ignition before charging")
    if not v.charge_port_open:
        raise StateConflict(f"the charge port of {_label(v)} is closed; open it with set_charge_port(open=true)")
    here = w.places.get(v.location_place_id or "")
    if here is None or not here.has_charger:
        raise StateConflict(f"there is no charger at {v.location_name}; drive to a place with has_charger=true "
                            "(list_places category='charging_station')")
    if (v.battery_pct or 0) >= charge_limit_pct:
        raise StateConflict(f"battery of {_label(v)} is already at {v.battery_pct}%, at or above charge_limit_pct {charge_limit_pct}")
    v.charging, v.charge_limit_pct = True, charge_limit_pct
    return v

# ---------------------------------------------------------------- cabin
@TOOLS.tool(idempotent=True)
def set_window(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    window: Annotated[WindowName | Literal["all"], Field(description="Which window ('all' = the four side windows)")],
    position_pct: Annotated[int, Field(description="How far open: 0 = closed, 100 = fully open", ge=0, le=100)],
) -> Vehicle:
    """Open or close a window. Needs ignition accessory or on; windows cannot open while the defrost is on."""
    v = _vehicle(w, vehicle_id)
    _ignition_on(v, "moving windows", allow_accessory=True)
    if window == "sunroof" and v.windows.sunroof is None:
        raise InvalidArgument(f"{_label(v)} has no sunroof; valid windows: driver_front, passenger_front, rear_left, rear_right, all")
    if position_pct > 0 and v.climate.defrost:
        raise StateConflict(f"windows of {_label(v)} cannot open while the defrost is on; turn it off with set_climate(defrost=false)")
    names = ["driver_front", "passenger_front", "rear_left", "rear_right"] if window == "all" else [window]
    for n in names:
        setattr(v.windows, n, position_pct)
    return v


@TOOLS.tool(idempotent=True)
def set_climate(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    climate_on: Annotated[bool | None, Field(description="Switch the climate system on or off")] = None,
    temperature_c: Annotated[float | None, Field(description="Cabin target temperature in Celsius", ge=16, le=30)] = None,
    fan_speed: Annotated[int | None, Field(description="Fan speed, 0 (auto) to 7", ge=0, le=7)] = None,
    defrost: Annotated[bool | None, Field(description="Windshield defrost on or off (turning it on switches the climate on)")] = None,
) -> Vehicle:
    """Change the cabin climate. Needs ignition accessory or on, except electric vehicles may precondition with the ignition off if the battery is at least 20 %."""
    v = _vehicle(w, vehicle_id)
    if climate_on is None and temperature_c is None and fan_speed is None and defrost is None:
        raise InvalidArgument("give at least one of climate_on, temperature_c, fan_speed or defrost")
    if v.ignition == "off":
        if v.powertrain != "electric":
            _ignition_on(v, "the climate system", allow_accessory=True)
        elif (v.battery_pct or 0) < MIN_PRECONDITION_BATTERY_PCT and climate_on is not False:
            raise StateConflict(f"battery too low to precondition {_label(v)} with the ignition off: {v.battery_pct}% "
                                f"(needs {MIN_PRECONDITION_BATTERY_PCT}%)")
    if defrost and climate_on is False:
        raise InvalidArgument("defrost=true needs the climate on; do not combine it with climate_on=false")
    c = v.climate
    if temperature_c is not None:
        c.temperature_c = round(temperature_c * 2) / 2
    if fan_speed is not None:
        c.fan_speed = fan_speed
    if climate_on is not None:
        c.climate_on = climate_on
        if not climate_on:
            c.defrost = False
    if defrost is not None:
        c.defrost = defrost
        if defrost:
            c.climate_on = True
    return v


@TOOLS.tool(idempotent=True)
def set_seat_heating(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    seat: Annotated[Seat, Field(description="Which seat")],
    level: Annotated[int, Field(description="Heating level: 0 = off, 3 = highest", ge=0, le=3)],
) -> Vehicle:
    """Set a seat's heating level (0-3). Needs ignition on; rear seats only on vehicles with rear seat heating."""
    v = _vehicle(w, vehicle_id)
    if getattr(v.seat_heating, seat) is None:
        raise InvalidArgument(f"{_label(v)} has no heating in seat {seat!r}; heated seats: driver, passenger")
    _ignition_on(v, "seat heating")
    setattr(v.seat_heating, seat, level)
    return v


@TOOLS.tool(idempotent=True)
def set_lights(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    headlights: Annotated[Headlights | None, Field(description="Headlight mode")] = None,
    hazard_lights: Annotated[bool | None, Field(description="Hazard warning lights on or off")] = None,
) -> Vehicle:
    """Set the headlights (off, auto, low, high) and/or the hazard lights. High beams need ignition on; hazards always work."""
    v = _vehicle(w, vehicle_id)
    if headlights is None and hazard_lights is None:
        raise InvalidArgument("give headlights and/or hazard_lights")
    if headlights == "high":
        _ignition_on(v, "high beams")
    elif headlights in ("low",):
        _ignition_on(v, "low beams", allow_accessory=True)
    if headlights is not None:
        v.headlights = headlights
    if hazard_lights is not None:
        v.hazard_lights = hazard_lights
    return v

# ---------------------------------------------------------------- navigation and trips
@TOOLS.tool(read_only=True)
def list_places(
    w: VehicleWorld,
    category: Annotated[PlaceCategory | None, Field(description="Only places of this category")] = None,
    vehicle_id: Annotated[str | None, Field(description="Vehicle id to measure road distances from (sorted nearest first)")] = None,
    has_charger: Annotated[bool | None, Field(description="Only places with (true) or without (false) an EV charger")] = None,
) -> PlaceList:
    """List known places (depot, offices, customers, charging and fuel stations, service center, airport), optionally with distances from a vehicle."""
    v = _vehicle(w, vehicle_id) if vehicle_id is not None else None
    out = [PlaceWithDistance(**p.model_dump(), distance_km=_road_km(v, p) if v else None) for p in w.places.values()
           if (category is None or p.category == category) and (has_charger is None or p.has_charger == has_charger)]
    if v is not None:
        out.sort(key=lambda p: (p.distance_km or 0.0, p.place_id))
    return PlaceList(places=out, total=len(out))


@TOOLS.tool(idempotent=True)
def set_destination(w: VehicleWorld, vehicle_id: VehicleId, place_id: PlaceId) -> Route:
    """Start navigation to a place: computes the route, distance and ETA. Needs ignition on."""
    v = _vehicle(w, vehicle_id)
    p = _place(w, place_id)
    _ignition_on(v, "navigation")
    if v.location_place_id == place_id:
        raise InvalidArgument(f"{_label(v)} is already at {p.name} ({place_id}); choose another place_id")
    km = _road_km(v, p)
    dur = _duration(km)
    via = "ring road" if km > 15 else "city streets"
    v.navigation = Navigation(place_id=place_id, destination_name=p.name, from_place_id=v.location_place_id, distance_km=km,
                              duration_min=dur, eta=_plus(w.clock, dur), route_summary=f"{v.location_name} -> {p.name} via {via}",
                              set_at=w.clock)
    return _route(v, v.navigation)


@TOOLS.tool(read_only=True)
def get_route(w: VehicleWorld, vehicle_id: VehicleId) -> Route:
    """Get the active navigation route of a vehicle: destination, distance, duration, ETA and whether the range suffices."""
    v = _vehicle(w, vehicle_id)
    if v.navigation is None:
        raise StateConflict(f"{_label(v)} has no active navigation; start one with set_destination")
    return _route(v, v.navigation)


@TOOLS.tool(idempotent=True)
def cancel_navigation(w: VehicleWorld, vehicle_id: VehicleId) -> NavigationCancelled:
    """Cancel the active navigation of a vehicle (nothing happens if none is active)."""
    v = _vehicle(w, vehicle_id)
    nav = v.navigation
    v.navigation = None
    return NavigationCancelled(vehicle_id=vehicle_id, cancelled=nav is not None, place_id=nav.place_id if nav else None)


@TOOLS.tool()
def drive_to_destination(w: VehicleWorld, vehicle_id: VehicleId) -> TripResult:
    """Drive the active navigation route: needs ignition on, gear drive, doors locked and enough range. Logs a trip and moves the vehicle.

    Arriving at a fuel_station fills the tank of a gasoline, diesel or plug-in hybrid vehicle (refuelled_l)."""
    v = _vehicle(w, vehicle_id)
    _ignition_on(v, "driving")
    if v.navigation is None:
        raise StateConflict(f"{_label(v)} has no active navigation; set_destination first")
    if v.gear != "drive":
        raise StateConflict(f"{_label(v)} is in gear {v.gear!r}; shift_gear to 'drive' (with brake_pressed=true) first")
    if not v.doors_locked:
        raise StateConflict(f"the doors of {_label(v)} are unlocked; lock_doors before driving")
    nav = v.navigation
    km = nav.distance_km
    if v.range_km < km:
        what = "battery" if v.powertrain == "electric" else "fuel"
        stop = "charging_station" if what == "battery" else "fuel_station"
        raise StateConflict(f"{what} too low for this route: range {v.range_km} km < distance {km} km to {nav.destination_name}; "
                            f"set_destination to a nearer place (list_places category='{stop}')")
    ev_km = min(km, _ev_range(v))
    used = []
    if ev_km > 0 and v.battery_kwh and v.kwh_per_100km:
        kwh = ev_km * v.kwh_per_100km / 100
        v.battery_pct = round(max(0.0, (v.battery_pct or 0) - kwh / v.battery_kwh * 100), 1)
        used.append(f"{kwh:.1f} kWh")
    fuel_km = km - ev_km
    if fuel_km > 0 and v.tank_l and v.l_per_100km:
        litres = fuel_km * v.l_per_100km / 100
        v.fuel_pct = round(max(0.0, (v.fuel_pct or 0) - litres / v.tank_l * 100), 1)
        used.append(f"{litres:.1f} L")
    _update_range(v)
    p = w.places[nav.place_id]
    start = w.clock
    w.clock = _plus(start, nav.duration_min)
    tid = w.new_id("TRP")
    w.trips[tid] = Trip(trip_id=tid, vehicle_id=vehicle_id, driver_name=v.driver_name, from_place_id=v.location_place_id,
                        to_place_id=p.place_id, from_name=v.location_name, to_name=p.name, distance_km=km, duration_min=nav.duration_min,
                        started_at=start, ended_at=w.clock, energy_used=" + ".join(used) or "0")
    v.odometer_km = round(v.odometer_km + km, 1)
    v.location_place_id, v.location_name, v.lat, v.lon = p.place_id, p.name, p.lat, p.lon
    v.navigation = None
    warns = [f"{t.tire} tire pressure is {t.status} ({t.pressure_kpa} kPa)" for t in _tire_warnings(v) if t.status != "ok"]
    refuelled = None
    if p.category == "fuel_station" and v.tank_l and (v.fuel_pct or 0) < 100:
        refuelled = round((100 - (v.fuel_pct or 0)) / 100 * v.tank_l, 1)
        v.fuel_pct = 100.0
        _update_range(v)
    if v.range_km < 30:
        warns.append(f"range is down to {v.range_km} km")
    return TripResult(trip_id=tid, vehicle_id=vehicle_id, place_id=p.place_id, location_name=p.name, distance_km=km,
                      duration_min=nav.duration_min, arrived_at=w.clock, fuel_pct=v.fuel_pct, battery_pct=v.battery_pct,
                      range_km=v.range_km, odometer_km=v.odometer_km, refuelled_l=refuelled, warnings=warns)


@TOOLS.tool(read_only=True)
def list_trips(
    w: VehicleWorld,
    vehicle_id: Annotated[str | None, Field(description="Only trips of this vehicle id")] = None,
    since: Annotated[str | None, Field(description="Only trips started on or after this date, YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
    limit: Annotated[int, Field(description="Most recent N trips", ge=1, le=100)] = 20,
) -> TripList:
    """List the trip log (from, to, distance, duration, energy used), most recent first."""
    if vehicle_id is not None:
        _vehicle(w, vehicle_id)
    out = [t for t in w.trips.values() if (vehicle_id is None or t.vehicle_id == vehicle_id)
           and (since is None or t.started_at[:10] >= since)]
    out.sort(key=lambda t: (t.started_at, t.trip_id), reverse=True)
    out = out[:limit]
    return TripList(trips=out, total=len(out))


def build(seed: int = 0) -> EnvServer[VehicleWorld]:
    """A fresh vehicle server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "vehicle", seeder=seed_world, category="IoT",
        description="Connected-car fleet: ignition, gears, door locks, trunk, windows, climate, seat heating, lights, "
                    "charging, navigation with routes and ETAs, tire pressure and the trip log.",
        tools=TOOLS, default_seed=seed,
    )
