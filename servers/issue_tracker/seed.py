"""issue_tracker: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import datetime as dt
import random

from servers.issue_tracker.world import (
    ACTIONS,
    CAPABILITIES,
    COMMENTS,
    DAY0,
    DEPS,
    LABELS,
    PROJECTS,
    SCREENS,
    SERVICES,
    THINGS,
    Comment,
    Issue,
    Link,
    Project,
    Sprint,
    TrackerWorld,
    User,
)
from servers.names import FIRST_NAMES, LAST_NAMES


def _d(day: str, delta: int) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=delta)).isoformat()


def _title(rng: random.Random, kind: str) -> str:
    if kind == "bug":
        return rng.choice(
            [
                f"Crash when {rng.choice(ACTIONS)} on the {rng.choice(SCREENS)}",
                f"Wrong {rng.choice(THINGS)} shown on the {rng.choice(SCREENS)}",
                f"{rng.choice(SERVICES).capitalize()} times out under load",
            ]
        )
    if kind == "task":
        return rng.choice(
            [
                f"Upgrade {rng.choice(DEPS)} to the latest version",
                f"Add monitoring for the {rng.choice(SERVICES)}",
                f"Write runbook for the {rng.choice(SERVICES)}",
                f"Clean up feature flags on the {rng.choice(SCREENS)}",
            ]
        )
    return f"As a customer I can {rng.choice(CAPABILITIES)}"


def seed_world(rng: random.Random, seed: int) -> TrackerWorld:
    w = TrackerWorld(seed=seed)
    roles = ["developer"] * 6 + ["designer"] * 2 + ["qa"] * 3 + ["product_manager"] * 2 + ["devops"] * 3
    used: set[str] = set()
    users: list[str] = []
    for role in roles:
        uid = w.new_id("USR")
        while True:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if f"{first} {last}" not in used:
                break
        used.add(f"{first} {last}")
        w.users[uid] = User(
            user_id=uid,
            name=f"{first} {last}",
            email=f"{first.lower()}.{last.lower()}@devco.example",
            username=f"{first[0].lower()}{last.lower()}",
            role=role,  # type: ignore[arg-type]
        )
        users.append(uid)

    for key, name, desc in PROJECTS:
        pid = w.new_id("PRJ")
        members = sorted(rng.sample(users, k=rng.randint(4, 7)))
        archived = key == "LEG"
        w.projects[pid] = Project(
            project_id=pid,
            key=key,
            name=name,
            description=desc,
            lead_id=members[0],
            member_ids=members,
            status="archived" if archived else "active",
        )
        # sprints: two closed, one active (except DATA, which is between sprints), one planned
        n0 = rng.randint(8, 30)
        sprints: list[tuple[str, str]] = []
        layout = [("closed", -28), ("closed", -14), ("active", 0), ("planned", 14)]
        if key == "DATA":
            layout = [("closed", -28), ("closed", -14), ("planned", 7), ("planned", 21)]
        if archived:
            layout = [("closed", -70), ("closed", -56)]
        for i, (state, offset) in enumerate(layout):
            sid = w.new_id("SPR")
            start = _d("2026-02-23", offset)
            w.sprints[sid] = Sprint(
                sprint_id=sid,
                project_id=pid,
                name=f"{key} Sprint {n0 + i}",
                state=state,  # type: ignore[arg-type]
                start_date=start,
                end_date=_d(start, 13),
                goal=rng.choice(
                    [
                        None,
                        "Stabilise checkout",
                        "Ship the beta",
                        "Pay down tech debt",
                        "Performance pass",
                        "Close customer escalations",
                    ]
                ),
            )
            sprints.append((sid, state))

        for _ in range(rng.randint(9, 13) if not archived else 5):
            iid = w.new_id(key)
            kind = rng.choice(["bug", "bug", "task", "story"])
            placement = rng.random()
            closed_sprints = [s for s, st in sprints if st == "closed"]
            active_sprints = [s for s, st in sprints if st == "active"]
            if archived or (placement < 0.3 and closed_sprints):
                sprint_id, status = rng.choice(closed_sprints), "done"
            elif placement < 0.75 and active_sprints:
                sprint_id, status = (
                    active_sprints[0],
                    rng.choice(["open", "in_progress", "in_progress", "in_review", "done"]),
                )
            elif placement < 0.85:
                sprint_id, status = next((s for s, st in sprints if st == "planned"), None), "open"
            else:
                sprint_id, status = None, "open"
            created = _d(DAY0, -rng.randint(3, 90))
            assignee = None if (status == "open" and rng.random() < 0.5) else rng.choice(members)
            w.issues[iid] = Issue(
                issue_id=iid,
                project_id=pid,
                title=_title(rng, kind),
                issue_type=kind,  # type: ignore[arg-type]
                description=rng.choice(
                    [
                        None,
                        "See the linked customer ticket.",
                        "Steps to reproduce are in the first comment.",
                        "Acceptance criteria agreed with product.",
                    ]
                ),
                priority=rng.choice(["low", "medium", "medium", "high", "critical"]),  # type: ignore[arg-type]
                labels=sorted(rng.sample(LABELS, k=rng.randint(0, 3))),
                status=status,  # type: ignore[arg-type]
                assignee_id=assignee,
                reporter_id=rng.choice(members),
                sprint_id=sprint_id,
                story_points=rng.choice([None, 1, 2, 3, 5, 8]) if kind != "bug" else None,
                created_on=created,
                updated_on=_d(created, rng.randint(0, 2)),
                resolved_on=_d(created, rng.randint(1, 3)) if status == "done" else None,
            )
    _seed_links_and_comments(w, rng)
    return w


def _seed_links_and_comments(w: TrackerWorld, rng: random.Random) -> None:
    """Blocks and relates links between live issues, then comments on up to 30 issues."""
    # links: a few open issues block issues that are already in review (closing those fails), plus relates links
    live = [i for i in w.issues.values() if w.projects[i.project_id].status == "active"]
    missing_in_review = max(0, 4 - sum(1 for i in live if i.status == "in_review"))
    for i in [i for i in live if i.status == "in_progress"][:missing_in_review]:
        i.status = "in_review"  # enough issues waiting in review for the blocked-close case
    in_review = [i for i in live if i.status == "in_review"]
    blockers = [i for i in live if i.status in ("open", "in_progress")]
    for target in in_review[:4]:
        same = [b for b in blockers if b.project_id == target.project_id] or blockers
        src = rng.choice(same)
        lid = w.new_id("LNK")
        w.links[lid] = Link(link_id=lid, issue_id=src.issue_id, link_type="blocks", target_issue_id=target.issue_id)
    done = [i for i in live if i.status == "done"]
    for _ in range(3):
        src, target = rng.choice(done), rng.choice([i for i in live if i.status != "done"])
        lid = w.new_id("LNK")
        w.links[lid] = Link(link_id=lid, issue_id=src.issue_id, link_type="blocks", target_issue_id=target.issue_id)
    for _ in range(6):
        a, b = rng.sample(live, k=2)
        lid = w.new_id("LNK")
        w.links[lid] = Link(link_id=lid, issue_id=a.issue_id, link_type="relates", target_issue_id=b.issue_id)

    for issue in rng.sample(list(w.issues.values()), k=min(30, len(w.issues))):
        members = w.projects[issue.project_id].member_ids
        for _ in range(rng.randint(1, 3)):
            cid = w.new_id("CMT")
            w.comments[cid] = Comment(
                comment_id=cid,
                issue_id=issue.issue_id,
                user_id=rng.choice(members),
                body=rng.choice(COMMENTS),
                created_on=_d(issue.created_on, rng.randint(0, 3)),
            )
