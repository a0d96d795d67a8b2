"""team_chat: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from servers.names import FIRST_NAMES, LAST_NAMES
from servers.team_chat.world import (
    ARCHIVED,
    CHANNELS,
    DAYS,
    OPENERS,
    REPLIES,
    THINGS,
    TITLES,
    Channel,
    ChatWorld,
    Member,
    Message,
    _ts,
)


def seed_world(rng: random.Random, seed: int) -> ChatWorld:
    w = ChatWorld(seed=seed)
    seen: set[str] = set()
    tzs = [
        "Europe/Lisbon",
        "Europe/London",
        "America/New_York",
        "America/Denver",
        "Europe/Paris",
        "America/Los_Angeles",
    ]
    for _ in range(28):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        while f"{first} {last}" in seen:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        seen.add(f"{first} {last}")
        uid = w.new_id("U")
        w.members[uid] = Member(
            user_id=uid,
            name=f"{first} {last}",
            handle=f"{first.lower()}.{last.lower()}",
            title=rng.choice(TITLES),
            email=f"{first.lower()}.{last.lower()}@acme.example",
            timezone=rng.choice(tzs),
        )
    uids = list(w.members)
    for name, topic, private in CHANNELS:
        cid = w.new_id("C")
        if name == "general":
            members = list(uids)
        else:
            members = rng.sample(uids, k=rng.randint(3, 7) if private else rng.randint(6, 18))
        w.channels[cid] = Channel(
            channel_id=cid,
            name=name,
            topic=topic,
            is_private=private,
            is_archived=name in ARCHIVED,
            created_by=members[0],
            created_on=f"20{rng.randint(21, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            member_ids=sorted(members),
        )
    start = datetime(2026, 2, 2, 8, 0, 0)
    for c in w.channels.values():
        n = rng.randint(2, 4) if c.is_archived else rng.randint(4, 9)
        base = start - timedelta(days=200) if c.is_archived else start
        stamps = sorted(base + timedelta(seconds=rng.randint(0, 27 * 86400)) for _ in range(n))
        for at in stamps:
            mid = w.new_id("M", 5)
            text = rng.choice(OPENERS).format(thing=rng.choice(THINGS), day=rng.choice(DAYS))
            w.messages[mid] = Message(
                message_id=mid, channel_id=c.channel_id, user_id=rng.choice(c.member_ids), text=text, posted_at=_ts(at)
            )
            if rng.random() < 0.45:
                for k in range(rng.randint(1, 4)):
                    rid = w.new_id("M", 5)
                    w.messages[rid] = Message(
                        message_id=rid,
                        channel_id=c.channel_id,
                        user_id=rng.choice(c.member_ids),
                        text=rng.choice(REPLIES),
                        posted_at=_ts(at + timedelta(minutes=5 * (k + 1) + rng.randint(0, 4))),
                        parent_message_id=mid,
                    )
    return w
