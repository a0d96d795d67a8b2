"""A built-in server as ``python -m servers NAME ...`` runs it, started through the suite's quick start (prefork.py).

Run: python tests/thirdparty/builtin_server.py NAME [--transport stdio|http] [--port P] [--seed N]

For the tests about what a built-in server's tools do with what they are sent (tests/servers/test_hostile_inputs.py),
not about how it is started: each of their ~20 server processes would import ``mcp`` again (0.6 CPU-s). How
``python -m servers`` itself starts, over stdio and HTTP, is tested by test_kit and test_conformance."""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
from servers.__main__ import main

main()
