"""issue_tracker: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found

IssueType = Literal["bug", "task", "story"]
Priority = Literal["low", "medium", "high", "critical"]
Status = Literal["open", "in_progress", "in_review", "done"]
SprintState = Literal["planned", "active", "closed"]
LinkType = Literal["blocks", "relates"]
Role = Literal["developer", "designer", "qa", "product_manager", "devops"]
DAY0 = REFERENCE_DAY
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
LABELS = [
    "frontend",
    "backend",
    "ux",
    "performance",
    "security",
    "tech-debt",
    "regression",
    "customer",
    "infra",
    "docs",
    "accessibility",
]
SCREENS = [
    "checkout page",
    "login screen",
    "search results",
    "order history",
    "settings panel",
    "cart",
    "dashboard",
    "invoice view",
]
ACTIONS = [
    "saving changes",
    "applying a coupon",
    "switching language",
    "uploading an avatar",
    "paging results",
    "logging out",
]
THINGS = ["total price", "timestamp", "currency symbol", "avatar", "page title", "item count"]
DEPS = ["React", "Django", "PostgreSQL", "Kafka client", "OpenSSL", "Terraform provider", "Node runtime"]
SERVICES = ["payments service", "search indexer", "auth gateway", "email worker", "nightly ETL", "image resizer"]
CAPABILITIES = [
    "save items for later",
    "reset my password by SMS",
    "export my orders as CSV",
    "filter by price range",
    "see delivery estimates",
    "pay with a gift card",
    "enable dark mode",
    "share a wishlist",
]
COMMENTS = [
    "Reproduced on staging.",
    "I think this is caused by the last deploy.",
    "Can we get a screenshot?",
    "Picking this up today.",
    "PR is up for review.",
    "Blocked until the API change lands.",
    "Added a unit test for the edge case.",
    "Customer reported this again this morning.",
    "Moving to next sprint, not enough capacity.",
    "Verified the fix on production.",
]


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
        raise PermissionDenied(
            f"user {user_id} ({u.name}) is not a member of project {p.project_id} ({p.key}) and cannot {what}; "
            f"members: {', '.join(p.member_ids)}; add_project_member adds them"
        )
    return u


def _open_blockers(w: TrackerWorld, issue_id: str) -> list[str]:
    return [
        link.issue_id
        for link in w.links.values()
        if link.link_type == "blocks"
        and link.target_issue_id == issue_id
        and link.issue_id in w.issues
        and w.issues[link.issue_id].status != "done"
    ]


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
Labels = Annotated[
    list[Annotated[str, Field(pattern=LABEL_PATTERN)]],
    Field(description="Labels: lowercase words with dashes, e.g. ['backend', 'tech-debt']", max_length=8),
]


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


# the server's tools, in tools/list order: the tools_*.py modules add theirs, imported in order by __init__
TOOLS: ToolSet[TrackerWorld] = ToolSet()
