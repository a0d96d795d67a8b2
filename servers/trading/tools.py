"""trading tools, list_portfolios to withdraw_cash (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.kit import InvalidArgument, StateConflict, not_found
from servers.trading.world import (
    NOW,
    TOOLS,
    Amount,
    BookLevel,
    CashMovement,
    ExchangeList,
    Order,
    OrderBook,
    OrderList,
    OrderStatus,
    OrderType,
    Pin,
    PortfolioDetail,
    PortfolioId,
    PortfolioList,
    PortfolioSummary,
    Position,
    PositionList,
    Quote,
    Sector,
    Side,
    SymbolArg,
    SymbolList,
    SymbolStatus,
    TradingWorld,
    _check_pin,
    _portfolio,
    _r2,
    _symbol,
    band,
    positions_of,
)


@TOOLS.tool(read_only=True)
def list_portfolios(
    w: TradingWorld,
    trader_id: Annotated[
        str | None, Field(description="Only portfolios owned by this trader id, e.g. 'TRD-0002'")
    ] = None,
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
        out.append(
            PortfolioSummary(
                portfolio_id=pf.portfolio_id,
                trader_id=pf.trader_id,
                owner_name=owner.name,
                name=pf.name,
                cash=pf.cash,
                available_cash=_r2(pf.cash - pf.reserved_cash),
                currency=pf.currency,
            )
        )
    return PortfolioList(portfolios=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_portfolio(w: TradingWorld, portfolio_id: PortfolioId) -> PortfolioDetail:
    """Get a portfolio's cash (total, reserved by open buy orders, available), positions and total market value."""
    pf = _portfolio(w, portfolio_id)
    pos = positions_of(w, portfolio_id)
    pv = _r2(sum(p.market_value for p in pos))
    return PortfolioDetail(
        portfolio_id=pf.portfolio_id,
        trader_id=pf.trader_id,
        owner_name=w.traders[pf.trader_id].name,
        name=pf.name,
        cash=pf.cash,
        reserved_cash=pf.reserved_cash,
        available_cash=_r2(pf.cash - pf.reserved_cash),
        currency=pf.currency,
        positions=pos,
        positions_value=pv,
        total_value=_r2(pv + pf.cash),
        opened_on=pf.opened_on,
    )


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
    exchange: Annotated[
        Literal["NYSE", "NASDAQ", "LSE", "XETRA", "TSE", "ASX"] | None,
        Field(description="Only symbols listed on this exchange"),
    ] = None,
    sector: Annotated[Sector | None, Field(description="Only symbols in this sector")] = None,
    status: Annotated[SymbolStatus | None, Field(description="Only symbols with this trading status")] = None,
    query: Annotated[str | None, Field(description="Case-insensitive part of the ticker or company name")] = None,
) -> SymbolList:
    """List tradable ticker symbols with their last price, bid/ask and trading status."""
    out = [
        s
        for s in w.symbols.values()
        if (exchange is None or s.exchange == exchange)
        and (sector is None or s.sector == sector)
        and (status is None or s.status == status)
        and (query is None or query.lower() in s.symbol.lower() or query.lower() in s.company.lower())
    ]
    return SymbolList(symbols=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_quote(w: TradingWorld, symbol: SymbolArg) -> Quote:
    """Get a real-time quote for a symbol: last price, bid/ask, whether its market is open and the allowed limit-price range."""
    s = _symbol(w, symbol)
    lo, hi = band(s)
    return Quote(
        symbol=s.symbol,
        company=s.company,
        exchange=s.exchange,
        status=s.status,
        market_open=w.exchanges[s.exchange].market_open,
        last_price=s.last_price,
        bid=s.bid,
        ask=s.ask,
        day_change_pct=s.day_change_pct,
        volume=s.volume,
        limit_price_min=lo,
        limit_price_max=hi,
        as_of=NOW,
    )


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
    bids = [BookLevel(price=p, quantity=q, orders=n) for p, (q, n) in sorted(levels["bids"].items(), reverse=True)][
        :depth
    ]
    asks = [BookLevel(price=p, quantity=q, orders=n) for p, (q, n) in sorted(levels["asks"].items())][:depth]
    return OrderBook(symbol=s.symbol, bids=bids, asks=asks, spread=_r2(s.ask - s.bid), as_of=NOW)


@TOOLS.tool()
def place_order(
    w: TradingWorld,
    portfolio_id: PortfolioId,
    symbol: SymbolArg,
    side: Annotated[Side, Field(description="'buy' to purchase shares, 'sell' to sell shares held")],
    order_type: Annotated[
        OrderType,
        Field(description="'market' fills now at the best bid/ask; 'limit' fills only at limit_price or better"),
    ],
    quantity: Annotated[int, Field(description="Number of whole shares", ge=1, le=100_000)],
    pin: Pin,
    limit_price: Annotated[
        float | None,
        Field(
            description="Limit price per share; required for limit orders, must be within 10% of the last price", gt=0
        ),
    ] = None,
) -> Order:
    """Place a buy or sell order. Market orders fill immediately; marketable limit orders fill at once, others rest open
    in the order book and reserve the cash (buy) or shares (sell). The symbol's exchange must be open and trading not halted."""
    pf = _portfolio(w, portfolio_id)
    s = _symbol(w, symbol)
    _check_pin(w, pf.trader_id, pin)
    ex = w.exchanges[s.exchange]
    if s.status == "halted":
        raise StateConflict(
            f"trading in {s.symbol} is halted; choose another symbol (list_symbols with status='trading')"
        )
    if not ex.market_open:
        raise StateConflict(
            f"market closed: {s.symbol} trades on {ex.exchange}, whose session is {ex.session_utc} UTC and which is closed now"
        )
    if order_type == "limit":
        if limit_price is None:
            raise InvalidArgument("limit_price is required when order_type is 'limit'")
        lo, hi = band(s)
        if not lo <= limit_price <= hi:
            raise InvalidArgument(
                f"limit_price {limit_price} is out of range for {s.symbol}: it must be between {lo} and {hi} (within 10% of the last price {s.last_price})"
            )
        limit_price = _r2(limit_price)
    elif limit_price is not None:
        raise InvalidArgument("limit_price must be omitted for market orders (or use order_type='limit')")
    if side == "buy":
        marketable = order_type == "market" or limit_price >= s.ask  # type: ignore[operator]
        price = s.ask if marketable else limit_price
        cost = _r2(quantity * price)  # type: ignore[operator]
        available = _r2(pf.cash - pf.reserved_cash)
        if cost > available:
            raise StateConflict(
                f"insufficient cash: portfolio {portfolio_id} has {available} USD available, the order needs {cost} USD"
            )
    else:
        pos = w.positions.get(f"{portfolio_id}:{s.symbol}")
        held = 0 if pos is None else pos.quantity - pos.reserved_quantity
        if held < quantity:
            raise StateConflict(
                f"insufficient shares: portfolio {portfolio_id} has {held} shares of {s.symbol} available to sell, requested {quantity}"
            )
        marketable = order_type == "market" or limit_price <= s.bid  # type: ignore[operator]
        price = s.bid if marketable else limit_price
    oid = w.new_id("ORD", 5)
    order = Order(
        order_id=oid,
        portfolio_id=portfolio_id,
        symbol=s.symbol,
        side=side,
        order_type=order_type,
        quantity=quantity,
        limit_price=limit_price,
        status="open",
        created_at=NOW,
        updated_at=NOW,
    )
    key = f"{portfolio_id}:{s.symbol}"
    if marketable:
        order.status, order.filled_price = "filled", price
        if side == "buy":
            pf.cash = _r2(pf.cash - quantity * price)  # type: ignore[operator]
            pos = w.positions.get(key)
            if pos is None or pos.quantity == 0:
                w.positions[key] = Position(
                    portfolio_id=portfolio_id, symbol=s.symbol, quantity=quantity, average_cost=price
                )  # type: ignore[arg-type]
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
    out = [
        o
        for o in w.orders.values()
        if o.portfolio_id == portfolio_id
        and (status is None or o.status == status)
        and (symbol is None or o.symbol == symbol.upper())
    ]
    out.sort(key=lambda o: (o.created_at, o.order_id), reverse=True)
    return OrderList(orders=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_order(
    w: TradingWorld, order_id: Annotated[str, Field(description="Order id, e.g. 'ORD-00012' (from list_orders)")]
) -> Order:
    """Get one order by id: side, type, quantity, limit price, status and fill price."""
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows a portfolio's orders")
    return o


@TOOLS.tool(destructive=True)
def cancel_order(
    w: TradingWorld,
    order_id: Annotated[
        str, Field(description="Id of an open order, e.g. 'ORD-00012' (from list_orders with status='open')")
    ],
    pin: Pin,
) -> Order:
    """Cancel an open limit order and release the cash or shares it reserved. Filled orders cannot be cancelled."""
    o = w.orders.get(order_id)
    if o is None:
        raise not_found("order", order_id, "list_orders shows a portfolio's orders")
    pf = w.portfolios[o.portfolio_id]
    _check_pin(w, pf.trader_id, pin)
    if o.status != "open":
        raise StateConflict(
            f"order {order_id} is already {o.status} and cannot be cancelled; only open orders can be cancelled"
        )
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
    return CashMovement(
        portfolio_id=portfolio_id, amount=_r2(amount), cash=pf.cash, available_cash=_r2(pf.cash - pf.reserved_cash)
    )


@TOOLS.tool()
def withdraw_cash(w: TradingWorld, portfolio_id: PortfolioId, amount: Amount, pin: Pin) -> CashMovement:
    """Withdraw available cash from a portfolio; cash reserved by open buy orders cannot be withdrawn."""
    pf = _portfolio(w, portfolio_id)
    _check_pin(w, pf.trader_id, pin)
    available = _r2(pf.cash - pf.reserved_cash)
    if amount > available:
        raise StateConflict(
            f"insufficient cash: portfolio {portfolio_id} has {available} USD available to withdraw, requested {_r2(amount)}"
        )
    pf.cash = _r2(pf.cash - amount)
    return CashMovement(
        portfolio_id=portfolio_id, amount=_r2(amount), cash=pf.cash, available_cash=_r2(pf.cash - pf.reserved_cash)
    )
