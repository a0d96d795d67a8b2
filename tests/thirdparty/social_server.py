"""A social network behind a login, shaped like BFCL's TwitterAPI: every action, reads included, answers
"not authenticated" until ``authenticate(username, password)`` has run. Posts, comments, retweets and follows are
JSON text (no output schemas; the reads annotated read-only). The account is ``alice``; its password is read from
``SOCIAL_PASSWORD``. State in memory, deterministic (post ids count up from the seed's). Plain mcp ``MCPServer``.
Run: SOCIAL_PASSWORD=... python tests/thirdparty/social_server.py
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import json
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

srv = MCPServer("social", log_level="ERROR")
READ = ToolAnnotations(read_only_hint=True)
USERS = ("alice", "bob", "carol", "dave")
POSTS = [
    {"id": 1, "username": "bob", "content": "Trail run at dawn, 12 km done", "tags": ["running"], "mentions": []},
    {
        "id": 2,
        "username": "carol",
        "content": "New bakery on Quay Street opens Monday",
        "tags": ["food"],
        "mentions": [],
    },
    {"id": 3, "username": "alice", "content": "Slides for the meetup are up", "tags": ["meetup"], "mentions": ["bob"]},
    {"id": 4, "username": "dave", "content": "Looking for a climbing partner this weekend", "tags": [], "mentions": []},
]
COMMENTS = [{"post_id": 1, "username": "carol", "content": "Impressive pace"}]
STATE = {"user": None, "following": ["bob"], "retweets": []}


def me() -> str:
    if STATE["user"] is None:
        raise ToolError("not authenticated: call authenticate(username, password) first")
    return STATE["user"]


def post(post_id: int) -> dict:
    me()
    for p in POSTS:
        if p["id"] == post_id:
            return p
    raise ToolError(f"post {post_id} not found")


@srv.tool(structured_output=False)
def authenticate(username: str, password: str) -> str:
    """Authenticate with a username and password. Every other action needs it first."""
    if username != "alice" or password != os.environ.get("SOCIAL_PASSWORD"):
        raise ToolError("authentication failed: invalid username or password")
    STATE["user"] = username
    return json.dumps({"authentication_status": True})


@srv.tool(structured_output=False)
def post_tweet(content: str, tags: list[str] | None = None) -> str:
    """Post a tweet with optional tags."""
    user = me()
    p = {
        "id": max(x["id"] for x in POSTS) + 1,
        "username": user,
        "content": content,
        "tags": tags or [],
        "mentions": [],
    }
    POSTS.append(p)
    return json.dumps(p)


@srv.tool(structured_output=False, annotations=READ)
def get_tweet(tweet_id: int) -> str:
    """Get one tweet by its id."""
    return json.dumps(post(tweet_id))


@srv.tool(structured_output=False, annotations=READ)
def get_user_tweets(username: str) -> str:
    """All the tweets of a user."""
    me()
    if username not in USERS:
        raise ToolError(f"user {username} not found")
    return json.dumps([p for p in POSTS if p["username"] == username])


@srv.tool(structured_output=False)
def retweet(tweet_id: int) -> str:
    """Retweet a tweet."""
    p = post(tweet_id)
    if tweet_id in STATE["retweets"]:
        raise ToolError(f"already retweeted {tweet_id}")
    STATE["retweets"].append(tweet_id)
    return json.dumps({"retweet_status": f"retweeted post {p['id']}"})


@srv.tool(structured_output=False, annotations=READ)
def list_retweets() -> str:
    """The tweets the user retweeted."""
    me()
    return json.dumps([p for p in POSTS if p["id"] in STATE["retweets"]])


@srv.tool(structured_output=False)
def comment(tweet_id: int, comment_content: str) -> str:
    """Comment on a tweet."""
    post(tweet_id)
    COMMENTS.append({"post_id": tweet_id, "username": me(), "content": comment_content})
    return json.dumps({"comment_status": "Comment added successfully"})


@srv.tool(structured_output=False, annotations=READ)
def get_tweet_comments(tweet_id: int) -> str:
    """The comments on a tweet."""
    post(tweet_id)
    return json.dumps([c for c in COMMENTS if c["post_id"] == tweet_id])


@srv.tool(structured_output=False)
def follow_user(username_to_follow: str) -> str:
    """Follow a user."""
    me()
    if username_to_follow not in USERS:
        raise ToolError(f"user {username_to_follow} not found")
    if username_to_follow not in STATE["following"]:
        STATE["following"].append(username_to_follow)
    return json.dumps({"follow_status": True})


@srv.tool(structured_output=False)
def unfollow_user(username_to_unfollow: str) -> str:
    """Stop following a user."""
    me()
    if username_to_unfollow not in STATE["following"]:
        raise ToolError(f"you do not follow {username_to_unfollow}")
    STATE["following"].remove(username_to_unfollow)
    return json.dumps({"unfollow_status": True})


@srv.tool(structured_output=False, annotations=READ)
def list_all_following() -> str:
    """The users you follow."""
    me()
    return json.dumps(STATE["following"])


@srv.tool(structured_output=False, annotations=READ)
def search_tweets(keyword: str) -> str:
    """Tweets whose text holds a keyword."""
    me()
    return json.dumps([p for p in POSTS if keyword.lower() in p["content"].lower()])


if __name__ == "__main__":
    srv.run("stdio")
