"""How people say a value by what its field means: "due March 9th", "titled "Sync"", "with a rating of at least 4",
"just the first 5", "checking in March 22nd", "in Seattle", never the one generic "setting the X to Y" for them all.

:func:`field_forms` reads only a parameter's name and whether the call reads or writes, so it serves any MCP server's
tools, not ours alone; a field it does not know gets None and the request writer's generic forms. Every form names the
value as the call passes it (``{v}``: the value as said; ``{w}``: the field's words), so a request stays grounded."""

from __future__ import annotations

from pipeline.language.lexicon import article, words

# limits on how many results a read returns
COUNT_LIMITS = {"limit", "max_results", "top_k", "page_size", "per_page", "max_items"}
# money and other amounts a write sets
AMOUNT_HEADS = ("amount", "price", "limit", "goal", "deposit", "fee", "budget", "cost", "total")
STARTS = {"start", "start_date", "start_time", "date_from", "start_month", "day_start", "starts_on", "starts_at"}
ENDS = {"end", "end_date", "end_time", "date_to", "end_month", "day_end", "ends_at"}
# levels a device or a setting is put at
LEVELS = ("brightness", "level", "temperature", "setpoint", "fan_speed", "volume", "position", "charge_limit")
PLACES = {"city", "location", "region", "country", "neighborhood", "neighbourhood"}
NOTES = {"note", "notes", "memo", "comment", "remark"}
BODIES = {"body", "text", "content", "message", "response"}
REASONS = {"reason", "lost_reason", "cancel_reason", "cancellation_reason"}
# a lower or upper bound a read filters by ({r}: the bounded field's words)
BOUNDS = {
    "min": ["with {r} of at least {v}", "{r} of {v} or more", "a minimum {r} of {v}", "{r} no lower than {v}"],
    "max": ["with {r} up to {v}", "{r} of {v} or less", "a maximum {r} of {v}", "{r} no higher than {v}"],
}


def field_forms(p: str, v: object, read: bool, text: bool) -> list[str] | None:
    """The ways to say parameter ``p`` set to ``v`` (``{w}``/``{v}`` templates) by what the field means; ``read``:
    the call reads (a filter), ``text``: the value is free text said in quotes. None where the name says nothing
    the generic forms do not."""
    w = words(p)
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if p == "query" and isinstance(v, str):  # "search the emails for "Code"" (quoted where it is free text)
        q = '"{v}"' if text else "{v}"
        return [f"for {q}", f"matching {q}", f"with the query {q}"]
    if text:
        return _text_forms(p, w)
    if p.startswith(("min_", "max_")) and number:  # min_rating: "with a rating of at least 4"
        return [f.replace("{r}", words(p[4:])) for f in BOUNDS[p[:3]]]
    if p in COUNT_LIMITS and number and read:
        return ["just the first {v}", "up to {v} of them", "no more than {v}", "{v} at most", "capped at {v}"]
    if p in ("quantity", "qty") and number and not read:
        if v == 1:  # never "1 units" or "and 1 of them"
            return ["quantity {v}", "just {v}", "{v} unit", "a quantity of {v}"]
        return ["quantity {v}", "a quantity of {v}", "{v} of them", "{v} units"]
    if number and not read and p.rsplit("_", 1)[-1] in AMOUNT_HEADS:
        if p == "amount":  # the amount of a payment, a bill, a transfer: "for 74.06", "totalling 74.06"
            return ["for {v}", "amount {v}", "totalling {v}", "an amount of {v}", "{w}: {v}"]
        return ["{w} {v}", "{w} of {v}", f"with {article(w)} {{w}} of {{v}}", "{v} as the {w}"]
    if number and not read and p.startswith(LEVELS):
        return ["to {v}", "at {v}", "{w} at {v}", "{w} {v}"]
    if p in ("due_date", "due", "due_on", "deadline"):
        return ["due {v}", "due on {v}", "with a due date of {v}", "due by {v}"]
    if p in STARTS:
        return ["starting {v}", "from {v}", "beginning {v}", "{w} {v}"]
    if p in ENDS:
        return ["ending {v}", "to {v}", "{w} {v}"]
    if p == "check_in":
        return ["checking in {v}", "arriving {v}", "check-in {v}"]
    if p == "check_out":
        return ["checking out {v}", "leaving {v}", "check-out {v}"]
    if p in ("path", "file_path", "filepath") and isinstance(v, str) and v.startswith("/"):  # "the file at /home/x"
        return ["at {v}", "{w} {v}", "{v}", "{v}"]
    if p in PLACES and isinstance(v, str):
        return ["in {v}", "in {v}", "{w} {v}"]
    if p == "destination":
        return ["to {v}", "going to {v}", "{w} {v}"]
    if p == "origin":
        return ["from {v}", "leaving from {v}", "{w} {v}"]
    if p in ("priority", "severity") and isinstance(v, str):
        return ["{v} {w}", "at {v} {w}", "with {v} {w}", "{w} {v}"]
    if p == "category" and isinstance(v, str):
        return ["in the {v} category", "under {v}", "{w} {v}"]
    if p == "symbol" and isinstance(v, str):
        return ["for {v}", "symbol {v}", "ticker {v}", "on {v}"]
    if p in ("status", "state") and isinstance(v, str) and read:
        return ["that are {v}", "with status {v}", "only the {v} ones", "{v} ones only"]
    return None


def _text_forms(p: str, w: str) -> list[str] | None:
    """Quoted text by what the field is: a title is "titled", a note "saying", a reason "citing"."""
    if p in ("title", "name_title", "headline"):
        return ['titled "{v}"', 'title "{v}"', 'called "{v}"', 'under the title "{v}"']
    if p in ("subject", "topic"):
        return ['{w} "{v}"', 'with the {w} line "{v}"' if p == "subject" else 'on "{v}"', 'about "{v}"']
    if p in NOTES:
        return ['with a {w} saying "{v}"', 'noting "{v}"', '{w}: "{v}"', '"{v}" as the {w}', 'with the {w} "{v}"']
    if p == "description":
        return ['described as "{v}"', 'description "{v}"', 'with the description "{v}"', '"{v}" as the description']
    if p in BODIES:
        return ['saying "{v}"', 'that says "{v}"', 'reading "{v}"', 'with the {w} "{v}"']
    if p in REASONS:
        return ['with the reason "{v}"', 'reason "{v}"', 'giving "{v}" as the reason', 'citing "{v}"']
    return None


# fields that say which period a call is about: "the monthly report for that month", never "with that month"
PERIODS = {"month", "year", "week", "day", "date", "quarter", "period"}


def ref_preposition(p: str) -> str:
    """The preposition before a value a result showed, pointed at rather than said ("that month", "the same
    path"): "for that month", "at the same path", "in that city", "with the same SKU" (what the field means)."""
    if p in PERIODS:
        return "for"
    if p in ("path", "file_path", "filepath", "directory"):
        return "at"
    if p in PLACES or p == "category":
        return "in"
    return "with"
