"""A login-gated, stateful banking API served over MCP, in the style of BFCL's API classes.

``login(username, password)`` must come first: every other tool fails with a "not logged in" error until
then. The password is read from ``BANK_PASSWORD`` (the user name from ``BANK_USER``, default ``alice``).
State is in memory and deterministic (transaction ids count up from T1001). Results are JSON text or text
lines, no output schemas; some tools carry no annotations. Plain mcp ``MCPServer``, not prove's kit.
Run: BANK_PASSWORD=... python tests/thirdparty/bank_api_server.py [--http PORT]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import json
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

srv = MCPServer("bank-api", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
ACCOUNTS = {
    "ACC-1001": {
        "account_number": "ACC-1001",
        "type": "checking",
        "owner": "alice",
        "balance": 1520.75,
        "currency": "USD",
    },
    "ACC-1002": {
        "account_number": "ACC-1002",
        "type": "savings",
        "owner": "alice",
        "balance": 8300.0,
        "currency": "USD",
    },
    "ACC-2001": {"account_number": "ACC-2001", "type": "checking", "owner": "bob", "balance": 240.1, "currency": "USD"},
}
TRANSACTIONS = {
    "T1001": {"transaction_id": "T1001", "account_number": "ACC-1001", "amount": -42.5, "description": "Coffee Corner"},
    "T1002": {"transaction_id": "T1002", "account_number": "ACC-1001", "amount": 2100.0, "description": "Salary"},
    "T1003": {
        "transaction_id": "T1003",
        "account_number": "ACC-1002",
        "amount": 500.0,
        "description": "Monthly saving",
    },
}
STATE = {"user": None}


def user() -> str:
    if STATE["user"] is None:
        raise ToolError("not logged in: call login(username, password) first")
    return STATE["user"]


def own(account_number: str) -> dict:
    acc = ACCOUNTS.get(account_number)
    if acc is None or acc["owner"] != user():
        raise ToolError(f"account {account_number} not found")
    return acc


@srv.tool(structured_output=False)
def login(username: str, password: str) -> str:
    """Log in to the bank with a username and password. Required before any other operation."""
    expected = os.environ.get("BANK_PASSWORD")
    if not expected:
        raise ToolError("login unavailable: the server has no BANK_PASSWORD configured")
    if username != os.environ.get("BANK_USER", "alice") or password != expected:
        raise ToolError("login failed: invalid username or password")
    STATE["user"] = username
    return f"Logged in as {username}"


@srv.tool(structured_output=False)
def logout() -> str:
    """Log out of the current session."""
    name = user()
    STATE["user"] = None
    return f"Logged out {name}"


@srv.tool(structured_output=False, annotations=READ)
def list_accounts() -> str:
    """List the accounts of the logged-in user."""
    name = user()
    return json.dumps(
        [{k: a[k] for k in ("account_number", "type", "balance")} for a in ACCOUNTS.values() if a["owner"] == name]
    )


@srv.tool(structured_output=False, annotations=READ)
def get_account(account_number: str) -> str:
    """Get the details and current balance of one account by its account number."""
    return json.dumps(own(account_number))


@srv.tool(structured_output=False)
def transfer(from_account: str, to_account: str, amount: float) -> str:
    """Transfer money from one of your accounts to another account."""
    src = own(from_account)
    if to_account not in ACCOUNTS or to_account == from_account:
        raise ToolError(f"invalid destination account {to_account}")
    if amount <= 0:
        raise ToolError("amount must be positive")
    if src["balance"] < amount:
        raise ToolError(f"insufficient funds in {from_account}: balance {src['balance']:.2f}")
    src["balance"] = round(src["balance"] - amount, 2)
    ACCOUNTS[to_account]["balance"] = round(ACCOUNTS[to_account]["balance"] + amount, 2)
    tid = f"T{1001 + len(TRANSACTIONS)}"
    TRANSACTIONS[tid] = {
        "transaction_id": tid,
        "account_number": from_account,
        "amount": -amount,
        "description": f"Transfer to {to_account}",
    }
    return json.dumps({"status": "completed", "transaction_id": tid, "new_balance": src["balance"]})


@srv.tool(structured_output=False, annotations=READ)
def list_transactions(account_number: str) -> str:
    """List the transactions of an account, newest last, one per line."""
    own(account_number)
    rows = [t for t in TRANSACTIONS.values() if t["account_number"] == account_number]
    return (
        "\n".join(f"{t['transaction_id']}  {t['amount']:+.2f}  {t['description']}" for t in rows) or "no transactions"
    )


@srv.tool(structured_output=False)
def get_transaction(transaction_id: str) -> str:
    """Retrieve a transaction."""
    t = TRANSACTIONS.get(transaction_id)
    if t is None:
        raise ToolError(f"transaction {transaction_id} not found")
    own(t["account_number"])
    return json.dumps(t)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        srv.run("streamable-http", port=int(sys.argv[2]))
    else:
        srv.run("stdio")
