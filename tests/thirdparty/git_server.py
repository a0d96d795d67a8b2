"""A git-like MCP server in the style of mcp-server-git: branches, commits and status come back as text lines.

The repository is simulated in memory (deterministic commit ids, from a hash of parent, message and files),
starting with three commits on ``main``, a ``feature/login`` branch, one modified and one untracked file.
Every tool takes ``repo_path`` like the published server (only ``.`` exists here). Results are text with
no output schemas and no annotations. Plain mcp ``MCPServer``, not prove's kit.
Run: python tests/thirdparty/git_server.py [--http PORT]
"""

import prefork  # noqa: F401  (first: in the suite this process hands over to a fork that has imported mcp)

# isort: split
import hashlib
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

srv = MCPServer("mcp-git", log_level="ERROR")
COMMITS: dict[str, dict] = {}
BRANCHES: dict[str, str | None] = {}
REPO = {"head": "main", "modified": ["README.md"], "untracked": ["app.py"], "staged": []}


def commit(parent: str | None, message: str, files: list[str]) -> str:
    cid = hashlib.sha1(f"{parent}\n{message}\n{sorted(files)}".encode()).hexdigest()[:7]
    COMMITS[cid] = {"id": cid, "parent": parent, "message": message, "files": sorted(files)}
    return cid


def seed() -> None:
    c1 = commit(None, "Initial commit", ["README.md"])
    c2 = commit(c1, "Add config loader", ["config.py"])
    c3 = commit(c2, "Fix typo in README", ["README.md"])
    BRANCHES["main"] = c3
    BRANCHES["feature/login"] = commit(c2, "Add login form", ["login.py"])


seed()


def repo(repo_path: str) -> None:
    if repo_path not in (".", "./"):
        raise ToolError(f"Not a git repository: {repo_path}")


def history(ref: str) -> list[dict]:
    cid = BRANCHES.get(ref, ref if ref in COMMITS else None)
    if cid is None:
        raise ToolError(f"unknown revision or path not in the working tree: {ref}")
    out = []
    while cid:
        out.append(COMMITS[cid])
        cid = COMMITS[cid]["parent"]
    return out


@srv.tool(structured_output=False)
def git_status(repo_path: str = ".") -> str:
    """Shows the working tree status"""
    repo(repo_path)
    lines = [f"On branch {REPO['head']}"]
    lines += [f"staged: {f}" for f in REPO["staged"]]
    lines += [f"modified: {f}" for f in REPO["modified"]]
    lines += [f"untracked: {f}" for f in REPO["untracked"]]
    return "\n".join(lines if len(lines) > 1 else lines + ["nothing to commit, working tree clean"])


@srv.tool(structured_output=False)
def git_branch(repo_path: str = ".") -> str:
    """List Git branches"""
    repo(repo_path)
    return "\n".join(f"{'*' if b == REPO['head'] else ' '} {b}" for b in sorted(BRANCHES))


@srv.tool(structured_output=False)
def git_log(repo_path: str = ".", max_count: int = 10, branch: str | None = None) -> str:
    """Shows the commit logs"""
    repo(repo_path)
    return "\n".join(f"{c['id']} {c['message']}" for c in history(branch or REPO["head"])[:max_count])


@srv.tool(structured_output=False)
def git_show(revision: str, repo_path: str = ".") -> str:
    """Shows the contents of a commit"""
    repo(repo_path)
    c = history(revision)[0]
    return "\n".join([f"commit {c['id']}", f"parent {c['parent'] or '-'}", "", f"    {c['message']}", ""] + c["files"])


@srv.tool(structured_output=False)
def git_create_branch(branch_name: str, repo_path: str = ".", base_branch: str | None = None) -> str:
    """Creates a new branch from an optional base branch"""
    repo(repo_path)
    if branch_name in BRANCHES:
        raise ToolError(f"a branch named '{branch_name}' already exists")
    BRANCHES[branch_name] = history(base_branch or REPO["head"])[0]["id"]
    return f"Created branch '{branch_name}' from '{base_branch or REPO['head']}'"


@srv.tool(structured_output=False)
def git_checkout(branch_name: str, repo_path: str = ".") -> str:
    """Switches branches"""
    repo(repo_path)
    if branch_name not in BRANCHES:
        raise ToolError(f"pathspec '{branch_name}' did not match any branch known to git")
    REPO["head"] = branch_name
    return f"Switched to branch '{branch_name}'"


@srv.tool(structured_output=False)
def git_add(files: list[str], repo_path: str = ".") -> str:
    """Adds file contents to the staging area"""
    repo(repo_path)
    for f in files:
        for pile in ("modified", "untracked"):
            if f in REPO[pile]:
                REPO[pile].remove(f)
                REPO["staged"].append(f)
                break
        else:
            if f not in REPO["staged"]:
                raise ToolError(f"pathspec '{f}' did not match any files")
    return "Files staged successfully"


@srv.tool(structured_output=False)
def git_commit(message: str, repo_path: str = ".") -> str:
    """Records changes to the repository"""
    repo(repo_path)
    if not REPO["staged"]:
        raise ToolError("nothing to commit (use git_add to stage changes)")
    cid = commit(BRANCHES[REPO["head"]], message, REPO["staged"])
    BRANCHES[REPO["head"]] = cid
    REPO["staged"] = []
    return f"Changes committed successfully with hash {cid}"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        srv.run("streamable-http", port=int(sys.argv[2]))
    else:
        srv.run("stdio")
