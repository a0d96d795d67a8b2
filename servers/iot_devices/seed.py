"""iot_devices: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.clock import REFERENCE_DAY
from servers.iot_devices.world import (
    COLORS,
    MAKERS,
    ROOM_NAMES,
    SENSOR_TYPES,
    STREETS,
    Automation,
    Device,
    Group,
    Home,
    IotWorld,
    Room,
    Scene,
    SceneAction,
    _event,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES


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
        device_id=did,
        home_id=home_id,
        room_id=room.room_id,
        name=name,
        device_type=device_type,  # type: ignore[arg-type]
        manufacturer=maker,
        model=model,
        firmware=f"{rng.randint(1, 4)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}",
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
        d.last_seen = (
            f"2026-0{rng.randint(1, 2)}-{rng.randint(10, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"
        )
    w.devices[did] = d
    return d


def _seed_scenes_and_rules(
    w: IotWorld, rng: random.Random, hid: str, rooms: dict[str, Room], devs: list[Device]
) -> None:
    """A home's scenes, the automations that run them, and its device groups."""
    # scenes
    lights = [d for d in devs if d.device_type == "light"]
    blinds = [d for d in devs if d.device_type == "blind"]
    stats = [d for d in devs if d.device_type == "thermostat"]
    locks = [d for d in devs if d.device_type == "lock"]
    colored = [d for d in lights if d.supports_color]
    night = [SceneAction(device_id=d.device_id, command="turn_off") for d in lights]
    night += [SceneAction(device_id=d.device_id, command="lock") for d in locks]
    night += [SceneAction(device_id=d.device_id, command="set_position", value=0) for d in blinds]
    night += [
        SceneAction(device_id=d.device_id, command="set_setpoint", value=18.0)
        for d in stats
        if d.thermostat_mode != "off"
    ]
    morning = [SceneAction(device_id=d.device_id, command="set_position", value=100) for d in blinds]
    morning += [SceneAction(device_id=d.device_id, command="set_brightness", value=70) for d in lights[:3]]
    morning += [
        SceneAction(device_id=d.device_id, command="set_setpoint", value=21.0)
        for d in stats
        if d.thermostat_mode != "off"
    ]
    away = [SceneAction(device_id=d.device_id, command="turn_off") for d in lights]
    away += [SceneAction(device_id=d.device_id, command="lock") for d in locks]
    away += [SceneAction(device_id=d.device_id, command="set_thermostat_mode", value="eco") for d in stats]
    away += [SceneAction(device_id=d.device_id, command="start_recording") for d in devs if d.device_type == "camera"]
    living = [d for d in lights if d.room_id == rooms["Living Room"].room_id]
    movie = [SceneAction(device_id=d.device_id, command="set_brightness", value=15) for d in living]
    movie += [SceneAction(device_id=d.device_id, command="set_color", value="#B197FC") for d in colored[:1]]
    movie += [
        SceneAction(device_id=d.device_id, command="set_position", value=0)
        for d in blinds
        if d.room_id == rooms["Living Room"].room_id
    ]
    scene_ids: dict[str, str] = {}
    for sname, acts in (("Good Night", night), ("Good Morning", morning), ("Away", away), ("Movie Time", movie)):
        if not acts or (sname == "Movie Time" and rng.random() < 0.4):
            continue
        sid = w.new_id("SCN")
        w.scenes[sid] = Scene(
            scene_id=sid,
            home_id=hid,
            name=sname,
            actions=acts,
            last_activated=f"2026-03-01T{rng.randint(6, 23):02d}:{rng.randint(0, 59):02d}:00"
            if rng.random() < 0.6
            else None,
        )
        scene_ids[sname] = sid
    # automations
    motion = [d for d in devs if d.device_type == "motion_sensor"]
    temps = [d for d in devs if "temperature" in d.capabilities and d.device_type != "thermostat"]
    if "Good Night" in scene_ids:
        aid = w.new_id("AUT")
        w.automations[aid] = Automation(
            automation_id=aid,
            home_id=hid,
            name="Bedtime",
            trigger_type="time",
            trigger_time=rng.choice(["22:30", "23:00", "23:15"]),
            scene_id=scene_ids["Good Night"],
        )
    if "Good Morning" in scene_ids:
        aid = w.new_id("AUT")
        w.automations[aid] = Automation(
            automation_id=aid,
            home_id=hid,
            name="Wake up",
            trigger_type="time",
            trigger_time=rng.choice(["06:30", "07:00", "07:15"]),
            scene_id=scene_ids["Good Morning"],
            enabled=rng.random() < 0.7,
        )
    if motion and "Good Morning" in scene_ids and rng.random() < 0.7:
        aid = w.new_id("AUT")
        w.automations[aid] = Automation(
            automation_id=aid,
            home_id=hid,
            name="Hallway motion lights",
            trigger_type="motion",
            trigger_device_id=motion[0].device_id,
            scene_id=scene_ids["Good Morning"],
            enabled=rng.random() < 0.5,
        )
    if temps and "Away" in scene_ids and rng.random() < 0.6:
        aid = w.new_id("AUT")
        w.automations[aid] = Automation(
            automation_id=aid,
            home_id=hid,
            name="Too warm while away",
            trigger_type="temperature_above",
            trigger_device_id=temps[0].device_id,
            threshold_c=26.0,
            scene_id=scene_ids["Away"],
            enabled=False,
        )
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


def _seed_devices(w: IotWorld, rng: random.Random, hid: str, rooms: dict[str, Room]) -> list[Device]:
    """A home's devices, room by room."""
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
    for rname in rooms:
        if rname in ("Porch", "Garage"):
            continue
        add(rname, "light", f"{rname} Ceiling Light")
        if rname in ("Living Room", "Master Bedroom", "Office", "Kids Room") and rng.random() < 0.7:
            add(rname, "light", f"{rname} {rng.choice(['Floor Lamp', 'Desk Lamp', 'Accent Strip'])}")
        if rname in ("Living Room", "Master Bedroom", "Guest Bedroom", "Kids Room", "Office", "Dining Room"):
            add(rname, "blind", f"{rname} Blind")
        if rname in ("Living Room", "Office", "Kitchen") and rng.random() < 0.8:
            add(
                rname,
                "plug",
                f"{rname} {rng.choice(['TV Plug', 'Coffee Maker Plug', 'Heater Plug', 'Fan Plug', 'Lamp Plug'])}",
            )
        if rname in ("Master Bedroom", "Kids Room", "Basement", "Office") and rng.random() < 0.6:
            add(rname, "temperature_sensor", f"{rname} Temperature Sensor")
    return devs


def seed_world(rng: random.Random, seed: int) -> IotWorld:
    w = IotWorld(seed=seed)
    zones = {
        "Lisbon": "Europe/Lisbon",
        "Denver": "America/Denver",
        "Austin": "America/Chicago",
        "Leeds": "Europe/London",
        "Lyon": "Europe/Paris",
        "Porto": "Europe/Lisbon",
        "Boston": "America/New_York",
        "Dublin": "Europe/Dublin",
        "Seattle": "America/Los_Angeles",
        "Madrid": "Europe/Madrid",
        "Oslo": "Europe/Oslo",
        "Toronto": "America/Toronto",
    }
    kinds = ["Residence", "Cottage", "Apartment", "Lake House", "Townhouse"]
    for _ in range(4):
        hid = w.new_id("HOME")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        city = rng.choice(CITIES)
        home = Home(
            home_id=hid,
            name=f"{last} {rng.choice(kinds)}",
            owner_name=f"{first} {last}",
            address=f"{rng.randint(2, 480)} {rng.choice(STREETS)}",
            city=city,
            timezone=zones[city],
        )
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
        devs = _seed_devices(w, rng, hid, rooms)
        # a few historic events
        for d in rng.sample(devs, k=min(6, len(devs))):
            at = f"2026-03-0{rng.randint(1, 2)}T0{rng.randint(0, 8)}:{rng.randint(0, 59):02d}:00"
            kind = {
                "motion_sensor": ("motion_detected", "motion detected"),
                "contact_sensor": ("door_opened", "contact opened"),
                "lock": ("unlocked", "unlocked with access code"),
                "smoke_detector": ("smoke_alarm_test", "monthly self-test passed"),
                "light": ("power_on", "turned on"),
                "camera": ("motion_detected", "motion in view"),
            }.get(d.device_type, ("power_on", "reported state"))
            _event(w, hid, d.device_id, kind[0], kind[1], at)
        for d in devs:
            if not d.online:
                _event(w, hid, d.device_id, "went_offline", f"lost connection ({d.offline_reason})", d.last_seen)
            elif d.lock_state == "jammed":
                _event(w, hid, d.device_id, "lock_jammed", "bolt could not extend fully", f"{REFERENCE_DAY}T07:41:00")
            elif d.battery_pct is not None and d.battery_pct <= 15:
                _event(w, hid, d.device_id, "low_battery", f"battery at {d.battery_pct}%", "2026-03-01T22:10:00")
        _seed_scenes_and_rules(w, rng, hid, rooms, devs)
    return w


def rooms_floor(w: IotWorld, d: Device) -> int:
    return w.rooms[d.room_id].floor
