"""iot_devices tools, list_homes to control_group (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.iot_devices.world import (
    NOW,
    TOOLS,
    AccessCode,
    Automation,
    AutomationId,
    AutomationList,
    Command,
    DeletedScene,
    Device,
    DeviceId,
    DeviceList,
    DeviceType,
    EventList,
    EventType,
    Group,
    GroupId,
    GroupList,
    GroupRun,
    HomeDetail,
    HomeId,
    HomeList,
    HomeSummary,
    IotWorld,
    RoomDetail,
    Scene,
    SceneAction,
    SceneId,
    SceneList,
    SceneRun,
    SensorReading,
    ThermostatMode,
    TriggerType,
    _apply,
    _check,
    _device,
    _event,
    _home,
    _label,
    _online,
    _require,
    _run_actions,
)
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found


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
        out.append(
            HomeSummary(
                **h.model_dump(),
                room_count=sum(r.home_id == h.home_id for r in w.rooms.values()),
                device_count=len(devs),
                offline_count=sum(not d.online for d in devs),
            )
        )
    return HomeList(homes=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_home(w: IotWorld, home_id: HomeId) -> HomeDetail:
    """Get a home with its rooms (and the device ids in each), offline devices and low-battery devices."""
    h = _home(w, home_id)
    devs = [d for d in w.devices.values() if d.home_id == home_id]
    rooms = [
        RoomDetail(**r.model_dump(), device_ids=[d.device_id for d in devs if d.room_id == r.room_id])
        for r in w.rooms.values()
        if r.home_id == home_id
    ]
    return HomeDetail(
        **h.model_dump(),
        rooms=rooms,
        device_count=len(devs),
        offline_device_ids=[d.device_id for d in devs if not d.online],
        low_battery_device_ids=[d.device_id for d in devs if d.battery_pct is not None and d.battery_pct <= 15],
    )


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
    out = [
        d
        for d in w.devices.values()
        if (home_id is None or d.home_id == home_id)
        and (room_id is None or d.room_id == room_id)
        and (device_type is None or d.device_type == device_type)
        and (online is None or d.online == online)
        and (name_contains is None or name_contains.lower() in d.name.lower())
    ]
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
        raise InvalidArgument(
            f"{_label(d)} has no sensor readings; sensor readings need a sensor, thermostat or camera "
            "(list_devices with device_type='temperature_sensor', 'motion_sensor', ...)"
        )
    _online(d)
    return SensorReading(
        device_id=d.device_id,
        device_type=d.device_type,
        name=d.name,
        read_at=NOW,
        battery_pct=d.battery_pct,
        temperature_c=d.temperature_c,
        humidity_pct=d.humidity_pct,
        motion_detected=d.motion_detected,
        contact_open=d.contact_open,
        smoke_detected=d.smoke_detected,
    )


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
    out = [
        e
        for e in w.events.values()
        if (home_id is None or e.home_id == home_id)
        and (device_id is None or e.device_id == device_id)
        and (event_type is None or e.event_type == event_type)
    ]
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
def set_power(
    w: IotWorld, device_id: DeviceId, on: Annotated[bool, Field(description="true to switch on, false to switch off")]
) -> Device:
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
    mode: Annotated[
        ThermostatMode | None, Field(description="New operating mode; omit to keep the current one")
    ] = None,
    setpoint_c: Annotated[
        float | None,
        Field(
            description="Target temperature in Celsius, 5-35 and within the thermostat's "
            "min_setpoint_c..max_setpoint_c; omit to keep it",
            ge=5,
            le=35,
        ),
    ] = None,
) -> Device:
    """Change a thermostat's mode and/or target temperature. A setpoint cannot be set while the mode is 'off'."""
    d = _device(w, device_id)
    if mode is None and setpoint_c is None:
        raise InvalidArgument("give at least one of mode or setpoint_c")
    _require(d, "thermostat")
    if setpoint_c is not None:
        _check(d, "set_setpoint", setpoint_c)
        if (mode or d.thermostat_mode) == "off":
            raise StateConflict(
                f"{_label(d)} would be in mode 'off'; choose mode heat, cool, auto or eco to use a setpoint"
            )
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
        _event(
            w,
            d.home_id,
            d.device_id,
            "unlocked",
            "unlocked with access code" + (", jam cleared" if was == "jammed" else ""),
        )
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
def list_scenes(
    w: IotWorld, home_id: Annotated[str | None, Field(description="Only scenes of this home id")] = None
) -> SceneList:
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
    actions: Annotated[
        list[SceneAction], Field(description="Device actions to run, in order", min_length=1, max_length=50)
    ],
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
        raise StateConflict(
            f"no action of scene {scene_id} ('{s.name}') could be applied: "
            + "; ".join(o.error or "" for o in outcomes)
        )
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
    out = [
        a
        for a in w.automations.values()
        if (home_id is None or a.home_id == home_id) and (enabled is None or a.enabled == enabled)
    ]
    return AutomationList(automations=out, total=len(out))


@TOOLS.tool()
def create_automation(
    w: IotWorld,
    home_id: HomeId,
    name: Annotated[str, Field(description="Automation name", min_length=2, max_length=60)],
    trigger_type: Annotated[TriggerType, Field(description="What starts it: a time of day or a sensor condition")],
    scene_id: Annotated[str, Field(description="Scene id to run when triggered (from list_scenes, same home)")],
    trigger_time: Annotated[
        str | None,
        Field(description="For trigger_type 'time': time of day 'HH:MM' (24 h)", pattern=r"^([01]\d|2[0-3]):[0-5]\d$"),
    ] = None,
    trigger_device_id: Annotated[
        str | None, Field(description="For sensor triggers: the device id whose reading triggers it")
    ] = None,
    threshold_c: Annotated[
        float | None, Field(description="For temperature_below/temperature_above: threshold in Celsius", ge=-30, le=60)
    ] = None,
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
            raise InvalidArgument(
                "trigger_device_id and threshold_c are only for sensor triggers, not trigger_type 'time'"
            )
    else:
        if trigger_device_id is None:
            raise InvalidArgument(f"trigger_device_id is required when trigger_type is {trigger_type!r}")
        if trigger_time is not None:
            raise InvalidArgument("trigger_time is only for trigger_type 'time'")
        d = _device(w, trigger_device_id)
        if d.home_id != home_id:
            raise InvalidArgument(f"trigger_device_id {trigger_device_id} belongs to home {d.home_id}, not {home_id}")
        cap = {
            "motion": "motion",
            "contact_open": "contact",
            "smoke": "smoke",
            "temperature_below": "temperature",
            "temperature_above": "temperature",
        }[trigger_type]
        _require(d, cap)
        if cap == "temperature" and threshold_c is None:
            raise InvalidArgument(f"threshold_c is required when trigger_type is {trigger_type!r}")
        if cap != "temperature" and threshold_c is not None:
            raise InvalidArgument("threshold_c is only for temperature_below / temperature_above triggers")
    aid = w.new_id("AUT")
    a = Automation(
        automation_id=aid,
        home_id=home_id,
        name=name,
        trigger_type=trigger_type,
        trigger_time=trigger_time,
        trigger_device_id=trigger_device_id,
        threshold_c=threshold_c,
        scene_id=scene_id,
    )
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
        raise StateConflict(
            f"automation {automation_id} runs scene {a.scene_id}, which was deleted; create a new automation instead"
        )
    a.enabled = enabled
    return a


# ---------------------------------------------------------------- groups
@TOOLS.tool(read_only=True)
def list_groups(
    w: IotWorld, home_id: Annotated[str | None, Field(description="Only groups of this home id")] = None
) -> GroupList:
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
    device_ids: Annotated[
        list[str],
        Field(description="Device ids of the members (same home, from list_devices)", min_length=2, max_length=50),
    ],
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
    value: Annotated[
        float | str | None,
        Field(
            description="Argument of the command: brightness/position 0-100, color '#RRGGBB', "
            "setpoint 5-35 C or thermostat mode; omit for on/off/lock/recording"
        ),
    ] = None,
) -> GroupRun:
    """Send one command to every device of a group. Members that are offline or lack the capability are reported as failed."""
    g = w.groups.get(group_id)
    if g is None:
        raise not_found("group", group_id, "list_groups shows valid ids")
    outcomes = _run_actions(w, [(did, command, value) for did in g.device_ids], f"group '{g.name}'")
    ok = sum(o.ok for o in outcomes)
    if ok == 0:
        raise StateConflict(
            f"command {command!r} could not be applied to any member of group {group_id} ('{g.name}'): "
            + "; ".join(o.error or "" for o in outcomes)
        )
    return GroupRun(group_id=group_id, command=command, applied=ok, failed=len(outcomes) - ok, outcomes=outcomes)
