"""trading: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random

from servers.clock import REFERENCE_DAY
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.trading.world import (
    COMPANIES,
    EXCHANGES,
    PORTFOLIO_NAMES,
    BookLevel,
    Exchange,
    Order,
    OrderStatus,
    Portfolio,
    Position,
    Symbol,
    Trader,
    TradingWorld,
    _r2,
)


def _seed_market(w: TradingWorld, rng: random.Random) -> None:
    """Exchanges, symbols (three of them halted) and each symbol's five-level order book."""
    for code, name, country, session, is_open in EXCHANGES:
        w.exchanges[code] = Exchange(
            exchange=code, name=name, country=country, session_utc=session, market_open=is_open
        )
    halted = set(rng.sample([c[0] for c in COMPANIES if c[3] in ("NYSE", "NASDAQ", "LSE")], k=3))
    for sym, company, sector, exch, base in COMPANIES:
        price = _r2(base * rng.uniform(0.85, 1.15))
        spread = max(0.01, _r2(price * rng.uniform(0.0005, 0.002)))
        bid, ask = _r2(price - spread / 2), _r2(price + spread / 2)
        if ask <= bid:
            ask = _r2(bid + 0.01)
        w.symbols[sym] = Symbol(
            symbol=sym,
            company=company,
            sector=sector,
            exchange=exch,  # type: ignore[arg-type]
            status="halted" if sym in halted else "trading",
            last_price=price,
            bid=bid,
            ask=ask,
            day_change_pct=round(rng.uniform(-4.5, 4.5), 2),
            volume=rng.randint(50_000, 9_000_000),
        )
        bids, asks = [], []
        tick = max(0.01, _r2(price * 0.001))
        for i in range(5):
            bids.append(
                BookLevel(price=_r2(bid - i * tick), quantity=rng.randint(1, 40) * 25, orders=rng.randint(1, 12))
            )
            asks.append(
                BookLevel(price=_r2(ask + i * tick), quantity=rng.randint(1, 40) * 25, orders=rng.randint(1, 12))
            )
        w.books[sym] = {"bids": bids, "asks": asks}


def seed_world(rng: random.Random, seed: int) -> TradingWorld:
    w = TradingWorld(seed=seed)
    _seed_market(w, rng)

    for _ in range(14):
        tid = w.new_id("TRD")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        w.traders[tid] = Trader(
            trader_id=tid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@example.com",
            city=rng.choice(CITIES),
            pin=f"{rng.randint(0, 9999):04d}",
        )

    tradable = list(w.symbols)
    for tid in w.traders:
        for pname in rng.sample(PORTFOLIO_NAMES, k=rng.randint(1, 2)):
            pid = w.new_id("PF")
            cash = 0.0 if rng.random() < 0.15 else _r2(rng.choice([rng.uniform(150, 2000), rng.uniform(2000, 60000)]))
            w.portfolios[pid] = Portfolio(
                portfolio_id=pid,
                trader_id=tid,
                name=pname,
                cash=cash,
                opened_on=f"20{rng.randint(18, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
            for sym in rng.sample(tradable, k=rng.randint(0, 5)):
                qty = rng.choice([5, 10, 15, 20, 25, 40, 50, 75, 100, 150, 200])
                cost = _r2(w.symbols[sym].last_price * rng.uniform(0.7, 1.2))
                w.positions[f"{pid}:{sym}"] = Position(portfolio_id=pid, symbol=sym, quantity=qty, average_cost=cost)
                day = rng.randint(1, 27)
                oid = w.new_id("ORD", 5)
                w.orders[oid] = Order(
                    order_id=oid,
                    portfolio_id=pid,
                    symbol=sym,
                    side="buy",
                    order_type="market",
                    quantity=qty,
                    status="filled",
                    filled_price=cost,
                    created_at=f"2026-02-{day:02d}T15:{rng.randint(30, 59)}:00Z",
                    updated_at=f"2026-02-{day:02d}T15:{rng.randint(30, 59)}:00Z",
                )
    # resting limit orders (reserving cash or shares) and some cancelled/rejected history
    pids = list(w.portfolios)
    for pid in rng.sample(pids, k=min(10, len(pids))):
        pf = w.portfolios[pid]
        held = [p for p in w.positions.values() if p.portfolio_id == pid and p.quantity - p.reserved_quantity >= 5]
        oid = w.new_id("ORD", 5)
        if held and rng.random() < 0.5:
            pos = rng.choice(held)
            qty = max(1, (pos.quantity - pos.reserved_quantity) // 2)
            sym = w.symbols[pos.symbol]
            limit = _r2(sym.last_price * rng.uniform(1.02, 1.08))
            pos.reserved_quantity += qty
            w.orders[oid] = Order(
                order_id=oid,
                portfolio_id=pid,
                symbol=pos.symbol,
                side="sell",
                order_type="limit",
                quantity=qty,
                limit_price=limit,
                status="open",
                created_at=f"{REFERENCE_DAY}T14:45:00Z",
                updated_at=f"{REFERENCE_DAY}T14:45:00Z",
            )
        else:
            sym = w.symbols[rng.choice(tradable)]
            limit = _r2(sym.last_price * rng.uniform(0.92, 0.98))
            qty = rng.randint(1, 20)
            status: OrderStatus = "open"
            if pf.cash - pf.reserved_cash >= qty * limit:
                pf.reserved_cash = _r2(pf.reserved_cash + qty * limit)
            else:
                status = "rejected"
            w.orders[oid] = Order(
                order_id=oid,
                portfolio_id=pid,
                symbol=sym.symbol,
                side="buy",
                order_type="limit",
                quantity=qty,
                limit_price=limit,
                status=status,
                created_at=f"{REFERENCE_DAY}T14:50:00Z",
                updated_at=f"{REFERENCE_DAY}T14:50:00Z",
            )
    for pid in rng.sample(pids, k=min(6, len(pids))):
        sym = w.symbols[rng.choice(tradable)]
        oid = w.new_id("ORD", 5)
        w.orders[oid] = Order(
            order_id=oid,
            portfolio_id=pid,
            symbol=sym.symbol,
            side=rng.choice(["buy", "sell"]),
            order_type="limit",
            quantity=rng.randint(1, 30),
            limit_price=_r2(sym.last_price * 0.95),
            status="cancelled",
            created_at="2026-02-26T16:10:00Z",
            updated_at="2026-02-27T09:00:00Z",
        )
    return w
