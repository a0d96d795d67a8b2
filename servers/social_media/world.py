"""social_media: the world (entities and their state) and the rules its tools share."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.clock import REFERENCE_DAY
from servers.kit import PermissionDenied, ToolSet, World, not_found

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
