"""banking: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found, sensitive

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
