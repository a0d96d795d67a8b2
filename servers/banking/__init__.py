"""banking: customers, accounts, transfers, balances, payees; PIN-protected money movement."""

from __future__ import annotations

import random
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import (
    EnvServer,
    InvalidArgument,
    PermissionDenied,
    StateConflict,
    ToolSet,
    World,
    not_found,
    sensitive,
)
from servers.names import FIRST_NAMES, LAST_NAMES

AccountType = Literal["checking", "savings", "credit"]
Currency = Literal["USD", "EUR", "GBP"]
TxKind = Literal["deposit", "withdrawal", "transfer_in", "transfer_out", "payment", "fee"]
DAY0 = REFERENCE_DAY


class Customer(BaseModel):
    customer_id: str
    name: str
    email: str
    city: str
    pin: str


class Account(BaseModel):
    account_id: str
    customer_id: str
    account_type: AccountType
    currency: Currency
    balance: float
    status: Literal["active", "frozen", "closed"] = "active"
    opened_on: str


class Transaction(BaseModel):
    transaction_id: str
    account_id: str
    kind: TxKind
    amount: float
    balance_after: float
    counterparty: str | None = None
    memo: str | None = None
    date: str


class Payee(BaseModel):
    payee_id: str
    customer_id: str
    name: str
    account_number: str


class BankWorld(World):
    customers: dict[str, Customer] = {}
    accounts: dict[str, Account] = {}
    transactions: dict[str, Transaction] = {}
    payees: dict[str, Payee] = {}
    tx_counter: int = 0


def seed_world(rng: random.Random, seed: int) -> BankWorld:
    w = BankWorld(seed=seed)
    cities = ["Lisbon", "Denver", "Austin", "Leeds", "Lyon", "Porto", "Boston", "Dublin"]
    for _ in range(24):
        cid = w.new_id("CUS")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        w.customers[cid] = Customer(
            customer_id=cid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@example.com",
            city=rng.choice(cities),
            pin=f"{rng.randint(0, 9999):04d}",
        )
        for kind in rng.sample(["checking", "savings", "credit"], k=rng.randint(1, 3)):
            aid = w.new_id("ACC")
            bal = 0.0 if rng.random() < 0.12 else round(rng.uniform(20, 9000), 2)
            w.accounts[aid] = Account(
                account_id=aid,
                customer_id=cid,
                account_type=kind,  # type: ignore[arg-type]
                currency=rng.choice(["USD", "USD", "USD", "EUR", "GBP"]),  # type: ignore[arg-type]
                balance=bal,
                status="frozen" if rng.random() < 0.06 else "active",
                opened_on=f"20{rng.randint(15, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
            if bal:
                _record(w, aid, "deposit", bal, memo="opening deposit", date="2026-02-01")
    for cid in list(w.customers)[:12]:
        for _ in range(rng.randint(1, 3)):
            pid = w.new_id("PAY")
            w.payees[pid] = Payee(
                payee_id=pid,
                customer_id=cid,
                name=rng.choice(["City Power", "AquaWorks", "Metro Rent", "FiberNet", "Green Grocer", "Dr. Alvarez"]),
                account_number=f"{rng.randint(10**9, 10**10 - 1)}",
            )
    return w


def _record(
    w: BankWorld,
    aid: str,
    kind: str,
    amount: float,
    counterparty: str | None = None,
    memo: str | None = None,
    date: str = DAY0,
) -> Transaction:
    tid = w.new_id("TXN", 5)
    tx = Transaction(
        transaction_id=tid,
        account_id=aid,
        kind=kind,
        amount=round(amount, 2),  # type: ignore[arg-type]
        balance_after=round(w.accounts[aid].balance, 2),
        counterparty=counterparty,
        memo=memo,
        date=date,
    )
    w.transactions[tid] = tx
    return tx


def _account(w: BankWorld, account_id: str) -> Account:
    acc = w.accounts.get(account_id)
    if acc is None or acc.status == "closed":
        raise not_found("account", account_id, "list_accounts shows the accounts of a customer")
    return acc


def _check_pin(w: BankWorld, customer_id: str, pin: str) -> None:
    if w.customers[customer_id].pin != pin:
        raise PermissionDenied("the PIN does not match the account holder's PIN")


def _active(acc: Account) -> None:
    if acc.status == "frozen":
        raise StateConflict(f"account {acc.account_id} is frozen; unfreeze_account must succeed first")


def _positive(amount: float) -> float:
    if amount <= 0:
        raise InvalidArgument(f"amount must be greater than 0, got {amount}")
    return round(amount, 2)


AccountId = Annotated[str, Field(description="Account id, e.g. 'ACC-0003' (from list_accounts)")]
CustomerId = Annotated[str, Field(description="Customer id, e.g. 'CUS-0001' (from list_customers)")]
Amount = Annotated[float, Field(description="Amount in the account's currency; must be greater than 0", gt=0)]
Pin = Annotated[str, sensitive("The account holder's 4-digit PIN", pattern=r"^\d{4}$")]


class CustomerList(BaseModel):
    customers: list[Customer]
    total: int


class PublicCustomer(BaseModel):
    customer_id: str
    name: str
    email: str
    city: str


class PublicCustomerList(BaseModel):
    customers: list[PublicCustomer]
    total: int


class AccountList(BaseModel):
    accounts: list[Account]
    total: int


class Balance(BaseModel):
    account_id: str
    balance: float
    currency: Currency
    status: str


class TransactionList(BaseModel):
    transactions: list[Transaction]
    total: int


class TransferResult(BaseModel):
    transaction_id: str
    from_account_id: str
    to_account_id: str
    amount: float
    from_balance: float
    to_balance: float


class PayeeList(BaseModel):
    payees: list[Payee]
    total: int


class PaymentResult(BaseModel):
    transaction_id: str
    account_id: str
    payee_id: str
    amount: float
    balance_after: float


class ClosedAccount(BaseModel):
    account_id: str
    status: str


TOOLS: ToolSet[BankWorld] = ToolSet()


def public(c: Customer) -> PublicCustomer:
    return PublicCustomer(customer_id=c.customer_id, name=c.name, email=c.email, city=c.city)


@TOOLS.tool(read_only=True)
def list_customers(
    w: BankWorld,
    city: Annotated[str | None, Field(description="Only customers living in this city")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the customer's name")] = None,
) -> PublicCustomerList:
    """List bank customers, optionally filtered by city or by part of the name."""
    out = [
        public(c)
        for c in w.customers.values()
        if (city is None or c.city.lower() == city.lower())
        and (name_contains is None or name_contains.lower() in c.name.lower())
    ]
    return PublicCustomerList(customers=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_customer(w: BankWorld, customer_id: CustomerId) -> PublicCustomer:
    """Get a customer's profile (name, email, city) by customer id."""
    c = w.customers.get(customer_id)
    if c is None:
        raise not_found("customer", customer_id, "list_customers shows valid ids")
    return public(c)


@TOOLS.tool(read_only=True)
def list_accounts(
    w: BankWorld,
    customer_id: Annotated[str | None, Field(description="Only accounts of this customer id")] = None,
    account_type: Annotated[AccountType | None, Field(description="Only accounts of this type")] = None,
    min_balance: Annotated[float | None, Field(description="Only accounts with at least this balance")] = None,
) -> AccountList:
    """List open accounts, filtered by customer, type or minimum balance."""
    if customer_id is not None and customer_id not in w.customers:
        raise not_found("customer", customer_id, "list_customers shows valid ids")
    out = [
        a
        for a in w.accounts.values()
        if a.status != "closed"
        and (customer_id is None or a.customer_id == customer_id)
        and (account_type is None or a.account_type == account_type)
        and (min_balance is None or a.balance >= min_balance)
    ]
    return AccountList(accounts=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_account(w: BankWorld, account_id: AccountId) -> Account:
    """Get one account's details: owner, type, currency, balance and status."""
    return _account(w, account_id)


@TOOLS.tool(read_only=True)
def get_balance(w: BankWorld, account_id: AccountId) -> Balance:
    """Get the current balance of an account."""
    a = _account(w, account_id)
    return Balance(account_id=a.account_id, balance=a.balance, currency=a.currency, status=a.status)


@TOOLS.tool()
def open_account(
    w: BankWorld,
    customer_id: CustomerId,
    account_type: Annotated[AccountType, Field(description="Kind of account to open")],
    currency: Annotated[Currency, Field(description="Account currency")] = "USD",
    initial_deposit: Annotated[float, Field(description="Opening deposit, 0 or more", ge=0)] = 0.0,
) -> Account:
    """Open a new account for an existing customer, with an optional opening deposit."""
    if customer_id not in w.customers:
        raise not_found("customer", customer_id, "list_customers shows valid ids")
    aid = w.new_id("ACC")
    acc = Account(
        account_id=aid,
        customer_id=customer_id,
        account_type=account_type,
        currency=currency,
        balance=round(initial_deposit, 2),
        opened_on=DAY0,
    )
    w.accounts[aid] = acc
    if initial_deposit > 0:
        _record(w, aid, "deposit", initial_deposit, memo="opening deposit")
    return acc


@TOOLS.tool(destructive=True)
def close_account(w: BankWorld, account_id: AccountId, pin: Pin) -> ClosedAccount:
    """Close an account. Its balance must be exactly 0 first (withdraw or transfer it out)."""
    a = _account(w, account_id)
    _check_pin(w, a.customer_id, pin)
    if a.balance != 0:
        raise StateConflict(
            f"account {account_id} still holds {a.balance} {a.currency}; move the balance out before closing"
        )
    a.status = "closed"
    return ClosedAccount(account_id=account_id, status="closed")


@TOOLS.tool()
def deposit(
    w: BankWorld,
    account_id: AccountId,
    amount: Amount,
    memo: Annotated[str | None, Field(description="Optional note")] = None,
) -> Transaction:
    """Deposit money into an active account."""
    a = _account(w, account_id)
    _active(a)
    a.balance = round(a.balance + _positive(amount), 2)
    return _record(w, account_id, "deposit", amount, memo=memo)


@TOOLS.tool()
def withdraw(w: BankWorld, account_id: AccountId, amount: Amount, pin: Pin) -> Transaction:
    """Withdraw money from an active account; needs the holder's PIN and enough balance."""
    a = _account(w, account_id)
    _check_pin(w, a.customer_id, pin)
    _active(a)
    amount = _positive(amount)
    if a.balance < amount:
        raise StateConflict(
            f"insufficient funds: account {account_id} holds {a.balance} {a.currency}, requested {amount}"
        )
    a.balance = round(a.balance - amount, 2)
    return _record(w, account_id, "withdrawal", amount)


@TOOLS.tool()
def transfer(
    w: BankWorld,
    from_account_id: Annotated[str, Field(description="Account id to take the money from")],
    to_account_id: Annotated[str, Field(description="Account id to send the money to")],
    amount: Amount,
    pin: Pin,
    memo: Annotated[str | None, Field(description="Optional note shown on both statements")] = None,
) -> TransferResult:
    """Transfer money between two accounts in the same currency; needs the sender's PIN."""
    if from_account_id == to_account_id:
        raise InvalidArgument("from_account_id and to_account_id must differ")
    src, dst = _account(w, from_account_id), _account(w, to_account_id)
    _check_pin(w, src.customer_id, pin)
    _active(src)
    _active(dst)
    amount = _positive(amount)
    if src.currency != dst.currency:
        raise StateConflict(
            f"currency mismatch: {from_account_id} is {src.currency}, {to_account_id} is {dst.currency}"
        )
    if src.balance < amount:
        raise StateConflict(
            f"insufficient funds: account {from_account_id} holds {src.balance} {src.currency}, requested {amount}"
        )
    src.balance = round(src.balance - amount, 2)
    dst.balance = round(dst.balance + amount, 2)
    out = _record(w, from_account_id, "transfer_out", amount, counterparty=to_account_id, memo=memo)
    _record(w, to_account_id, "transfer_in", amount, counterparty=from_account_id, memo=memo)
    return TransferResult(
        transaction_id=out.transaction_id,
        from_account_id=from_account_id,
        to_account_id=to_account_id,
        amount=amount,
        from_balance=src.balance,
        to_balance=dst.balance,
    )


@TOOLS.tool(read_only=True)
def list_transactions(
    w: BankWorld,
    account_id: AccountId,
    kind: Annotated[TxKind | None, Field(description="Only transactions of this kind")] = None,
    limit: Annotated[int, Field(description="Most recent N transactions", ge=1, le=100)] = 20,
) -> TransactionList:
    """List an account's transactions, most recent first."""
    _account(w, account_id)
    out = [t for t in w.transactions.values() if t.account_id == account_id and (kind is None or t.kind == kind)]
    out = out[::-1][:limit]
    return TransactionList(transactions=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_transaction(
    w: BankWorld, transaction_id: Annotated[str, Field(description="Transaction id, e.g. 'TXN-00012'")]
) -> Transaction:
    """Get one transaction by id."""
    t = w.transactions.get(transaction_id)
    if t is None:
        raise not_found("transaction", transaction_id, "list_transactions shows an account's transactions")
    return t


@TOOLS.tool(idempotent=True)
def freeze_account(
    w: BankWorld,
    account_id: AccountId,
    reason: Annotated[
        Literal["lost_card", "suspected_fraud", "travel", "other"], Field(description="Why the account is frozen")
    ],
) -> Account:
    """Freeze an account: no money can leave or enter it until it is unfrozen."""
    a = _account(w, account_id)
    if a.status == "frozen":
        raise StateConflict(f"account {account_id} is already frozen")
    a.status = "frozen"
    return a


@TOOLS.tool(idempotent=True)
def unfreeze_account(w: BankWorld, account_id: AccountId, pin: Pin) -> Account:
    """Unfreeze a frozen account; needs the holder's PIN."""
    a = _account(w, account_id)
    _check_pin(w, a.customer_id, pin)
    if a.status != "frozen":
        raise StateConflict(f"account {account_id} is not frozen")
    a.status = "active"
    return a


@TOOLS.tool(read_only=True)
def list_payees(w: BankWorld, customer_id: CustomerId) -> PayeeList:
    """List the saved payees of a customer."""
    if customer_id not in w.customers:
        raise not_found("customer", customer_id, "list_customers shows valid ids")
    out = [p for p in w.payees.values() if p.customer_id == customer_id]
    return PayeeList(payees=out, total=len(out))


@TOOLS.tool()
def add_payee(
    w: BankWorld,
    customer_id: CustomerId,
    name: Annotated[str, Field(description="Payee name as it should appear on statements", min_length=2)],
    account_number: Annotated[str, Field(description="Payee's 10-digit account number", pattern=r"^\d{10}$")],
) -> Payee:
    """Save a new payee for a customer so bills can be paid to it."""
    if customer_id not in w.customers:
        raise not_found("customer", customer_id, "list_customers shows valid ids")
    if any(p.customer_id == customer_id and p.account_number == account_number for p in w.payees.values()):
        raise StateConflict(f"customer {customer_id} already has a payee with account number {account_number}")
    pid = w.new_id("PAY")
    p = Payee(payee_id=pid, customer_id=customer_id, name=name, account_number=account_number)
    w.payees[pid] = p
    return p


@TOOLS.tool()
def pay_payee(
    w: BankWorld,
    account_id: AccountId,
    payee_id: Annotated[str, Field(description="Payee id, e.g. 'PAY-0002' (from list_payees)")],
    amount: Amount,
    pin: Pin,
) -> PaymentResult:
    """Pay a saved payee from one of the same customer's accounts; needs the PIN and enough balance."""
    a = _account(w, account_id)
    p = w.payees.get(payee_id)
    if p is None:
        raise not_found("payee", payee_id, "list_payees shows a customer's payees")
    if p.customer_id != a.customer_id:
        raise PermissionDenied(f"payee {payee_id} belongs to another customer than account {account_id}")
    _check_pin(w, a.customer_id, pin)
    _active(a)
    amount = _positive(amount)
    if a.balance < amount:
        raise StateConflict(
            f"insufficient funds: account {account_id} holds {a.balance} {a.currency}, requested {amount}"
        )
    a.balance = round(a.balance - amount, 2)
    tx = _record(w, account_id, "payment", amount, counterparty=p.name)
    return PaymentResult(
        transaction_id=tx.transaction_id,
        account_id=account_id,
        payee_id=payee_id,
        amount=amount,
        balance_after=a.balance,
    )


def build(seed: int = 0) -> EnvServer[BankWorld]:
    """A fresh banking server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "banking",
        seeder=seed_world,
        category="finance",
        description="Retail banking: customers, checking/savings/credit accounts, transfers, payees and bill payments.",
        tools=TOOLS,
        default_seed=seed,
    )
