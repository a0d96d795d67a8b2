"""social_media: users, follows (with private accounts), posts, feeds, likes and comments."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import EnvServer, InvalidArgument, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import CITIES, FIRST_NAMES, LAST_NAMES

PostStatus = Literal["published", "deleted"]
FollowStatus = Literal["active", "pending"]
NOW = f"{REFERENCE_DAY}T09:00:00"
MAX_POST = 500

BIOS = [
    "Coffee first.",
    "Runner, reader, occasional baker.",
    "Product designer. Opinions my own.",
    "Photographer chasing light.",
    "Software engineer who loves hiking.",
    "Teacher and lifelong learner.",
    "Plant parent. Amateur chef.",
    "Cycling everywhere.",
    "Data nerd. Board games on weekends.",
    "Travel writer.",
    "Music, maps and mountains.",
    "Nurse by day, guitarist by night.",
]
TOPICS = [
    "remote work",
    "sourdough",
    "trail running",
    "open source",
    "urban gardening",
    "jazz",
    "street photography",
    "chess",
    "climate tech",
    "minimalism",
    "board games",
    "bird watching",
    "vintage bikes",
    "home espresso",
]
TEMPLATES = [
    "Just got back from {city} and I already miss it.",
    "Hot take: {topic} is underrated.",
    "Three things I learned about {topic} this week. Thread soon!",
    "Anyone in {city} up for a {topic} meetup next weekend?",
    "Finally finished my {topic} project. Pictures tomorrow.",
    "Morning walk around {city} before the rain. Perfect start.",
    "What's your favourite resource for getting into {topic}?",
    "New blog post: why I spend my Sundays on {topic}.",
    "Can't believe how busy {city} is today.",
    "Week {n} of learning {topic}: slow progress, still fun.",
]
COMMENTS = [
    "Love this!",
    "So true.",
    "Great post, thanks for sharing.",
    "Where was this taken?",
    "Count me in!",
    "Interesting take, not sure I agree.",
    "This made my day.",
    "Following for the thread.",
    "Same here!",
    "Congrats!",
]


class User(BaseModel):
    user_id: str
    handle: str
    display_name: str
    bio: str
    city: str
    is_private: bool
    verified: bool
    joined_on: str


class Follow(BaseModel):
    user_id: str
    target_user_id: str
    status: FollowStatus
    since: str


class Post(BaseModel):
    post_id: str
    author_id: str
    content: str
    created_at: str
    status: PostStatus = "published"
    comments_enabled: bool = True


class Like(BaseModel):
    user_id: str
    post_id: str
    liked_at: str


class Comment(BaseModel):
    comment_id: str
    post_id: str
    user_id: str
    text: str
    created_at: str


class SocialWorld(World):
    users: dict[str, User] = {}
    follows: dict[str, Follow] = {}  # "follower>target"
    posts: dict[str, Post] = {}
    likes: dict[str, Like] = {}  # "user:post"
    comments: dict[str, Comment] = {}
    clock: int = 0  # seconds after NOW for new activity, so new items sort after seeded ones


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


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


def _now(w: SocialWorld) -> str:
    w.clock += 1
    return _ts(datetime.fromisoformat(NOW) + timedelta(seconds=w.clock))


def _user(w: SocialWorld, user_id: str, arg: str = "user_id") -> User:
    u = w.users.get(user_id)
    if u is None:
        raise not_found("user", user_id, f"{arg} must be a user id from search_users")
    return u


def _post(w: SocialWorld, post_id: str) -> Post:
    p = w.posts.get(post_id)
    if p is None:
        raise not_found("post", post_id, "list_user_posts or get_feed show post ids")
    return p


def _can_see(w: SocialWorld, viewer_id: str, author_id: str) -> bool:
    if viewer_id == author_id or not w.users[author_id].is_private:
        return True
    f = w.follows.get(f"{viewer_id}>{author_id}")
    return f is not None and f.status == "active"


def _require_visible(w: SocialWorld, viewer_id: str, author_id: str, what: str) -> None:
    if not _can_see(w, viewer_id, author_id):
        u = w.users[author_id]
        raise PermissionDenied(
            f"@{u.handle} ({author_id}) is a private account; {viewer_id} must be an approved follower to {what}"
        )


UserId = Annotated[str, Field(description="User id, e.g. 'USR-0003' (from search_users)")]
ActorId = Annotated[
    str, Field(description="Id of the signed-in user performing the action, e.g. 'USR-0001' (from search_users)")
]
ViewerId = Annotated[
    str,
    Field(
        description="Id of the signed-in user who is looking (private accounts are visible only to approved followers)"
    ),
]
PostId = Annotated[str, Field(description="Post id, e.g. 'PST-0042' (from list_user_posts or get_feed)")]


class UserProfile(BaseModel):
    user_id: str
    handle: str
    display_name: str
    bio: str
    city: str
    is_private: bool
    verified: bool
    joined_on: str
    follower_count: int
    following_count: int
    post_count: int


class UserList(BaseModel):
    users: list[UserProfile]
    total: int


class FollowList(BaseModel):
    user_id: str
    follows: list[Follow]
    total: int


class Unfollowed(BaseModel):
    user_id: str
    target_user_id: str
    removed_status: FollowStatus


class PostView(BaseModel):
    post_id: str
    author_id: str
    author_handle: str
    content: str
    created_at: str
    status: PostStatus
    comments_enabled: bool
    like_count: int
    comment_count: int


class PostList(BaseModel):
    posts: list[PostView]
    total: int


class LikeResult(BaseModel):
    user_id: str
    post_id: str
    liked: bool
    like_count: int


class CommentList(BaseModel):
    post_id: str
    comments: list[Comment]
    total: int


class DeletedPost(BaseModel):
    post_id: str
    status: PostStatus


TOOLS: ToolSet[SocialWorld] = ToolSet()


def profile(w: SocialWorld, u: User) -> UserProfile:
    return UserProfile(
        **u.model_dump(),
        follower_count=sum(f.target_user_id == u.user_id and f.status == "active" for f in w.follows.values()),
        following_count=sum(f.user_id == u.user_id and f.status == "active" for f in w.follows.values()),
        post_count=sum(p.author_id == u.user_id and p.status == "published" for p in w.posts.values()),
    )


def view(w: SocialWorld, p: Post) -> PostView:
    deleted = p.status == "deleted"
    return PostView(
        post_id=p.post_id,
        author_id=p.author_id,
        author_handle=w.users[p.author_id].handle,
        content="" if deleted else p.content,
        created_at=p.created_at,
        status=p.status,
        comments_enabled=p.comments_enabled,
        like_count=0 if deleted else sum(lk.post_id == p.post_id for lk in w.likes.values()),
        comment_count=0 if deleted else sum(c.post_id == p.post_id for c in w.comments.values()),
    )


def newest(posts: list[Post]) -> list[Post]:
    return sorted(posts, key=lambda p: (p.created_at, p.post_id), reverse=True)


@TOOLS.tool(read_only=True)
def search_users(
    w: SocialWorld,
    query: Annotated[str | None, Field(description="Case-insensitive part of the handle or display name")] = None,
    city: Annotated[str | None, Field(description="Only users in this city")] = None,
) -> UserList:
    """Search users by handle, display name or city; shows follower counts and whether the account is private."""
    out = [
        profile(w, u)
        for u in w.users.values()
        if (query is None or query.lower().lstrip("@") in f"{u.handle} {u.display_name}".lower())
        and (city is None or u.city.lower() == city.lower())
    ]
    return UserList(users=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_user(w: SocialWorld, user_id: UserId) -> UserProfile:
    """Get a user's profile: handle, name, bio, privacy, follower/following and post counts."""
    return profile(w, _user(w, user_id))


@TOOLS.tool(read_only=True)
def list_followers(
    w: SocialWorld,
    user_id: UserId,
    status: Annotated[
        FollowStatus | None, Field(description="'active' followers or 'pending' follow requests")
    ] = "active",
) -> FollowList:
    """List who follows a user (or, with status 'pending', who has requested to follow a private account)."""
    _user(w, user_id)
    out = [f for f in w.follows.values() if f.target_user_id == user_id and (status is None or f.status == status)]
    return FollowList(user_id=user_id, follows=out, total=len(out))


@TOOLS.tool(read_only=True)
def list_following(
    w: SocialWorld,
    user_id: UserId,
    status: Annotated[FollowStatus | None, Field(description="'active' follows or 'pending' requests sent")] = "active",
) -> FollowList:
    """List the accounts a user follows (or, with status 'pending', follow requests still awaiting approval)."""
    _user(w, user_id)
    out = [f for f in w.follows.values() if f.user_id == user_id and (status is None or f.status == status)]
    return FollowList(user_id=user_id, follows=out, total=len(out))


@TOOLS.tool()
def follow_user(
    w: SocialWorld,
    user_id: ActorId,
    target_user_id: Annotated[str, Field(description="Id of the user to follow (from search_users)")],
) -> Follow:
    """Follow another user; following a private account sends a request that stays 'pending' until approved."""
    _user(w, user_id)
    t = _user(w, target_user_id, "target_user_id")
    if user_id == target_user_id:
        raise InvalidArgument("target_user_id must be a different user: you cannot follow yourself")
    f = w.follows.get(f"{user_id}>{target_user_id}")
    if f is not None:
        what = "already follows" if f.status == "active" else "already has a pending follow request to"
        raise StateConflict(f"{user_id} {what} @{t.handle} ({target_user_id})")
    f = Follow(
        user_id=user_id,
        target_user_id=target_user_id,
        status="pending" if t.is_private else "active",
        since=_now(w)[:10],
    )
    w.follows[f"{user_id}>{target_user_id}"] = f
    return f


@TOOLS.tool(destructive=True, idempotent=True)
def unfollow_user(
    w: SocialWorld,
    user_id: ActorId,
    target_user_id: Annotated[str, Field(description="Id of the user to stop following (from list_following)")],
) -> Unfollowed:
    """Stop following a user, or withdraw a pending follow request."""
    _user(w, user_id)
    t = _user(w, target_user_id, "target_user_id")
    f = w.follows.pop(f"{user_id}>{target_user_id}", None)
    if f is None:
        raise StateConflict(
            f"{user_id} does not follow @{t.handle} ({target_user_id}); list_following shows who they follow"
        )
    return Unfollowed(user_id=user_id, target_user_id=target_user_id, removed_status=f.status)


@TOOLS.tool()
def create_post(
    w: SocialWorld,
    user_id: ActorId,
    content: Annotated[
        str,
        Field(description=f"Text of the post, 1 to {MAX_POST} characters, not only whitespace", max_length=MAX_POST),
    ],
    comments_enabled: Annotated[bool, Field(description="Whether others may comment")] = True,
) -> PostView:
    """Publish a new post as a user."""
    _user(w, user_id)
    if not content.strip():
        raise InvalidArgument("content is empty: a post needs some text")
    pid = w.new_id("PST")
    p = Post(
        post_id=pid, author_id=user_id, content=content.strip(), created_at=_now(w), comments_enabled=comments_enabled
    )
    w.posts[pid] = p
    return view(w, p)


@TOOLS.tool(read_only=True)
def get_post(w: SocialWorld, post_id: PostId, viewer_id: ViewerId) -> PostView:
    """Get one post with its like and comment counts; a deleted post shows status 'deleted' and no content."""
    _user(w, viewer_id, "viewer_id")
    p = _post(w, post_id)
    _require_visible(w, viewer_id, p.author_id, "see this post")
    return view(w, p)


@TOOLS.tool(read_only=True)
def list_user_posts(
    w: SocialWorld,
    user_id: Annotated[str, Field(description="Id of the author whose posts to list (from search_users)")],
    viewer_id: ViewerId,
    include_deleted: Annotated[bool, Field(description="Also list deleted posts (shown without content)")] = False,
    limit: Annotated[int, Field(description="Most recent N posts", ge=1, le=100)] = 20,
) -> PostList:
    """List a user's posts, newest first; a private account's posts are visible only to its approved followers."""
    _user(w, user_id)
    _user(w, viewer_id, "viewer_id")
    _require_visible(w, viewer_id, user_id, "see their posts")
    ps = newest(
        [p for p in w.posts.values() if p.author_id == user_id and (include_deleted or p.status == "published")]
    )
    out = [view(w, p) for p in ps[:limit]]
    return PostList(posts=out, total=len(out))


@TOOLS.tool(read_only=True)
def get_feed(
    w: SocialWorld,
    user_id: Annotated[str, Field(description="Id of the signed-in user whose home feed to build")],
    limit: Annotated[int, Field(description="Most recent N posts", ge=1, le=100)] = 20,
) -> PostList:
    """Get a user's home feed: published posts of the accounts they actively follow plus their own, newest first."""
    _user(w, user_id)
    authors = {f.target_user_id for f in w.follows.values() if f.user_id == user_id and f.status == "active"} | {
        user_id
    }
    ps = newest([p for p in w.posts.values() if p.author_id in authors and p.status == "published"])
    out = [view(w, p) for p in ps[:limit]]
    return PostList(posts=out, total=len(out))


@TOOLS.tool(idempotent=True)
def like_post(w: SocialWorld, user_id: ActorId, post_id: PostId) -> LikeResult:
    """Like a post as a user; deleted posts cannot be liked and private accounts' posts need an approved follow."""
    _user(w, user_id)
    p = _post(w, post_id)
    if p.status == "deleted":
        raise StateConflict(f"post {post_id} has been deleted and can no longer be liked")
    _require_visible(w, user_id, p.author_id, "like their posts")
    if f"{user_id}:{post_id}" in w.likes:
        raise StateConflict(f"{user_id} already likes post {post_id}")
    w.likes[f"{user_id}:{post_id}"] = Like(user_id=user_id, post_id=post_id, liked_at=_now(w))
    return LikeResult(user_id=user_id, post_id=post_id, liked=True, like_count=view(w, p).like_count)


@TOOLS.tool(destructive=True, idempotent=True)
def unlike_post(w: SocialWorld, user_id: ActorId, post_id: PostId) -> LikeResult:
    """Remove a user's like from a post."""
    _user(w, user_id)
    p = _post(w, post_id)
    if w.likes.pop(f"{user_id}:{post_id}", None) is None:
        raise StateConflict(f"{user_id} has not liked post {post_id}")
    return LikeResult(user_id=user_id, post_id=post_id, liked=False, like_count=view(w, p).like_count)


@TOOLS.tool()
def comment_on_post(
    w: SocialWorld,
    user_id: ActorId,
    post_id: PostId,
    text: Annotated[str, Field(description="Comment text, 1 to 300 characters, not only whitespace", max_length=300)],
) -> Comment:
    """Comment on a post as a user; not possible on deleted posts, posts with comments turned off, or private posts you cannot see."""
    _user(w, user_id)
    p = _post(w, post_id)
    if not text.strip():
        raise InvalidArgument("text is empty: a comment needs some text")
    if p.status == "deleted":
        raise StateConflict(f"post {post_id} has been deleted and can no longer receive comments")
    _require_visible(w, user_id, p.author_id, "comment on their posts")
    if not p.comments_enabled:
        raise StateConflict(f"the author turned comments off on post {post_id}")
    cid = w.new_id("CMT")
    c = Comment(comment_id=cid, post_id=post_id, user_id=user_id, text=text.strip(), created_at=_now(w))
    w.comments[cid] = c
    return c


@TOOLS.tool(read_only=True)
def list_comments(w: SocialWorld, post_id: PostId, viewer_id: ViewerId) -> CommentList:
    """List the comments on a post, oldest first."""
    _user(w, viewer_id, "viewer_id")
    p = _post(w, post_id)
    _require_visible(w, viewer_id, p.author_id, "see comments on their posts")
    out = (
        []
        if p.status == "deleted"
        else sorted(
            (c for c in w.comments.values() if c.post_id == post_id), key=lambda c: (c.created_at, c.comment_id)
        )
    )
    return CommentList(post_id=post_id, comments=out, total=len(out))


@TOOLS.tool(destructive=True, idempotent=True)
def delete_post(w: SocialWorld, user_id: ActorId, post_id: PostId) -> DeletedPost:
    """Delete one of your own posts; its likes and comments are hidden with it."""
    _user(w, user_id)
    p = _post(w, post_id)
    if p.author_id != user_id:
        raise PermissionDenied(f"post {post_id} belongs to {p.author_id}; only its author can delete it")
    if p.status == "deleted":
        raise StateConflict(f"post {post_id} is already deleted")
    p.status = "deleted"
    return DeletedPost(post_id=post_id, status="deleted")


def build(seed: int = 0) -> EnvServer[SocialWorld]:
    """A fresh social_media server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "social_media",
        seeder=seed_world,
        category="social",
        description="Social network: user profiles, follows (private accounts need approval), posts, home feeds, likes and comments.",
        tools=TOOLS,
        default_seed=seed,
    )
