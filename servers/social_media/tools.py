"""social_media tools, search_users to delete_post (in tools/list order)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from servers.kit import InvalidArgument, PermissionDenied, StateConflict
from servers.social_media.world import (
    MAX_POST,
    TOOLS,
    ActorId,
    Comment,
    CommentList,
    DeletedPost,
    Follow,
    FollowList,
    FollowStatus,
    Like,
    LikeResult,
    Post,
    PostId,
    PostList,
    PostView,
    SocialWorld,
    Unfollowed,
    User,
    UserId,
    UserList,
    UserProfile,
    ViewerId,
    _now,
    _post,
    _require_visible,
    _user,
)


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
