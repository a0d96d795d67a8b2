"""vehicle: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, StateConflict, ToolSet, World, not_found, sensitive

NOW = f"{REFERENCE_DAY}T08:30:00"
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
    "Lisbon": (38.7223, -9.1393),
    "Denver": (39.7392, -104.9903),
    "Austin": (30.2672, -97.7431),
    "Leeds": (53.8008, -1.5491),
    "Lyon": (45.7640, 4.8357),
    "Porto": (41.1579, -8.6291),
    "Boston": (42.3601, -71.0589),
    "Dublin": (53.3498, -6.2603),
    "Seattle": (47.6062, -122.3321),
    "Madrid": (40.4168, -3.7038),
    "Oslo": (59.9139, 10.7522),
    "Toronto": (43.6532, -79.3832),
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
    "customer": [
        "Harbor Logistics",
        "Greenleaf Market",
        "Summit Clinic",
        "Bluebird Bakery",
        "Atlas Hardware",
        "Northwind Hotel",
        "Pinecrest School",
        "Orchard Apartments",
        "Civic Library",
        "Lakeside Gym",
    ],
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
        raise StateConflict(
            f"{_label(v)} is not in park (gear '{v.gear}'); {action} only in park: shift_gear to 'park' first"
        )


def _ignition_on(v: Vehicle, action: str, allow_accessory: bool = False) -> None:
    ok = ("on", "accessory") if allow_accessory else ("on",)
    if v.ignition not in ok:
        need = "'accessory' or 'on'" if allow_accessory else "'on'"
        raise StateConflict(
            f"ignition is {v.ignition!r} on {_label(v)}; {action} needs ignition {need}: use set_ignition first"
        )


def _chargeable(v: Vehicle) -> None:
    if v.battery_kwh is None:
        raise InvalidArgument(
            f"{_label(v)} is a {v.powertrain} vehicle without a charge port; "
            "charging needs an electric or plug_in_hybrid vehicle (list_vehicles powertrain='electric')"
        )


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
    return Route(
        vehicle_id=v.vehicle_id,
        place_id=nav.place_id,
        destination_name=nav.destination_name,
        distance_km=nav.distance_km,
        duration_min=nav.duration_min,
        eta=nav.eta,
        route_summary=nav.route_summary,
        range_km=v.range_km,
        range_sufficient=v.range_km >= nav.distance_km,
    )


def _tire_warnings(v: Vehicle) -> list[TireReading]:
    t = v.tires
    out = []
    for name in ("front_left", "front_right", "rear_left", "rear_right"):
        kpa = getattr(t, f"{name}_kpa")
        status = "low" if kpa < t.recommended_kpa - 25 else ("high" if kpa > t.recommended_kpa + 25 else "ok")
        out.append(TireReading(tire=name, pressure_kpa=kpa, status=status))  # type: ignore[arg-type]
    return out


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[VehicleWorld] = ToolSet()
