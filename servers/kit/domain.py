"""A built-in server's domain texts: the words of its service as its users say them, kept as data beside its tools.

A server package may hold a ``domain.yaml``: the reasons its users give for a request (``reasons: {reads: [...],
writes: [...]}``) and the other ways they say its nouns (``nouns: [{noun: [store, stores], said: [[shop, shops]]}]``).
The kit only reads the file; what the texts may hold is checked where they are used (``pipeline.core.domain``),
the same way for a built-in server's file and a servers file's ``domain:`` section (docs/server-kit.md).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

DOMAIN_FILE = "domain.yaml"


@cache
def domain_texts(package: str) -> dict[str, Any] | None:
    """The parsed ``domain.yaml`` of server package ``package`` (``servers.banking``), or None without one."""
    f = resources.files(package) / DOMAIN_FILE
    if not f.is_file():
        return None
    data = yaml.safe_load(f.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{package}/{DOMAIN_FILE}: expected a mapping with 'reasons' and/or 'nouns'")
    return data
