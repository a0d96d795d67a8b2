"""trading: brokerage portfolios, positions, market/limit orders, quotes, exchanges and order books."""

from __future__ import annotations

import random
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import (
    EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found, sensitive,
)
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

Side = Literal["buy", "sell"]
OrderType = Literal["market", "limit"]
OrderStatus = Literal["open", "filled", "cancelled", "rejected"]
SymbolStatus = Literal["trading", "halted"]
Sector = Literal["Technology", "Healthcare", "Energy", "Financials", "Consumer", "Industrials", "Utilities", "Materials"]
NOW = "2026-03-02T15:30:00Z"
PRICE_BAND = 0.10  # limit prices must lie within +/-10% of the last price

# exchange code, name, country, session open-close (UTC), open right now?
EXCHANGES = [
    ("NYSE", "New York Stock Exchange", "US", "14:30-21:00", True),
    ("NASDAQ", "Nasdaq Stock Market", "US", "14:30-21:00", True),
    ("LSE", "London Stock Exchange", "GB", "08:00-16:30", True),
    ("XETRA", "Deutsche Boerse Xetra", "DE", "08:00-16:30", True),
    ("TSE", "Tokyo Stock Exchange", "JP", "00:00-06:00", False),
    ("ASX", "Australian Securities Exchange", "AU", "23:00-05:00", False),
]

# symbol, company, sector, exchange, typical price
COMPANIES = [
    ("NVRB", "Nova Robotics Inc.", "Technology", "NASDAQ", 182.0),
    ("QLMX", "Quantum Lumix Corp.", "Technology", "NASDAQ", 64.5),
    ("CRSL", "Coral Systems Ltd.", "Technology", "NYSE", 247.0),
    ("BYTE", "Bytewell Software", "Technology", "NASDAQ", 39.2),
    ("HLXB", "Helix Biotherapeutics", "Healthcare", "NASDAQ", 88.0),
    ("MEDQ", "MediQuest Health", "Healthcare", "NYSE", 131.0),
    ("ORTH", "Orthogen Devices", "Healthcare", "NYSE", 57.4),
    ("PTRA", "Petra Energy Partners", "Energy", "NYSE", 73.1),
    ("SOLV", "Solvane Renewables", "Energy", "NASDAQ", 22.8),
    ("GRDX", "Gridex Utilities", "Utilities", "NYSE", 46.3),
    ("AQUA", "Aqualine Water Co.", "Utilities", "NYSE", 61.0),
    ("FNBK", "First Northern Bancorp", "Financials", "NYSE", 54.9),
    ("LDGR", "Ledgerline Payments", "Financials", "NASDAQ", 112.5),
    ("ASRN", "Assurant Mutual Group", "Financials", "NYSE", 198.0),
    ("BRWL", "Brightwell Foods", "Consumer", "NYSE", 35.6),
    ("LUXE", "Luxe & Co. Apparel", "Consumer", "NYSE", 142.0),
    ("TRVL", "Travelia Holdings", "Consumer", "NASDAQ", 27.4),
    ("FRGE", "Forgeworks Industrial", "Industrials", "NYSE", 95.2),
    ("AERO", "Aerolith Aerospace", "Industrials", "NYSE", 310.0),
    ("RAIL", "Transcontinental Rail", "Industrials", "NYSE", 168.0),
    ("CPRM", "Copperline Mining", "Materials", "NYSE", 18.7),
    ("LTHM", "Lithium Minerals plc", "Materials", "LSE", 412.0),
    ("BRTL", "Britannia Telecom plc", "Technology", "LSE", 98.6),
    ("THMS", "Thames Water Holdings", "Utilities", "LSE", 12.4),
    ("RHNM", "Rheinmetall Werke AG", "Industrials", "XETRA", 226.0),
    ("BAVC", "Bavaria Chemie AG", "Materials", "XETRA", 71.8),
    ("KYTO", "Kyoto Precision KK", "Technology", "TSE", 55.0),
    ("SAKR", "Sakura Motors KK", "Consumer", "TSE", 33.3),
    ("OUTB", "Outback Resources Ltd.", "Materials", "ASX", 24.9),
    ("KOAL", "Koala Bank Group", "Financials", "ASX", 41.2),
]
PORTFOLIO_NAMES = ["Retirement", "Growth", "Dividend Income", "Tech Bets", "College Fund", "Rainy Day", "Speculative", "Core Index"]


class Trader(BaseModel):
    trader_id: str
    name: str
    email: str
    city: str
    pin: str


class Exchange(BaseModel):
    exchange: str
    name: str
    country: str
    session_utc: str
    market_open: bool


class Symbol(BaseModel):
    symbol: str
    company: str
    sector: Sector
    exchange: str
    status: SymbolStatus
    last_price: float
    bid: float
    ask: float
    day_change_pct: float
    volume: int


class BookLevel(BaseModel):
    price: float
    quantity: int
    orders: int


class Portfolio(BaseModel):
    portfolio_id: str
    trader_id: str
    name: str
    cash: float
    reserved_cash: float = 0.0
    currency: Literal["USD"] = "USD"
    opened_on: str


class Position(BaseModel):
    portfolio_id: str
    symbol: str
    quantity: int
    reserved_quantity: int = 0
    average_cost: float


class Order(BaseModel):
    order_id: str
    portfolio_id: str
    symbol: str
    side: Side
    order_type: OrderType
    quantity: int
    limit_price: float | None = None
    status: OrderStatus
    filled_price: float | None = None
    created_at: str
    updated_at: str


class TradingWorld(World):
    traders: dict[str, Trader] = {}
    exchanges: dict[str, Exchange] = {}
    symbols: dict[str, Symbol] = {}
    books: dict[str, dict[str, list[BookLevel]]] = {}  # symbol -> {"bids": [...], "asks": [...]} from other participants
    portfolios: dict[str, Portfolio] = {}
    positions: dict[str, Position] = {}  # key "<portfolio_id>:<symbol>"
    orders: dict[str, Order] = {}


def _r2(x: float) -> float:
    return round(x + 0.0, 2)


def seed_world(rng: random.Random, seed: int) -> TradingWorld:
    w = TradingWorld(seed=seed)
    for code, name, country, session, is_open in EXCHANGES:
        w.exchanges[code] = Exchange(exchange=code, name=name, country=country, session_utc=session, market_open=is_open)
    halted = set(rng.sample([c[0] for c in COMPANIES if c[3] in ("NYSE", "NASDAQ", "LSE")], k=3))
    for sym, company, sector, exch, base in COMPANIES:
        price = _r2(base * rng.uniform(0.85, 1.15))
        spread = max(0.01, _r2(price * rng.uniform(0.0005, 0.002)))
        bid, ask = _r2(price - spread / 2), _r2(price + spread / 2)
        if ask <= bid:
            ask = _r2(bid + 0.01)
        w.symbols[sym] = Symbol(
            symbol=sym, company=company, sector=sector, exchange=exch,  # type: ignore[arg-type]
            status="halted" if sym in halted else "trading", last_price=price, bid=bid, ask=ask,
            day_change_pct=round(rng.uniform(-4.5, 4.5), 2), volume=rng.randint(50_000, 9_000_000),
        )
        bids, asks = [], []
        tick = max(0.01, _r2(price * 0.001))
        for i in range(5):
            bids.append(BookLevel(price=_r2(bid - i * tick), quantity=rng.randint(1, 40) * 25, orders=rng.randint(1, 12)))
            asks.append(BookLevel(price=_r2(ask + i * tick), quantity=rng.randint(1, 40) * 25, orders=rng.randint(1, 12)))
        w.books[sym] = {"bids": bids, "asks": asks}

    for _ in range(14):
        tid = w.new_id("TRD")
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        w.traders[tid] = Trader(trader_id=tid, name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@example.com",
                                city=rng.choice(CITIES), pin=f"{rng.randint(0, 9999):04d}")

    tradable = list(w.symbols)
    for tid in w.traders:
        for pname in rng.sample(PORTFOLIO_NAMES, k=rng.randint(1, 2)):
            pid = w.new_id("PF")
            cash = 0.0 if rng.random() < 0.15 else _r2(rng.choice([rng.uniform(150, 2000), rng.uniform(2000, 60000)]))
            w.portfolios[pid] = Portfolio(portfolio_id=pid, trader_id=tid, name=pname, cash=cash,
                                          opened_on=f"20{rng.randint(18, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
            for sym in rng.sample(tradable, k=rng.randint(0, 5)):
                qty = rng.choice([5, 10, 15, 20, 25, 40, 50, 75, 100, 150, 200])
                cost = _r2(w.symbols[sym].last_price * rng.uniform(0.7, 1.2))
                w.positions[f"{pid}:{sym}"] = Position(portfolio_id=pid, symbol=sym, quantity=qty, average_cost=cost)
                day = rng.randint(1, 27)
                oid = w.new_id("ORD", 5)
                w.orders[oid] = Order(order_id=oid, portfolio_id=pid, symbol=sym, side="buy", order_type="market", quantity=qty,
                                      status="filled", filled_price=cost, created_at=f"2026-02-{day:02d}T15:{rng.randint(30, 59)}:00Z",
                                      updated_at=f"2026-02-{day:02d}T15:{rng.randint(30, 59)}:00Z")
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
            w.orders[oid] = Order(order_id=oid, portfolio_id=pid, symbol=pos.symbol, side="sell", order_type="limit", quantity=qty,
                                  limit_price=limit, status="open", created_at="2026-03-02T14:45:00Z", updated_at="2026-03-02T14:45:00Z")
        else:
            sym = w.symbols[rng.choice(tradable)]
            limit = _r2(sym.last_price * rng.uniform(0.92, 0.98))
            qty = rng.randint(1, 20)
            status: OrderStatus = "open"
            if pf.cash - pf.reserved_cash >= qty * limit:
                pf.reserved_cash = _r2(pf.reserved_cash + qty * limit)
            else:
                status = "rejected"
            w.orders[oid] = Order(order_id=oid, portfolio_id=pid, symbol=sym.symbol, side="buy", order_type="limit", quantity=qty,
                                  limit_price=limit, status=status, created_at="2026-03-02T14:50:00Z", updated_at="2026-03-02T14:50:00Z")
    for pid in rng.sample(pids, k=min(6, len(pids))):
        sym = w.symbols[rng.choice(tradable)]
        oid = w.new_id("ORD", 5)
        w.orders[oid] = Order(order_id=oid, portfolio_id=pid, symbol=sym.symbol, side=rng.choice(["buy", "sell"]), order_type="limit",
                              quantity=rng.randint(1, 30), limit_price=_r2(sym.last_price * 0.95), status="cancelled",
                              created_at="2026-02-26T16:10:00Z", updated_at="2026-02-27T09:00:00Z")
    return w


def _portfolio(w: TradingWorld, portfolio_id: str) -> Portfolio:
    pf = w.portfolios.get(portfolio_id)
    if pf is None:
        raise not_found("portfolio", portfolio_id, "list_portfolios shows valid portfolio ids")
    return pf


def _symbol(w: TradingWorld, symbol: str) -> Symbol:
    s = w.symbols.get(symbol.upper())
    if s is None:
        raise not_found("symbol", symbol, "list_symbols shows tradable symbols")
    return s


def _check_pin(w: TradingWorld, trader_id: str, pin: str) -> None:
    if w.traders[trader_id].pin != pin:
        raise PermissionDenied(f"the PIN does not match the trading PIN of trader {trader_id}, the portfolio owner")


PortfolioId = Annotated[str, Field(description="Portfolio id, e.g. 'PF-0003' (from list_portfolios)")]
SymbolArg = Annotated[str, Field(description="Ticker symbol, e.g. 'NVRB' (from list_symbols)", min_length=1, max_length=8)]
Pin = Annotated[str, sensitive("The portfolio owner's 4-digit trading PIN", pattern=r"^\d{4}$")]
Amount = Annotated[float, Field(description="Cash amount in USD; must be greater than 0", gt=0, le=10_000_000)]


class PortfolioSummary(BaseModel):
    portfolio_id: str
    trader_id: str
    owner_name: str
    name: str
    cash: float
    available_cash: float
    currency: str


class PortfolioList(BaseModel):
    portfolios: list[PortfolioSummary]
    total: int


class PositionView(BaseModel):
    portfolio_id: str
    symbol: str
    quantity: int
    available_quantity: int
    average_cost: float
    last_price: float
    market_value: float
    unrealized_pnl: float


class PortfolioDetail(BaseModel):
    portfolio_id: str
    trader_id: str
    owner_name: str
    name: str
    cash: float
    reserved_cash: float
    available_cash: float
    currency: str
    positions: list[PositionView]
    positions_value: float
    total_value: float
    opened_on: str


class PositionList(BaseModel):
    portfolio_id: str
    positions: list[PositionView]
    total: int


class ExchangeList(BaseModel):
    exchanges: list[Exchange]
    total: int


class SymbolList(BaseModel):
    symbols: list[Symbol]
    total: int


class Quote(BaseModel):
    symbol: str
    company: str
    exchange: str
    status: SymbolStatus
    market_open: bool
    last_price: float
    bid: float
    ask: float
    day_change_pct: float
    volume: int
    limit_price_min: float
    limit_price_max: float
    as_of: str


class OrderBook(BaseModel):
    symbol: str
    bids: list[BookLevel]
    asks: list[BookLevel]
    spread: float
    as_of: str


class OrderList(BaseModel):
    orders: list[Order]
    total: int


class CashMovement(BaseModel):
    portfolio_id: str
    amount: float
    cash: float
    available_cash: float


TOOLS: ToolSet[TradingWorld] = ToolSet()


def position_view(w: TradingWorld, p: Position) -> PositionView:
    last = w.symbols[p.symbol].last_price
    return PositionView(portfolio_id=p.portfolio_id, symbol=p.symbol, quantity=p.quantity,
                        available_quantity=p.quantity - p.reserved_quantity, average_cost=p.average_cost, last_price=last,
                        market_value=_r2(p.quantity * last), unrealized_pnl=_r2(p.quantity * (last - p.average_cost)))


def positions_of(w: TradingWorld, portfolio_id: str) -> list[PositionView]:
    return [position_view(w, p) for p in w.positions.values() if p.portfolio_id == portfolio_id and p.quantity > 0]


def band(s: Symbol) -> tuple[float, float]:
    return _r2(s.last_price * (1 - PRICE_BAND)), _r2(s.last_price * (1 + PRICE_BAND))


@TOOLS.tool(read_only=True)
def list_portfolios(
    w: TradingWorld,
    trader_id: Annotated[str | None, Field(description="Only portfolios owned by this trader id, e.g. 'TRD-0002'")] = None,
    owner_name_contains: Annotated[str | None, Field(description="Case-insensitive part of the owner's name")] = None,
) -> PortfolioList:
    """List brokerage portfolios with their owner and cash, optionally filtered by owner."""
    if trader_id is not None and trader_id not in w.traders:
        raise not_found("trader", trader_id, "omit trader_id to see every portfolio and its trader_id")
    out = []
    for pf in w.portfolios.values():
        owner = w.traders[pf.trader_id]
        if trader_id is not None and pf.trader_id != trader_id:
            continue
        if owner_name_contains is not None and owner_name_contains.lower() not in owner.name.lower():
            continue
        out.append(PortfolioSummary(portfolio_id=pf.portfolio_id, trader_id=pf.trader_id, owner_name=owner.name, name=pf.name,
                                    cash=pf.cash, available_cash=_r2(pf.cash - pf.reserved_cash), currency=pf.currency))
    return PortfolioList(portfolios=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_portfolio(w: TradingWorld, portfolio_id: PortfolioId) -> PortfolioDetail:
    """Get a portfolio's cash (total, reserved by open buy orders, available), positions and total market value."""
    pf = _portfolio(w, portfolio_id)
    pos = positions_of(w, portfolio_id)
    pv = _r2(sum(p.market_value for p in pos))
    return PortfolioDetail(portfolio_id=pf.portfolio_id, trader_id=pf.trader_id, owner_name=w.traders[pf.trader_id].name,
                           name=pf.name, cash=pf.cash, reserved_cash=pf.reserved_cash, available_cash=_r2(pf.cash - pf.reserved_cash),
                           currency=pf.currency, positions=pos, positions_value=pv, total_value=_r2(pv + pf.cash), opened_on=pf.opened_on)


@TOOLS.tool(read_only=True)
def list_positions(
    w: TradingWorld,
    portfolio_id: PortfolioId,
    symbol: Annotated[str | None, Field(description="Only the position in this ticker symbol")] = None,
) -> PositionList:
    """List the share positions held in a portfolio, with quantity available to sell and unrealized profit/loss."""
    _portfolio(w, portfolio_id)
    out = [p for p in positions_of(w, portfolio_id) if symbol is None or p.symbol == symbol.upper()]
    return PositionList(portfolio_id=portfolio_id, positions=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_exchanges(w: TradingWorld) -> ExchangeList:
    """List the stock exchanges, their trading session in UTC and whether the market is open right now."""
    out = list(w.exchanges.values())
    return ExchangeList(exchanges=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_symbols(
    w: TradingWorld,
    exchange: Annotated[Literal["NYSE", "NASDAQ", "LSE", "XETRA", "TSE", "ASX"] | None, Field(description="Only symbols listed on this exchange")] = None,
    sector: Annotated[Sector | None, Field(description="Only symbols in this sector")] = None,
    status: Annotated[SymbolStatus | None, Field(description="Only symbols with this trading status")] = None,
    query: Annotated[str | None, Field(description="Case-insensitive part of the ticker or company name")] = None,
) -> SymbolList:
    """List tradable ticker symbols with their last price, bid/ask and trading status."""
    out = [s for s in w.symbols.values()
           if (exchange is None or s.exchange == exchange) and (sector is None or s.sector == sector)
           and (status is None or s.status == status)
           and (query is None or query.lower() in s.symbol.lower() or query.lower() in s.company.lower())]
    return SymbolList(symbols=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_quote(w: TradingWorld, symbol: SymbolArg) -> Quote:
    """Get a real-time quote for a symbol: last price, bid/ask, whether its market is open and the allowed limit-price range."""
    s = _symbol(w, symbol)
    lo, hi = band(s)
    return Quote(symbol=s.symbol, company=s.company, exchange=s.exchange, status=s.status,
                 market_open=w.exchanges[s.exchange].market_open, last_price=s.last_price, bid=s.bid, ask=s.ask,
                 day_change_pct=s.day_change_pct, volume=s.volume, limit_price_min=lo, limit_price_max=hi, as_of=NOW)


@TOOLS.tool(read_only=True)
def get_order_book(
    w: TradingWorld,
    symbol: SymbolArg,
    depth: Annotated[int, Field(description="Number of price levels per side", ge=1, le=10)] = 5,
) -> OrderBook:
    """Get the order book of a symbol: aggregated bid and ask price levels, including open limit orders of portfolios."""
    s = _symbol(w, symbol)
    levels: dict[str, dict[float, list[int]]] = {"bids": {}, "asks": {}}
    for side in ("bids", "asks"):
        for lv in w.books[s.symbol][side]:
            levels[side][lv.price] = [lv.quantity, lv.orders]
    for o in w.orders.values():
        if o.symbol == s.symbol and o.status == "open" and o.limit_price is not None:
            side = "bids" if o.side == "buy" else "asks"
            cur = levels[side].setdefault(o.limit_price, [0, 0])
            cur[0] += o.quantity
            cur[1] += 1
    bids = [BookLevel(price=p, quantity=q, orders=n) for p, (q, n) in sorted(levels["bids"].items(), reverse=True)][:depth]
    asks = [BookLevel(price=p, quantity=q, orders=n) for p, (q, n) in sorted(levels["asks"].items())][:depth]
    return OrderBook(symbol=s.symbol, bids=bids, asks=asks, spread=_r2(s.ask - s.bid), as_of=NOW)


@TOOLS.tool()
def place_order(
    w: TradingWorld,
    portfolio_id: PortfolioId,
    symbol: SymbolArg,
    side: Annotated[Side, Field(description="'buy' to purchase shares, 'sell' to sell shares held")],
    order_type: Annotated[OrderType, Field(description="'market' fills now at the best bid/ask; 'limit' fills only at limit_price or better")],
    quantity: Annotated[int, Field(description="Number of whole shares", ge=1, le=100_000)],
    pin: Pin,
    limit_price: Annotated[float | None, Field(description="Limit price per share; required for limit orders, must be within 10% of the last price", gt=0)] = None,
) -> Order:
    """Place a buy or sell order. Market orders fill immediately; marketable limit orders fill at once, others rest open
    in the order book and reserve the cash (buy) or shares (sell). The symbol's exchange must be open and trading not halted."""
    pf = _portfolio(w, portfolio_id)
    s = _symbol(w, symbol)
    _check_pin(w, pf.trader_id, pin)
    ex = w.exchanges[s.exchange]
    if s.status == "halted":
        raise StateConflict(f"trading in {s.symbol} is halted; choose another symbol (list_symbols with status='trading')")
    if not ex.market_open:
        raise StateConflict(f"market closed: {s.symbol} trades on {ex.exchange}, whose session is {ex.session_utc} UTC and which is closed now")
    if order_type == "limit":
        if limit_price is None:
            raise InvalidArgument("limit_price is required when order_type is 'limit'")
        lo, hi = band(s)
        if not lo <= limit_price <= hi:
            raise InvalidArgument(f"limit_price {limit_price} is out of range for {s.symbol}: it must be between {lo} and {hi} (within 10% of the last price {s.last_price})")
        limit_price = _r2(limit_price)
    elif limit_price is not None:
        raise InvalidArgument("limit_price must be omitted for market orders (or use order_type='limit')")
    if side == "buy":
        marketable = order_type == "market" or limit_price >= s.ask  # type: ignore[operator]
        price = s.ask if marketable else limit_price
        cost = _r2(quantity * price)  # type: ignore[operator]
        available = _r2(pf.cash - pf.reserved_cash)
        if cost > available:
            raise StateConflict(f"insufficient cash: portfolio {portfolio_id} has {available} USD available, the order needs {cost} USD")
    else:
        pos = w.positions.get(f"{portfolio_id}:{s.symbol}")
        held = 0 if pos is None else pos.quantity - pos.reserved_quantity
        if held < quantity:
            raise StateConflict(f"insufficient shares: portfolio {portfolio_id} has {held} shares of {s.symbol} available to sell, requested {quantity}")
        marketable = order_type == "market" or limit_price <= s.bid  # type: ignore[operator]
        price = s.bid if marketable else limit_price
    oid = w.new_id("ORD", 5)
    order = Order(order_id=oid, portfolio_id=portfolio_id, symbol=s.symbol, side=side, order_type=order_type, quantity=quantity,
                  limit_price=limit_price, status="open", created_at=NOW, updated_at=NOW)
    key = f"{portfolio_id}:{s.symbol}"
    if marketable:
        order.status, order.filled_price = "filled", price
        if side == "buy":
            pf.cash = _r2(pf.cash - quantity * price)  # type: ignore[operator]
            pos = w.positions.get(key)
            if pos is None or pos.quantity == 0:
                w.positions[key] = Position(portfolio_id=portfolio_id, symbol=s.symbol, quantity=quantity, average_cost=price)  # type: ignore[arg-type]
            else:
                pos.average_cost = _r2((pos.quantity * pos.average_cost + quantity * price) / (pos.quantity + quantity))  # type: ignore[operator]
                pos.quantity += quantity
        else:
            pf.cash = _r2(pf.cash + quantity * price)  # type: ignore[operator]
            w.positions[key].quantity -= quantity
        s.last_price = price  # type: ignore[assignment]
        s.volume += quantity
    elif side == "buy":
        pf.reserved_cash = _r2(pf.reserved_cash + quantity * limit_price)  # type: ignore[operator]
    else:
        w.positions[key].reserved_quantity += quantity
    w.orders[oid] = order
    return order


@TOOLS.tool(read_only=True)
def list_orders(
    w: TradingWorld,
    portfolio_id: PortfolioId,
    status: Annotated[OrderStatus | None, Field(description="Only orders in this status")] = None,
    symbol: Annotated[str | None, Field(description="Only orders for this ticker symbol")] = None,
) -> OrderList:
    """List a portfolio's orders, most recent first, optionally by status or symbol."""
    _portfolio(w, portfolio_id)
    out = [o for o in w.orders.values() if o.portfolio_id == portfolio_id
           and (status is None or o.status == status) and (symbol is None or o.symbol == symbol.upper())]
    out.sort(key=lambda o: (o.created_at, o.order_id), reverse=True)
    return OrderList(orders=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_order(w: TradingWorld, order_id: Annotated[str, Field(description="Order id, e.g. 'ORD-00012' (from list_orders)")]) -> Order:
    """Get one order by id: side, type, quantity, limit price, status and fill price."""
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows a portfolio's orders")
    return o


@TOOLS.tool(destructive=True)
def cancel_order(
    w: TradingWorld,
    order_id: Annotated[str, Field(description="Id of an open order, e.g. 'ORD-00012' (from list_orders with status='open')")],
    pin: Pin,
) -> Order:
    """Cancel an open limit order and release the cash or shares it reserved. Filled orders cannot be cancelled."""
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows a portfolio's orders")
    pf = w.portfolios[o.portfolio_id]
    _check_pin(w, pf.trader_id, pin)
    if o.status != "open":
        raise StateConflict(f"order {order_id} is already {o.status} and cannot be cancelled; only open orders can be cancelled")
    if o.side == "buy":
        pf.reserved_cash = _r2(max(0.0, pf.reserved_cash - o.quantity * (o.limit_price or 0)))
    else:
        pos = w.positions[f"{o.portfolio_id}:{o.symbol}"]
        pos.reserved_quantity = max(0, pos.reserved_quantity - o.quantity)
    o.status, o.updated_at = "cancelled", NOW
    return o


@TOOLS.tool()
def deposit_cash(w: TradingWorld, portfolio_id: PortfolioId, amount: Amount) -> CashMovement:
    """Deposit cash (USD) into a portfolio so it can buy shares."""
    pf = _portfolio(w, portfolio_id)
    pf.cash = _r2(pf.cash + amount)
    return CashMovement(portfolio_id=portfolio_id, amount=_r2(amount), cash=pf.cash, available_cash=_r2(pf.cash - pf.reserved_cash))


@TOOLS.tool()
def withdraw_cash(w: TradingWorld, portfolio_id: PortfolioId, amount: Amount, pin: Pin) -> CashMovement:
    """Withdraw available cash from a portfolio; cash reserved by open buy orders cannot be withdrawn."""
    pf = _portfolio(w, portfolio_id)
    _check_pin(w, pf.trader_id, pin)
    available = _r2(pf.cash - pf.reserved_cash)
    if amount > available:
        raise StateConflict(f"insufficient cash: portfolio {portfolio_id} has {available} USD available to withdraw, requested {_r2(amount)}")
    pf.cash = _r2(pf.cash - amount)
    return CashMovement(portfolio_id=portfolio_id, amount=_r2(amount), cash=pf.cash, available_cash=_r2(pf.cash - pf.reserved_cash))


def build(seed: int = 0) -> EnvServer[TradingWorld]:
    """A fresh trading server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "trading", seeder=seed_world, category="finance",
        description="Brokerage trading: portfolios, positions, cash, market and limit orders, quotes, exchanges and order books.",
        tools=TOOLS, default_seed=seed,
    )
