"""A stateful vehicle served over MCP, in the style of BFCL's VehicleControlAPI: actions have preconditions.

The engine starts only with the brake pedal pressed and every door locked; doors are locked and unlocked
by name (driver, passenger, rear_left, rear_right); navigation takes a destination by name (the saved
places). State is in memory, deterministic. Results are text, no output schemas; several tools have no
annotations and one has a boilerplate description, as such servers often do. Plain mcp ``MCPServer``.
Run: python tests/thirdparty/vehicle_server.py [--http PORT]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

srv = MCPServer("vehicle-control", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
DOORS = ("driver", "passenger", "rear_left", "rear_right")
PLACES = {
    "Home": "12 Elm Street",
    "Office": "400 Market Street",
    "Airport": "1 Terminal Road",
    "Gym": "88 River Lane",
    "Tire shop": "5 Garage Way",
}
TIRES = {"front_left": 32.0, "front_right": 32.0, "rear_left": 30.0, "rear_right": 26.5}
CAR = {
    "engine": "stopped",
    "brake": 0.0,
    "doors": {d: "unlocked" for d in DOORS},
    "destination": None,
    "climate": {"temperature": 21.0, "unit": "celsius", "fan_speed": 2, "mode": "auto"},
}


@srv.tool(structured_output=False)
def press_brake_pedal(pedal_position: float = 1.0) -> str:
    """Press the brake pedal. pedal_position is between 0 (released) and 1 (fully pressed)."""
    if not 0.0 <= pedal_position <= 1.0:
        raise ToolError("pedal_position must be between 0 and 1")
    CAR["brake"] = pedal_position
    return f"Brake pedal at {pedal_position:.1f}"


@srv.tool(structured_output=False)
def release_brake_pedal() -> str:
    """Release the brake pedal."""
    CAR["brake"] = 0.0
    return "Brake pedal released"


@srv.tool(structured_output=False)
def start_engine() -> str:
    """Start the engine. The brake pedal must be fully pressed and all doors locked."""
    if CAR["engine"] == "running":
        return "Engine already running"
    if CAR["brake"] < 1.0:
        raise ToolError("cannot start the engine: press the brake pedal fully first")
    unlocked = [d for d, s in CAR["doors"].items() if s != "locked"]
    if unlocked:
        raise ToolError(f"cannot start the engine: doors unlocked: {', '.join(unlocked)}")
    CAR["engine"] = "running"
    return "Engine started"


@srv.tool(structured_output=False)
def stop_engine() -> str:
    """Stop the engine."""
    CAR["engine"] = "stopped"
    return "Engine stopped"


@srv.tool(structured_output=False)
def lock_doors(doors: list[str], unlock: bool = False) -> str:
    """Lock or unlock doors by name: driver, passenger, rear_left, rear_right."""
    bad = [d for d in doors if d not in DOORS]
    if bad:
        raise ToolError(f"unknown door(s) {bad}; doors are {', '.join(DOORS)}")
    for d in doors:
        CAR["doors"][d] = "unlocked" if unlock else "locked"
    left = sum(1 for s in CAR["doors"].values() if s == "unlocked")
    return f"Doors {'unlocked' if unlock else 'locked'}: {', '.join(doors)}; {left} door(s) unlocked in total"


@srv.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=False))
def set_climate(
    temperature: float,
    unit: Literal["celsius", "fahrenheit"] = "celsius",
    fan_speed: int = 2,
    mode: Literal["auto", "cool", "heat", "defrost"] = "auto",
) -> str:
    """Set the cabin climate: target temperature, unit, fan speed (0-5) and mode."""
    if not 0 <= fan_speed <= 5:
        raise ToolError("fan_speed must be between 0 and 5")
    CAR["climate"] = {"temperature": temperature, "unit": unit, "fan_speed": fan_speed, "mode": mode}
    return f"Climate set to {temperature:g} {unit}, fan {fan_speed}, mode {mode}"


@srv.tool(structured_output=False, annotations=READ)
def check_tire_pressure() -> str:
    """Check the pressure of each tire, in psi; a tire below 28 psi needs air."""
    lines = [f"{t}: {p:.1f} psi{' (low)' if p < 28 else ''}" for t, p in TIRES.items()]
    return "\n".join(lines)


@srv.tool(structured_output=False, annotations=READ)
def list_saved_places() -> str:
    """List the saved navigation places, one per line as name: address."""
    return "\n".join(f"{n}: {a}" for n, a in PLACES.items())


@srv.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=False))
def set_navigation(destination: str) -> str:
    """Navigate to a saved place by its name."""
    if destination not in PLACES:
        raise ToolError(f"unknown destination {destination!r}; saved places: {', '.join(PLACES)}")
    CAR["destination"] = destination
    return f"Navigating to {destination} ({PLACES[destination]})"


@srv.tool(structured_output=False, annotations=READ)
def display_status() -> str:
    """This tool can be used to get information. Use this tool when needed."""
    doors = ", ".join(f"{d}={s}" for d, s in CAR["doors"].items())
    c = CAR["climate"]
    return "\n".join(
        [
            f"engine: {CAR['engine']}",
            f"brake: {CAR['brake']:.1f}",
            f"doors: {doors}",
            f"climate: {c['temperature']:g} {c['unit']}, fan {c['fan_speed']}, {c['mode']}",
            f"destination: {CAR['destination'] or 'none'}",
        ]
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        srv.run("streamable-http", port=int(sys.argv[2]))
    else:
        srv.run("stdio")
