"""A built-in server as ``python -m servers NAME ...`` runs it, started through the suite's quick start (prefork.py).

Run: python tests/thirdparty/builtin_server.py NAME [--transport stdio|http] [--port P] [--seed N]

For the tests about what a built-in server's tools answer, not about how it is started (test_hostile_inputs, and
test_conformance's stdio twins of all but its first server): each of their ~40 server processes would import ``mcp``
again (0.6 CPU-s). How ``python -m servers`` itself starts, over stdio and HTTP, is tested by test_kit, and how prove
starts a built-in server over stdio by test_conformance's first server."""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
from servers.__main__ import main

main()
