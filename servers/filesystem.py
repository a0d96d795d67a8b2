"""filesystem: a per-session virtual file tree with owners, rwx permissions, symlinks, tags, a trash and a cwd."""

from __future__ import annotations

import difflib
import fnmatch
import random
import re
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from servers.kit import EnvServer, InvalidArgument, NotFound, PermissionDenied, StateConflict, ToolSet, World, not_found
from servers.names import FIRST_NAMES, LAST_NAMES

NOW = datetime(2026, 3, 2, 9, 0, 0)
CAPACITY = 20 * 1024**3
QUOTA = 256 * 1024**2
DIR_SIZE = 4096
MAX_LINK_DEPTH = 8

Kind = Literal["file", "directory", "symlink"]


class Node(BaseModel):
    node_id: str
    name: str
    kind: Kind
    parent_id: str | None
    children: dict[str, str] = {}
    content: str = ""
    binary_size: int | None = None  # set for binary files (images, archives): content is not readable text
    target: str | None = None
    owner: str
    group: str
    mode: str
    created_at: str
    modified_at: str
    tags: list[str] = []


class User(BaseModel):
    username: str
    uid: int
    groups: list[str]
    home: str
    full_name: str


class TrashItem(BaseModel):
    trash_id: str
    original_path: str
    name: str
    kind: Kind
    size: int
    trashed_at: str
    node_id: str


class FsWorld(World):
    user: str = ""
    users: dict[str, User] = {}
    root_id: str = ""
    cwd_id: str = ""
    nodes: dict[str, Node] = {}
    trash: dict[str, TrashItem] = {}
    clock: int = 0
    capacity_bytes: int = CAPACITY
    quota_bytes: int = QUOTA


# --------------------------------------------------------------------------- seeding
PROJECTS = [("weather-cli", "Command-line weather forecasts from public APIs"),
            ("budget-tracker", "Track monthly spending from bank CSV exports"),
            ("photo-sorter", "Sort photos into folders by EXIF date"),
            ("inventory-api", "REST API for a small warehouse inventory"),
            ("habit-tracker", "Daily habit streaks with reminders"),
            ("recipe-box", "Store and search family recipes")]
LOG_COMPONENTS = ["scheduler", "db", "http", "auth", "cache", "worker", "mailer"]
LOG_MESSAGES = {
    "INFO": ["request completed in {n}ms", "job {n} finished", "cache warmed ({n} keys)", "user login ok", "config reloaded"],
    "WARN": ["slow query took {n}ms", "retrying connection (attempt {k})", "disk usage at {p}%", "deprecated setting 'timeout' used"],
    "ERROR": ["connection refused by db:5432", "job {n} failed: timeout after 30s", "invalid token for user id {n}",
              "upstream returned 502", "failed to write /var/tmp/cache-{n}.bin: no space left"],
}


def _ts(rng: random.Random, lo: datetime, hi: datetime) -> str:
    span = int((hi - lo).total_seconds())
    return (lo + timedelta(seconds=rng.randint(0, span))).strftime("%Y-%m-%dT%H:%M:%S")


def _log(rng: random.Random, n: int, day: str = "2026-03-01") -> str:
    lines = []
    secs = sorted(rng.sample(range(0, 86000), n))
    for s in secs:
        lvl = rng.choices(["INFO", "WARN", "ERROR"], weights=[7, 2, 1])[0]
        msg = rng.choice(LOG_MESSAGES[lvl]).format(n=rng.randint(10, 9999), k=rng.randint(2, 5), p=rng.randint(80, 97))
        lines.append(f"{day}T{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d} {lvl:<5} {rng.choice(LOG_COMPONENTS)}: {msg}")
    return "\n".join(lines) + "\n"


def seed_world(rng: random.Random, seed: int) -> FsWorld:
    w = FsWorld(seed=seed)
    picks = rng.sample(FIRST_NAMES, 2)
    me, peer = picks[0].lower(), picks[1].lower()
    last_me, last_peer = rng.sample(LAST_NAMES, 2)
    w.user = me
    w.users = {
        "root": User(username="root", uid=0, groups=["root", "adm", "shadow"], home="/root", full_name="root"),
        "syslog": User(username="syslog", uid=104, groups=["syslog", "adm"], home="/nonexistent", full_name="system logger"),
        "www-data": User(username="www-data", uid=33, groups=["www-data"], home="/var/www", full_name="web server"),
        me: User(username=me, uid=1000, groups=[me, "dev", "staff"], home=f"/home/{me}", full_name=f"{picks[0]} {last_me}"),
        peer: User(username=peer, uid=1001, groups=[peer, "dev", "staff"], home=f"/home/{peer}", full_name=f"{picks[1]} {last_peer}"),
    }
    old, recent = datetime(2025, 9, 1), datetime(2026, 3, 1, 23, 0)

    def mk(parent: str | None, name: str, kind: Kind, owner: str, group: str, mode: str, content: str = "",
           binary_size: int | None = None, target: str | None = None, when: str | None = None) -> str:
        nid = w.new_id("INO", 5)
        m = when or _ts(rng, old, recent)
        c = min(m, _ts(rng, old, datetime.strptime(m, "%Y-%m-%dT%H:%M:%S")))
        w.nodes[nid] = Node(node_id=nid, name=name, kind=kind, parent_id=parent, content=content, binary_size=binary_size,
                            target=target, owner=owner, group=group, mode=mode, created_at=c, modified_at=m)
        if parent is not None:
            w.nodes[parent].children[name] = nid
        return nid

    def d(parent: str | None, name: str, owner: str = "root", group: str = "root", mode: str = "755") -> str:
        return mk(parent, name, "directory", owner, group, mode)

    def f(parent: str, name: str, content: str = "", owner: str = me, group: str | None = None, mode: str = "644",
          binary_size: int | None = None, when: str | None = None) -> str:
        return mk(parent, name, "file", owner, group or (owner if owner in (me, peer) else "root"), mode, content, binary_size, when=when)

    def ln(parent: str, name: str, target: str, owner: str = me) -> str:
        return mk(parent, name, "symlink", owner, owner if owner in (me, peer) else "root", "777", target=target)

    root = d(None, "")
    w.root_id = root
    # /etc
    etc = d(root, "etc")
    host = rng.choice(["atlas", "nimbus", "kestrel", "orion", "juniper"])
    f(etc, "hostname", f"{host}\n", owner="root")
    f(etc, "hosts", f"127.0.0.1\tlocalhost\n127.0.1.1\t{host}\n10.0.4.{rng.randint(2, 250)}\tdb.internal\n"
                    f"10.0.4.{rng.randint(2, 250)}\tcache.internal\n", owner="root")
    f(etc, "os-release", 'NAME="Ubuntu"\nVERSION="24.04.1 LTS (Noble Numbat)"\nID=ubuntu\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n', owner="root")
    f(etc, "fstab", "UUID=3f1c-9a2e / ext4 defaults 0 1\nUUID=77b0-12cd /boot/efi vfat umask=0077 0 1\n/swapfile none swap sw 0 0\n", owner="root")
    f(etc, "resolv.conf", "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch internal\n", owner="root")
    f(etc, "passwd", "".join(f"{u.username}:x:{u.uid}:{u.uid}:{u.full_name}:{u.home}:/bin/bash\n" for u in w.users.values()), owner="root")
    f(etc, "group", "root:x:0:\nadm:x:4:syslog\ndev:x:1100:{0},{1}\nstaff:x:50:{0},{1}\n".format(me, peer), owner="root")
    f(etc, "shadow", f"root:*:19700:0:99999:7:::\n{me}:$6$rounds=5000$Qx..:19780:0:99999:7:::\n", owner="root", group="shadow", mode="640")
    f(etc, "crontab", f"# m h dom mon dow user command\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n"
                      f"30 2 * * * {me} /home/{me}/projects/backup.sh\n", owner="root")
    nginx = d(etc, "nginx")
    f(nginx, "nginx.conf", "user www-data;\nworker_processes auto;\nevents { worker_connections 768; }\n"
                           "http {\n    sendfile on;\n    access_log /var/log/nginx/access.log;\n    error_log /var/log/nginx/error.log;\n"
                           "    include /etc/nginx/sites-enabled/*;\n}\n", owner="root")
    avail = d(nginx, "sites-available")
    f(avail, "default", f"server {{\n    listen 80 default_server;\n    server_name {host}.internal;\n    root /var/www/html;\n"
                        "    location /api/ { proxy_pass http://127.0.0.1:8080; }\n}\n", owner="root")
    enabled = d(nginx, "sites-enabled")
    ln(enabled, "default", "../sites-available/default", owner="root")
    ssh = d(etc, "ssh")
    f(ssh, "sshd_config", "Port 22\nPermitRootLogin no\nPasswordAuthentication no\nPubkeyAuthentication yes\n", owner="root", mode="600")
    f(ssh, "ssh_config", "Host *\n    SendEnv LANG LC_*\n    HashKnownHosts yes\n", owner="root")
    # /var
    var = d(root, "var")
    log = d(var, "log", group="syslog", mode="775")
    f(log, "syslog", _log(rng, 30), owner="syslog", group="adm", mode="640")
    f(log, "auth.log", "".join(f"2026-03-01T0{i}:1{i}:0{i} {host} sshd[{rng.randint(900, 9000)}]: Accepted publickey for {me}\n"
                               for i in range(6)), owner="syslog", group="adm", mode="640")
    f(log, "app.log", _log(rng, 40), owner="syslog", group="adm", when="2026-03-01T23:50:00")
    f(log, "app.log.1", _log(rng, 25, "2026-02-28"), owner="syslog", group="adm", when="2026-02-28T23:59:00")
    f(log, "dpkg.log", "2026-02-20 10:01:12 install curl:amd64 <none> 8.5.0-2ubuntu10\n2026-02-20 10:01:13 status installed curl:amd64 8.5.0\n",
      owner="root")
    ln(log, "latest.log", "app.log", owner="root")
    nlog = d(log, "nginx", group="adm")
    f(nlog, "access.log", "".join(
        f"10.0.4.{rng.randint(2, 250)} - - [01/Mar/2026:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 +0000] "
        f"\"{rng.choice(['GET', 'GET', 'POST'])} {rng.choice(['/', '/api/items', '/api/login', '/health', '/static/app.js'])} HTTP/1.1\" "
        f"{rng.choice([200, 200, 200, 301, 404, 500])} {rng.randint(120, 9000)}\n" for _ in range(25)), owner="www-data", group="adm")
    f(nlog, "error.log", "2026/03/01 04:12:09 [error] 812#812: *41 connect() failed (111: Connection refused) while connecting to upstream\n"
                         "2026/03/01 11:40:51 [warn] 812#812: *97 an upstream response is buffered to a temporary file\n",
      owner="www-data", group="adm")
    backups = d(var, "backups")
    f(backups, "etc-2026-02-01.tar.gz", owner="root", binary_size=rng.randint(400_000, 900_000))
    f(backups, "home-2026-02-01.tar.gz", owner="root", mode="600", binary_size=rng.randint(30_000_000, 60_000_000))
    www = d(var, "www", owner="www-data", group="www-data")
    html = d(www, "html", owner="www-data", group="www-data")
    f(html, "index.html", f"<!doctype html>\n<html><head><title>{host}</title></head><body><h1>It works</h1></body></html>\n", owner="www-data")
    # /tmp and /root
    tmp = d(root, "tmp", mode="777")
    f(tmp, f"build-{rng.randint(1000, 9999)}.log", "Compiling...\nLinking...\nBuild finished with 0 errors, 2 warnings\n")
    f(tmp, "scratch.txt", "remember: rotate the API key before Friday\n")
    f(tmp, f"session-{rng.randint(10**5, 10**6 - 1)}.tmp", "opaque session data\n", owner=peer, mode="600")
    rootdir = d(root, "root", mode="700")
    f(rootdir, ".bash_history", "apt update\napt upgrade -y\nsystemctl restart nginx\n", owner="root", mode="600")
    # /home
    home = d(root, "home")
    h = d(home, me, owner=me, group=me)
    f(h, ".bashrc", "# ~/.bashrc\nexport EDITOR=vim\nalias ll='ls -alF'\nalias gs='git status'\nexport PATH=\"$HOME/.local/bin:$PATH\"\n")
    f(h, ".profile", "if [ -n \"$BASH_VERSION\" ]; then\n    . \"$HOME/.bashrc\"\nfi\n")
    f(h, ".gitconfig", f"[user]\n    name = {w.users[me].full_name}\n    email = {me}@{host}.dev\n[init]\n    defaultBranch = main\n")
    sshd = d(h, ".ssh", owner=me, group=me, mode="700")
    f(sshd, "id_ed25519.pub", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rng.randint(10**9, 10**10)}Xq {me}@{host}\n")
    f(sshd, "id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n(redacted)\n-----END OPENSSH PRIVATE KEY-----\n", mode="600")
    f(sshd, "config", "Host db\n    HostName db.internal\n    User deploy\n")
    projects = d(h, "projects", owner=me, group=me)
    f(projects, "backup.sh", f"#!/bin/sh\ntar czf /var/backups/home-$(date +%F).tar.gz /home/{me}\n", mode="755")
    chosen = rng.sample(PROJECTS, 3)
    first_proj = ""
    for i, (pname, pdesc) in enumerate(chosen):
        p = d(projects, pname, owner=me, group="dev", mode="775")
        first_proj = first_proj or pname
        mod = pname.replace("-", "_")
        f(p, "README.md", f"# {pname}\n\n{pdesc}.\n\n## Setup\n\nSee the install notes below.\n\n## Status\n\n"
                          f"Version 0.{rng.randint(1, 9)}.{rng.randint(0, 9)}. TODO: add CI badge.\n")
        f(p, ".gitignore", "__pycache__/\n*.pyc\nnode_modules/\n.env\ndist/\n")
        f(p, "CHANGELOG.md", "".join(f"## 0.{k}.0\n- {rng.choice(['fix crash on empty input', 'add --json flag', 'speed up parsing', 'new config file format', 'drop python 3.8'])}\n"
                                     for k in range(rng.randint(2, 5), 0, -1)))
        if i == 0:
            src = d(p, "src", owner=me, group="dev", mode="775")
            pkg = d(src, mod, owner=me, group="dev", mode="775")
            f(pkg, "__init__.py", f'"""{pdesc}."""\n__version__ = "0.3.1"\n')
            f(pkg, "main.py", f"import sys\n\nfrom {mod}.utils import load_config\n\n\ndef main(argv=None):\n    cfg = load_config()\n"
                              "    # --verbose is accepted but not used yet\n    print('running with', cfg)\n    return 0\n\n\nif __name__ == '__main__':\n    sys.exit(main())\n")
            f(pkg, "utils.py", "import json\nimport os\n\n\ndef load_config(path='config.json'):\n    if not os.path.exists(path):\n"
                               "        return {}\n    with open(path) as fh:\n        return json.load(fh)\n")
            tests = d(p, "tests", owner=me, group="dev", mode="775")
            f(tests, "test_main.py", f"from {mod}.main import main\n\n\ndef test_main_runs():\n    assert main([]) == 0\n")
            f(p, "requirements.txt", "requests==2.32.3\nclick==8.1.7\npytest==8.3.2\n")
            f(p, "config.json", '{\n  "units": "metric",\n  "timeout": 10,\n  "api_key": "REPLACE_ME"\n}\n')
        elif i == 1:
            src = d(p, "src", owner=me, group="dev", mode="775")
            f(p, "package.json", f'{{\n  "name": "{pname}",\n  "version": "1.{rng.randint(0, 9)}.0",\n  "main": "src/index.js",\n'
                                 '  "scripts": { "start": "node src/index.js", "test": "jest" }\n}\n')
            f(src, "index.js", "const api = require('./api');\n\napi.listen(process.env.PORT || 8080);\n// TODO: graceful shutdown\n")
            f(src, "api.js", "const express = require('express');\nconst app = express();\n\napp.get('/health', (req, res) => res.send('ok'));\n\n"
                             "module.exports = app;\n")
        else:
            f(p, "go.mod", f"module github.com/{me}/{pname}\n\ngo 1.22\n")
            f(p, "main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\t// TODO: parse flags\n}\n")
            f(p, "Makefile", "build:\n\tgo build -o bin/app .\n\ntest:\n\tgo test ./...\n")
    docs = d(h, "docs", owner=me, group=me)
    f(docs, "resume.md", f"# {w.users[me].full_name}\n\n## Experience\n\n- Software engineer, Northwind (2021-now)\n- Intern, Contoso (2020)\n\n"
                         "## Skills\n\nPython, Go, SQL, Linux\n")
    f(docs, "todo.txt", "- [ ] renew passport\n- [x] file expense report\n- [ ] book dentist\n- [ ] review Q1 budget\n")
    notes = d(docs, "meeting-notes", owner=me, group=me)
    for day in sorted(rng.sample(range(2, 28), 4)):
        who = rng.sample(FIRST_NAMES, 3)
        f(notes, f"2026-02-{day:02d}-standup.md", f"# Standup 2026-02-{day:02d}\n\nAttendees: {', '.join(who)}\n\n"
                                                  f"- {who[0]}: finished the migration script\n- {who[1]}: blocked on review\n"
                                                  f"- Action: {who[2]} to update the runbook\n", when=f"2026-02-{day:02d}T10:30:00")
    reports = d(docs, "reports", owner=me, group=me)
    f(reports, "q4-2025-report.md", f"# Q4 2025 report\n\nRevenue grew {rng.randint(3, 19)}% quarter over quarter.\n"
                                    f"Churn: {rng.randint(1, 6)}.{rng.randint(0, 9)}%\n\nRisks: hiring, vendor costs.\n")
    rows = ["category,jan,feb,mar"] + [f"{c},{rng.randint(100, 2000)},{rng.randint(100, 2000)},{rng.randint(100, 2000)}"
                                       for c in ["rent", "groceries", "transport", "utilities", "eating_out", "savings"]]
    f(reports, "budget-2026.csv", "\n".join(rows) + "\n")
    inv = d(docs, "invoices", owner=me, group=me)
    for k in range(4):
        num = 1040 + k
        f(inv, f"invoice-{num}.txt", f"INVOICE #{num}\nDate: 2026-0{k % 2 + 1}-{rng.randint(1, 28):02d}\nClient: "
                                      f"{rng.choice(['Acme Corp', 'Globex', 'Initech', 'Umbrella Ltd'])}\nAmount due: "
                                      f"{rng.randint(300, 4000)}.00 EUR\nStatus: {rng.choice(['paid', 'unpaid', 'overdue'])}\n")
    archive = d(docs, "archive", owner=me, group=me, mode="555")
    f(archive, "2025-taxes.txt", f"Tax year 2025\nGross income: {rng.randint(50, 120)}000\nFiled: 2026-02-15\n", mode="444")
    f(archive, "old-lease.pdf", binary_size=rng.randint(200_000, 400_000), mode="444")
    nd = d(h, "notes", owner=me, group=me)
    f(nd, "ideas.md", "# Ideas\n\n- CLI to rename photos by date\n- Home-lab dashboard\n- Learn Rust this spring\n")
    f(nd, "reading-list.md", "# Reading list\n\n- Designing Data-Intensive Applications\n- The Pragmatic Programmer\n- Thinking in Systems\n")
    f(nd, "shopping.txt", "milk\neggs\ncoffee beans\nolive oil\n", mode="444")
    dl = d(h, "downloads", owner=me, group=me)
    f(dl, "installer-v2.4.1.deb", binary_size=85 * 1024**2 + rng.randint(0, 999_999))
    f(dl, "dataset-2026.zip", binary_size=12 * 1024**2 + rng.randint(0, 999_999))
    f(dl, "paper-attention.pdf", binary_size=rng.randint(900_000, 2_000_000))
    f(dl, "boarding-pass.pdf", binary_size=rng.randint(80_000, 200_000))
    pics = d(h, "pictures", owner=me, group=me)
    vac = d(pics, f"{rng.choice(['lisbon', 'kyoto', 'oslo', 'porto', 'dublin'])}-2025", owner=me, group=me)
    for k in range(rng.randint(4, 7)):
        f(vac, f"IMG_{rng.randint(1000, 9999)}.jpg", binary_size=rng.randint(1_500_000, 4_500_000))
    shots = d(pics, "screenshots", owner=me, group=me)
    for k in range(3):
        f(shots, f"screenshot-2026-02-{rng.randint(10, 28):02d}-{k}.png", binary_size=rng.randint(100_000, 600_000))
    ln(h, "current", f"projects/{first_proj}")
    ln(h, "old-notes", "notes/old.md")  # dangling on purpose
    ph = d(home, peer, owner=peer, group=peer)
    f(ph, "README.txt", f"Hi, this is {w.users[peer].full_name}'s home. Shared drafts are in projects/.\n", owner=peer)
    f(ph, ".bashrc", "export EDITOR=nano\n", owner=peer)
    pp = d(ph, "projects", owner=peer, group=peer)
    f(pp, "report-draft.md", "# Draft report\n\nNumbers pending from finance.\n", owner=peer)
    f(pp, "deploy-notes.md", "1. run migrations\n2. restart workers\n3. check /var/log/app.log for ERROR lines\n", owner=peer)
    priv = d(ph, "private", owner=peer, group=peer, mode="700")
    f(priv, "diary.txt", "Private notes.\n", owner=peer, mode="600")
    shared = d(home, "shared", group="staff", mode="775")
    f(shared, "team-handbook.md", "# Team handbook\n\n## On-call\n\nRotation is weekly, hand over on Mondays.\n\n## Reviews\n\nTwo approvals needed.\n",
      owner=peer, group="staff", mode="664")
    f(shared, "onboarding.md", "# Onboarding\n\n1. Get laptop\n2. Request VPN access\n3. Read the team handbook\n", owner=peer, group="staff", mode="644")
    f(shared, "budget-2026.xlsx", owner=peer, group="staff", mode="664", binary_size=rng.randint(40_000, 90_000))
    f(shared, "holiday-rota.csv", "name,from,to\n" + "".join(f"{n},2026-0{rng.randint(4, 8)}-0{rng.randint(1, 9)},2026-0{rng.randint(4, 8)}-1{rng.randint(0, 9)}\n"
                                                              for n in rng.sample(FIRST_NAMES, 4)), owner=me, group="staff", mode="664")
    w.cwd_id = h
    # tags
    files = [n for n in w.nodes.values() if n.kind == "file" and n.owner == me]
    for n in rng.sample(files, 12):
        n.tags = sorted(rng.sample(["important", "work", "personal", "review", "archive", "taxes"], rng.randint(1, 2)))
    # the trash: one restorable item, one whose original path is taken again
    for name, parent, content in [("old-resume.md", docs, "# Resume (2023)\n\nOutdated.\n"), ("todo.txt", docs, "- [ ] old list\n")]:
        nid = f(parent, name + ".tmp", content)
        node = w.nodes[nid]
        w.nodes[parent].children.pop(node.name)
        node.name, node.parent_id = name, None
        tid = w.new_id("TRS")
        w.trash[tid] = TrashItem(trash_id=tid, original_path=f"/home/{me}/docs/{name}", name=name, kind="file",
                                 size=len(content.encode()), trashed_at=_ts(rng, datetime(2026, 2, 1), recent), node_id=nid)
    return w


# --------------------------------------------------------------------------- path and permission helpers


def _stamp(w: FsWorld) -> str:
    w.clock += 1
    return (NOW + timedelta(seconds=w.clock)).strftime("%Y-%m-%dT%H:%M:%S")


def _path_of(w: FsWorld, node: Node) -> str:
    parts = []
    while node.parent_id is not None:
        parts.append(node.name)
        node = w.nodes[node.parent_id]
    if node.node_id != w.root_id:
        return "(trash)/" + "/".join(reversed(parts))
    return "/" + "/".join(reversed(parts))


def _norm(w: FsWorld, path: str, base: list[str]) -> list[str]:
    if "\x00" in path:
        raise InvalidArgument("path must not contain NUL characters")
    if path == "~" or path.startswith("~/"):
        path = w.users[w.user].home + path[1:]
    comps = [] if path.startswith("/") else list(base)
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if comps:
                comps.pop()
        else:
            comps.append(part)
    return comps


def _cwd_comps(w: FsWorld) -> list[str]:
    node = w.nodes.get(w.cwd_id)
    p = _path_of(w, node) if node is not None else w.users[w.user].home
    if p.startswith("(trash)"):
        p = w.users[w.user].home
    return [c for c in p.split("/") if c]


def _abs(w: FsWorld, path: str) -> list[str]:
    return _norm(w, path, _cwd_comps(w))


def _show(comps: list[str]) -> str:
    return "/" + "/".join(comps)


def _bits(w: FsWorld, node: Node) -> int:
    if w.user == "root":
        return 7
    if node.owner == w.user:
        return int(node.mode[0])
    if node.group in w.users[w.user].groups:
        return int(node.mode[1])
    return int(node.mode[2])


def _perm_string(node: Node) -> str:
    head = {"file": "-", "directory": "d", "symlink": "l"}[node.kind]
    out = head
    for ch in node.mode:
        v = int(ch)
        out += ("r" if v & 4 else "-") + ("w" if v & 2 else "-") + ("x" if v & 1 else "-")
    return out


def _deny(w: FsWorld, node: Node, path: str, action: str) -> PermissionDenied:
    return PermissionDenied(f"permission denied: cannot {action} '{path}' ({_perm_string(node)} {node.owner}:{node.group}; "
                            f"you are {w.user}, groups {','.join(w.users[w.user].groups)})")


def _need(w: FsWorld, node: Node, bit: str, path: str, action: str) -> None:
    if node.kind == "symlink":
        return
    if not _bits(w, node) & {"r": 4, "w": 2, "x": 1}[bit]:
        raise _deny(w, node, path, action)


def _walk(w: FsWorld, comps: list[str], follow: bool, shown: str, depth: int = 0) -> Node:
    node = w.nodes[w.root_id]
    for i, name in enumerate(comps):
        here = _show(comps[:i])
        if node.kind != "directory":
            raise InvalidArgument(f"not a directory: '{here}' in path '{shown}' is a {node.kind}")
        _need(w, node, "x", here, "enter directory")
        cid = node.children.get(name)
        if cid is None:
            raise NotFound(f"no such file or directory: '{shown}' ('{_show(comps[:i + 1])}' does not exist; ls '{here}' shows what is there)")
        node = w.nodes[cid]
        if node.kind == "symlink" and (i < len(comps) - 1 or follow):
            if depth >= MAX_LINK_DEPTH:
                raise InvalidArgument(f"too many levels of symbolic links resolving '{shown}'")
            node = _walk(w, _norm(w, node.target or "", comps[:i]), True, shown, depth + 1)
    return node


def _resolve(w: FsWorld, path: str, follow: bool = True) -> tuple[Node, str]:
    comps = _abs(w, path)
    return _walk(w, comps, follow, _show(comps)), _show(comps)


def _parent(w: FsWorld, path: str) -> tuple[Node, str, str]:
    """The directory that holds ``path``, the final name, and the absolute path."""
    comps = _abs(w, path)
    if not comps:
        raise InvalidArgument("path '/' is the root directory and cannot be used here")
    shown = _show(comps)
    parent = _walk(w, comps[:-1], True, shown)
    if parent.kind != "directory":
        raise InvalidArgument(f"not a directory: '{_show(comps[:-1])}'")
    name = comps[-1]
    if len(name) > 255:
        raise InvalidArgument(f"file name '{name[:40]}...' is longer than 255 characters")
    return parent, name, shown


def _child(w: FsWorld, parent: Node, name: str) -> Node | None:
    cid = parent.children.get(name)
    return w.nodes[cid] if cid else None


def _need_dir_write(w: FsWorld, parent: Node, path: str, action: str) -> None:
    if _bits(w, parent) & 3 != 3:
        raise PermissionDenied(f"permission denied: cannot {action} '{path}': no write access to directory '{_path_of(w, parent)}' "
                               f"({_perm_string(parent)} {parent.owner}:{parent.group}; you are {w.user}, "
                               f"groups {','.join(w.users[w.user].groups)})")


def _size(w: FsWorld, node: Node) -> int:
    if node.kind == "file":
        return node.binary_size if node.binary_size is not None else len(node.content.encode())
    if node.kind == "symlink":
        return len((node.target or "").encode())
    return sum(_size(w, w.nodes[c]) for c in node.children.values())


def _descendants(w: FsWorld, node: Node) -> list[Node]:
    out = [node]
    if node.kind == "directory":
        for c in node.children.values():
            out.extend(_descendants(w, w.nodes[c]))
    return out


def _is_ancestor(w: FsWorld, anc: Node, node: Node | None) -> bool:
    while node is not None:
        if node.node_id == anc.node_id:
            return True
        node = w.nodes.get(node.parent_id) if node.parent_id else None
    return False


def _protect(w: FsWorld, node: Node, path: str, action: str) -> None:
    if node.node_id == w.root_id:
        raise PermissionDenied(f"cannot {action} the root directory '/'")
    if _is_ancestor(w, node, w.nodes.get(w.cwd_id)):
        raise StateConflict(f"cannot {action} '{path}': it is or contains the current working directory "
                            f"({_path_of(w, w.nodes[w.cwd_id])}); cd elsewhere first")
    if node.kind == "directory" and _path_of(w, node) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot {action} '{path}': it is a user's home directory")


def _owned_bytes(w: FsWorld, user: str) -> int:
    return sum(_size(w, n) for n in w.nodes.values() if n.kind == "file" and n.owner == user)


def _quota(w: FsWorld, extra: int) -> None:
    if extra <= 0:
        return
    used = _owned_bytes(w, w.user)
    if used + extra > w.quota_bytes:
        raise StateConflict(f"disk quota exceeded: user {w.user} uses {used} of {w.quota_bytes} bytes and this needs {extra} more; "
                            "rm files or empty_trash to free space (get_disk_usage shows usage)")


def _text(w: FsWorld, node: Node, path: str) -> str:
    if node.kind == "directory":
        raise InvalidArgument(f"'{path}' is a directory, not a file; ls lists its entries")
    _need(w, node, "r", path, "read")
    if node.binary_size is not None:
        raise StateConflict(f"'{path}' is a binary file ({node.binary_size} bytes) and has no text content; stat shows its metadata")
    return node.content


def _new_node(w: FsWorld, parent: Node, name: str, kind: Kind, content: str = "", target: str | None = None, mode: str | None = None) -> Node:
    t = _stamp(w)
    u = w.users[w.user]
    nid = w.new_id("INO", 5)
    n = Node(node_id=nid, name=name, kind=kind, parent_id=parent.node_id, content=content, target=target, owner=w.user, group=u.groups[0],
             mode=mode or {"file": "644", "directory": "755", "symlink": "777"}[kind], created_at=t, modified_at=t)
    w.nodes[nid] = n
    parent.children[name] = nid
    parent.modified_at = t
    return n


def _delete_tree(w: FsWorld, node: Node) -> int:
    gone = _descendants(w, node)
    for n in gone:
        w.nodes.pop(n.node_id, None)
    return len(gone)


def _check_tree_removable(w: FsWorld, node: Node, path: str, force: bool, action: str) -> None:
    for n in _descendants(w, node):
        p = path + _path_of(w, n)[len(_path_of(w, node)):]
        if n.kind == "directory" and (n is not node or n.children):
            _need(w, n, "r", p, f"{action} '{path}': cannot list")
            _need(w, n, "w", p, f"{action} '{path}': cannot remove the entries of")
        if n.kind == "file" and not force and not _bits(w, n) & 2:
            raise PermissionDenied(f"'{p}' is write-protected ({_perm_string(n)} {n.owner}:{n.group}); pass force=true to remove it anyway")


# --------------------------------------------------------------------------- results
class Entry(BaseModel):
    path: str
    name: str
    kind: Kind
    size: int
    owner: str
    group: str
    mode: str = Field(description="Octal permission bits, e.g. '644'")
    permissions: str = Field(description="ls-style permission string, e.g. '-rw-r--r--'")
    modified_at: str
    target: str | None = Field(default=None, description="Link target (symlinks only)")
    tags: list[str] = []


class FileInfo(Entry):
    created_at: str
    inode: str
    binary: bool
    readable: bool
    writable: bool
    entries: int | None = Field(default=None, description="Number of entries (directories only)")


class Listing(BaseModel):
    path: str
    entries: list[Entry]
    total: int


class PathList(BaseModel):
    entries: list[Entry]
    total: int
    skipped: list[str] = Field(default=[], description="Directories that could not be searched (permission denied)")


class Cwd(BaseModel):
    path: str


class WhoAmI(BaseModel):
    username: str
    groups: list[str]
    home: str
    cwd: str


class UserList(BaseModel):
    users: list[User]
    groups: list[str]
    total: int


class TreeEntry(BaseModel):
    path: str
    kind: Kind
    depth: int


class Tree(BaseModel):
    path: str
    tree: str
    entries: list[TreeEntry]
    directories: int
    files: int


class FileContent(BaseModel):
    path: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    size: int


class Lines(BaseModel):
    path: str
    lines: list[str]
    count: int
    total_lines: int


class WordCount(BaseModel):
    path: str
    lines: int
    words: int
    bytes: int
    characters: int


class GrepMatch(BaseModel):
    path: str
    line_number: int
    line: str


class GrepResult(BaseModel):
    pattern: str
    matches: list[GrepMatch]
    total: int
    files_searched: int
    skipped: list[str] = []


class DuEntry(BaseModel):
    path: str
    kind: Kind
    size: int


class DiskUsage(BaseModel):
    path: str
    size: int
    human: str
    children: list[DuEntry]
    skipped: list[str] = []


class FsUsage(BaseModel):
    capacity_bytes: int
    used_bytes: int
    free_bytes: int
    used_percent: float
    username: str
    quota_bytes: int
    quota_used_bytes: int
    trash_bytes: int
    by_directory: list[DuEntry]


class DiffResult(BaseModel):
    path_a: str
    path_b: str
    identical: bool
    added: int
    removed: int
    diff: str


class WriteResult(BaseModel):
    path: str
    size: int
    created: bool
    modified_at: str


class Moved(BaseModel):
    source: str
    path: str = Field(description="The new location")
    kind: Kind


class Copied(BaseModel):
    source: str
    path: str = Field(description="The new copy")
    kind: Kind
    files_copied: int
    bytes_copied: int


class Removed(BaseModel):
    path: str
    kind: Kind
    removed_count: int
    freed_bytes: int


class TrashList(BaseModel):
    items: list[TrashItem]
    total: int
    total_bytes: int


class Restored(BaseModel):
    trash_id: str
    path: str
    kind: Kind


class Emptied(BaseModel):
    removed_count: int
    freed_bytes: int


class LinkInfo(BaseModel):
    path: str
    target: str
    resolved_path: str
    target_exists: bool


class Tags(BaseModel):
    path: str
    tags: list[str]


class TagCount(BaseModel):
    tag: str
    count: int


class TagList(BaseModel):
    tags: list[TagCount]
    total: int


class ReplaceResult(BaseModel):
    path: str
    replacements: int
    size: int


def _human(n: int) -> str:
    for unit in ("B", "K", "M", "G"):
        if n < 1024 or unit == "G":
            return f"{n}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _entry(w: FsWorld, node: Node, path: str) -> Entry:
    size = DIR_SIZE if node.kind == "directory" else _size(w, node)
    return Entry(path=path, name=node.name or "/", kind=node.kind, size=size, owner=node.owner, group=node.group, mode=node.mode,
                 permissions=_perm_string(node), modified_at=node.modified_at, target=node.target, tags=list(node.tags))


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _iter_tree(w: FsWorld, node: Node, path: str, max_depth: int, skipped: list[str], depth: int = 0):
    """Yield (node, path, depth) below ``node`` without following symlinks; unreadable directories are skipped."""
    if node.kind != "directory" or depth >= max_depth:
        return
    if not (_bits(w, node) & 4 and _bits(w, node) & 1):
        skipped.append(path)
        return
    for name in sorted(node.children):
        child = w.nodes[node.children[name]]
        cp = _join(path, name)
        yield child, cp, depth + 1
        yield from _iter_tree(w, child, cp, max_depth, skipped, depth + 1)


# --------------------------------------------------------------------------- parameter types
PathArg = Annotated[str, Field(description="File or directory path, absolute ('/etc/hosts'), relative to the current directory "
                                           "('docs/todo.txt') or under your home ('~/notes')", min_length=1, max_length=1024)]
DirArg = Annotated[str, Field(description="Directory path, absolute or relative to the current directory ('.' is the current one)",
                              min_length=1, max_length=1024)]
Content = Annotated[str, Field(description="Text content", max_length=100_000)]
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
TagArg = Annotated[str, Field(description="Tag name: lowercase letters, digits and dashes, e.g. 'important'", pattern=r"^[a-z0-9][a-z0-9-]{0,23}$")]


TOOLS: ToolSet[FsWorld] = ToolSet()


@TOOLS.tool(read_only=True)
def pwd(w: FsWorld) -> Cwd:
    """Print the current working directory (relative paths are resolved against it)."""
    return Cwd(path=_show(_cwd_comps(w)))


@TOOLS.tool(idempotent=True)
def cd(w: FsWorld, path: DirArg) -> Cwd:
    """Change the current working directory; '..' goes up, '~' goes home."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    _need(w, node, "x", shown, "enter directory")
    w.cwd_id = node.node_id
    return Cwd(path=_path_of(w, node))


@TOOLS.tool(read_only=True)
def whoami(w: FsWorld) -> WhoAmI:
    """Show who you are: username, groups (they decide group permissions), home directory and current directory."""
    u = w.users[w.user]
    return WhoAmI(username=u.username, groups=u.groups, home=u.home, cwd=_show(_cwd_comps(w)))


@TOOLS.tool(read_only=True)
def list_users(w: FsWorld) -> UserList:
    """List the system's users and groups (valid values for chown)."""
    groups = sorted({g for u in w.users.values() for g in u.groups})
    return UserList(users=list(w.users.values()), groups=groups, total=len(w.users))

# ------------------------------------------------------------------ reading the tree
@TOOLS.tool(read_only=True)
def ls(
    w: FsWorld,
    path: DirArg = ".",
    all: Annotated[bool, Field(description="Include hidden entries (names starting with '.')")] = False,
    sort_by: Annotated[Literal["name", "size", "modified"], Field(description="Sort order (size and modified: largest/newest first)")] = "name",
) -> Listing:
    """List a directory's entries with size, owner, permissions and modification time (a file lists itself)."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        return Listing(path=shown, entries=[_entry(w, node, shown)], total=1)
    _need(w, node, "r", shown, "list directory")
    out = [_entry(w, w.nodes[cid], _join(shown, name)) for name, cid in node.children.items() if all or not name.startswith(".")]
    if sort_by == "name":
        out.sort(key=lambda e: e.name)
    elif sort_by == "size":
        out.sort(key=lambda e: (-e.size, e.name))
    else:
        out.sort(key=lambda e: (e.modified_at, e.name), reverse=True)
    return Listing(path=shown, entries=out, total=len(out))


@TOOLS.tool(read_only=True)
def tree(
    w: FsWorld,
    path: DirArg = ".",
    max_depth: Annotated[int, Field(description="How many levels to descend", ge=1, le=8)] = 3,
    all: Annotated[bool, Field(description="Include hidden entries")] = False,
) -> Tree:
    """Show a directory hierarchy as an indented tree (symlinks are shown, not followed)."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    _need(w, node, "r", shown, "list directory")
    lines, entries, nd, nf = [shown], [], 0, 0

    def rec(n: Node, p: str, prefix: str, depth: int) -> None:
        nonlocal nd, nf
        if not (_bits(w, n) & 4 and _bits(w, n) & 1):
            lines.append(prefix + "└── [permission denied]")
            return
        names = [k for k in sorted(n.children) if all or not k.startswith(".")]
        for i, name in enumerate(names):
            c = w.nodes[n.children[name]]
            last = i == len(names) - 1
            label = name + ("/" if c.kind == "directory" else f" -> {c.target}" if c.kind == "symlink" else "")
            lines.append(prefix + ("└── " if last else "├── ") + label)
            entries.append(TreeEntry(path=_join(p, name), kind=c.kind, depth=depth))
            if c.kind == "directory":
                nd += 1
                if depth < max_depth:
                    rec(c, _join(p, name), prefix + ("    " if last else "│   "), depth + 1)
            else:
                nf += 1

    rec(node, shown, "", 1)
    return Tree(path=shown, tree="\n".join(lines), entries=entries, directories=nd, files=nf)


@TOOLS.tool(read_only=True)
def stat(
    w: FsWorld,
    path: PathArg,
    follow_symlinks: Annotated[bool, Field(description="Describe the link's target instead of the link itself")] = True,
) -> FileInfo:
    """Show a file's or directory's metadata: kind, size, owner, group, permissions, times, tags and whether you can read/write it."""
    node, shown = _resolve(w, path, follow_symlinks)
    e = _entry(w, node, shown)
    b = _bits(w, node) if node.kind != "symlink" else 7
    return FileInfo(**e.model_dump(), created_at=node.created_at, inode=node.node_id, binary=node.binary_size is not None,
                    readable=bool(b & 4), writable=bool(b & 2), entries=len(node.children) if node.kind == "directory" else None)


@TOOLS.tool(read_only=True)
def read_file(
    w: FsWorld,
    path: PathArg,
    offset: Annotated[int, Field(description="First line to return (1-based)", ge=1)] = 1,
    limit: Annotated[int, Field(description="Maximum number of lines to return", ge=1, le=5000)] = 500,
) -> FileContent:
    """Read a text file (optionally a window of lines); binary files and directories cannot be read."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    lines = text.splitlines(keepends=True)
    chunk = lines[offset - 1: offset - 1 + limit]
    return FileContent(path=shown, content="".join(chunk), start_line=offset, end_line=offset - 1 + len(chunk),
                       total_lines=len(lines), size=_size(w, node))


@TOOLS.tool(read_only=True)
def head(w: FsWorld, path: PathArg, count: Annotated[int, Field(description="Number of lines", ge=1, le=1000)] = 10) -> Lines:
    """Show the first lines of a text file."""
    node, shown = _resolve(w, path)
    lines = _text(w, node, shown).splitlines()
    return Lines(path=shown, lines=lines[:count], count=len(lines[:count]), total_lines=len(lines))


@TOOLS.tool(read_only=True)
def tail(w: FsWorld, path: PathArg, count: Annotated[int, Field(description="Number of lines", ge=1, le=1000)] = 10) -> Lines:
    """Show the last lines of a text file (e.g. the newest log entries)."""
    node, shown = _resolve(w, path)
    lines = _text(w, node, shown).splitlines()
    out = lines[-count:]
    return Lines(path=shown, lines=out, count=len(out), total_lines=len(lines))


@TOOLS.tool(read_only=True)
def wc(w: FsWorld, path: PathArg) -> WordCount:
    """Count lines, words, bytes and characters of a text file."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    return WordCount(path=shown, lines=text.count("\n"), words=len(text.split()), bytes=len(text.encode()), characters=len(text))


@TOOLS.tool(read_only=True)
def diff(
    w: FsWorld,
    path_a: Annotated[str, Field(description="First (old) text file path", min_length=1)],
    path_b: Annotated[str, Field(description="Second (new) text file path", min_length=1)],
    context: Annotated[int, Field(description="Lines of context around changes", ge=0, le=10)] = 3,
) -> DiffResult:
    """Compare two text files and return a unified diff with counts of added and removed lines."""
    na, sa = _resolve(w, path_a)
    nb, sb = _resolve(w, path_b)
    ta, tb = _text(w, na, sa), _text(w, nb, sb)
    lines = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), fromfile=sa, tofile=sb, n=context, lineterm=""))
    added = sum(1 for ln_ in lines if ln_.startswith("+") and not ln_.startswith("+++"))
    removed = sum(1 for ln_ in lines if ln_.startswith("-") and not ln_.startswith("---"))
    return DiffResult(path_a=sa, path_b=sb, identical=ta == tb, added=added, removed=removed, diff="\n".join(lines))

# ------------------------------------------------------------------ searching
@TOOLS.tool(read_only=True)
def find(
    w: FsWorld,
    path: DirArg = ".",
    name: Annotated[str | None, Field(description="Shell glob on the entry name, e.g. '*.md' or 'report*'")] = None,
    kind: Annotated[Kind | None, Field(description="Only entries of this kind")] = None,
    min_size: Annotated[int | None, Field(description="Only files of at least this many bytes", ge=0)] = None,
    max_size: Annotated[int | None, Field(description="Only files of at most this many bytes", ge=0)] = None,
    modified_after: Annotated[str | None, Field(description="Only entries modified on or after this date, YYYY-MM-DD", pattern=DATE_PATTERN)] = None,
    max_depth: Annotated[int, Field(description="How many levels to descend", ge=1, le=20)] = 10,
    limit: Annotated[int, Field(description="Maximum number of results", ge=1, le=500)] = 100,
) -> PathList:
    """Find files and directories below a directory by name glob, kind, size or modification date (like find(1))."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    skipped: list[str] = []
    out = []
    for n, p, _ in _iter_tree(w, node, shown, max_depth, skipped):
        if name is not None and not fnmatch.fnmatchcase(n.name, name):
            continue
        if kind is not None and n.kind != kind:
            continue
        size = _size(w, n)
        if (min_size is not None or max_size is not None) and n.kind != "file":
            continue
        if (min_size is not None and size < min_size) or (max_size is not None and size > max_size):
            continue
        if modified_after is not None and n.modified_at[:10] < modified_after:
            continue
        out.append(_entry(w, n, p))
    return PathList(entries=out[:limit], total=len(out[:limit]), skipped=skipped)


@TOOLS.tool(read_only=True)
def search_by_extension(
    w: FsWorld,
    extension: Annotated[str, Field(description="File extension with or without the dot, e.g. 'md' or '.py'", pattern=r"^\.?[A-Za-z0-9]{1,10}$")],
    path: DirArg = "~",
    limit: Annotated[int, Field(description="Maximum number of results", ge=1, le=500)] = 100,
) -> PathList:
    """Find all files with a given extension below a directory (default: your home), case-insensitively."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    ext = "." + extension.lstrip(".").lower()
    skipped: list[str] = []
    out = [_entry(w, n, p) for n, p, _ in _iter_tree(w, node, shown, 20, skipped) if n.kind == "file" and n.name.lower().endswith(ext)]
    return PathList(entries=out[:limit], total=len(out[:limit]), skipped=skipped)


@TOOLS.tool(read_only=True)
def grep(
    w: FsWorld,
    pattern: Annotated[str, Field(description="Regular expression (Python syntax) to search for", min_length=1, max_length=500)],
    path: PathArg = ".",
    recursive: Annotated[bool, Field(description="Search every file below a directory (required when path is a directory)")] = True,
    ignore_case: Annotated[bool, Field(description="Case-insensitive matching")] = False,
    include: Annotated[str | None, Field(description="Only search files whose name matches this glob, e.g. '*.py'")] = None,
    max_results: Annotated[int, Field(description="Stop after this many matching lines", ge=1, le=1000)] = 100,
) -> GrepResult:
    """Search text files for lines matching a regular expression; returns path, line number and line for each match."""
    try:
        rx = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise InvalidArgument(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
    node, shown = _resolve(w, path)
    skipped: list[str] = []
    if node.kind == "directory":
        if not recursive:
            raise InvalidArgument(f"'{shown}' is a directory; pass recursive=true or give a file path")
        _need(w, node, "r", shown, "list directory")
        files = [(n, p) for n, p, _ in _iter_tree(w, node, shown, 20, skipped) if n.kind == "file"]
    else:
        _text(w, node, shown)
        files = [(node, shown)]
    matches: list[GrepMatch] = []
    searched = 0
    for n, p in files:
        if include is not None and not fnmatch.fnmatchcase(n.name, include):
            continue
        if n.binary_size is not None:
            continue
        if not _bits(w, n) & 4:
            skipped.append(p)
            continue
        searched += 1
        for i, line in enumerate(n.content.splitlines(), 1):
            if rx.search(line):
                matches.append(GrepMatch(path=p, line_number=i, line=line[:500]))
                if len(matches) >= max_results:
                    break
        if len(matches) >= max_results:
            break
    return GrepResult(pattern=pattern, matches=matches, total=len(matches), files_searched=searched, skipped=skipped)


@TOOLS.tool(read_only=True)
def list_recent(
    w: FsWorld,
    path: DirArg = "~",
    limit: Annotated[int, Field(description="How many files", ge=1, le=100)] = 10,
) -> PathList:
    """List the most recently modified files below a directory (default: your home), newest first."""
    node, shown = _resolve(w, path)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}")
    skipped: list[str] = []
    files = [(n, p) for n, p, _ in _iter_tree(w, node, shown, 20, skipped) if n.kind == "file"]
    files.sort(key=lambda t: (t[0].modified_at, t[1]), reverse=True)
    out = [_entry(w, n, p) for n, p in files[:limit]]
    return PathList(entries=out, total=len(out), skipped=skipped)


@TOOLS.tool(read_only=True)
def du(w: FsWorld, path: PathArg = ".") -> DiskUsage:
    """Show the total size of a directory (or file) and the size of each direct child, largest first."""
    node, shown = _resolve(w, path)
    skipped: list[str] = []
    if node.kind != "directory":
        return DiskUsage(path=shown, size=_size(w, node), human=_human(_size(w, node)), children=[])
    _need(w, node, "r", shown, "list directory")
    kids = []
    for name, cid in node.children.items():
        c = w.nodes[cid]
        if c.kind == "directory" and not _bits(w, c) & 4:
            skipped.append(_join(shown, name))
        kids.append(DuEntry(path=_join(shown, name), kind=c.kind, size=_size(w, c)))
    kids.sort(key=lambda k: (-k.size, k.path))
    total = _size(w, node)
    return DiskUsage(path=shown, size=total, human=_human(total), children=kids, skipped=skipped)


@TOOLS.tool(read_only=True)
def get_disk_usage(w: FsWorld) -> FsUsage:
    """Show disk capacity, used and free space, your quota usage, the space held by the trash, and usage per top-level directory."""
    root = w.nodes[w.root_id]
    used = sum(_size(w, n) for n in w.nodes.values() if n.kind == "file")
    trash = sum(_size(w, w.nodes[t.node_id]) for t in w.trash.values() if t.node_id in w.nodes)
    by_dir = sorted((DuEntry(path="/" + name, kind=w.nodes[cid].kind, size=_size(w, w.nodes[cid])) for name, cid in root.children.items()),
                    key=lambda d: (-d.size, d.path))
    return FsUsage(capacity_bytes=w.capacity_bytes, used_bytes=used, free_bytes=w.capacity_bytes - used,
                   used_percent=round(100 * used / w.capacity_bytes, 2), username=w.user, quota_bytes=w.quota_bytes,
                   quota_used_bytes=_owned_bytes(w, w.user), trash_bytes=trash, by_directory=by_dir)

# ------------------------------------------------------------------ creating and writing
@TOOLS.tool()
def mkdir(
    w: FsWorld,
    path: PathArg,
    parents: Annotated[bool, Field(description="Also create missing parent directories; no error if the directory exists")] = False,
) -> Entry:
    """Create a directory (with parents=true, also its missing parents, like mkdir -p)."""
    comps = _abs(w, path)
    if not comps:
        raise StateConflict("file exists: '/'")
    if parents:
        node = w.nodes[w.root_id]
        for i, name in enumerate(comps):
            here = _show(comps[:i + 1])
            c = _child(w, node, name)
            if c is not None and c.kind == "symlink":
                c = _walk(w, comps[:i + 1], True, here)
            if c is None:
                _need_dir_write(w, node, here, "create")
                c = _new_node(w, node, name, "directory")
            elif c.kind != "directory":
                raise StateConflict(f"file exists: '{here}' is a {c.kind}, not a directory")
            else:
                _need(w, c, "x", here, "enter directory")
            node = c
        return _entry(w, node, _show(comps))
    parent, name, shown = _parent(w, path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists")
    _need_dir_write(w, parent, shown, "create")
    return _entry(w, _new_node(w, parent, name, "directory"), shown)


@TOOLS.tool()
def touch(w: FsWorld, path: PathArg) -> Entry:
    """Create an empty file, or update the modification time of an existing one."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        return _entry(w, _new_node(w, parent, name, "file"), shown)
    if c.kind == "symlink":
        c, _ = _resolve(w, path)
    _need(w, c, "w", shown, "modify")
    c.modified_at = _stamp(w)
    return _entry(w, c, shown)


@TOOLS.tool(destructive=True, idempotent=True)
def write_file(
    w: FsWorld,
    path: PathArg,
    content: Content,
    overwrite: Annotated[bool, Field(description="Replace the content if the file already exists (otherwise that is an error)")] = False,
) -> WriteResult:
    """Write text to a file, creating it; replacing an existing file's content needs overwrite=true."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is not None and c.kind == "symlink":
        c, _ = _resolve(w, path)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        _quota(w, len(content.encode()))
        n = _new_node(w, parent, name, "file", content=content)
        return WriteResult(path=shown, size=_size(w, n), created=True, modified_at=n.modified_at)
    if c.kind == "directory":
        raise InvalidArgument(f"'{shown}' is a directory; give a file path")
    if not overwrite:
        raise StateConflict(f"file exists: '{shown}' ({_size(w, c)} bytes); pass overwrite=true to replace it or append_file to add to it")
    _need(w, c, "w", shown, "write")
    _quota(w, len(content.encode()) - _size(w, c) if c.owner == w.user else 0)
    c.content, c.binary_size, c.modified_at = content, None, _stamp(w)
    return WriteResult(path=shown, size=_size(w, c), created=False, modified_at=c.modified_at)


@TOOLS.tool()
def append_file(w: FsWorld, path: PathArg, content: Annotated[str, Field(description="Text to add at the end (include a trailing newline yourself)",
                                                             min_length=1, max_length=100_000)]) -> WriteResult:
    """Append text to the end of a file, creating the file if it does not exist."""
    parent, name, shown = _parent(w, path)
    c = _child(w, parent, name)
    if c is not None and c.kind == "symlink":
        c, _ = _resolve(w, path)
    if c is None:
        _need_dir_write(w, parent, shown, "create")
        _quota(w, len(content.encode()))
        n = _new_node(w, parent, name, "file", content=content)
        return WriteResult(path=shown, size=_size(w, n), created=True, modified_at=n.modified_at)
    _text(w, c, shown)
    _need(w, c, "w", shown, "write")
    _quota(w, len(content.encode()) if c.owner == w.user else 0)
    c.content += content
    c.modified_at = _stamp(w)
    return WriteResult(path=shown, size=_size(w, c), created=False, modified_at=c.modified_at)


@TOOLS.tool(idempotent=False)
def replace_in_file(
    w: FsWorld,
    path: PathArg,
    old_text: Annotated[str, Field(description="Exact text to find", min_length=1)],
    new_text: Annotated[str, Field(description="Replacement text (may be empty)")],
    count: Annotated[int, Field(description="Replace at most this many occurrences; 0 replaces all", ge=0)] = 0,
) -> ReplaceResult:
    """Replace exact occurrences of a text in a file (like sed s/old/new/g) and return how many were replaced."""
    node, shown = _resolve(w, path)
    text = _text(w, node, shown)
    n = text.count(old_text)
    if n == 0:
        raise InvalidArgument(f"old_text {old_text[:60]!r} does not occur in '{shown}'; read_file or grep shows its content")
    _need(w, node, "w", shown, "write")
    done = n if count == 0 else min(n, count)
    new = text.replace(old_text, new_text, done)
    _quota(w, len(new.encode()) - len(text.encode()) if node.owner == w.user else 0)
    node.content, node.modified_at = new, _stamp(w)
    return ReplaceResult(path=shown, replacements=done, size=_size(w, node))


@TOOLS.tool()
def ln(
    w: FsWorld,
    target: Annotated[str, Field(description="What the link points to (absolute, or relative to the link's directory); it need not exist", min_length=1)],
    link_path: Annotated[str, Field(description="Where to create the symbolic link", min_length=1)],
) -> Entry:
    """Create a symbolic link at link_path pointing to target (like ln -s)."""
    parent, name, shown = _parent(w, link_path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists")
    _need_dir_write(w, parent, shown, "create")
    return _entry(w, _new_node(w, parent, name, "symlink", target=target), shown)


@TOOLS.tool(read_only=True)
def readlink(w: FsWorld, path: PathArg) -> LinkInfo:
    """Show where a symbolic link points and whether its target exists."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind != "symlink":
        raise InvalidArgument(f"'{shown}' is not a symbolic link (it is a {node.kind})")
    comps = _norm(w, node.target or "", _abs(w, path)[:-1])
    try:
        _walk(w, comps, True, _show(comps))
        exists = True
    except (NotFound, InvalidArgument, PermissionDenied):
        exists = False
    return LinkInfo(path=shown, target=node.target or "", resolved_path=_show(comps), target_exists=exists)

# ------------------------------------------------------------------ moving and copying
def _destination(w: FsWorld, src: Node, destination: str) -> tuple[Node, str, str]:
    """(parent, name, shown) for placing ``src`` at ``destination`` (into it when it is a directory)."""
    try:
        d_node, d_shown = _resolve(w, destination)
    except NotFound:
        d_node = None
    if d_node is not None and d_node.kind == "directory":
        c = _child(w, d_node, src.name)
        shown = _join(d_shown, src.name)
        if c is not None:
            raise StateConflict(f"file exists: '{shown}' already exists; choose another destination or remove it first")
        return d_node, src.name, shown
    parent, name, shown = _parent(w, destination)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' already exists; choose another destination or remove it first")
    return parent, name, shown


@TOOLS.tool()
def mv(
    w: FsWorld,
    source: Annotated[str, Field(description="Path of the file, directory or link to move", min_length=1)],
    destination: Annotated[str, Field(description="New path, or an existing directory to move into", min_length=1)],
) -> Moved:
    """Move (or rename) a file, directory or symlink; an existing directory as destination receives it. Never overwrites."""
    src, s_shown = _resolve(w, source, follow=False)
    if src.node_id == w.root_id:
        raise PermissionDenied("cannot move the root directory '/'")
    if src.kind == "directory" and _path_of(w, src) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot move '{s_shown}': it is a user's home directory")
    old_parent = w.nodes[src.parent_id]  # type: ignore[index]
    parent, name, shown = _destination(w, src, destination)
    if _is_ancestor(w, src, parent):
        raise InvalidArgument(f"cannot move '{s_shown}' into itself ('{shown}')")
    _need_dir_write(w, old_parent, s_shown, "remove")
    _need_dir_write(w, parent, shown, "create")
    old_parent.children.pop(src.name)
    src.name, src.parent_id = name, parent.node_id
    parent.children[name] = src.node_id
    t = _stamp(w)
    old_parent.modified_at = parent.modified_at = t
    return Moved(source=s_shown, path=shown, kind=src.kind)


@TOOLS.tool()
def rename(
    w: FsWorld,
    path: PathArg,
    new_name: Annotated[str, Field(description="New name in the same directory (no '/')", min_length=1, max_length=255,
                                   pattern=r"^[^/\x00]+$")],
) -> Moved:
    """Rename a file, directory or link within its directory."""
    if new_name in (".", ".."):
        raise InvalidArgument("new_name cannot be '.' or '..'")
    node, shown = _resolve(w, path, follow=False)
    if node.node_id == w.root_id:
        raise PermissionDenied("cannot rename the root directory '/'")
    if node.kind == "directory" and _path_of(w, node) in {u.home for u in w.users.values()}:
        raise PermissionDenied(f"cannot rename '{shown}': it is a user's home directory")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    new_path = _join(shown.rsplit("/", 1)[0] or "/", new_name)
    if new_name == node.name:
        return Moved(source=shown, path=new_path, kind=node.kind)
    if new_name in parent.children:
        raise StateConflict(f"file exists: '{new_path}' already exists")
    _need_dir_write(w, parent, shown, "rename")
    parent.children.pop(node.name)
    node.name = new_name
    parent.children[new_name] = node.node_id
    parent.modified_at = _stamp(w)
    return Moved(source=shown, path=new_path, kind=node.kind)


@TOOLS.tool()
def cp(
    w: FsWorld,
    source: Annotated[str, Field(description="Path of the file or directory to copy", min_length=1)],
    destination: Annotated[str, Field(description="Path of the copy, or an existing directory to copy into", min_length=1)],
    recursive: Annotated[bool, Field(description="Required to copy a directory and everything in it")] = False,
    overwrite: Annotated[bool, Field(description="Replace an existing destination file's content")] = False,
) -> Copied:
    """Copy a file (or, with recursive=true, a directory tree); copies are owned by you and count against your quota."""
    src, s_shown = _resolve(w, source)
    if src.kind == "directory" and not recursive:
        raise InvalidArgument(f"'{s_shown}' is a directory; pass recursive=true to copy it")
    tree_nodes = _descendants(w, src)
    for n in tree_nodes:
        p = s_shown + _path_of(w, n)[len(_path_of(w, src)):]
        if n.kind != "symlink":
            _need(w, n, "r", p, "read")
        if n.kind == "directory":
            _need(w, n, "x", p, "enter directory")
    nbytes = sum(_size(w, n) for n in tree_nodes if n.kind == "file")
    if overwrite and src.kind == "file":
        try:
            d_node, d_shown = _resolve(w, destination)
        except NotFound:
            d_node = None
        if d_node is not None and d_node.kind == "directory":
            d_node = _child(w, d_node, src.name)
            d_shown = _join(d_shown, src.name)
            if d_node is not None and d_node.kind == "symlink":
                d_node, _ = _resolve(w, d_shown)
        if d_node is not None and d_node.kind == "file":
            if d_node.node_id == src.node_id:
                raise InvalidArgument(f"'{s_shown}' and '{d_shown}' are the same file")
            _need(w, d_node, "w", d_shown, "write")
            _quota(w, nbytes - (_size(w, d_node) if d_node.owner == w.user else 0))
            d_node.content, d_node.binary_size, d_node.modified_at = src.content, src.binary_size, _stamp(w)
            return Copied(source=s_shown, path=d_shown, kind="file", files_copied=1, bytes_copied=nbytes)
    parent, name, shown = _destination(w, src, destination)
    if _is_ancestor(w, src, parent):
        raise InvalidArgument(f"cannot copy '{s_shown}' into itself ('{shown}')")
    _need_dir_write(w, parent, shown, "create")
    _quota(w, nbytes)

    def copy(n: Node, into: Node, as_name: str) -> int:
        c = _new_node(w, into, as_name, n.kind, content=n.content, target=n.target, mode=n.mode)
        c.binary_size = n.binary_size
        k = 1 if n.kind == "file" else 0
        for child_name in sorted(n.children):
            k += copy(w.nodes[n.children[child_name]], c, child_name)
        return k

    files = copy(src, parent, name)
    return Copied(source=s_shown, path=shown, kind=src.kind, files_copied=files, bytes_copied=nbytes)

# ------------------------------------------------------------------ removing, trash
@TOOLS.tool(destructive=True, idempotent=True)
def rmdir(w: FsWorld, path: DirArg) -> Removed:
    """Remove an empty directory."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind != "directory":
        raise InvalidArgument(f"not a directory: '{shown}' is a {node.kind}; use rm for files and links")
    _protect(w, node, shown, "remove")
    if node.children:
        raise StateConflict(f"directory not empty: '{shown}' holds {len(node.children)} entries ({', '.join(sorted(node.children)[:5])}); "
                            "remove them first or use rm with recursive=true")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    parent.children.pop(node.name)
    parent.modified_at = _stamp(w)
    _delete_tree(w, node)
    return Removed(path=shown, kind="directory", removed_count=1, freed_bytes=0)


@TOOLS.tool(destructive=True, idempotent=True)
def rm(
    w: FsWorld,
    path: PathArg,
    recursive: Annotated[bool, Field(description="Required to remove a directory and everything in it")] = False,
    force: Annotated[bool, Field(description="Also remove write-protected (read-only) files")] = False,
) -> Removed:
    """Permanently delete a file, link or (with recursive=true) a directory tree; it cannot be restored (use trash for that)."""
    node, shown = _resolve(w, path, follow=False)
    if node.kind == "directory" and not recursive:
        raise InvalidArgument(f"'{shown}' is a directory; pass recursive=true, or use rmdir for an empty directory")
    _protect(w, node, shown, "remove")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    _check_tree_removable(w, node, shown, force, "remove")
    freed = _size(w, node)
    parent.children.pop(node.name)
    parent.modified_at = _stamp(w)
    count = _delete_tree(w, node)
    return Removed(path=shown, kind=node.kind, removed_count=count, freed_bytes=freed)


@TOOLS.tool()
def trash(w: FsWorld, path: PathArg) -> TrashItem:
    """Move a file, link or directory to the trash; restore brings it back, empty_trash deletes it for good."""
    node, shown = _resolve(w, path, follow=False)
    _protect(w, node, shown, "trash")
    parent = w.nodes[node.parent_id]  # type: ignore[index]
    _need_dir_write(w, parent, shown, "remove")
    _check_tree_removable(w, node, shown, True, "trash")
    t = _stamp(w)
    parent.children.pop(node.name)
    parent.modified_at = t
    node.parent_id = None
    tid = w.new_id("TRS")
    item = TrashItem(trash_id=tid, original_path=shown, name=node.name, kind=node.kind, size=_size(w, node),
                     trashed_at=t, node_id=node.node_id)
    w.trash[tid] = item
    return item


@TOOLS.tool(read_only=True)
def list_trash(w: FsWorld) -> TrashList:
    """List what is in the trash with each item's trash_id and original path."""
    items = sorted(w.trash.values(), key=lambda t: t.trashed_at, reverse=True)
    return TrashList(items=items, total=len(items), total_bytes=sum(t.size for t in items))


@TOOLS.tool()
def restore(
    w: FsWorld,
    trash_id: Annotated[str, Field(description="Trash item id, e.g. 'TRS-0001' (from list_trash)")],
    destination: Annotated[str | None, Field(description="Restore to this path instead of the original one")] = None,
) -> Restored:
    """Restore an item from the trash to its original path (or to destination); fails if that path is taken."""
    item = w.trash.get(trash_id)
    if item is None:
        raise not_found("trash item", trash_id, "list_trash shows valid trash ids")
    parent, name, shown = _parent(w, destination or item.original_path)
    if _child(w, parent, name) is not None:
        raise StateConflict(f"file exists: '{shown}' is occupied; pass destination to restore {trash_id} elsewhere")
    _need_dir_write(w, parent, shown, "create")
    node = w.nodes[item.node_id]
    node.name, node.parent_id = name, parent.node_id
    parent.children[name] = node.node_id
    parent.modified_at = _stamp(w)
    del w.trash[trash_id]
    return Restored(trash_id=trash_id, path=shown, kind=node.kind)


@TOOLS.tool(destructive=True)
def empty_trash(
    w: FsWorld,
    trash_id: Annotated[str | None, Field(description="Delete only this trash item (default: everything in the trash)")] = None,
) -> Emptied:
    """Permanently delete everything in the trash (or one item), freeing its space."""
    if trash_id is not None and trash_id not in w.trash:
        raise not_found("trash item", trash_id, "list_trash shows valid trash ids")
    ids = [trash_id] if trash_id else list(w.trash)
    freed = count = 0
    for tid in ids:
        item = w.trash.pop(tid)
        node = w.nodes.get(item.node_id)
        if node is not None:
            freed += _size(w, node)
            count += _delete_tree(w, node)
    return Emptied(removed_count=count, freed_bytes=freed)

# ------------------------------------------------------------------ ownership and permissions
@TOOLS.tool(idempotent=True)
def chmod(
    w: FsWorld,
    path: PathArg,
    mode: Annotated[str, Field(description="Octal permission bits for owner, group, others, e.g. '644' or '755'", pattern=r"^[0-7]{3}$")],
) -> Entry:
    """Change a file's or directory's permission bits; only its owner may do this."""
    node, shown = _resolve(w, path)
    if node.owner != w.user:
        raise PermissionDenied(f"cannot chmod '{shown}': it is owned by {node.owner}, not by you ({w.user})")
    node.mode = mode
    node.modified_at = _stamp(w)
    return _entry(w, node, shown)


@TOOLS.tool(idempotent=True)
def chown(
    w: FsWorld,
    path: PathArg,
    owner: Annotated[str, Field(description="New owner's username (from list_users)", min_length=1)],
    group: Annotated[str | None, Field(description="New group name (from list_users); default: keep the current group")] = None,
) -> Entry:
    """Give a file or directory you own to another user and/or group (you lose owner rights over it)."""
    node, shown = _resolve(w, path)
    if owner not in w.users:
        raise not_found("user", owner, f"owner must be one of {', '.join(sorted(w.users))}")
    groups = {g for u in w.users.values() for g in u.groups}
    if group is not None and group not in groups:
        raise not_found("group", group, f"group must be one of {', '.join(sorted(groups))}")
    if node.owner != w.user:
        raise PermissionDenied(f"cannot chown '{shown}': it is owned by {node.owner}, not by you ({w.user})")
    if group is not None and group not in w.users[w.user].groups and group not in w.users[owner].groups:
        raise PermissionDenied(f"cannot set group {group!r}: neither you nor {owner} belong to it")
    node.owner = owner
    if group is not None:
        node.group = group
    node.modified_at = _stamp(w)
    return _entry(w, node, shown)

# ------------------------------------------------------------------ tags
@TOOLS.tool(idempotent=True)
def tag_file(w: FsWorld, path: PathArg, tag: TagArg) -> Tags:
    """Attach a tag to a file or directory you can write (tags are searchable with find_by_tag)."""
    node, shown = _resolve(w, path)
    _need(w, node, "w", shown, "tag")
    if tag not in node.tags:
        node.tags = sorted(node.tags + [tag])
    return Tags(path=shown, tags=list(node.tags))


@TOOLS.tool(idempotent=True)
def untag_file(w: FsWorld, path: PathArg, tag: TagArg) -> Tags:
    """Remove a tag from a file or directory."""
    node, shown = _resolve(w, path)
    if tag not in node.tags:
        raise StateConflict(f"'{shown}' has no tag {tag!r}; its tags are {node.tags or 'none'}")
    _need(w, node, "w", shown, "untag")
    node.tags = [t for t in node.tags if t != tag]
    return Tags(path=shown, tags=list(node.tags))


@TOOLS.tool(read_only=True)
def list_tags(w: FsWorld) -> TagList:
    """List all tags in use with the number of files carrying each."""
    counts: dict[str, int] = {}
    for n in w.nodes.values():
        if not n.tags or _path_of(w, n).startswith("(trash)"):
            continue
        for t in n.tags:
            counts[t] = counts.get(t, 0) + 1
    out = [TagCount(tag=t, count=c) for t, c in sorted(counts.items())]
    return TagList(tags=out, total=len(out))


@TOOLS.tool(read_only=True)
def find_by_tag(w: FsWorld, tag: TagArg) -> PathList:
    """List the files and directories carrying a tag (items in the trash are not included)."""
    out = []
    for n in w.nodes.values():
        if tag in n.tags:
            p = _path_of(w, n)
            if not p.startswith("(trash)"):
                out.append(_entry(w, n, p))
    if not out:
        known = sorted({t for n in w.nodes.values() for t in n.tags})
        raise not_found("tag", tag, f"tags in use: {', '.join(known) or 'none'}")
    out.sort(key=lambda e: e.path)
    return PathList(entries=out, total=len(out))


def build(seed: int = 0) -> EnvServer[FsWorld]:
    """A fresh filesystem server; a request naming no seed gets the world of ``seed``."""
    return EnvServer(
        "filesystem", seeder=seed_world, category="productivity",
        description="A Linux-like virtual file system for one user: navigate, read, search, write, move, copy, link, tag and trash "
                    "files, with owners, rwx permissions, a disk quota and a current working directory.",
        tools=TOOLS, default_seed=seed,
    )
