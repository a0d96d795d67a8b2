"""trading: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import PermissionDenied, ToolSet, World, not_found, sensitive

Side = Literal["buy", "sell"]
OrderType = Literal["market", "limit"]
OrderStatus = Literal["open", "filled", "cancelled", "rejected"]
SymbolStatus = Literal["trading", "halted"]
Sector = Literal[
    "Technology", "Healthcare", "Energy", "Financials", "Consumer", "Industrials", "Utilities", "Materials"
]
NOW = f"{REFERENCE_DAY}T15:30:00Z"
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
PORTFOLIO_NAMES = [
    "Retirement",
    "Growth",
    "Dividend Income",
    "Tech Bets",
    "College Fund",
    "Rainy Day",
    "Speculative",
    "Core Index",
]


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
    books: dict[
        str, dict[str, list[BookLevel]]
    ] = {}  # symbol -> {"bids": [...], "asks": [...]} from other participants
    portfolios: dict[str, Portfolio] = {}
    positions: dict[str, Position] = {}  # key "<portfolio_id>:<symbol>"
    orders: dict[str, Order] = {}


def _r2(x: float) -> float:
    return round(x + 0.0, 2)


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
SymbolArg = Annotated[
    str, Field(description="Ticker symbol, e.g. 'NVRB' (from list_symbols)", min_length=1, max_length=8)
]
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


def position_view(w: TradingWorld, p: Position) -> PositionView:
    last = w.symbols[p.symbol].last_price
    return PositionView(
        portfolio_id=p.portfolio_id,
        symbol=p.symbol,
        quantity=p.quantity,
        available_quantity=p.quantity - p.reserved_quantity,
        average_cost=p.average_cost,
        last_price=last,
        market_value=_r2(p.quantity * last),
        unrealized_pnl=_r2(p.quantity * (last - p.average_cost)),
    )


def positions_of(w: TradingWorld, portfolio_id: str) -> list[PositionView]:
    return [position_view(w, p) for p in w.positions.values() if p.portfolio_id == portfolio_id and p.quantity > 0]


def band(s: Symbol) -> tuple[float, float]:
    return _r2(s.last_price * (1 - PRICE_BAND)), _r2(s.last_price * (1 + PRICE_BAND))


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[TradingWorld] = ToolSet()
