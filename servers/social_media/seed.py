"""social_media: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from servers.names import CITIES, FIRST_NAMES, LAST_NAMES
from servers.social_media.world import (
    BIOS,
    COMMENTS,
    TEMPLATES,
    TOPICS,
    Comment,
    Follow,
    Like,
    Post,
    SocialWorld,
    User,
    _ts,
)


def seed_world(rng: random.Random, seed: int) -> SocialWorld:
    w = SocialWorld(seed=seed)
    handles: set[str] = set()
    for _ in range(30):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        handle = rng.choice(
            [f"{first}_{last}", f"{first}{last[0]}", f"{first}.{last}", f"{first}{rng.randint(7, 99)}"]
        ).lower()
        while handle in handles:
            handle = f"{first.lower()}{rng.randint(100, 999)}"
        handles.add(handle)
        uid = w.new_id("USR")
        w.users[uid] = User(
            user_id=uid,
            handle=handle,
            display_name=f"{first} {last}",
            bio=rng.choice(BIOS),
            city=rng.choice(CITIES),
            is_private=rng.random() < 0.2,
            verified=rng.random() < 0.1,
            joined_on=f"20{rng.randint(14, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        )
    ids = list(w.users)
    for uid in ids:
        for tid in rng.sample([x for x in ids if x != uid], k=rng.randint(2, 9)):
            status = "pending" if w.users[tid].is_private and rng.random() < 0.35 else "active"
            w.follows[f"{uid}>{tid}"] = Follow(
                user_id=uid,
                target_user_id=tid,
                status=status,  # type: ignore[arg-type]
                since=f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            )
    start = datetime(2026, 2, 1, 7, 0, 0)
    stamps = sorted(start + timedelta(seconds=rng.randint(0, 29 * 86400 - 3600)) for _ in range(90))
    for at in stamps:
        author = rng.choice(ids)
        text = rng.choice(TEMPLATES).format(city=rng.choice(CITIES), topic=rng.choice(TOPICS), n=rng.randint(2, 12))
        if rng.random() < 0.3:
            text += " #" + rng.choice(TOPICS).replace(" ", "")
        pid = w.new_id("PST")
        w.posts[pid] = Post(
            post_id=pid,
            author_id=author,
            content=text,
            created_at=_ts(at),
            status="deleted" if rng.random() < 0.08 else "published",
            comments_enabled=rng.random() > 0.08,
        )
        audience = [f.user_id for f in w.follows.values() if f.target_user_id == author and f.status == "active"]
        for u in rng.sample(audience, k=min(len(audience), rng.randint(0, 6))):
            w.likes[f"{u}:{pid}"] = Like(
                user_id=u, post_id=pid, liked_at=_ts(at + timedelta(minutes=rng.randint(1, 600)))
            )
        if w.posts[pid].comments_enabled:
            for u in rng.sample(audience, k=min(len(audience), rng.randint(0, 3))):
                cid = w.new_id("CMT")
                w.comments[cid] = Comment(
                    comment_id=cid,
                    post_id=pid,
                    user_id=u,
                    text=rng.choice(COMMENTS),
                    created_at=_ts(at + timedelta(minutes=rng.randint(2, 900))),
                )
    return w
