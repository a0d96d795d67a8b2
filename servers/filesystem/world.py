"""filesystem: the world (entities and their state), the argument types its tools share and the ``TOOLS`` set."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import ToolSet, World

NOW = datetime.fromisoformat(f"{REFERENCE_DAY}T09:00:00")
CAPACITY = 20 * 1024**3
QUOTA = 256 * 1024**2
DIR_SIZE = 4096
MAX_LINK_DEPTH = 8

Kind = Literal["file", "directory", "symlink"]


class Node(BaseModel):
    node_id: str
    name: str
    kind: Kind
    parent_id: str | None
    children: dict[str, str] = {}
    content: str = ""
    binary_size: int | None = None  # set for binary files (images, archives): content is not readable text
    target: str | None = None
    owner: str
    group: str
    mode: str
    created_at: str
    modified_at: str
    tags: list[str] = []


class User(BaseModel):
    username: str
    uid: int
    groups: list[str]
    home: str
    full_name: str


class TrashItem(BaseModel):
    trash_id: str
    original_path: str
    name: str
    kind: Kind
    size: int
    trashed_at: str
    node_id: str


class FsWorld(World):
    user: str = ""
    users: dict[str, User] = {}
    root_id: str = ""
    cwd_id: str = ""
    nodes: dict[str, Node] = {}
    trash: dict[str, TrashItem] = {}
    clock: int = 0
    capacity_bytes: int = CAPACITY
    quota_bytes: int = QUOTA


# --------------------------------------------------------------------------- seeding
PROJECTS = [
    ("weather-cli", "Command-line weather forecasts from public APIs"),
    ("budget-tracker", "Track monthly spending from bank CSV exports"),
    ("photo-sorter", "Sort photos into folders by EXIF date"),
    ("inventory-api", "REST API for a small warehouse inventory"),
    ("habit-tracker", "Daily habit streaks with reminders"),
    ("recipe-box", "Store and search family recipes"),
]
LOG_COMPONENTS = ["scheduler", "db", "http", "auth", "cache", "worker", "mailer"]
LOG_MESSAGES = {
    "INFO": [
        "request completed in {n}ms",
        "job {n} finished",
        "cache warmed ({n} keys)",
        "user login ok",
        "config reloaded",
    ],
    "WARN": [
        "slow query took {n}ms",
        "retrying connection (attempt {k})",
        "disk usage at {p}%",
        "deprecated setting 'timeout' used",
    ],
    "ERROR": [
        "connection refused by db:5432",
        "job {n} failed: timeout after 30s",
        "invalid token for user id {n}",
        "upstream returned 502",
        "failed to write /var/tmp/cache-{n}.bin: no space left",
    ],
}


# --------------------------------------------------------------------------- parameter types
PathArg = Annotated[
    str,
    Field(
        description="File or directory path, absolute ('/etc/hosts'), relative to the current directory "
        "('docs/todo.txt') or under your home ('~/notes')",
        min_length=1,
        max_length=1024,
    ),
]
DirArg = Annotated[
    str,
    Field(
        description="Directory path, absolute or relative to the current directory ('.' is the current one)",
        min_length=1,
        max_length=1024,
    ),
]
Content = Annotated[str, Field(description="Text content", max_length=100_000)]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
TagArg = Annotated[
    str,
    Field(
        description="Tag name: lowercase letters, digits and dashes, e.g. 'important'",
        pattern=r"^[a-z0-9][a-z0-9-]{0,23}$",
    ),
]


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[FsWorld] = ToolSet()
