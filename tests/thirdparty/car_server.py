"""A car whose state shows only through one read taking an option, shaped like BFCL's VehicleControlAPI
(``displayCarStatus(option)``): ``display_car_status(option)`` shows one part (the parts named in its parameter's
description, not as a schema enum), and no write's answer is read by any other tool. The writes' parameters carry
their enums and ranges in the schema, as BFCL documents them. Starting the engine needs the
brake pedal pressed fully. State in memory, deterministic; text results, no output schemas, no annotations but the
read's. Plain mcp ``MCPServer``.
Run: python tests/thirdparty/car_server.py
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

srv = MCPServer("car", log_level="ERROR")
DOORS = ("driver", "passenger", "rear_left", "rear_right")
Door = Literal["driver", "passenger", "rear_left", "rear_right"]
CAR = {
    "engine": "stopped",
    "brake": 0.0,
    "parking_brake": "released",
    "doors": {d: "unlocked" for d in DOORS},
    "cruise": {"active": False, "speed": 0.0},
    "headlights": "off",
    "fuel": 10.0,
}
TANK = 50.0


@srv.tool(structured_output=False)
def lock_doors(unlock: bool, door: list[Door]) -> str:
    """Lock or unlock doors of the car: driver, passenger, rear_left, rear_right."""
    bad = [d for d in door if d not in DOORS]
    if bad or not door:
        raise ToolError(f"unknown door(s) {bad}; doors are {', '.join(DOORS)}")
    for d in door:
        CAR["doors"][d] = "unlocked" if unlock else "locked"
    return f"{len(door)} door(s) {'unlocked' if unlock else 'locked'}"


@srv.tool(structured_output=False)
def press_brake_pedal(pedal_position: Annotated[float, Field(gt=0, le=1)]) -> str:
    """Press the brake pedal, from 0 (released) to 1 (fully pressed)."""
    if not 0.0 <= pedal_position <= 1.0:
        raise ToolError("pedal_position must be between 0 and 1")
    CAR["brake"] = pedal_position
    return "Brake pedal pressed"


@srv.tool(structured_output=False)
def start_engine() -> str:
    """Start the engine. It needs the brake pedal fully pressed."""
    if CAR["brake"] < 1.0:
        raise ToolError("cannot start the engine: press the brake pedal fully first")
    CAR["engine"] = "running"
    return "Engine started"


@srv.tool(structured_output=False)
def activate_parking_brake(mode: Literal["engage", "release"]) -> str:
    """Engage or release the parking brake."""
    if mode not in ("engage", "release"):
        raise ToolError("mode must be engage or release")
    CAR["parking_brake"] = "engaged" if mode == "engage" else "released"
    return "Parking brake set"


@srv.tool(structured_output=False)
def set_cruise_control(speed: Annotated[float, Field(ge=30, le=130)], activate: bool) -> str:
    """Set the cruise control speed (km/h, 30 to 130) and turn it on or off."""
    if not 30 <= speed <= 130:
        raise ToolError("speed must be between 30 and 130 km/h")
    CAR["cruise"] = {"active": activate, "speed": float(speed)}
    return "Cruise control set"


@srv.tool(structured_output=False)
def set_headlights(mode: Literal["on", "off", "auto"]) -> str:
    """Turn the headlights on, off, or to automatic."""
    if mode not in ("on", "off", "auto"):
        raise ToolError("mode must be on, off or auto")
    CAR["headlights"] = mode
    return "Headlights set"


@srv.tool(structured_output=False)
def fill_fuel_tank(fuel_amount: Annotated[float, Field(gt=0, le=40)]) -> str:
    """Add fuel to the tank, in liters; the tank holds 50."""
    if fuel_amount <= 0 or CAR["fuel"] + fuel_amount > TANK:
        raise ToolError(f"fuel_amount must be positive and fit the tank ({TANK - CAR['fuel']:g} liters left)")
    CAR["fuel"] += fuel_amount
    return "Tank filled"


PARTS = {
    "doors": lambda: "\n".join(f"{d}: {s}" for d, s in CAR["doors"].items()),
    "engine": lambda: f"engine: {CAR['engine']}",
    "brakes": lambda: f"brake pedal: {CAR['brake']:.1f}\nparking brake: {CAR['parking_brake']}",
    "cruise": lambda: (
        f"cruise control: {'on' if CAR['cruise']['active'] else 'off'}\ncruise speed: {CAR['cruise']['speed']:g} km/h"
    ),
    "headlights": lambda: f"headlights: {CAR['headlights']}",
    "fuel": lambda: f"fuel: {CAR['fuel']:g} liters",
}


@srv.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=True))
def display_car_status(
    option: Annotated[str, Field(description="which part to show: doors, engine, brakes, cruise, headlights, fuel")],
) -> str:
    """Display the status of one part of the car."""
    if option not in PARTS:
        raise ToolError(f"unknown option {option!r}; options are {', '.join(PARTS)}")
    return PARTS[option]()


if __name__ == "__main__":
    srv.run("stdio")
