"""banking tools, list_customers to pay_payee (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.banking.world import (
    DAY0,
    TOOLS,
    Account,
    AccountId,
    AccountList,
    AccountType,
    Amount,
    Balance,
    BankWorld,
    ClosedAccount,
    Currency,
    Customer,
    CustomerId,
    Payee,
    PayeeList,
    PaymentResult,
    Pin,
    PublicCustomer,
    PublicCustomerList,
    Transaction,
    TransactionList,
    TransferResult,
    TxKind,
    _account,
    _active,
    _check_pin,
    _positive,
    _record,
)
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, not_found


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
