"""issue_tracker: projects, members, issues through a workflow, sprints, comments and issue links."""

from __future__ import annotations

import datetime as dt
import random
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

IssueType = Literal["bug", "task", "story"]
Priority = Literal["low", "medium", "high", "critical"]
Status = Literal["open", "in_progress", "in_review", "done"]
SprintState = Literal["planned", "active", "closed"]
LinkType = Literal["blocks", "relates"]
Role = Literal["developer", "designer", "qa", "product_manager", "devops"]
DAY0 = "2026-03-02"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
LABEL_PATTERN = r"^[a-z][a-z0-9-]{1,29}$"

WORKFLOW: dict[str, tuple[str, ...]] = {
    "open": ("in_progress",),
    "in_progress": ("open", "in_review"),
    "in_review": ("in_progress", "done"),
    "done": ("open",),
}

PROJECTS = [
    ("WEB", "Web Storefront", "Customer-facing web shop"),
    ("MOB", "Mobile App", "iOS and Android apps"),
    ("API", "Public API", "REST and webhook platform"),
    ("DATA", "Data Platform", "Pipelines, warehouse and reporting"),
    ("OPS", "Infrastructure", "CI, deployment and observability"),
    ("LEG", "Legacy Billing", "Old billing system, read-only since the migration"),
]
LABELS = ["frontend", "backend", "ux", "performance", "security", "tech-debt", "regression", "customer", "infra", "docs", "accessibility"]
SCREENS = ["checkout page", "login screen", "search results", "order history", "settings panel", "cart", "dashboard", "invoice view"]
ACTIONS = ["saving changes", "applying a coupon", "switching language", "uploading an avatar", "paging results", "logging out"]
THINGS = ["total price", "timestamp", "currency symbol", "avatar", "page title", "item count"]
DEPS = ["React", "Django", "PostgreSQL", "Kafka client", "OpenSSL", "Terraform provider", "Node runtime"]
SERVICES = ["payments service", "search indexer", "auth gateway", "email worker", "nightly ETL", "image resizer"]
CAPABILITIES = ["save items for later", "reset my password by SMS", "export my orders as CSV", "filter by price range",
                "see delivery estimates", "pay with a gift card", "enable dark mode", "share a wishlist"]
COMMENTS = ["Reproduced on staging.", "I think this is caused by the last deploy.", "Can we get a screenshot?",
            "Picking this up today.", "PR is up for review.", "Blocked until the API change lands.",
            "Added a unit test for the edge case.", "Customer reported this again this morning.",
            "Moving to next sprint, not enough capacity.", "Verified the fix on production."]


class User(BaseModel):
    user_id: str
    name: str
    email: str
    username: str
    role: Role


class Project(BaseModel):
    project_id: str
    key: str
    name: str
    description: str
    lead_id: str = Field(description="user_id of the project lead")
    member_ids: list[str] = Field(description="user_ids of the project's members (only they can be assigned)")
    status: Literal["active", "archived"] = "active"


class Sprint(BaseModel):
    sprint_id: str
    project_id: str
    name: str
    state: SprintState
    start_date: str
    end_date: str
    goal: str | None = None


class Issue(BaseModel):
    issue_id: str
    project_id: str
    title: str
    description: str | None = None
    issue_type: IssueType
    priority: Priority
    labels: list[str] = []
    status: Status
    assignee_id: str | None = Field(None, description="user_id of the assignee, or null when unassigned")
    reporter_id: str
    sprint_id: str | None = Field(None, description="Sprint the issue is planned in, or null for the backlog")
    story_points: int | None = None
    created_on: str
    updated_on: str
    resolved_on: str | None = None


class Comment(BaseModel):
    comment_id: str
    issue_id: str
    user_id: str = Field(description="user_id of the author")
    body: str
    created_on: str


class Link(BaseModel):
    link_id: str
    issue_id: str = Field(description="The source issue: it 'blocks' or 'relates' to target_issue_id")
    link_type: LinkType
    target_issue_id: str


class TrackerWorld(World):
    users: dict[str, User] = {}
    projects: dict[str, Project] = {}
    sprints: dict[str, Sprint] = {}
    issues: dict[str, Issue] = {}
    comments: dict[str, Comment] = {}
    links: dict[str, Link] = {}


def _d(day: str, delta: int) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=delta)).isoformat()


def _title(rng: random.Random, kind: str) -> str:
    if kind == "bug":
        return rng.choice([
            f"Crash when {rng.choice(ACTIONS)} on the {rng.choice(SCREENS)}",
            f"Wrong {rng.choice(THINGS)} shown on the {rng.choice(SCREENS)}",
            f"{rng.choice(SERVICES).capitalize()} times out under load",
        ])
    if kind == "task":
        return rng.choice([f"Upgrade {rng.choice(DEPS)} to the latest version", f"Add monitoring for the {rng.choice(SERVICES)}",
                           f"Write runbook for the {rng.choice(SERVICES)}", f"Clean up feature flags on the {rng.choice(SCREENS)}"])
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
        w.users[uid] = User(user_id=uid, name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}@devco.example",
                            username=f"{first[0].lower()}{last.lower()}", role=role)  # type: ignore[arg-type]
        users.append(uid)

    for key, name, desc in PROJECTS:
        pid = w.new_id("PRJ")
        members = sorted(rng.sample(users, k=rng.randint(4, 7)))
        archived = key == "LEG"
        w.projects[pid] = Project(project_id=pid, key=key, name=name, description=desc, lead_id=members[0],
                                  member_ids=members, status="archived" if archived else "active")
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
            w.sprints[sid] = Sprint(sprint_id=sid, project_id=pid, name=f"{key} Sprint {n0 + i}", state=state,  # type: ignore[arg-type]
                                    start_date=start, end_date=_d(start, 13),
                                    goal=rng.choice([None, "Stabilise checkout", "Ship the beta", "Pay down tech debt",
                                                     "Performance pass", "Close customer escalations"]))
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
                sprint_id, status = active_sprints[0], rng.choice(["open", "in_progress", "in_progress", "in_review", "done"])
            elif placement < 0.85:
                sprint_id, status = next((s for s, st in sprints if st == "planned"), None), "open"
            else:
                sprint_id, status = None, "open"
            created = _d(DAY0, -rng.randint(3, 90))
            assignee = None if (status == "open" and rng.random() < 0.5) else rng.choice(members)
            w.issues[iid] = Issue(
                issue_id=iid, project_id=pid, title=_title(rng, kind), issue_type=kind,  # type: ignore[arg-type]
                description=rng.choice([None, "See the linked customer ticket.", "Steps to reproduce are in the first comment.",
                                        "Acceptance criteria agreed with product."]),
                priority=rng.choice(["low", "medium", "medium", "high", "critical"]),  # type: ignore[arg-type]
                labels=sorted(rng.sample(LABELS, k=rng.randint(0, 3))), status=status,  # type: ignore[arg-type]
                assignee_id=assignee, reporter_id=rng.choice(members), sprint_id=sprint_id,
                story_points=rng.choice([None, 1, 2, 3, 5, 8]) if kind != "bug" else None,
                created_on=created, updated_on=_d(created, rng.randint(0, 2)),
                resolved_on=_d(created, rng.randint(1, 3)) if status == "done" else None,
            )

    # links: a few open issues block issues that are already in review (closing those fails), plus relates links
    live = [i for i in w.issues.values() if w.projects[i.project_id].status == "active"]
    for i in [i for i in live if i.status == "in_progress"][: max(0, 4 - sum(1 for i in live if i.status == "in_review"))]:
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
            w.comments[cid] = Comment(comment_id=cid, issue_id=issue.issue_id, user_id=rng.choice(members),
                                      body=rng.choice(COMMENTS), created_on=_d(issue.created_on, rng.randint(0, 3)))
    return w


def _project(w: TrackerWorld, project_id: str) -> Project:
    p = w.projects.get(project_id)
    if p is None:
        raise not_found("project", project_id, "list_projects shows valid project ids")
    return p


def _active_project(p: Project) -> None:
    if p.status == "archived":
        raise StateConflict(f"project {p.project_id} ({p.key}) is archived and read-only")


def _issue(w: TrackerWorld, issue_id: str) -> Issue:
    i = w.issues.get(issue_id)
    if i is None:
        raise not_found("issue", issue_id, "list_issues shows valid issue ids, e.g. 'WEB-0003'")
    return i


def _user(w: TrackerWorld, user_id: str) -> User:
    u = w.users.get(user_id)
    if u is None:
        raise not_found("user", user_id, "list_users shows valid user ids")
    return u


def _sprint(w: TrackerWorld, sprint_id: str) -> Sprint:
    s = w.sprints.get(sprint_id)
    if s is None:
        raise not_found("sprint", sprint_id, "list_sprints shows valid sprint ids")
    return s


def _member(w: TrackerWorld, p: Project, user_id: str, what: str) -> User:
    u = _user(w, user_id)
    if user_id not in p.member_ids:
        raise PermissionDenied(f"user {user_id} ({u.name}) is not a member of project {p.project_id} ({p.key}) and cannot {what}; "
                               f"members: {', '.join(p.member_ids)}; add_project_member adds them")
    return u


def _open_blockers(w: TrackerWorld, issue_id: str) -> list[str]:
    return [l.issue_id for l in w.links.values()
            if l.link_type == "blocks" and l.target_issue_id == issue_id
            and l.issue_id in w.issues and w.issues[l.issue_id].status != "done"]


def _real_date(value: str, arg: str) -> str:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidArgument(f"{arg} {value!r} is not a real calendar date (expected YYYY-MM-DD)") from None
    return value


ProjectId = Annotated[str, Field(description="Project id, e.g. 'PRJ-0001' (from list_projects)")]
IssueId = Annotated[str, Field(description="Issue id, e.g. 'WEB-0003' (from list_issues)")]
SprintId = Annotated[str, Field(description="Sprint id, e.g. 'SPR-0003' (from list_sprints)")]
UserId = Annotated[str, Field(description="User id, e.g. 'USR-0004' (from list_users)")]
Labels = Annotated[list[Annotated[str, Field(pattern=LABEL_PATTERN)]],
                   Field(description="Labels: lowercase words with dashes, e.g. ['backend', 'tech-debt']", max_length=8)]


class ProjectList(BaseModel):
    projects: list[Project]
    total: int


class ProjectDetail(BaseModel):
    project_id: str
    key: str
    name: str
    description: str
    status: str
    lead_id: str
    members: list[User]
    sprints: list[Sprint]
    issue_counts: dict[str, int] = Field(description="Number of issues per workflow status")


class UserList(BaseModel):
    users: list[User]
    total: int


class Membership(BaseModel):
    project_id: str
    user_id: str
    member_ids: list[str]


class IssueList(BaseModel):
    issues: list[Issue]
    total: int


class IssueDetail(BaseModel):
    issue: Issue
    issue_id: str
    allowed_transitions: list[Status] = Field(description="Statuses transition_issue accepts from the current status")
    blocked_by: list[str] = Field(description="Ids of issues that block this one and are not done yet")
    links: list[Link]
    comment_count: int


class Transition(BaseModel):
    issue_id: str
    previous_status: Status
    status: Status
    allowed_transitions: list[Status]
    resolved_on: str | None = None


class CommentList(BaseModel):
    comments: list[Comment]
    total: int


class Unlinked(BaseModel):
    link_id: str
    removed: bool


class SprintList(BaseModel):
    sprints: list[Sprint]
    total: int


class SprintClosed(BaseModel):
    sprint_id: str
    state: SprintState
    completed_issue_ids: list[str]
    moved_issue_ids: list[str] = Field(description="Unfinished issues moved out of the sprint")
    target_sprint_id: str | None = Field(None, description="Where unfinished issues went; null means the backlog")


TOOLS: ToolSet[TrackerWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def list_projects(
    w: TrackerWorld,
    status: Annotated[Literal["active", "archived"] | None, Field(description="Only projects with this status")] = None,
    member_id: Annotated[str | None, Field(description="Only projects this user id is a member of")] = None,
) -> ProjectList:
    """List projects with their key, lead and member ids."""
    out = [p for p in w.projects.values()
           if (status is None or p.status == status) and (member_id is None or member_id in p.member_ids)]
    return ProjectList(projects=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_project(w: TrackerWorld, project_id: ProjectId) -> ProjectDetail:
    """Get a project with its members, its sprints and the number of issues in each workflow status."""
    p = _project(w, project_id)
    counts = {s: 0 for s in WORKFLOW}
    for i in w.issues.values():
        if i.project_id == project_id:
            counts[i.status] += 1
    return ProjectDetail(project_id=p.project_id, key=p.key, name=p.name, description=p.description, status=p.status,
                         lead_id=p.lead_id, members=[w.users[u] for u in p.member_ids],
                         sprints=[s for s in w.sprints.values() if s.project_id == project_id], issue_counts=counts)


@TOOLS.tool(read_only=True)
def list_users(
    w: TrackerWorld,
    project_id: Annotated[str | None, Field(description="Only members of this project id")] = None,
    role: Annotated[Role | None, Field(description="Only users with this role")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the name or username")] = None,
) -> UserList:
    """List users of the tracker, optionally only the members of one project."""
    members = set(_project(w, project_id).member_ids) if project_id is not None else None
    out = [u for u in w.users.values()
           if (members is None or u.user_id in members) and (role is None or u.role == role)
           and (name_contains is None or name_contains.lower() in f"{u.name} {u.username}".lower())]
    return UserList(users=out, total=len(out))


@TOOLS.tool(idempotent=True)
def add_project_member(w: TrackerWorld, project_id: ProjectId, user_id: UserId) -> Membership:
    """Add a user to a project's members so issues can be assigned to them."""
    p = _project(w, project_id)
    _active_project(p)
    u = _user(w, user_id)
    if user_id in p.member_ids:
        raise StateConflict(f"user {user_id} ({u.name}) is already a member of project {project_id}")
    p.member_ids = sorted([*p.member_ids, user_id])
    return Membership(project_id=project_id, user_id=user_id, member_ids=p.member_ids)


@TOOLS.tool(read_only=True)
def list_issues(
    w: TrackerWorld,
    project_id: Annotated[str | None, Field(description="Only issues of this project id")] = None,
    status: Annotated[Status | None, Field(description="Only issues in this workflow status")] = None,
    issue_type: Annotated[IssueType | None, Field(description="Only issues of this type")] = None,
    priority: Annotated[Priority | None, Field(description="Only issues with this priority")] = None,
    assignee_id: Annotated[str | None, Field(description="Only issues assigned to this user id")] = None,
    sprint_id: Annotated[str | None, Field(description="Only issues in this sprint id")] = None,
    backlog_only: Annotated[bool, Field(description="Only issues in no sprint")] = False,
    label: Annotated[str | None, Field(description="Only issues carrying this label")] = None,
    text: Annotated[str | None, Field(description="Case-insensitive text searched in title and description")] = None,
    limit: Annotated[int, Field(description="At most this many issues", ge=1, le=200)] = 50,
) -> IssueList:
    """Search issues by project, status, type, priority, assignee, sprint, label or text."""
    if project_id is not None:
        _project(w, project_id)
    t = text.lower() if text else None
    out = [i for i in w.issues.values()
           if (project_id is None or i.project_id == project_id) and (status is None or i.status == status)
           and (issue_type is None or i.issue_type == issue_type) and (priority is None or i.priority == priority)
           and (assignee_id is None or i.assignee_id == assignee_id) and (sprint_id is None or i.sprint_id == sprint_id)
           and (not backlog_only or i.sprint_id is None) and (label is None or label in i.labels)
           and (t is None or t in i.title.lower() or t in (i.description or "").lower())]
    return IssueList(issues=out[:limit], total=len(out))


@TOOLS.tool(read_only=True)
def get_issue(w: TrackerWorld, issue_id: IssueId) -> IssueDetail:
    """Get an issue with its allowed next statuses, the open issues blocking it, its links and comment count."""
    i = _issue(w, issue_id)
    links = [l for l in w.links.values() if issue_id in (l.issue_id, l.target_issue_id)]
    n = sum(1 for c in w.comments.values() if c.issue_id == issue_id)
    return IssueDetail(issue=i, issue_id=issue_id, allowed_transitions=list(WORKFLOW[i.status]),  # type: ignore[arg-type]
                       blocked_by=_open_blockers(w, issue_id), links=links, comment_count=n)


@TOOLS.tool()
def create_issue(
    w: TrackerWorld,
    project_id: ProjectId,
    title: Annotated[str, Field(description="Short summary of the issue", min_length=3, max_length=200)],
    issue_type: Annotated[IssueType, Field(description="Kind of issue")],
    reporter_id: Annotated[str, Field(description="user_id of the reporter; must be a project member")],
    priority: Annotated[Priority, Field(description="Priority")] = "medium",
    description: Annotated[str | None, Field(description="Longer description")] = None,
    labels: Labels = [],
    assignee_id: Annotated[str | None, Field(description="user_id to assign; must be a project member")] = None,
    story_points: Annotated[int | None, Field(description="Estimate in story points", ge=0, le=100)] = None,
) -> Issue:
    """Create an issue in an active project. It starts open and in the backlog (no sprint)."""
    p = _project(w, project_id)
    _active_project(p)
    _member(w, p, reporter_id, "report issues in it")
    if assignee_id is not None:
        _member(w, p, assignee_id, "be assigned its issues")
    iid = w.new_id(p.key)
    i = Issue(issue_id=iid, project_id=project_id, title=title, description=description, issue_type=issue_type,
              priority=priority, labels=sorted(set(labels)), status="open", assignee_id=assignee_id,
              reporter_id=reporter_id, story_points=story_points, created_on=DAY0, updated_on=DAY0)
    w.issues[iid] = i
    return i


@TOOLS.tool(idempotent=True)
def update_issue(
    w: TrackerWorld,
    issue_id: IssueId,
    title: Annotated[str | None, Field(description="New title", min_length=3, max_length=200)] = None,
    description: Annotated[str | None, Field(description="New description")] = None,
    priority: Annotated[Priority | None, Field(description="New priority")] = None,
    labels: Annotated[list[Annotated[str, Field(pattern=LABEL_PATTERN)]] | None,
                      Field(description="Replace the labels with this list, e.g. ['backend']", max_length=8)] = None,
    story_points: Annotated[int | None, Field(description="New estimate in story points", ge=0, le=100)] = None,
) -> Issue:
    """Edit an issue's title, description, priority, labels or estimate. Only the given fields change."""
    i = _issue(w, issue_id)
    _active_project(_project(w, i.project_id))
    if all(v is None for v in (title, description, priority, labels, story_points)):
        raise InvalidArgument("nothing to update: give at least one of title, description, priority, labels, story_points")
    if title is not None:
        i.title = title
    if description is not None:
        i.description = description
    if priority is not None:
        i.priority = priority
    if labels is not None:
        i.labels = sorted(set(labels))
    if story_points is not None:
        i.story_points = story_points
    i.updated_on = DAY0
    return i


@TOOLS.tool(idempotent=True)
def assign_issue(
    w: TrackerWorld,
    issue_id: IssueId,
    user_id: Annotated[str | None, Field(description="user_id of the new assignee (a project member); null to unassign")],
) -> Issue:
    """Assign an issue to a member of its project, or unassign it."""
    i = _issue(w, issue_id)
    p = _project(w, i.project_id)
    _active_project(p)
    if user_id is not None:
        _member(w, p, user_id, "be assigned its issues")
    i.assignee_id = user_id
    i.updated_on = DAY0
    return i


@TOOLS.tool(idempotent=True)
def transition_issue(
    w: TrackerWorld,
    issue_id: IssueId,
    status: Annotated[Status, Field(description="Target workflow status; must be allowed from the current one (see get_issue)")],
) -> Transition:
    """Move an issue through the workflow: open -> in_progress -> in_review -> done (in_progress/in_review can step back; done can be reopened).

    An issue cannot be moved to done while an issue that blocks it is not done.
    """
    i = _issue(w, issue_id)
    _active_project(_project(w, i.project_id))
    allowed = WORKFLOW[i.status]
    if status not in allowed:
        raise StateConflict(f"issue {issue_id} cannot move from {i.status} to {status}; allowed next states: {', '.join(allowed)}")
    if status == "done":
        blockers = _open_blockers(w, issue_id)
        if blockers:
            desc = ", ".join(f"{b} ({w.issues[b].status})" for b in blockers)
            raise StateConflict(f"issue {issue_id} is blocked by open issue(s) {desc}; finish them or unlink_issues first")
    prev = i.status
    i.status = status
    i.updated_on = DAY0
    i.resolved_on = DAY0 if status == "done" else None
    return Transition(issue_id=issue_id, previous_status=prev, status=status,  # type: ignore[arg-type]
                      allowed_transitions=list(WORKFLOW[status]), resolved_on=i.resolved_on)  # type: ignore[arg-type]


@TOOLS.tool()
def add_comment(
    w: TrackerWorld,
    issue_id: IssueId,
    user_id: Annotated[str, Field(description="user_id of the author; must be a member of the issue's project")],
    body: Annotated[str, Field(description="Comment text", min_length=1, max_length=5000)],
) -> Comment:
    """Comment on an issue as a member of its project."""
    i = _issue(w, issue_id)
    p = _project(w, i.project_id)
    _active_project(p)
    _member(w, p, user_id, "comment on its issues")
    cid = w.new_id("CMT")
    c = Comment(comment_id=cid, issue_id=issue_id, user_id=user_id, body=body, created_on=DAY0)
    w.comments[cid] = c
    return c


@TOOLS.tool(read_only=True)
def list_comments(w: TrackerWorld, issue_id: IssueId) -> CommentList:
    """List the comments on an issue, oldest first."""
    _issue(w, issue_id)
    out = sorted((c for c in w.comments.values() if c.issue_id == issue_id), key=lambda c: (c.created_on, c.comment_id))
    return CommentList(comments=out, total=len(out))


@TOOLS.tool()
def link_issues(
    w: TrackerWorld,
    issue_id: Annotated[str, Field(description="Source issue id (e.g. the one that blocks)")],
    link_type: Annotated[LinkType, Field(description="'blocks': issue_id must be done before target_issue_id can be done; 'relates': informational")],
    target_issue_id: Annotated[str, Field(description="Target issue id (e.g. the one that is blocked)")],
) -> Link:
    """Link two issues: issue_id blocks target_issue_id, or the two relate to each other."""
    _issue(w, issue_id)
    _issue(w, target_issue_id)
    if issue_id == target_issue_id:
        raise InvalidArgument("issue_id and target_issue_id must differ: an issue cannot be linked to itself")
    for l in w.links.values():
        if l.link_type == link_type and {l.issue_id, l.target_issue_id} == {issue_id, target_issue_id}:
            if link_type == "relates" or l.issue_id == issue_id:
                raise StateConflict(f"{issue_id} and {target_issue_id} are already linked with {link_type} ({l.link_id})")
            raise StateConflict(f"{target_issue_id} already blocks {issue_id} ({l.link_id}); two issues cannot block each other")
    lid = w.new_id("LNK")
    link = Link(link_id=lid, issue_id=issue_id, link_type=link_type, target_issue_id=target_issue_id)
    w.links[lid] = link
    return link


@TOOLS.tool(destructive=True, idempotent=True)
def unlink_issues(w: TrackerWorld, link_id: Annotated[str, Field(description="Link id, e.g. 'LNK-0002' (from get_issue's links)")]) -> Unlinked:
    """Remove a link between two issues."""
    if link_id not in w.links:
        raise not_found("link", link_id, "get_issue lists an issue's links")
    del w.links[link_id]
    return Unlinked(link_id=link_id, removed=True)


@TOOLS.tool(read_only=True)
def list_sprints(
    w: TrackerWorld,
    project_id: Annotated[str | None, Field(description="Only sprints of this project id")] = None,
    state: Annotated[SprintState | None, Field(description="Only sprints in this state")] = None,
) -> SprintList:
    """List sprints (planned, active or closed), optionally for one project."""
    if project_id is not None:
        _project(w, project_id)
    out = [s for s in w.sprints.values()
           if (project_id is None or s.project_id == project_id) and (state is None or s.state == state)]
    return SprintList(sprints=out, total=len(out))


@TOOLS.tool()
def create_sprint(
    w: TrackerWorld,
    project_id: ProjectId,
    name: Annotated[str, Field(description="Sprint name, e.g. 'WEB Sprint 31'", min_length=2, max_length=80)],
    start_date: Annotated[str, Field(description="First day YYYY-MM-DD", pattern=DATE_PATTERN)],
    end_date: Annotated[str, Field(description="Last day YYYY-MM-DD, after start_date", pattern=DATE_PATTERN)],
    goal: Annotated[str | None, Field(description="Sprint goal")] = None,
) -> Sprint:
    """Create a planned sprint in an active project."""
    p = _project(w, project_id)
    _active_project(p)
    _real_date(start_date, "start_date")
    _real_date(end_date, "end_date")
    if end_date <= start_date:
        raise InvalidArgument(f"end_date {end_date} must be after start_date {start_date}")
    if any(s.project_id == project_id and s.name.lower() == name.lower() for s in w.sprints.values()):
        raise StateConflict(f"project {project_id} already has a sprint named {name!r}")
    sid = w.new_id("SPR")
    s = Sprint(sprint_id=sid, project_id=project_id, name=name, state="planned", start_date=start_date, end_date=end_date, goal=goal)
    w.sprints[sid] = s
    return s


@TOOLS.tool(idempotent=True)
def start_sprint(w: TrackerWorld, sprint_id: SprintId) -> Sprint:
    """Start a planned sprint. A project can have only one active sprint at a time."""
    s = _sprint(w, sprint_id)
    _active_project(_project(w, s.project_id))
    if s.state != "planned":
        raise StateConflict(f"sprint {sprint_id} is {s.state}; only planned sprints can be started")
    act = next((x for x in w.sprints.values() if x.project_id == s.project_id and x.state == "active"), None)
    if act is not None:
        raise StateConflict(f"project {s.project_id} already has an active sprint {act.sprint_id} ({act.name}); close it first")
    s.state = "active"
    return s


@TOOLS.tool(destructive=True, idempotent=True)
def close_sprint(
    w: TrackerWorld,
    sprint_id: SprintId,
    target_sprint_id: Annotated[str | None, Field(description="Planned or active sprint id of the same project to move unfinished issues to; null moves them to the backlog")] = None,
) -> SprintClosed:
    """Close an active sprint. Unfinished issues move to another sprint of the project or to the backlog. Closed sprints are final."""
    s = _sprint(w, sprint_id)
    _active_project(_project(w, s.project_id))
    if s.state != "active":
        raise StateConflict(f"sprint {sprint_id} is {s.state}; only an active sprint can be closed")
    if target_sprint_id is not None:
        t = _sprint(w, target_sprint_id)
        if target_sprint_id == sprint_id:
            raise InvalidArgument("target_sprint_id must differ from sprint_id")
        if t.project_id != s.project_id:
            raise InvalidArgument(f"target sprint {target_sprint_id} belongs to project {t.project_id}, not {s.project_id}")
        if t.state == "closed":
            raise StateConflict(f"target sprint {target_sprint_id} is closed; choose a planned sprint or the backlog")
    done, moved = [], []
    for i in w.issues.values():
        if i.sprint_id == sprint_id:
            if i.status == "done":
                done.append(i.issue_id)
            else:
                i.sprint_id = target_sprint_id
                i.updated_on = DAY0
                moved.append(i.issue_id)
    s.state = "closed"
    s.end_date = min(s.end_date, DAY0) if s.start_date <= DAY0 else s.end_date
    return SprintClosed(sprint_id=sprint_id, state="closed", completed_issue_ids=done, moved_issue_ids=moved,
                        target_sprint_id=target_sprint_id)


@TOOLS.tool(idempotent=True)
def add_issue_to_sprint(w: TrackerWorld, issue_id: IssueId, sprint_id: SprintId) -> Issue:
    """Put an issue into a planned or active sprint of the same project (moving it from any other sprint)."""
    i = _issue(w, issue_id)
    s = _sprint(w, sprint_id)
    _active_project(_project(w, i.project_id))
    if s.project_id != i.project_id:
        raise InvalidArgument(f"sprint {sprint_id} belongs to project {s.project_id} but issue {issue_id} to {i.project_id}")
    if s.state == "closed":
        options = [x.sprint_id for x in w.sprints.values() if x.project_id == i.project_id and x.state != "closed"]
        raise StateConflict(f"sprint {sprint_id} ({s.name}) is closed; issues can only be added to planned or active sprints: "
                            f"{', '.join(options) or 'none, create_sprint first'}")
    i.sprint_id = sprint_id
    i.updated_on = DAY0
    return i


@TOOLS.tool(idempotent=True)
def remove_issue_from_sprint(w: TrackerWorld, issue_id: IssueId) -> Issue:
    """Move an issue out of its (planned or active) sprint back to the backlog."""
    i = _issue(w, issue_id)
    _active_project(_project(w, i.project_id))
    if i.sprint_id is None:
        raise StateConflict(f"issue {issue_id} is already in the backlog (no sprint)")
    s = w.sprints[i.sprint_id]
    if s.state == "closed":
        raise StateConflict(f"issue {issue_id} belongs to closed sprint {s.sprint_id}; closed sprints are final")
    i.sprint_id = None
    i.updated_on = DAY0
    return i


def build(seed: int = 0) -> EnvServer[TrackerWorld]:
    """A fresh issue_tracker server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "issue_tracker", seeder=seed_world, category="knowledge / CRM",
        description="Issue tracker: projects and members, bugs/tasks/stories with priorities and labels, a workflow "
                    "(open, in_progress, in_review, done), sprints, comments, and blocks/relates links between issues.",
        tools=TOOLS, default_seed=seed,
    )
