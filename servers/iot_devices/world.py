"""iot_devices: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, StateConflict, ToolFailure, ToolSet, World, not_found, sensitive

NOW = f"{REFERENCE_DAY}T09:00:00"

DeviceType = Literal[
    "temperature_sensor",
    "humidity_sensor",
    "motion_sensor",
    "contact_sensor",
    "smoke_detector",
    "light",
    "thermostat",
    "lock",
    "blind",
    "plug",
    "camera",
]
SENSOR_TYPES = ("temperature_sensor", "humidity_sensor", "motion_sensor", "contact_sensor", "smoke_detector")
ThermostatMode = Literal["off", "heat", "cool", "auto", "eco"]
LockState = Literal["locked", "unlocked", "jammed"]
OfflineReason = Literal["wifi_dropout", "battery_depleted", "hub_unreachable"]
Command = Literal[
    "turn_on",
    "turn_off",
    "set_brightness",
    "set_color",
    "set_thermostat_mode",
    "set_setpoint",
    "lock",
    "set_position",
    "start_recording",
    "stop_recording",
]
TriggerType = Literal["time", "motion", "contact_open", "temperature_below", "temperature_above", "smoke"]
EventType = Literal[
    "motion_detected",
    "door_opened",
    "door_closed",
    "locked",
    "unlocked",
    "lock_jammed",
    "power_on",
    "power_off",
    "brightness_changed",
    "color_changed",
    "setpoint_changed",
    "mode_changed",
    "position_changed",
    "recording_started",
    "recording_stopped",
    "went_offline",
    "reconnected",
    "smoke_alarm_test",
    "low_battery",
    "scene_activated",
    "renamed",
]

# capability needed by each command, and the device types that offer each capability
COMMAND_CAP: dict[str, str] = {
    "turn_on": "power",
    "turn_off": "power",
    "set_brightness": "brightness",
    "set_color": "color",
    "set_thermostat_mode": "thermostat",
    "set_setpoint": "thermostat",
    "lock": "lock",
    "set_position": "position",
    "start_recording": "recording",
    "stop_recording": "recording",
}
CAP_TYPES: dict[str, str] = {
    "power": "light, plug or camera",
    "brightness": "light",
    "color": "color-capable light (supports_color=true)",
    "thermostat": "thermostat",
    "lock": "lock",
    "position": "blind",
    "recording": "camera",
    "temperature": "temperature_sensor, humidity_sensor or thermostat",
    "humidity": "humidity_sensor",
    "motion": "motion_sensor or camera",
    "contact": "contact_sensor",
    "smoke": "smoke_detector",
}

ROOM_NAMES = [
    ("Living Room", 0),
    ("Kitchen", 0),
    ("Dining Room", 0),
    ("Hallway", 0),
    ("Garage", 0),
    ("Porch", 0),
    ("Master Bedroom", 1),
    ("Guest Bedroom", 1),
    ("Kids Room", 1),
    ("Office", 1),
    ("Bathroom", 1),
    ("Basement", -1),
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


def _event(w: IotWorld, home_id: str, device_id: str | None, event_type: str, detail: str, at: str = NOW) -> Event:
    eid = w.new_id("EVT", 5)
    e = Event(event_id=eid, home_id=home_id, device_id=device_id, event_type=event_type, detail=detail, at=at)  # type: ignore[arg-type]
    w.events[eid] = e
    return e


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
        hint = (
            "its battery is depleted; replace the batteries, then reconnect_device"
            if d.offline_reason == "battery_depleted"
            else "reconnect_device may bring it back"
        )
        raise StateConflict(f"{_label(d)} is offline since {d.last_seen} ({d.offline_reason}); {hint}")


def _require(d: Device, cap: str) -> None:
    if cap not in d.capabilities:
        raise InvalidArgument(
            f"{_label(d)} does not support '{cap}' (its capabilities: {', '.join(d.capabilities)}); "
            f"'{cap}' needs a {CAP_TYPES.get(cap, cap)}"
        )


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
            raise StateConflict(
                f"{_label(d)} is in mode 'off'; set a mode (heat, cool, auto or eco) with set_thermostat first"
            )
        d.setpoint_c = float(v)  # type: ignore[arg-type]
        _event(w, d.home_id, d.device_id, "setpoint_changed", f"setpoint set to {d.setpoint_c:g} C{tag}")
    elif command == "lock":
        if d.lock_state == "jammed":
            raise StateConflict(
                f"{_label(d)} is jammed: the bolt cannot extend; check the door is fully closed and call "
                "unlock_device with the access code to retract the bolt and clear the jam"
            )
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
            _event(
                w,
                d.home_id,
                d.device_id,
                "recording_started" if rec else "recording_stopped",
                f"recording {'started' if rec else 'stopped'}{tag}",
            )


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


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[IotWorld] = ToolSet()
