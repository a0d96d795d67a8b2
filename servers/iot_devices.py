"""iot_devices: smart homes with rooms, sensors, actuators, scenes, automations and device groups."""

from __future__ import annotations

import random
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import (
    EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolFailure, ToolSet, World, not_found, sensitive,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

NOW = "2026-03-02T09:00:00"

DeviceType = Literal[
    "temperature_sensor", "humidity_sensor", "motion_sensor", "contact_sensor", "smoke_detector",
    "light", "thermostat", "lock", "blind", "plug", "camera",
]
SENSOR_TYPES = ("temperature_sensor", "humidity_sensor", "motion_sensor", "contact_sensor", "smoke_detector")
ThermostatMode = Literal["off", "heat", "cool", "auto", "eco"]
LockState = Literal["locked", "unlocked", "jammed"]
OfflineReason = Literal["wifi_dropout", "battery_depleted", "hub_unreachable"]
Command = Literal[
    "turn_on", "turn_off", "set_brightness", "set_color", "set_thermostat_mode", "set_setpoint",
    "lock", "set_position", "start_recording", "stop_recording",
]
TriggerType = Literal["time", "motion", "contact_open", "temperature_below", "temperature_above", "smoke"]
EventType = Literal[
    "motion_detected", "door_opened", "door_closed", "locked", "unlocked", "lock_jammed", "power_on", "power_off",
    "brightness_changed", "color_changed", "setpoint_changed", "mode_changed", "position_changed",
    "recording_started", "recording_stopped", "went_offline", "reconnected", "smoke_alarm_test", "low_battery",
    "scene_activated", "renamed",
]

# capability needed by each command, and the device types that offer each capability
COMMAND_CAP: dict[str, str] = {
    "turn_on": "power", "turn_off": "power", "set_brightness": "brightness", "set_color": "color",
    "set_thermostat_mode": "thermostat", "set_setpoint": "thermostat", "lock": "lock", "set_position": "position",
    "start_recording": "recording", "stop_recording": "recording",
}
CAP_TYPES: dict[str, str] = {
    "power": "light, plug or camera", "brightness": "light", "color": "color-capable light (supports_color=true)",
    "thermostat": "thermostat", "lock": "lock", "position": "blind", "recording": "camera",
    "temperature": "temperature_sensor, humidity_sensor or thermostat", "humidity": "humidity_sensor",
    "motion": "motion_sensor or camera", "contact": "contact_sensor", "smoke": "smoke_detector",
}

ROOM_NAMES = [
    ("Living Room", 0), ("Kitchen", 0), ("Dining Room", 0), ("Hallway", 0), ("Garage", 0), ("Porch", 0),
    ("Master Bedroom", 1), ("Guest Bedroom", 1), ("Kids Room", 1), ("Office", 1), ("Bathroom", 1), ("Basement", -1),
]
MAKERS: dict[str, list[tuple[str, str]]] = {
    "temperature_sensor": [("Aqualis", "TS-20"), ("Nordvik", "Thermo Mini")],
    "humidity_sensor": [("Aqualis", "HT-31"), ("Nordvik", "Climate Dot")],
    "motion_sensor": [("Sentra", "PIR-4"), ("Nordvik", "Motion Pro")],
    "contact_sensor": [("Sentra", "DW-2"), ("Aqualis", "Contact S")],
    "smoke_detector": [("Firewatch", "FW-9"), ("Halden", "Smoke+CO")],
    "light": [("Lumio", "A19 White"), ("Lumio", "A19 Color"), ("Brightwave", "Panel 60"), ("Brightwave", "Spectrum")],
    "thermostat": [("Hearthstone", "T5"), ("Climara", "Smart Stat 3")],
    "lock": [("Kestrel", "Deadbolt Pro"), ("Bolton", "Keypad 2")],
    "blind": [("Shadecraft", "Roller R2"), ("Veltro", "Motor Blind")],
    "plug": [("Voltix", "Mini Plug"), ("Voltix", "Energy Plug")],
    "camera": [("Oculo", "Cam 2K"), ("Vantage", "Outdoor 4")],
}
COLORS = ["#FFD8A8", "#FFFFFF", "#FF6B6B", "#4DABF7", "#69DB7C", "#B197FC", "#FFA94D"]
STREETS = ["Maple Ave", "Harbor Rd", "Elm St", "Cedar Ln", "Oak Dr", "Willow Way", "Birch Ct", "Lake View Rd"]


class Home(BaseModel):
    home_id: str
    name: str
    owner_name: str
    address: str
    city: str
    timezone: str


class Room(BaseModel):
    room_id: str
    home_id: str
    name: str
    floor: int


class Device(BaseModel):
    device_id: str
    home_id: str
    room_id: str
    name: str
    device_type: DeviceType
    manufacturer: str
    model: str
    firmware: str
    capabilities: list[str]
    online: bool = True
    offline_reason: OfflineReason | None = None
    last_seen: str = NOW
    battery_pct: int | None = None
    # lights, plugs, cameras
    power_on: bool | None = None
    brightness: int | None = None
    supports_color: bool | None = None
    color: str | None = None
    power_w: float | None = None
    # thermostats
    thermostat_mode: ThermostatMode | None = None
    setpoint_c: float | None = None
    min_setpoint_c: float | None = None
    max_setpoint_c: float | None = None
    # locks
    lock_state: LockState | None = None
    # blinds
    position_pct: int | None = None
    # cameras
    recording: bool | None = None
    # sensor readings
    temperature_c: float | None = None
    humidity_pct: float | None = None
    motion_detected: bool | None = None
    contact_open: bool | None = None
    smoke_detected: bool | None = None


class SceneAction(BaseModel):
    device_id: str = Field(description="Device id the action applies to (from list_devices)")
    command: Command = Field(description="What to do with the device")
    value: float | str | None = Field(
        default=None,
        description="Argument of the command: brightness 0-100, color '#RRGGBB', setpoint 5-35 C, "
                    "thermostat mode (off/heat/cool/auto/eco), blind position 0-100; omit for on/off/lock/recording",
    )


class Scene(BaseModel):
    scene_id: str
    home_id: str
    name: str
    actions: list[SceneAction]
    last_activated: str | None = None


class Automation(BaseModel):
    automation_id: str
    home_id: str
    name: str
    trigger_type: TriggerType
    trigger_time: str | None = None
    trigger_device_id: str | None = None
    threshold_c: float | None = None
    scene_id: str
    enabled: bool = True


class Group(BaseModel):
    group_id: str
    home_id: str
    name: str
    device_ids: list[str]


class Event(BaseModel):
    event_id: str
    home_id: str
    device_id: str | None = None
    event_type: EventType
    detail: str
    at: str


class IotWorld(World):
    homes: dict[str, Home] = {}
    rooms: dict[str, Room] = {}
    devices: dict[str, Device] = {}
    lock_codes: dict[str, str] = {}
    scenes: dict[str, Scene] = {}
    automations: dict[str, Automation] = {}
    groups: dict[str, Group] = {}
    events: dict[str, Event] = {}


# --------------------------------------------------------------------------- seeding
def _caps(device_type: str, supports_color: bool = False) -> list[str]:
    return {
        "temperature_sensor": ["temperature"],
        "humidity_sensor": ["humidity", "temperature"],
        "motion_sensor": ["motion"],
        "contact_sensor": ["contact"],
        "smoke_detector": ["smoke"],
        "light": ["power", "brightness"] + (["color"] if supports_color else []),
        "thermostat": ["thermostat", "temperature"],
        "lock": ["lock"],
        "blind": ["position"],
        "plug": ["power", "energy"],
        "camera": ["power", "recording", "motion"],
    }[device_type]


def _add_device(w: IotWorld, rng: random.Random, home_id: str, room: Room, device_type: str, name: str) -> Device:
    did = w.new_id("DEV")
    maker, model = rng.choice(MAKERS[device_type])
    color = device_type == "light" and ("Color" in model or "Spectrum" in model)
    battery = device_type in SENSOR_TYPES or device_type == "lock"
    d = Device(
        device_id=did, home_id=home_id, room_id=room.room_id, name=name, device_type=device_type,  # type: ignore[arg-type]
        manufacturer=maker, model=model, firmware=f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}",
        capabilities=_caps(device_type, color),
        battery_pct=(rng.choice([rng.randint(5, 15), rng.randint(40, 100), rng.randint(60, 100)]) if battery else None),
    )
    indoor = room.name not in ("Porch", "Garage")
    base_t = round(rng.uniform(18.5, 23.5) if indoor else rng.uniform(3.0, 12.0), 1)
    if device_type == "light":
        d.power_on = rng.random() < 0.4
        d.brightness = rng.choice([20, 40, 60, 80, 100])
        d.supports_color = color
        d.color = rng.choice(COLORS) if color else None
    elif device_type == "plug":
        d.power_on = rng.random() < 0.6
        d.power_w = round(rng.uniform(2, 180), 1) if d.power_on else 0.0
    elif device_type == "camera":
        d.power_on = rng.random() < 0.85
        d.recording = bool(d.power_on and rng.random() < 0.5)
        d.motion_detected = False
    elif device_type == "thermostat":
        d.thermostat_mode = rng.choice(["heat", "heat", "auto", "eco", "off"])  # type: ignore[assignment]
        lo, hi = rng.choice([(5.0, 35.0), (7.0, 32.0), (10.0, 30.0)])
        d.min_setpoint_c, d.max_setpoint_c = lo, hi
        d.setpoint_c = rng.choice([19.0, 20.0, 20.5, 21.0, 22.0])
        d.temperature_c = base_t
    elif device_type == "lock":
        d.lock_state = rng.choice(["locked", "locked", "unlocked", "jammed"])  # type: ignore[assignment]
        w.lock_codes[did] = f"{rng.randint(0, 999999):06d}"
    elif device_type == "blind":
        d.position_pct = rng.choice([0, 0, 25, 50, 100])
    elif device_type == "temperature_sensor":
        d.temperature_c = base_t
    elif device_type == "humidity_sensor":
        d.temperature_c = base_t
        d.humidity_pct = round(rng.uniform(35, 75), 1)
    elif device_type == "motion_sensor":
        d.motion_detected = rng.random() < 0.2
    elif device_type == "contact_sensor":
        d.contact_open = rng.random() < 0.25
    elif device_type == "smoke_detector":
        d.smoke_detected = False
    r = rng.random()
    if r < 0.09:
        d.online = False
        if d.battery_pct is not None and rng.random() < 0.6:
            d.offline_reason, d.battery_pct = "battery_depleted", 0
        else:
            d.offline_reason = rng.choice(["wifi_dropout", "hub_unreachable"])  # type: ignore[assignment]
        d.last_seen = f"2026-0{rng.randint(1, 2)}-{rng.randint(10, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"
    w.devices[did] = d
    return d


def _event(w: IotWorld, home_id: str, device_id: str | None, event_type: str, detail: str, at: str = NOW) -> Event:
    eid = w.new_id("EVT", 5)
    e = Event(event_id=eid, home_id=home_id, device_id=device_id, event_type=event_type, detail=detail, at=at)  # type: ignore[arg-type]
    w.events[eid] = e
    return e


def seed_world(rng: random.Random, seed: int) -> IotWorld:
    w = IotWorld(seed=seed)
    zones = {"Lisbon": "Europe/Lisbon", "Denver": "America/Denver", "Austin": "America/Chicago", "Leeds": "Europe/London",
             "Lyon": "Europe/Paris", "Porto": "Europe/Lisbon", "Boston": "America/New_York", "Dublin": "Europe/Dublin",
             "Seattle": "America/Los_Angeles", "Madrid": "Europe/Madrid", "Oslo": "Europe/Oslo", "Toronto": "America/Toronto"}
    kinds = ["Residence", "Cottage", "Apartment", "Lake House", "Townhouse"]
    for _ in range(4):
        hid = w.new_id("HOME")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        city = rng.choice(CITIES)
        home = Home(home_id=hid, name=f"{last} {rng.choice(kinds)}", owner_name=f"{first} {last}",
                    address=f"{rng.randint(2, 480)} {rng.choice(STREETS)}", city=city, timezone=zones[city])
        w.homes[hid] = home
        fixed = ["Living Room", "Kitchen", "Hallway", "Master Bedroom"]
        extra = rng.sample([n for n, _ in ROOM_NAMES if n not in fixed + ["Porch"]], k=rng.randint(2, 4))
        if rng.random() < 0.75:
            extra.append("Porch")
        rooms: dict[str, Room] = {}
        for rname in fixed + extra:
            rid = w.new_id("ROOM")
            floor = dict(ROOM_NAMES)[rname]
            rooms[rname] = w.rooms[rid] = Room(room_id=rid, home_id=hid, name=rname, floor=floor)
        devs: list[Device] = []
        add = lambda room, t, n: devs.append(_add_device(w, rng, hid, rooms[room], t, n))  # noqa: E731
        add("Hallway", "lock", "Front Door Lock")
        add("Hallway", "contact_sensor", "Front Door Contact")
        add("Hallway", "smoke_detector", "Hallway Smoke Detector")
        add("Hallway", "motion_sensor", "Hallway Motion Sensor")
        add("Living Room", "thermostat", "Living Room Thermostat")
        add("Kitchen", "smoke_detector", "Kitchen Smoke Detector")
        if rng.random() < 0.7:
            add("Kitchen", "lock", "Back Door Lock")
            add("Kitchen", "contact_sensor", "Back Door Contact")
        if rng.random() < 0.5:
            add("Living Room", "camera", "Living Room Indoor Camera")
        if "Garage" in rooms:
            add("Garage", "lock", "Garage Side Door Lock")
            add("Garage", "contact_sensor", "Garage Door Contact")
            add("Garage", "camera", "Garage Camera")
        if "Porch" in rooms:
            add("Porch", "camera", "Porch Camera")
            add("Porch", "light", "Porch Light")
        if "Bathroom" in rooms:
            add("Bathroom", "humidity_sensor", "Bathroom Humidity Sensor")
        if "Master Bedroom" in rooms and rng.random() < 0.5:
            add("Master Bedroom", "thermostat", "Bedroom Thermostat")
        for rname, room in rooms.items():
            if rname in ("Porch", "Garage"):
                continue
            add(rname, "light", f"{rname} Ceiling Light")
            if rname in ("Living Room", "Master Bedroom", "Office", "Kids Room") and rng.random() < 0.7:
                add(rname, "light", f"{rname} {rng.choice(['Floor Lamp', 'Desk Lamp', 'Accent Strip'])}")
            if rname in ("Living Room", "Master Bedroom", "Guest Bedroom", "Kids Room", "Office", "Dining Room"):
                add(rname, "blind", f"{rname} Blind")
            if rname in ("Living Room", "Office", "Kitchen") and rng.random() < 0.8:
                add(rname, "plug", f"{rname} {rng.choice(['TV Plug', 'Coffee Maker Plug', 'Heater Plug', 'Fan Plug', 'Lamp Plug'])}")
            if rname in ("Master Bedroom", "Kids Room", "Basement", "Office") and rng.random() < 0.6:
                add(rname, "temperature_sensor", f"{rname} Temperature Sensor")
        # a few historic events
        for d in rng.sample(devs, k=min(6, len(devs))):
            at = f"2026-03-0{rng.randint(1, 2)}T0{rng.randint(0, 8)}:{rng.randint(0, 59):02d}:00"
            kind = {"motion_sensor": ("motion_detected", "motion detected"), "contact_sensor": ("door_opened", "contact opened"),
                    "lock": ("unlocked", "unlocked with access code"), "smoke_detector": ("smoke_alarm_test", "monthly self-test passed"),
                    "light": ("power_on", "turned on"), "camera": ("motion_detected", "motion in view")}.get(d.device_type, ("power_on", "reported state"))
            _event(w, hid, d.device_id, kind[0], kind[1], at)
        for d in devs:
            if not d.online:
                _event(w, hid, d.device_id, "went_offline", f"lost connection ({d.offline_reason})", d.last_seen)
            elif d.lock_state == "jammed":
                _event(w, hid, d.device_id, "lock_jammed", "bolt could not extend fully", "2026-03-02T07:41:00")
            elif d.battery_pct is not None and d.battery_pct <= 15:
                _event(w, hid, d.device_id, "low_battery", f"battery at {d.battery_pct}%", "2026-03-01T22:10:00")
        # scenes
        lights = [d for d in devs if d.device_type == "light"]
        blinds = [d for d in devs if d.device_type == "blind"]
        stats = [d for d in devs if d.device_type == "thermostat"]
        locks = [d for d in devs if d.device_type == "lock"]
        colored = [d for d in lights if d.supports_color]
        night = [SceneAction(device_id=d.device_id, command="turn_off") for d in lights]
        night += [SceneAction(device_id=d.device_id, command="lock") for d in locks]
        night += [SceneAction(device_id=d.device_id, command="set_position", value=0) for d in blinds]
        night += [SceneAction(device_id=d.device_id, command="set_setpoint", value=18.0) for d in stats if d.thermostat_mode != "off"]
        morning = [SceneAction(device_id=d.device_id, command="set_position", value=100) for d in blinds]
        morning += [SceneAction(device_id=d.device_id, command="set_brightness", value=70) for d in lights[:3]]
        morning += [SceneAction(device_id=d.device_id, command="set_setpoint", value=21.0) for d in stats if d.thermostat_mode != "off"]
        away = [SceneAction(device_id=d.device_id, command="turn_off") for d in lights]
        away += [SceneAction(device_id=d.device_id, command="lock") for d in locks]
        away += [SceneAction(device_id=d.device_id, command="set_thermostat_mode", value="eco") for d in stats]
        away += [SceneAction(device_id=d.device_id, command="start_recording") for d in devs if d.device_type == "camera"]
        living = [d for d in lights if d.room_id == rooms["Living Room"].room_id]
        movie = [SceneAction(device_id=d.device_id, command="set_brightness", value=15) for d in living]
        movie += [SceneAction(device_id=d.device_id, command="set_color", value="#B197FC") for d in colored[:1]]
        movie += [SceneAction(device_id=d.device_id, command="set_position", value=0) for d in blinds if d.room_id == rooms["Living Room"].room_id]
        scene_ids: dict[str, str] = {}
        for sname, acts in (("Good Night", night), ("Good Morning", morning), ("Away", away), ("Movie Time", movie)):
            if not acts or (sname == "Movie Time" and rng.random() < 0.4):
                continue
            sid = w.new_id("SCN")
            w.scenes[sid] = Scene(scene_id=sid, home_id=hid, name=sname, actions=acts,
                                  last_activated=f"2026-03-01T{rng.randint(6, 23):02d}:{rng.randint(0, 59):02d}:00" if rng.random() < 0.6 else None)
            scene_ids[sname] = sid
        # automations
        motion = [d for d in devs if d.device_type == "motion_sensor"]
        temps = [d for d in devs if "temperature" in d.capabilities and d.device_type != "thermostat"]
        if "Good Night" in scene_ids:
            aid = w.new_id("AUT")
            w.automations[aid] = Automation(automation_id=aid, home_id=hid, name="Bedtime", trigger_type="time",
                                            trigger_time=rng.choice(["22:30", "23:00", "23:15"]), scene_id=scene_ids["Good Night"])
        if "Good Morning" in scene_ids:
            aid = w.new_id("AUT")
            w.automations[aid] = Automation(automation_id=aid, home_id=hid, name="Wake up", trigger_type="time",
                                            trigger_time=rng.choice(["06:30", "07:00", "07:15"]), scene_id=scene_ids["Good Morning"],
                                            enabled=rng.random() < 0.7)
        if motion and "Good Morning" in scene_ids and rng.random() < 0.7:
            aid = w.new_id("AUT")
            w.automations[aid] = Automation(automation_id=aid, home_id=hid, name="Hallway motion lights", trigger_type="motion",
                                            trigger_device_id=motion[0].device_id, scene_id=scene_ids["Good Morning"], enabled=rng.random() < 0.5)
        if temps and "Away" in scene_ids and rng.random() < 0.6:
            aid = w.new_id("AUT")
            w.automations[aid] = Automation(automation_id=aid, home_id=hid, name="Too warm while away", trigger_type="temperature_above",
                                            trigger_device_id=temps[0].device_id, threshold_c=26.0, scene_id=scene_ids["Away"], enabled=False)
        # groups
        gid = w.new_id("GRP")
        w.groups[gid] = Group(group_id=gid, home_id=hid, name="All Lights", device_ids=[d.device_id for d in lights])
        down = [d.device_id for d in lights if rooms_floor(w, d) == 0]
        if len(down) >= 2:
            gid = w.new_id("GRP")
            w.groups[gid] = Group(group_id=gid, home_id=hid, name="Downstairs Lights", device_ids=down)
        if len(blinds) >= 2:
            gid = w.new_id("GRP")
            w.groups[gid] = Group(group_id=gid, home_id=hid, name="All Blinds", device_ids=[d.device_id for d in blinds])
        if len(locks) >= 2:
            gid = w.new_id("GRP")
            w.groups[gid] = Group(group_id=gid, home_id=hid, name="Exterior Locks", device_ids=[d.device_id for d in locks])
    return w


def rooms_floor(w: IotWorld, d: Device) -> int:
    return w.rooms[d.room_id].floor


# --------------------------------------------------------------------------- helpers


def _home(w: IotWorld, home_id: str) -> Home:
    h = w.homes.get(home_id)
    if h is None:
        raise not_found("home", home_id, "list_homes shows valid home ids")
    return h


def _device(w: IotWorld, device_id: str) -> Device:
    d = w.devices.get(device_id)
    if d is None:
        raise not_found("device", device_id, "list_devices shows valid device ids")
    return d


def _label(d: Device) -> str:
    return f"device {d.device_id} ({d.device_type} '{d.name}')"


def _online(d: Device) -> None:
    if not d.online:
        hint = ("its battery is depleted; replace the batteries, then reconnect_device" if d.offline_reason == "battery_depleted"
                else "reconnect_device may bring it back")
        raise StateConflict(f"{_label(d)} is offline since {d.last_seen} ({d.offline_reason}); {hint}")


def _require(d: Device, cap: str) -> None:
    if cap not in d.capabilities:
        raise InvalidArgument(
            f"{_label(d)} does not support '{cap}' (its capabilities: {', '.join(d.capabilities)}); "
            f"'{cap}' needs a {CAP_TYPES.get(cap, cap)}")


def _number(value: float | str | None, what: str) -> float:
    if value is None or isinstance(value, bool):
        raise InvalidArgument(f"value is required for {what}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"value for {what} must be a number, got {value!r}") from None


def _check(d: Device, command: str, value: float | str | None) -> float | str | None:
    """Validate a command against the device without changing it; return the normalised value."""
    _require(d, COMMAND_CAP[command])
    if command in ("set_brightness", "set_position"):
        v = _number(value, command)
        if not 0 <= v <= 100:
            raise InvalidArgument(f"value for {command} must be between 0 and 100, got {v:g}")
        return int(round(v))
    if command == "set_setpoint":
        v = _number(value, command)
        lo, hi = d.min_setpoint_c or 5.0, d.max_setpoint_c or 35.0
        if not lo <= v <= hi:
            raise InvalidArgument(f"setpoint_c {v:g} is out of range for {_label(d)}: it accepts {lo:g} to {hi:g} C")
        return round(v * 2) / 2
    if command == "set_color":
        s = str(value or "")
        if len(s) != 7 or s[0] != "#" or any(c not in "0123456789abcdefABCDEF" for c in s[1:]):
            raise InvalidArgument(f"value for set_color must be a hex color like '#FFAA00', got {value!r}")
        return s.upper()
    if command == "set_thermostat_mode":
        modes = ("off", "heat", "cool", "auto", "eco")
        if value not in modes:
            raise InvalidArgument(f"value for set_thermostat_mode must be one of {', '.join(modes)}, got {value!r}")
        return value
    return None


def _apply(w: IotWorld, d: Device, command: str, value: float | str | None, source: str = "") -> None:
    """Apply one command to a device, raising a ToolFailure if it cannot be done. Logs an event."""
    v = _check(d, command, value)
    _online(d)
    tag = f" ({source})" if source else ""
    if command in ("turn_on", "turn_off"):
        on = command == "turn_on"
        if d.power_on != on:
            d.power_on = on
            if d.device_type == "plug":
                d.power_w = 35.0 if on else 0.0
            if d.device_type == "camera" and not on:
                d.recording = False
            _event(w, d.home_id, d.device_id, "power_on" if on else "power_off", f"turned {'on' if on else 'off'}{tag}")
    elif command == "set_brightness":
        d.brightness = int(v)  # type: ignore[arg-type]
        d.power_on = d.brightness > 0
        _event(w, d.home_id, d.device_id, "brightness_changed", f"brightness set to {d.brightness}%{tag}")
    elif command == "set_color":
        d.color = str(v)
        d.power_on = True
        _event(w, d.home_id, d.device_id, "color_changed", f"color set to {d.color}{tag}")
    elif command == "set_thermostat_mode":
        d.thermostat_mode = v  # type: ignore[assignment]
        _event(w, d.home_id, d.device_id, "mode_changed", f"mode set to {v}{tag}")
    elif command == "set_setpoint":
        if d.thermostat_mode == "off":
            raise StateConflict(f"{_label(d)} is in mode 'off'; set a mode (heat, cool, auto or eco) with set_thermostat first")
        d.setpoint_c = float(v)  # type: ignore[arg-type]
        _event(w, d.home_id, d.device_id, "setpoint_changed", f"setpoint set to {d.setpoint_c:g} C{tag}")
    elif command == "lock":
        if d.lock_state == "jammed":
            raise StateConflict(f"{_label(d)} is jammed: the bolt cannot extend; check the door is fully closed and call "
                                "unlock_device with the access code to retract the bolt and clear the jam")
        if d.lock_state != "locked":
            d.lock_state = "locked"
            _event(w, d.home_id, d.device_id, "locked", f"locked{tag}")
    elif command == "set_position":
        d.position_pct = int(v)  # type: ignore[arg-type]
        _event(w, d.home_id, d.device_id, "position_changed", f"position set to {d.position_pct}%{tag}")
    elif command in ("start_recording", "stop_recording"):
        rec = command == "start_recording"
        if rec and not d.power_on:
            raise StateConflict(f"{_label(d)} is switched off; turn it on with set_power before recording")
        if d.recording != rec:
            d.recording = rec
            _event(w, d.home_id, d.device_id, "recording_started" if rec else "recording_stopped",
                   f"recording {'started' if rec else 'stopped'}{tag}")


# --------------------------------------------------------------------------- parameter and result types
HomeId = Annotated[str, Field(description="Home id, e.g. 'HOME-0001' (from list_homes)")]
DeviceId = Annotated[str, Field(description="Device id, e.g. 'DEV-0007' (from list_devices)")]
SceneId = Annotated[str, Field(description="Scene id, e.g. 'SCN-0002' (from list_scenes)")]
AutomationId = Annotated[str, Field(description="Automation id, e.g. 'AUT-0001' (from list_automations)")]
GroupId = Annotated[str, Field(description="Device group id, e.g. 'GRP-0001' (from list_groups)")]
AccessCode = Annotated[str, sensitive("The lock's 6-digit access code", pattern=r"^\d{6}$")]


class HomeSummary(Home):
    room_count: int
    device_count: int
    offline_count: int


class HomeList(BaseModel):
    homes: list[HomeSummary]
    total: int


class RoomDetail(Room):
    device_ids: list[str]


class HomeDetail(Home):
    rooms: list[RoomDetail]
    device_count: int
    offline_device_ids: list[str]
    low_battery_device_ids: list[str]


class DeviceList(BaseModel):
    devices: list[Device]
    total: int


class SensorReading(BaseModel):
    device_id: str
    device_type: DeviceType
    name: str
    read_at: str
    battery_pct: int | None = None
    temperature_c: float | None = None
    humidity_pct: float | None = None
    motion_detected: bool | None = None
    contact_open: bool | None = None
    smoke_detected: bool | None = None


class EventList(BaseModel):
    events: list[Event]
    total: int


class SceneList(BaseModel):
    scenes: list[Scene]
    total: int


class ActionOutcome(BaseModel):
    device_id: str
    command: Command
    ok: bool
    error: str | None = None


class SceneRun(BaseModel):
    scene_id: str
    home_id: str
    applied: int
    failed: int
    outcomes: list[ActionOutcome]


class DeletedScene(BaseModel):
    scene_id: str
    deleted: bool
    disabled_automation_ids: list[str]


class AutomationList(BaseModel):
    automations: list[Automation]
    total: int


class GroupList(BaseModel):
    groups: list[Group]
    total: int


class GroupRun(BaseModel):
    group_id: str
    command: Command
    applied: int
    failed: int
    outcomes: list[ActionOutcome]


def _run_actions(w: IotWorld, actions: list[tuple[str, str, float | str | None]], source: str) -> list[ActionOutcome]:
    out = []
    for device_id, command, value in actions:
        d = w.devices.get(device_id)
        try:
            if d is None:
                raise not_found("device", device_id, "it was removed")
            _apply(w, d, command, value, source)
            out.append(ActionOutcome(device_id=device_id, command=command, ok=True))  # type: ignore[arg-type]
        except ToolFailure as exc:
            out.append(ActionOutcome(device_id=device_id, command=command, ok=False, error=str(exc)))  # type: ignore[arg-type]
    return out


TOOLS: ToolSet[IotWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_homes(
    w: IotWorld,
    city: Annotated[str | None, Field(description="Only homes in this city")] = None,
) -> HomeList:
    """List the smart homes on the account with their room, device and offline-device counts."""
    out = []
    for h in w.homes.values():
        if city is not None and h.city.lower() != city.lower():
            continue
        devs = [d for d in w.devices.values() if d.home_id == h.home_id]
        out.append(HomeSummary(**h.model_dump(), room_count=sum(r.home_id == h.home_id for r in w.rooms.values()),
                               device_count=len(devs), offline_count=sum(not d.online for d in devs)))
    return HomeList(homes=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_home(w: IotWorld, home_id: HomeId) -> HomeDetail:
    """Get a home with its rooms (and the device ids in each), offline devices and low-battery devices."""
    h = _home(w, home_id)
    devs = [d for d in w.devices.values() if d.home_id == home_id]
    rooms = [RoomDetail(**r.model_dump(), device_ids=[d.device_id for d in devs if d.room_id == r.room_id])
             for r in w.rooms.values() if r.home_id == home_id]
    return HomeDetail(**h.model_dump(), rooms=rooms, device_count=len(devs),
                      offline_device_ids=[d.device_id for d in devs if not d.online],
                      low_battery_device_ids=[d.device_id for d in devs if d.battery_pct is not None and d.battery_pct <= 15])


@TOOLS.tool(read_only=True)
def list_devices(
    w: IotWorld,
    home_id: Annotated[str | None, Field(description="Only devices in this home id")] = None,
    room_id: Annotated[str | None, Field(description="Only devices in this room id (from get_home)")] = None,
    device_type: Annotated[DeviceType | None, Field(description="Only devices of this type")] = None,
    online: Annotated[bool | None, Field(description="true: only online devices; false: only offline devices")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the device name")] = None,
) -> DeviceList:
    """List devices with their full current state, filtered by home, room, type, connectivity or name."""
    if home_id is not None:
        _home(w, home_id)
    if room_id is not None and room_id not in w.rooms:
        raise not_found("room", room_id, "get_home lists the rooms of a home")
    out = [d for d in w.devices.values()
           if (home_id is None or d.home_id == home_id) and (room_id is None or d.room_id == room_id)
           and (device_type is None or d.device_type == device_type) and (online is None or d.online == online)
           and (name_contains is None or name_contains.lower() in d.name.lower())]
    return DeviceList(devices=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_device(w: IotWorld, device_id: DeviceId) -> Device:
    """Get one device: type, room, capabilities, connectivity, battery and current state."""
    return _device(w, device_id)


@TOOLS.tool(read_only=True)
def get_sensor_reading(w: IotWorld, device_id: DeviceId) -> SensorReading:
    """Read the live values of a sensor (temperature, humidity, motion, door/window contact or smoke).

    Works for sensors, thermostats (room temperature) and cameras (motion). Fails if the device is offline."""
    d = _device(w, device_id)
    if not {"temperature", "humidity", "motion", "contact", "smoke"} & set(d.capabilities):
        raise InvalidArgument(f"{_label(d)} has no sensor readings; sensor readings need a sensor, thermostat or camera "
                              "(list_devices with device_type='temperature_sensor', 'motion_sensor', ...)")
    _online(d)
    return SensorReading(device_id=d.device_id, device_type=d.device_type, name=d.name, read_at=NOW, battery_pct=d.battery_pct,
                         temperature_c=d.temperature_c, humidity_pct=d.humidity_pct, motion_detected=d.motion_detected,
                         contact_open=d.contact_open, smoke_detected=d.smoke_detected)


@TOOLS.tool(read_only=True)
def list_device_events(
    w: IotWorld,
    home_id: Annotated[str | None, Field(description="Only events of this home id")] = None,
    device_id: Annotated[str | None, Field(description="Only events of this device id")] = None,
    event_type: Annotated[EventType | None, Field(description="Only events of this type")] = None,
    limit: Annotated[int, Field(description="Most recent N events", ge=1, le=200)] = 25,
) -> EventList:
    """List the activity log (motion, doors, locks, power, offline, scenes ...), most recent first."""
    if home_id is not None:
        _home(w, home_id)
    if device_id is not None:
        _device(w, device_id)
    out = [e for e in w.events.values() if (home_id is None or e.home_id == home_id)
           and (device_id is None or e.device_id == device_id) and (event_type is None or e.event_type == event_type)]
    out.sort(key=lambda e: (e.at, e.event_id), reverse=True)
    out = out[:limit]
    return EventList(events=out, total=len(out))


@TOOLS.tool(idempotent=True)
def reconnect_device(w: IotWorld, device_id: DeviceId) -> Device:
    """Re-pair an offline device with its hub. Devices with a depleted battery cannot come back this way."""
    d = _device(w, device_id)
    if d.online:
        return d
    if d.offline_reason == "battery_depleted":
        raise StateConflict(f"{_label(d)} cannot reconnect: its battery is depleted (0%); replace the batteries first")
    d.online, d.offline_reason, d.last_seen = True, None, NOW
    _event(w, d.home_id, d.device_id, "reconnected", "reconnected to hub")
    return d

# ---------------------------------------------------------------- actuators
@TOOLS.tool(idempotent=True)
def set_power(w: IotWorld, device_id: DeviceId, on: Annotated[bool, Field(description="true to switch on, false to switch off")]) -> Device:
    """Switch a light, smart plug or camera on or off."""
    d = _device(w, device_id)
    _apply(w, d, "turn_on" if on else "turn_off", None)
    return d


@TOOLS.tool(idempotent=True)
def set_light_brightness(
    w: IotWorld,
    device_id: DeviceId,
    brightness: Annotated[int, Field(description="Brightness in percent; 0 switches the light off", ge=0, le=100)],
) -> Device:
    """Set a light's brightness (0-100 %). A brightness above 0 also switches the light on."""
    d = _device(w, device_id)
    _apply(w, d, "set_brightness", brightness)
    return d


@TOOLS.tool(idempotent=True)
def set_light_color(
    w: IotWorld,
    device_id: DeviceId,
    color: Annotated[str, Field(description="Hex RGB color, e.g. '#FF8800'", pattern=r"^#[0-9A-Fa-f]{6}$")],
) -> Device:
    """Set the color of a color-capable light (supports_color=true); also switches it on."""
    d = _device(w, device_id)
    _apply(w, d, "set_color", color)
    return d


@TOOLS.tool(idempotent=True)
def set_thermostat(
    w: IotWorld,
    device_id: DeviceId,
    mode: Annotated[ThermostatMode | None, Field(description="New operating mode; omit to keep the current one")] = None,
    setpoint_c: Annotated[float | None, Field(description="Target temperature in Celsius, 5-35 and within the thermostat's "
                                                          "min_setpoint_c..max_setpoint_c; omit to keep it", ge=5, le=35)] = None,
) -> Device:
    """Change a thermostat's mode and/or target temperature. A setpoint cannot be set while the mode is 'off'."""
    d = _device(w, device_id)
    if mode is None and setpoint_c is None:
        raise InvalidArgument("give at least one of mode or setpoint_c")
    _require(d, "thermostat")
    if setpoint_c is not None:
        _check(d, "set_setpoint", setpoint_c)
        if (mode or d.thermostat_mode) == "off":
            raise StateConflict(f"{_label(d)} would be in mode 'off'; choose mode heat, cool, auto or eco to use a setpoint")
    if mode is not None:
        _apply(w, d, "set_thermostat_mode", mode)
    if setpoint_c is not None:
        _apply(w, d, "set_setpoint", setpoint_c)
    return d


@TOOLS.tool(idempotent=True)
def lock_device(w: IotWorld, device_id: DeviceId) -> Device:
    """Lock a smart lock. Fails if the lock is jammed or offline."""
    d = _device(w, device_id)
    _apply(w, d, "lock", None)
    return d


@TOOLS.tool(idempotent=True)
def unlock_device(w: IotWorld, device_id: DeviceId, access_code: AccessCode) -> Device:
    """Unlock a smart lock with its access code. Unlocking also retracts the bolt of a jammed lock and clears the jam."""
    d = _device(w, device_id)
    _require(d, "lock")
    _online(d)
    if w.lock_codes.get(device_id) != access_code:
        raise PermissionDenied(f"the access_code does not match the code of {_label(d)}")
    if d.lock_state != "unlocked":
        was = d.lock_state
        d.lock_state = "unlocked"
        _event(w, d.home_id, d.device_id, "unlocked", "unlocked with access code" + (", jam cleared" if was == "jammed" else ""))
    return d


@TOOLS.tool(idempotent=True)
def set_blind_position(
    w: IotWorld,
    device_id: DeviceId,
    position_pct: Annotated[int, Field(description="How far open: 0 = fully closed, 100 = fully open", ge=0, le=100)],
) -> Device:
    """Move a motorised blind to a position between 0 (closed) and 100 (open)."""
    d = _device(w, device_id)
    _apply(w, d, "set_position", position_pct)
    return d


@TOOLS.tool(idempotent=True)
def set_camera_recording(
    w: IotWorld,
    device_id: DeviceId,
    recording: Annotated[bool, Field(description="true to start recording, false to stop")],
) -> Device:
    """Start or stop recording on a camera. The camera must be switched on to record."""
    d = _device(w, device_id)
    _apply(w, d, "start_recording" if recording else "stop_recording", None)
    return d

# ---------------------------------------------------------------- scenes
@TOOLS.tool(read_only=True)
def list_scenes(w: IotWorld, home_id: Annotated[str | None, Field(description="Only scenes of this home id")] = None) -> SceneList:
    """List scenes (named sets of device actions), optionally for one home."""
    if home_id is not None:
        _home(w, home_id)
    out = [s for s in w.scenes.values() if home_id is None or s.home_id == home_id]
    return SceneList(scenes=out, total=len(out))


@TOOLS.tool()
def create_scene(
    w: IotWorld,
    home_id: HomeId,
    name: Annotated[str, Field(description="Scene name, unique within the home", min_length=2, max_length=60)],
    actions: Annotated[list[SceneAction], Field(description="Device actions to run, in order", min_length=1, max_length=50)],
) -> Scene:
    """Create a scene: a named list of device actions in one home that activate_scene runs together."""
    _home(w, home_id)
    if any(s.home_id == home_id and s.name.lower() == name.lower() for s in w.scenes.values()):
        raise StateConflict(f"home {home_id} already has a scene named {name!r}")
    norm = []
    for i, a in enumerate(actions):
        d = w.devices.get(a.device_id)
        if d is None:
            raise not_found("device", a.device_id, f"actions[{i}].device_id must come from list_devices")
        if d.home_id != home_id:
            raise InvalidArgument(f"actions[{i}]: device {a.device_id} belongs to home {d.home_id}, not {home_id}")
        try:
            v = _check(d, a.command, a.value)
        except InvalidArgument as exc:
            raise InvalidArgument(f"actions[{i}]: {exc.message}") from None
        norm.append(SceneAction(device_id=a.device_id, command=a.command, value=v))
    sid = w.new_id("SCN")
    s = Scene(scene_id=sid, home_id=home_id, name=name, actions=norm)
    w.scenes[sid] = s
    return s


@TOOLS.tool()
def activate_scene(w: IotWorld, scene_id: SceneId) -> SceneRun:
    """Run all actions of a scene. Actions on offline or jammed devices are reported as failed; the rest still apply."""
    s = w.scenes.get(scene_id)
    if s is None:
        raise not_found("scene", scene_id, "list_scenes shows the scenes of a home")
    outcomes = _run_actions(w, [(a.device_id, a.command, a.value) for a in s.actions], f"scene '{s.name}'")
    ok = sum(o.ok for o in outcomes)
    if ok == 0:
        raise StateConflict(f"no action of scene {scene_id} ('{s.name}') could be applied: "
                            + "; ".join(o.error or "" for o in outcomes))
    s.last_activated = NOW
    _event(w, s.home_id, None, "scene_activated", f"scene '{s.name}' activated ({ok}/{len(outcomes)} actions applied)")
    return SceneRun(scene_id=scene_id, home_id=s.home_id, applied=ok, failed=len(outcomes) - ok, outcomes=outcomes)


@TOOLS.tool(destructive=True, idempotent=False)
def delete_scene(w: IotWorld, scene_id: SceneId) -> DeletedScene:
    """Delete a scene. Automations that ran it are disabled."""
    s = w.scenes.get(scene_id)
    if s is None:
        raise not_found("scene", scene_id, "list_scenes shows the scenes of a home")
    del w.scenes[scene_id]
    disabled = []
    for a in w.automations.values():
        if a.scene_id == scene_id and a.enabled:
            a.enabled = False
            disabled.append(a.automation_id)
    return DeletedScene(scene_id=scene_id, deleted=True, disabled_automation_ids=disabled)

# ---------------------------------------------------------------- automations
@TOOLS.tool(read_only=True)
def list_automations(
    w: IotWorld,
    home_id: Annotated[str | None, Field(description="Only automations of this home id")] = None,
    enabled: Annotated[bool | None, Field(description="Only enabled (true) or disabled (false) automations")] = None,
) -> AutomationList:
    """List automations: triggers (time of day or a sensor condition) that run a scene."""
    if home_id is not None:
        _home(w, home_id)
    out = [a for a in w.automations.values()
           if (home_id is None or a.home_id == home_id) and (enabled is None or a.enabled == enabled)]
    return AutomationList(automations=out, total=len(out))


@TOOLS.tool()
def create_automation(
    w: IotWorld,
    home_id: HomeId,
    name: Annotated[str, Field(description="Automation name", min_length=2, max_length=60)],
    trigger_type: Annotated[TriggerType, Field(description="What starts it: a time of day or a sensor condition")],
    scene_id: Annotated[str, Field(description="Scene id to run when triggered (from list_scenes, same home)")],
    trigger_time: Annotated[str | None, Field(description="For trigger_type 'time': time of day 'HH:MM' (24 h)",
                                              pattern=r"^([01]\d|2[0-3]):[0-5]\d$")] = None,
    trigger_device_id: Annotated[str | None, Field(description="For sensor triggers: the device id whose reading triggers it")] = None,
    threshold_c: Annotated[float | None, Field(description="For temperature_below/temperature_above: threshold in Celsius",
                                               ge=-30, le=60)] = None,
) -> Automation:
    """Create an automation that runs a scene at a time of day or when a sensor reports motion, an open contact, smoke or a temperature threshold."""
    _home(w, home_id)
    s = w.scenes.get(scene_id)
    if s is None:
        raise not_found("scene", scene_id, "list_scenes shows the scenes of a home")
    if s.home_id != home_id:
        raise InvalidArgument(f"scene {scene_id} belongs to home {s.home_id}, not {home_id}")
    if trigger_type == "time":
        if trigger_time is None:
            raise InvalidArgument("trigger_time 'HH:MM' is required when trigger_type is 'time'")
        if trigger_device_id is not None or threshold_c is not None:
            raise InvalidArgument("trigger_device_id and threshold_c are only for sensor triggers, not trigger_type 'time'")
    else:
        if trigger_device_id is None:
            raise InvalidArgument(f"trigger_device_id is required when trigger_type is {trigger_type!r}")
        if trigger_time is not None:
            raise InvalidArgument("trigger_time is only for trigger_type 'time'")
        d = _device(w, trigger_device_id)
        if d.home_id != home_id:
            raise InvalidArgument(f"trigger_device_id {trigger_device_id} belongs to home {d.home_id}, not {home_id}")
        cap = {"motion": "motion", "contact_open": "contact", "smoke": "smoke",
               "temperature_below": "temperature", "temperature_above": "temperature"}[trigger_type]
        _require(d, cap)
        if cap == "temperature" and threshold_c is None:
            raise InvalidArgument(f"threshold_c is required when trigger_type is {trigger_type!r}")
        if cap != "temperature" and threshold_c is not None:
            raise InvalidArgument("threshold_c is only for temperature_below / temperature_above triggers")
    aid = w.new_id("AUT")
    a = Automation(automation_id=aid, home_id=home_id, name=name, trigger_type=trigger_type, trigger_time=trigger_time,
                   trigger_device_id=trigger_device_id, threshold_c=threshold_c, scene_id=scene_id)
    w.automations[aid] = a
    return a


@TOOLS.tool(idempotent=True)
def set_automation_enabled(
    w: IotWorld,
    automation_id: AutomationId,
    enabled: Annotated[bool, Field(description="true to enable, false to disable")],
) -> Automation:
    """Enable or disable an automation. Enabling needs its scene to still exist."""
    a = w.automations.get(automation_id)
    if a is None:
        raise not_found("automation", automation_id, "list_automations shows valid ids")
    if enabled and a.scene_id not in w.scenes:
        raise StateConflict(f"automation {automation_id} runs scene {a.scene_id}, which was deleted; create a new automation instead")
    a.enabled = enabled
    return a

# ---------------------------------------------------------------- groups
@TOOLS.tool(read_only=True)
def list_groups(w: IotWorld, home_id: Annotated[str | None, Field(description="Only groups of this home id")] = None) -> GroupList:
    """List device groups (devices controlled together), optionally for one home."""
    if home_id is not None:
        _home(w, home_id)
    out = [g for g in w.groups.values() if home_id is None or g.home_id == home_id]
    return GroupList(groups=out, total=len(out))


@TOOLS.tool()
def create_group(
    w: IotWorld,
    home_id: HomeId,
    name: Annotated[str, Field(description="Group name, unique within the home", min_length=2, max_length=60)],
    device_ids: Annotated[list[str], Field(description="Device ids of the members (same home, from list_devices)", min_length=2, max_length=50)],
) -> Group:
    """Create a group of devices in one home so control_group can command them together."""
    _home(w, home_id)
    if any(g.home_id == home_id and g.name.lower() == name.lower() for g in w.groups.values()):
        raise StateConflict(f"home {home_id} already has a group named {name!r}")
    if len(set(device_ids)) != len(device_ids):
        raise InvalidArgument("device_ids must not repeat a device")
    for did in device_ids:
        d = _device(w, did)
        if d.home_id != home_id:
            raise InvalidArgument(f"device {did} belongs to home {d.home_id}, not {home_id}")
    gid = w.new_id("GRP")
    g = Group(group_id=gid, home_id=home_id, name=name, device_ids=list(device_ids))
    w.groups[gid] = g
    return g


@TOOLS.tool()
def control_group(
    w: IotWorld,
    group_id: GroupId,
    command: Annotated[Command, Field(description="Command sent to every member of the group")],
    value: Annotated[float | str | None, Field(description="Argument of the command: brightness/position 0-100, color '#RRGGBB', "
                                                          "setpoint 5-35 C or thermostat mode; omit for on/off/lock/recording")] = None,
) -> GroupRun:
    """Send one command to every device of a group. Members that are offline or lack the capability are reported as failed."""
    g = w.groups.get(group_id)
    if g is None:
        raise not_found("group", group_id, "list_groups shows valid ids")
    outcomes = _run_actions(w, [(did, command, value) for did in g.device_ids], f"group '{g.name}'")
    ok = sum(o.ok for o in outcomes)
    if ok == 0:
        raise StateConflict(f"command {command!r} could not be applied to any member of group {group_id} ('{g.name}'): "
                            + "; ".join(o.error or "" for o in outcomes))
    return GroupRun(group_id=group_id, command=command, applied=ok, failed=len(outcomes) - ok, outcomes=outcomes)


def build(seed: int = 0) -> EnvServer[IotWorld]:
    """A fresh iot_devices server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "iot_devices", seeder=seed_world, category="IoT",
        description="Smart homes: rooms, sensors (temperature, humidity, motion, contact, smoke), lights, thermostats, "
                    "locks, blinds, plugs and cameras, with scenes, automations and device groups.",
        tools=TOOLS, default_seed=seed,
    )
