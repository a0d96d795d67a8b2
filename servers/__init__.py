"""The environment library: stateful MCP servers built on :mod:`servers.kit`.

This package imports no other package of ours."""
