"""issue_tracker tools, list_projects to remove_issue_from_sprint (in tools/list order)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from servers.issue_tracker.world import (
    DATE_PATTERN,
    DAY0,
    LABEL_PATTERN,
    TOOLS,
    WORKFLOW,
    Comment,
    CommentList,
    Issue,
    IssueDetail,
    IssueId,
    IssueList,
    IssueType,
    Labels,
    Link,
    LinkType,
    Membership,
    Priority,
    ProjectDetail,
    ProjectId,
    ProjectList,
    Role,
    Sprint,
    SprintClosed,
    SprintId,
    SprintList,
    SprintState,
    Status,
    TrackerWorld,
    Transition,
    Unlinked,
    UserId,
    UserList,
    _active_project,
    _issue,
    _member,
    _open_blockers,
    _project,
    _real_date,
    _sprint,
    _user,
)
from servers.kit import InvalidArgument, StateConflict, not_found


@TOOLS.tool(read_only=True)
def list_projects(
    w: TrackerWorld,
    status: Annotated[Literal["active", "archived"] | None, Field(description="Only projects with this status")] = None,
    member_id: Annotated[str | None, Field(description="Only projects this user id is a member of")] = None,
) -> ProjectList:
    """List projects with their key, lead and member ids."""
    out = [
        p
        for p in w.projects.values()
        if (status is None or p.status == status) and (member_id is None or member_id in p.member_ids)
    ]
    return ProjectList(projects=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_project(w: TrackerWorld, project_id: ProjectId) -> ProjectDetail:
    """Get a project with its members, its sprints and the number of issues in each workflow status."""
    p = _project(w, project_id)
    counts = {s: 0 for s in WORKFLOW}
    for i in w.issues.values():
        if i.project_id == project_id:
            counts[i.status] += 1
    return ProjectDetail(
        project_id=p.project_id,
        key=p.key,
        name=p.name,
        description=p.description,
        status=p.status,
        lead_id=p.lead_id,
        members=[w.users[u] for u in p.member_ids],
        sprints=[s for s in w.sprints.values() if s.project_id == project_id],
        issue_counts=counts,
    )


@TOOLS.tool(read_only=True)
def list_users(
    w: TrackerWorld,
    project_id: Annotated[str | None, Field(description="Only members of this project id")] = None,
    role: Annotated[Role | None, Field(description="Only users with this role")] = None,
    name_contains: Annotated[str | None, Field(description="Case-insensitive part of the name or username")] = None,
) -> UserList:
    """List users of the tracker, optionally only the members of one project."""
    members = set(_project(w, project_id).member_ids) if project_id is not None else None
    out = [
        u
        for u in w.users.values()
        if (members is None or u.user_id in members)
        and (role is None or u.role == role)
        and (name_contains is None or name_contains.lower() in f"{u.name} {u.username}".lower())
    ]
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
    out = [
        i
        for i in w.issues.values()
        if (project_id is None or i.project_id == project_id)
        and (status is None or i.status == status)
        and (issue_type is None or i.issue_type == issue_type)
        and (priority is None or i.priority == priority)
        and (assignee_id is None or i.assignee_id == assignee_id)
        and (sprint_id is None or i.sprint_id == sprint_id)
        and (not backlog_only or i.sprint_id is None)
        and (label is None or label in i.labels)
        and (t is None or t in i.title.lower() or t in (i.description or "").lower())
    ]
    return IssueList(issues=out[:limit], total=len(out))


@TOOLS.tool(read_only=True)
def get_issue(w: TrackerWorld, issue_id: IssueId) -> IssueDetail:
    """Get an issue with its allowed next statuses, the open issues blocking it, its links and comment count."""
    i = _issue(w, issue_id)
    links = [link for link in w.links.values() if issue_id in (link.issue_id, link.target_issue_id)]
    n = sum(1 for c in w.comments.values() if c.issue_id == issue_id)
    return IssueDetail(
        issue=i,
        issue_id=issue_id,
        allowed_transitions=list(WORKFLOW[i.status]),  # type: ignore[arg-type]
        blocked_by=_open_blockers(w, issue_id),
        links=links,
        comment_count=n,
    )


@TOOLS.tool()
def create_issue(
    w: TrackerWorld,
    project_id: ProjectId,
    title: Annotated[str, Field(description="Short summary of the issue", min_length=3, max_length=200)],
    issue_type: Annotated[IssueType, Field(description="Kind of issue")],
    reporter_id: Annotated[str, Field(description="user_id of the reporter; must be a project member")],
    priority: Annotated[Priority, Field(description="Priority")] = "medium",
    description: Annotated[str | None, Field(description="Longer description")] = None,
    labels: Labels = [],  # noqa: B006 -- never mutated (read via sorted(set(labels))); [] keeps the schema default
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
    i = Issue(
        issue_id=iid,
        project_id=project_id,
        title=title,
        description=description,
        issue_type=issue_type,
        priority=priority,
        labels=sorted(set(labels)),
        status="open",
        assignee_id=assignee_id,
        reporter_id=reporter_id,
        story_points=story_points,
        created_on=DAY0,
        updated_on=DAY0,
    )
    w.issues[iid] = i
    return i


@TOOLS.tool(idempotent=True)
def update_issue(
    w: TrackerWorld,
    issue_id: IssueId,
    title: Annotated[str | None, Field(description="New title", min_length=3, max_length=200)] = None,
    description: Annotated[str | None, Field(description="New description")] = None,
    priority: Annotated[Priority | None, Field(description="New priority")] = None,
    labels: Annotated[
        list[Annotated[str, Field(pattern=LABEL_PATTERN)]] | None,
        Field(description="Replace the labels with this list, e.g. ['backend']", max_length=8),
    ] = None,
    story_points: Annotated[int | None, Field(description="New estimate in story points", ge=0, le=100)] = None,
) -> Issue:
    """Edit an issue's title, description, priority, labels or estimate. Only the given fields change."""
    i = _issue(w, issue_id)
    _active_project(_project(w, i.project_id))
    if all(v is None for v in (title, description, priority, labels, story_points)):
        raise InvalidArgument(
            "nothing to update: give at least one of title, description, priority, labels, story_points"
        )
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
    user_id: Annotated[
        str | None, Field(description="user_id of the new assignee (a project member); null to unassign")
    ],
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
    status: Annotated[
        Status, Field(description="Target workflow status; must be allowed from the current one (see get_issue)")
    ],
) -> Transition:
    """Move an issue through the workflow: open -> in_progress -> in_review -> done (in_progress/in_review can step back; done can be reopened).

    An issue cannot be moved to done while an issue that blocks it is not done.
    """
    i = _issue(w, issue_id)
    _active_project(_project(w, i.project_id))
    allowed = WORKFLOW[i.status]
    if status not in allowed:
        raise StateConflict(
            f"issue {issue_id} cannot move from {i.status} to {status}; allowed next states: {', '.join(allowed)}"
        )
    if status == "done":
        blockers = _open_blockers(w, issue_id)
        if blockers:
            desc = ", ".join(f"{b} ({w.issues[b].status})" for b in blockers)
            raise StateConflict(
                f"issue {issue_id} is blocked by open issue(s) {desc}; finish them or unlink_issues first"
            )
    prev = i.status
    i.status = status
    i.updated_on = DAY0
    i.resolved_on = DAY0 if status == "done" else None
    return Transition(
        issue_id=issue_id,
        previous_status=prev,
        status=status,  # type: ignore[arg-type]
        allowed_transitions=list(WORKFLOW[status]),
        resolved_on=i.resolved_on,
    )  # type: ignore[arg-type]


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
    link_type: Annotated[
        LinkType,
        Field(
            description="'blocks': issue_id must be done before target_issue_id can be done; 'relates': informational"
        ),
    ],
    target_issue_id: Annotated[str, Field(description="Target issue id (e.g. the one that is blocked)")],
) -> Link:
    """Link two issues: issue_id blocks target_issue_id, or the two relate to each other."""
    _issue(w, issue_id)
    _issue(w, target_issue_id)
    if issue_id == target_issue_id:
        raise InvalidArgument("issue_id and target_issue_id must differ: an issue cannot be linked to itself")
    for link in w.links.values():
        if link.link_type == link_type and {link.issue_id, link.target_issue_id} == {issue_id, target_issue_id}:
            if link_type == "relates" or link.issue_id == issue_id:
                raise StateConflict(
                    f"{issue_id} and {target_issue_id} are already linked with {link_type} ({link.link_id})"
                )
            raise StateConflict(
                f"{target_issue_id} already blocks {issue_id} ({link.link_id}); two issues cannot block each other"
            )
    lid = w.new_id("LNK")
    link = Link(link_id=lid, issue_id=issue_id, link_type=link_type, target_issue_id=target_issue_id)
    w.links[lid] = link
    return link


@TOOLS.tool(destructive=True, idempotent=True)
def unlink_issues(
    w: TrackerWorld, link_id: Annotated[str, Field(description="Link id, e.g. 'LNK-0002' (from get_issue's links)")]
) -> Unlinked:
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
    out = [
        s
        for s in w.sprints.values()
        if (project_id is None or s.project_id == project_id) and (state is None or s.state == state)
    ]
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
    s = Sprint(
        sprint_id=sid,
        project_id=project_id,
        name=name,
        state="planned",
        start_date=start_date,
        end_date=end_date,
        goal=goal,
    )
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
        raise StateConflict(
            f"project {s.project_id} already has an active sprint {act.sprint_id} ({act.name}); close it first"
        )
    s.state = "active"
    return s


@TOOLS.tool(destructive=True, idempotent=True)
def close_sprint(
    w: TrackerWorld,
    sprint_id: SprintId,
    target_sprint_id: Annotated[
        str | None,
        Field(
            description="Planned or active sprint id of the same project to move unfinished issues to; null moves them to the backlog"
        ),
    ] = None,
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
            raise InvalidArgument(
                f"target sprint {target_sprint_id} belongs to project {t.project_id}, not {s.project_id}"
            )
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
    return SprintClosed(
        sprint_id=sprint_id,
        state="closed",
        completed_issue_ids=done,
        moved_issue_ids=moved,
        target_sprint_id=target_sprint_id,
    )


@TOOLS.tool(idempotent=True)
def add_issue_to_sprint(w: TrackerWorld, issue_id: IssueId, sprint_id: SprintId) -> Issue:
    """Put an issue into a planned or active sprint of the same project (moving it from any other sprint)."""
    i = _issue(w, issue_id)
    s = _sprint(w, sprint_id)
    _active_project(_project(w, i.project_id))
    if s.project_id != i.project_id:
        raise InvalidArgument(
            f"sprint {sprint_id} belongs to project {s.project_id} but issue {issue_id} to {i.project_id}"
        )
    if s.state == "closed":
        options = [x.sprint_id for x in w.sprints.values() if x.project_id == i.project_id and x.state != "closed"]
        raise StateConflict(
            f"sprint {sprint_id} ({s.name}) is closed; issues can only be added to planned or active sprints: "
            f"{', '.join(options) or 'none, create_sprint first'}"
        )
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
