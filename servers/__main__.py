"""``python -m servers NAME [--transport stdio|http] [--port P] [--seed N]``: run one built-in server."""

import argparse

from servers.registry import build


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m servers")
    p.add_argument("name")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--seed", type=int, default=0, help="seed of the world a request naming none gets (default 0)")
    a = p.parse_args(argv)
    build(a.name, seed=a.seed).serve(a.transport, host=a.host, port=a.port)


if __name__ == "__main__":
    main()
