"""A third-party-style MCP server whose tool list a test can change: a small library shelf (books to list, look up,
borrow and return). With a file ``FEATURES`` in its working directory that holds the word ``labels``, it also offers
``label_book``: the same server with a changed tool schema, for the automation's schema-change path.

Run: python shelf_server.py   (stdio; state in memory; ``reset_shelf`` puts it back)
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

srv = MCPServer("shelf", log_level="ERROR")
BOOKS = {
    "BK-0001": {"title": "The Quiet Orchard", "author": "Mara Lind", "on_loan": False},
    "BK-0002": {"title": "Salt and Signal", "author": "Tomas Reyes", "on_loan": False},
    "BK-0003": {"title": "A Map of Small Rivers", "author": "Ines Okafor", "on_loan": True},
    "BK-0004": {"title": "Winter Ledger", "author": "Hugo Brandt", "on_loan": False},
}
LABELS: dict[str, list[str]] = {}
INITIAL = {b: v["on_loan"] for b, v in BOOKS.items()}


class Book(BaseModel):
    book_id: str
    title: str
    author: str
    on_loan: bool
    labels: list[str] = []


class BookList(BaseModel):
    books: list[Book]


def _book(book_id: str) -> Book:
    if book_id not in BOOKS:
        raise ToolError(f"not_found: book {book_id!r} not found")
    return Book(book_id=book_id, **BOOKS[book_id], labels=LABELS.get(book_id, []))


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_books() -> BookList:
    """List the books on the shelf."""
    return BookList(books=[_book(b) for b in BOOKS])


@srv.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_book(book_id: str) -> Book:
    """Get one book."""
    return _book(book_id)


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def borrow_book(book_id: str) -> Book:
    """Borrow a book that is on the shelf."""
    book = _book(book_id)
    if book.on_loan:
        raise ToolError(f"state_conflict: book {book_id} is already on loan")
    BOOKS[book_id]["on_loan"] = True
    return _book(book_id)


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def return_book(book_id: str) -> Book:
    """Return a borrowed book to the shelf."""
    book = _book(book_id)
    if not book.on_loan:
        raise ToolError(f"state_conflict: book {book_id} is not on loan")
    BOOKS[book_id]["on_loan"] = False
    return _book(book_id)


@srv.tool(annotations=ToolAnnotations(read_only_hint=False))
def reset_shelf() -> BookList:
    """Put every book back as it was (this server's reset tool)."""
    for book_id, on_loan in INITIAL.items():
        BOOKS[book_id]["on_loan"] = on_loan
    LABELS.clear()
    return list_books()


if "labels" in (Path("FEATURES").read_text() if Path("FEATURES").exists() else ""):

    @srv.tool(annotations=ToolAnnotations(read_only_hint=False))
    def label_book(book_id: str, label: str) -> Book:
        """Put a label on a book."""
        _book(book_id)
        LABELS.setdefault(book_id, []).append(label)
        return _book(book_id)


if __name__ == "__main__":
    srv.run("stdio")
