"""vehicle tools, list_vehicles to list_trips (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict
from servers.vehicle.world import (
    MIN_CRANK_VOLTS,
    MIN_PRECONDITION_BATTERY_PCT,
    MIN_START_BATTERY_PCT,
    TOOLS,
    Gear,
    Headlights,
    Ignition,
    Navigation,
    NavigationCancelled,
    Pin,
    PlaceCategory,
    PlaceId,
    PlaceList,
    PlaceWithDistance,
    Powertrain,
    Route,
    Seat,
    SeatHeating,
    TireReport,
    Trip,
    TripList,
    TripResult,
    Vehicle,
    VehicleId,
    VehicleList,
    VehicleWorld,
    WindowName,
    _chargeable,
    _duration,
    _ev_range,
    _ignition_on,
    _in_park,
    _label,
    _place,
    _plus,
    _road_km,
    _route,
    _summary,
    _tire_warnings,
    _update_range,
    _vehicle,
)


@TOOLS.tool(read_only=True)
def list_vehicles(
    w: VehicleWorld,
    powertrain: Annotated[Powertrain | None, Field(description="Only vehicles with this powertrain")] = None,
    driver_name: Annotated[str | None, Field(description="Case-insensitive part of the assigned driver's name")] = None,
) -> VehicleList:
    """List the fleet's vehicles with energy level, range, ignition, gear, lock state and location."""
    out = [
        _summary(v)
        for v in w.vehicles.values()
        if (powertrain is None or v.powertrain == powertrain)
        and (driver_name is None or driver_name.lower() in v.driver_name.lower())
    ]
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
    warns = [
        f"{t.tire} tire at {t.pressure_kpa} kPa is {t.status} (recommended {v.tires.recommended_kpa} kPa)"
        for t in tires
        if t.status != "ok"
    ]
    return TireReport(vehicle_id=vehicle_id, recommended_kpa=v.tires.recommended_kpa, tires=tires, warnings=warns)


# ---------------------------------------------------------------- ignition and gear
@TOOLS.tool(idempotent=True)
def set_ignition(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    ignition: Annotated[
        Ignition,
        Field(description="'on' starts the engine/drive system, 'accessory' powers the cabin only, 'off' shuts down"),
    ],
    brake_pressed: Annotated[
        bool, Field(description="Whether the brake pedal is held; required to switch ignition 'on'")
    ] = False,
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
            raise StateConflict(
                f"{_label(v)} is charging; stop charging with set_charging(charging=false) before starting"
            )
        if v.powertrain == "electric" and (v.battery_pct or 0) < MIN_START_BATTERY_PCT:
            raise StateConflict(
                f"battery too low to start {_label(v)}: {v.battery_pct}% (needs at least {MIN_START_BATTERY_PCT}%); "
                "charge it first"
            )
        if v.powertrain in ("gasoline", "diesel") and v.aux_battery_v < MIN_CRANK_VOLTS:
            raise StateConflict(
                f"12 V battery too low to crank {_label(v)}: {v.aux_battery_v} V (needs {MIN_CRANK_VOLTS} V); "
                "a jump start or service is needed"
            )
        if v.powertrain in ("gasoline", "diesel") and (v.fuel_pct or 0) <= 0:
            raise StateConflict(f"the fuel tank of {_label(v)} is empty")
    else:
        _in_park(v, f"ignition can be switched to {ignition!r}")
        if ignition == "off":
            v.climate.climate_on = False
            v.climate.defrost = False
            v.seat_heating = SeatHeating(
                rear_left=0 if v.seat_heating.rear_left is not None else None,
                rear_right=0 if v.seat_heating.rear_right is not None else None,
            )
            if v.headlights == "high":
                v.headlights = "auto"
        else:  # accessory: seat heating needs the engine
            v.seat_heating = SeatHeating(
                rear_left=0 if v.seat_heating.rear_left is not None else None,
                rear_right=0 if v.seat_heating.rear_right is not None else None,
            )
    v.ignition = ignition
    return v


@TOOLS.tool(idempotent=True)
def shift_gear(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    gear: Annotated[Gear, Field(description="Target gear")],
    brake_pressed: Annotated[
        bool, Field(description="Whether the brake pedal is held; required to shift out of park")
    ] = False,
) -> Vehicle:
    """Shift the gear (park, reverse, neutral, drive). Needs ignition on; leaving park needs the brake, a closed trunk and a closed charge port."""
    v = _vehicle(w, vehicle_id)
    if gear == v.gear:
        return v
    _ignition_on(v, "shifting gear")
    if v.gear == "park":
        if not brake_pressed:
            raise StateConflict(
                f"shifting {_label(v)} out of park needs the brake pedal held: call again with brake_pressed=true"
            )
        if v.trunk_open:
            raise StateConflict(
                f"the trunk of {_label(v)} is open; close it with set_trunk(open=false) before leaving park"
            )
        if v.charging or v.charge_port_open:
            raise StateConflict(
                f"the charge port of {_label(v)} is {'in use' if v.charging else 'open'}; "
                "stop charging and close it with set_charge_port(open=false) before leaving park"
            )
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
def set_trunk(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    open: Annotated[bool, Field(description="true to open the trunk, false to close it")],
) -> Vehicle:
    """Open or close the power trunk/tailgate. Opening works only in park."""
    v = _vehicle(w, vehicle_id)
    if open and not v.trunk_open:
        _in_park(v, "the trunk opens")
    v.trunk_open = open
    return v


@TOOLS.tool(idempotent=True)
def set_charge_port(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    open: Annotated[bool, Field(description="true to open the charge port door, false to close it")],
) -> Vehicle:
    """Open or close the charge port door of an electric or plug-in hybrid vehicle. Opening works only in park; closing needs charging stopped."""
    v = _vehicle(w, vehicle_id)
    _chargeable(v)
    if open and not v.charge_port_open:
        _in_park(v, "the charge port opens")
    if not open and v.charging:
        raise StateConflict(
            f"{_label(v)} is charging; stop it with set_charging(charging=false) before closing the charge port"
        )
    v.charge_port_open = open
    return v


@TOOLS.tool(idempotent=True)
def set_charging(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    charging: Annotated[bool, Field(description="true to start a charging session, false to stop it")],
    charge_limit_pct: Annotated[
        int, Field(description="Charge limit in percent for a new session", ge=50, le=100)
    ] = 80,
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
        raise StateConflict(
            f"ignition is 'on' on {_label(v)}; switch it to 'off' or 'accessory' with set_ignition before charging"
        )
    if not v.charge_port_open:
        raise StateConflict(f"the charge port of {_label(v)} is closed; open it with set_charge_port(open=true)")
    here = w.places.get(v.location_place_id or "")
    if here is None or not here.has_charger:
        raise StateConflict(
            f"there is no charger at {v.location_name}; drive to a place with has_charger=true "
            "(list_places category='charging_station')"
        )
    if (v.battery_pct or 0) >= charge_limit_pct:
        raise StateConflict(
            f"battery of {_label(v)} is already at {v.battery_pct}%, at or above charge_limit_pct {charge_limit_pct}"
        )
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
        raise InvalidArgument(
            f"{_label(v)} has no sunroof; valid windows: driver_front, passenger_front, rear_left, rear_right, all"
        )
    if position_pct > 0 and v.climate.defrost:
        raise StateConflict(
            f"windows of {_label(v)} cannot open while the defrost is on; turn it off with set_climate(defrost=false)"
        )
    names = ["driver_front", "passenger_front", "rear_left", "rear_right"] if window == "all" else [window]
    for n in names:
        setattr(v.windows, n, position_pct)
    return v


@TOOLS.tool(idempotent=True)
def set_climate(
    w: VehicleWorld,
    vehicle_id: VehicleId,
    climate_on: Annotated[bool | None, Field(description="Switch the climate system on or off")] = None,
    temperature_c: Annotated[
        float | None, Field(description="Cabin target temperature in Celsius", ge=16, le=30)
    ] = None,
    fan_speed: Annotated[int | None, Field(description="Fan speed, 0 (auto) to 7", ge=0, le=7)] = None,
    defrost: Annotated[
        bool | None, Field(description="Windshield defrost on or off (turning it on switches the climate on)")
    ] = None,
) -> Vehicle:
    """Change the cabin climate. Needs ignition accessory or on, except electric vehicles may precondition with the ignition off if the battery is at least 20 %."""
    v = _vehicle(w, vehicle_id)
    if climate_on is None and temperature_c is None and fan_speed is None and defrost is None:
        raise InvalidArgument("give at least one of climate_on, temperature_c, fan_speed or defrost")
    if v.ignition == "off":
        if v.powertrain != "electric":
            _ignition_on(v, "the climate system", allow_accessory=True)
        elif (v.battery_pct or 0) < MIN_PRECONDITION_BATTERY_PCT and climate_on is not False:
            raise StateConflict(
                f"battery too low to precondition {_label(v)} with the ignition off: {v.battery_pct}% "
                f"(needs {MIN_PRECONDITION_BATTERY_PCT}%)"
            )
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
    vehicle_id: Annotated[
        str | None, Field(description="Vehicle id to measure road distances from (sorted nearest first)")
    ] = None,
    has_charger: Annotated[
        bool | None, Field(description="Only places with (true) or without (false) an EV charger")
    ] = None,
) -> PlaceList:
    """List known places (depot, offices, customers, charging and fuel stations, service center, airport), optionally with distances from a vehicle."""
    v = _vehicle(w, vehicle_id) if vehicle_id is not None else None
    out = [
        PlaceWithDistance(**p.model_dump(), distance_km=_road_km(v, p) if v else None)
        for p in w.places.values()
        if (category is None or p.category == category) and (has_charger is None or p.has_charger == has_charger)
    ]
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
    v.navigation = Navigation(
        place_id=place_id,
        destination_name=p.name,
        from_place_id=v.location_place_id,
        distance_km=km,
        duration_min=dur,
        eta=_plus(w.clock, dur),
        route_summary=f"{v.location_name} -> {p.name} via {via}",
        set_at=w.clock,
    )
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
        raise StateConflict(
            f"{what} too low for this route: range {v.range_km} km < distance {km} km to {nav.destination_name}; "
            f"set_destination to a nearer place (list_places category='{stop}')"
        )
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
    w.trips[tid] = Trip(
        trip_id=tid,
        vehicle_id=vehicle_id,
        driver_name=v.driver_name,
        from_place_id=v.location_place_id,
        to_place_id=p.place_id,
        from_name=v.location_name,
        to_name=p.name,
        distance_km=km,
        duration_min=nav.duration_min,
        started_at=start,
        ended_at=w.clock,
        energy_used=" + ".join(used) or "0",
    )
    v.odometer_km = round(v.odometer_km + km, 1)
    v.location_place_id, v.location_name, v.lat, v.lon = p.place_id, p.name, p.lat, p.lon
    v.navigation = None
    warns = [
        f"{t.tire} tire pressure is {t.status} ({t.pressure_kpa} kPa)" for t in _tire_warnings(v) if t.status != "ok"
    ]
    refuelled = None
    if p.category == "fuel_station" and v.tank_l and (v.fuel_pct or 0) < 100:
        refuelled = round((100 - (v.fuel_pct or 0)) / 100 * v.tank_l, 1)
        v.fuel_pct = 100.0
        _update_range(v)
    if v.range_km < 30:
        warns.append(f"range is down to {v.range_km} km")
    return TripResult(
        trip_id=tid,
        vehicle_id=vehicle_id,
        place_id=p.place_id,
        location_name=p.name,
        distance_km=km,
        duration_min=nav.duration_min,
        arrived_at=w.clock,
        fuel_pct=v.fuel_pct,
        battery_pct=v.battery_pct,
        range_km=v.range_km,
        odometer_km=v.odometer_km,
        refuelled_l=refuelled,
        warnings=warns,
    )


@TOOLS.tool(read_only=True)
def list_trips(
    w: VehicleWorld,
    vehicle_id: Annotated[str | None, Field(description="Only trips of this vehicle id")] = None,
    since: Annotated[
        str | None,
        Field(description="Only trips started on or after this date, YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$"),
    ] = None,
    limit: Annotated[int, Field(description="Most recent N trips", ge=1, le=100)] = 20,
) -> TripList:
    """List the trip log (from, to, distance, duration, energy used), most recent first."""
    if vehicle_id is not None:
        _vehicle(w, vehicle_id)
    out = [
        t
        for t in w.trips.values()
        if (vehicle_id is None or t.vehicle_id == vehicle_id) and (since is None or t.started_at[:10] >= since)
    ]
    out.sort(key=lambda t: (t.started_at, t.trip_id), reverse=True)
    out = out[:limit]
    return TripList(trips=out, total=len(out))
