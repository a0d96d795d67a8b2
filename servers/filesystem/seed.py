"""filesystem: the seeded initial world (built only from the ``random.Random`` it is given)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from servers.filesystem.world import LOG_COMPONENTS, LOG_MESSAGES, PROJECTS, FsWorld, Kind, Node, TrashItem, User
from servers.names import FIRST_NAMES, LAST_NAMES


def _ts(rng: random.Random, lo: datetime, hi: datetime) -> str:
    span = int((hi - lo).total_seconds())
    return (lo + timedelta(seconds=rng.randint(0, span))).strftime("%Y-%m-%dT%H:%M:%S")


def _log(rng: random.Random, n: int, day: str = "2026-03-01") -> str:
    lines = []
    secs = sorted(rng.sample(range(0, 86000), n))
    for s in secs:
        lvl = rng.choices(["INFO", "WARN", "ERROR"], weights=[7, 2, 1])[0]
        msg = rng.choice(LOG_MESSAGES[lvl]).format(n=rng.randint(10, 9999), k=rng.randint(2, 5), p=rng.randint(80, 97))
        lines.append(
            f"{day}T{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d} {lvl:<5} {rng.choice(LOG_COMPONENTS)}: {msg}"
        )
    return "\n".join(lines) + "\n"


class _Tree:
    """Adds nodes to a world being seeded: times drawn from ``rng``, ``me`` and ``peer`` the two users."""

    def __init__(self, w: FsWorld, rng: random.Random, me: str, peer: str):
        self.w, self.rng, self.me, self.peer = w, rng, me, peer
        self.old, self.recent = datetime(2025, 9, 1), datetime(2026, 3, 1, 23, 0)

    def mk(
        self,
        parent: str | None,
        name: str,
        kind: Kind,
        owner: str,
        group: str,
        mode: str,
        content: str = "",
        binary_size: int | None = None,
        target: str | None = None,
        when: str | None = None,
    ) -> str:
        w, rng = self.w, self.rng
        nid = w.new_id("INO", 5)
        m = when or _ts(rng, self.old, self.recent)
        c = min(m, _ts(rng, self.old, datetime.strptime(m, "%Y-%m-%dT%H:%M:%S")))
        w.nodes[nid] = Node(
            node_id=nid,
            name=name,
            kind=kind,
            parent_id=parent,
            content=content,
            binary_size=binary_size,
            target=target,
            owner=owner,
            group=group,
            mode=mode,
            created_at=c,
            modified_at=m,
        )
        if parent is not None:
            w.nodes[parent].children[name] = nid
        return nid

    def d(self, parent: str | None, name: str, owner: str = "root", group: str = "root", mode: str = "755") -> str:
        return self.mk(parent, name, "directory", owner, group, mode)

    def f(
        self,
        parent: str,
        name: str,
        content: str = "",
        owner: str | None = None,
        group: str | None = None,
        mode: str = "644",
        binary_size: int | None = None,
        when: str | None = None,
    ) -> str:
        owner = self.me if owner is None else owner
        return self.mk(
            parent,
            name,
            "file",
            owner,
            group or (owner if owner in (self.me, self.peer) else "root"),
            mode,
            content,
            binary_size,
            when=when,
        )

    def ln(self, parent: str, name: str, target: str, owner: str | None = None) -> str:
        owner = self.me if owner is None else owner
        return self.mk(
            parent, name, "symlink", owner, owner if owner in (self.me, self.peer) else "root", "777", target=target
        )


def _seed_etc(t: _Tree, root: str) -> str:
    """/etc; returns the host name."""
    w, rng, me, peer, d, f, ln = t.w, t.rng, t.me, t.peer, t.d, t.f, t.ln
    # /etc
    etc = d(root, "etc")
    host = rng.choice(["atlas", "nimbus", "kestrel", "orion", "juniper"])
    f(etc, "hostname", f"{host}\n", owner="root")
    f(
        etc,
        "hosts",
        f"127.0.0.1\tlocalhost\n127.0.1.1\t{host}\n10.0.4.{rng.randint(2, 250)}\tdb.internal\n"
        f"10.0.4.{rng.randint(2, 250)}\tcache.internal\n",
        owner="root",
    )
    f(
        etc,
        "os-release",
        'NAME="Ubuntu"\nVERSION="24.04.1 LTS (Noble Numbat)"\nID=ubuntu\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n',
        owner="root",
    )
    f(
        etc,
        "fstab",
        "UUID=3f1c-9a2e / ext4 defaults 0 1\nUUID=77b0-12cd /boot/efi vfat umask=0077 0 1\n/swapfile none swap sw 0 0\n",
        owner="root",
    )
    f(etc, "resolv.conf", "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch internal\n", owner="root")
    f(
        etc,
        "passwd",
        "".join(f"{u.username}:x:{u.uid}:{u.uid}:{u.full_name}:{u.home}:/bin/bash\n" for u in w.users.values()),
        owner="root",
    )
    f(
        etc,
        "group",
        f"root:x:0:\nadm:x:4:syslog\ndev:x:1100:{me},{peer}\nstaff:x:50:{me},{peer}\n",
        owner="root",
    )
    f(
        etc,
        "shadow",
        f"root:*:19700:0:99999:7:::\n{me}:$6$rounds=5000$Qx..:19780:0:99999:7:::\n",
        owner="root",
        group="shadow",
        mode="640",
    )
    f(
        etc,
        "crontab",
        f"# m h dom mon dow user command\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n"
        f"30 2 * * * {me} /home/{me}/projects/backup.sh\n",
        owner="root",
    )
    nginx = d(etc, "nginx")
    f(
        nginx,
        "nginx.conf",
        "user www-data;\nworker_processes auto;\nevents { worker_connections 768; }\n"
        "http {\n    sendfile on;\n    access_log /var/log/nginx/access.log;\n    error_log /var/log/nginx/error.log;\n"
        "    include /etc/nginx/sites-enabled/*;\n}\n",
        owner="root",
    )
    avail = d(nginx, "sites-available")
    f(
        avail,
        "default",
        f"server {{\n    listen 80 default_server;\n    server_name {host}.internal;\n    root /var/www/html;\n"
        "    location /api/ { proxy_pass http://127.0.0.1:8080; }\n}\n",
        owner="root",
    )
    enabled = d(nginx, "sites-enabled")
    ln(enabled, "default", "../sites-available/default", owner="root")
    ssh = d(etc, "ssh")
    f(
        ssh,
        "sshd_config",
        "Port 22\nPermitRootLogin no\nPasswordAuthentication no\nPubkeyAuthentication yes\n",
        owner="root",
        mode="600",
    )
    f(ssh, "ssh_config", "Host *\n    SendEnv LANG LC_*\n    HashKnownHosts yes\n", owner="root")
    return host


def _seed_var(t: _Tree, root: str, host: str) -> None:
    """/var: logs, backups, the web root."""
    rng, me, d, f, ln = t.rng, t.me, t.d, t.f, t.ln
    # /var
    var = d(root, "var")
    log = d(var, "log", group="syslog", mode="775")
    f(log, "syslog", _log(rng, 30), owner="syslog", group="adm", mode="640")
    f(
        log,
        "auth.log",
        "".join(
            f"2026-03-01T0{i}:1{i}:0{i} {host} sshd[{rng.randint(900, 9000)}]: Accepted publickey for {me}\n"
            for i in range(6)
        ),
        owner="syslog",
        group="adm",
        mode="640",
    )
    f(log, "app.log", _log(rng, 40), owner="syslog", group="adm", when="2026-03-01T23:50:00")
    f(log, "app.log.1", _log(rng, 25, "2026-02-28"), owner="syslog", group="adm", when="2026-02-28T23:59:00")
    f(
        log,
        "dpkg.log",
        "2026-02-20 10:01:12 install curl:amd64 <none> 8.5.0-2ubuntu10\n2026-02-20 10:01:13 status installed curl:amd64 8.5.0\n",
        owner="root",
    )
    ln(log, "latest.log", "app.log", owner="root")
    nlog = d(log, "nginx", group="adm")
    f(
        nlog,
        "access.log",
        "".join(
            f"10.0.4.{rng.randint(2, 250)} - - [01/Mar/2026:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00 +0000] "
            f'"{rng.choice(["GET", "GET", "POST"])} {rng.choice(["/", "/api/items", "/api/login", "/health", "/static/app.js"])} HTTP/1.1" '
            f"{rng.choice([200, 200, 200, 301, 404, 500])} {rng.randint(120, 9000)}\n"
            for _ in range(25)
        ),
        owner="www-data",
        group="adm",
    )
    f(
        nlog,
        "error.log",
        "2026/03/01 04:12:09 [error] 812#812: *41 connect() failed (111: Connection refused) while connecting to upstream\n"
        "2026/03/01 11:40:51 [warn] 812#812: *97 an upstream response is buffered to a temporary file\n",
        owner="www-data",
        group="adm",
    )
    backups = d(var, "backups")
    f(backups, "etc-2026-02-01.tar.gz", owner="root", binary_size=rng.randint(400_000, 900_000))
    f(backups, "home-2026-02-01.tar.gz", owner="root", mode="600", binary_size=rng.randint(30_000_000, 60_000_000))
    www = d(var, "www", owner="www-data", group="www-data")
    html = d(www, "html", owner="www-data", group="www-data")
    f(
        html,
        "index.html",
        f"<!doctype html>\n<html><head><title>{host}</title></head><body><h1>It works</h1></body></html>\n",
        owner="www-data",
    )


def _seed_tmp_and_root(t: _Tree, root: str) -> None:
    """/tmp and /root."""
    rng, peer, d, f = t.rng, t.peer, t.d, t.f
    # /tmp and /root
    tmp = d(root, "tmp", mode="777")
    f(
        tmp,
        f"build-{rng.randint(1000, 9999)}.log",
        "Compiling...\nLinking...\nBuild finished with 0 errors, 2 warnings\n",
    )
    f(tmp, "scratch.txt", "remember: rotate the API key before Friday\n")
    f(tmp, f"session-{rng.randint(10**5, 10**6 - 1)}.tmp", "opaque session data\n", owner=peer, mode="600")
    rootdir = d(root, "root", mode="700")
    f(rootdir, ".bash_history", "apt update\napt upgrade -y\nsystemctl restart nginx\n", owner="root", mode="600")


def _seed_dotfiles_and_projects(t: _Tree, h: str, host: str) -> str:
    """The user's dotfiles, ssh keys and projects; returns the first project's name."""
    w, rng, me, d, f = t.w, t.rng, t.me, t.d, t.f
    f(
        h,
        ".bashrc",
        "# ~/.bashrc\nexport EDITOR=vim\nalias ll='ls -alF'\nalias gs='git status'\nexport PATH=\"$HOME/.local/bin:$PATH\"\n",
    )
    f(h, ".profile", 'if [ -n "$BASH_VERSION" ]; then\n    . "$HOME/.bashrc"\nfi\n')
    f(
        h,
        ".gitconfig",
        f"[user]\n    name = {w.users[me].full_name}\n    email = {me}@{host}.dev\n[init]\n    defaultBranch = main\n",
    )
    sshd = d(h, ".ssh", owner=me, group=me, mode="700")
    f(sshd, "id_ed25519.pub", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rng.randint(10**9, 10**10)}Xq {me}@{host}\n")
    f(
        sshd,
        "id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n(redacted)\n-----END OPENSSH PRIVATE KEY-----\n",
        mode="600",
    )
    f(sshd, "config", "Host db\n    HostName db.internal\n    User deploy\n")
    projects = d(h, "projects", owner=me, group=me)
    f(projects, "backup.sh", f"#!/bin/sh\ntar czf /var/backups/home-$(date +%F).tar.gz /home/{me}\n", mode="755")
    chosen = rng.sample(PROJECTS, 3)
    first_proj = ""
    for i, (pname, pdesc) in enumerate(chosen):
        p = d(projects, pname, owner=me, group="dev", mode="775")
        first_proj = first_proj or pname
        mod = pname.replace("-", "_")
        f(
            p,
            "README.md",
            f"# {pname}\n\n{pdesc}.\n\n## Setup\n\nSee the install notes below.\n\n## Status\n\n"
            f"Version 0.{rng.randint(1, 9)}.{rng.randint(0, 9)}. TODO: add CI badge.\n",
        )
        f(p, ".gitignore", "__pycache__/\n*.pyc\nnode_modules/\n.env\ndist/\n")
        f(
            p,
            "CHANGELOG.md",
            "".join(
                f"## 0.{k}.0\n- {rng.choice(['fix crash on empty input', 'add --json flag', 'speed up parsing', 'new config file format', 'drop python 3.8'])}\n"
                for k in range(rng.randint(2, 5), 0, -1)
            ),
        )
        if i == 0:
            src = d(p, "src", owner=me, group="dev", mode="775")
            pkg = d(src, mod, owner=me, group="dev", mode="775")
            f(pkg, "__init__.py", f'"""{pdesc}."""\n__version__ = "0.3.1"\n')
            f(
                pkg,
                "main.py",
                f"import sys\n\nfrom {mod}.utils import load_config\n\n\ndef main(argv=None):\n    cfg = load_config()\n"
                "    # --verbose is accepted but not used yet\n    print('running with', cfg)\n    return 0\n\n\nif __name__ == '__main__':\n    sys.exit(main())\n",
            )
            f(
                pkg,
                "utils.py",
                "import json\nimport os\n\n\ndef load_config(path='config.json'):\n    if not os.path.exists(path):\n"
                "        return {}\n    with open(path) as fh:\n        return json.load(fh)\n",
            )
            tests = d(p, "tests", owner=me, group="dev", mode="775")
            f(
                tests,
                "test_main.py",
                f"from {mod}.main import main\n\n\ndef test_main_runs():\n    assert main([]) == 0\n",
            )
            f(p, "requirements.txt", "requests==2.32.3\nclick==8.1.7\npytest==8.3.2\n")
            f(p, "config.json", '{\n  "units": "metric",\n  "timeout": 10,\n  "api_key": "REPLACE_ME"\n}\n')
        elif i == 1:
            src = d(p, "src", owner=me, group="dev", mode="775")
            f(
                p,
                "package.json",
                f'{{\n  "name": "{pname}",\n  "version": "1.{rng.randint(0, 9)}.0",\n  "main": "src/index.js",\n'
                '  "scripts": { "start": "node src/index.js", "test": "jest" }\n}\n',
            )
            f(
                src,
                "index.js",
                "const api = require('./api');\n\napi.listen(process.env.PORT || 8080);\n// TODO: graceful shutdown\n",
            )
            f(
                src,
                "api.js",
                "const express = require('express');\nconst app = express();\n\napp.get('/health', (req, res) => res.send('ok'));\n\n"
                "module.exports = app;\n",
            )
        else:
            f(p, "go.mod", f"module github.com/{me}/{pname}\n\ngo 1.22\n")
            f(
                p,
                "main.go",
                'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n\t// TODO: parse flags\n}\n',
            )
            f(p, "Makefile", "build:\n\tgo build -o bin/app .\n\ntest:\n\tgo test ./...\n")
    return first_proj


def _seed_docs(t: _Tree, h: str) -> str:
    """~/docs: notes, reports, invoices, an archive; returns its node id."""
    w, rng, me, d, f = t.w, t.rng, t.me, t.d, t.f
    docs = d(h, "docs", owner=me, group=me)
    f(
        docs,
        "resume.md",
        f"# {w.users[me].full_name}\n\n## Experience\n\n- Software engineer, Northwind (2021-now)\n- Intern, Contoso (2020)\n\n"
        "## Skills\n\nPython, Go, SQL, Linux\n",
    )
    f(docs, "todo.txt", "- [ ] renew passport\n- [x] file expense report\n- [ ] book dentist\n- [ ] review Q1 budget\n")
    notes = d(docs, "meeting-notes", owner=me, group=me)
    for day in sorted(rng.sample(range(2, 28), 4)):
        who = rng.sample(FIRST_NAMES, 3)
        f(
            notes,
            f"2026-02-{day:02d}-standup.md",
            f"# Standup 2026-02-{day:02d}\n\nAttendees: {', '.join(who)}\n\n"
            f"- {who[0]}: finished the migration script\n- {who[1]}: blocked on review\n"
            f"- Action: {who[2]} to update the runbook\n",
            when=f"2026-02-{day:02d}T10:30:00",
        )
    reports = d(docs, "reports", owner=me, group=me)
    f(
        reports,
        "q4-2025-report.md",
        f"# Q4 2025 report\n\nRevenue grew {rng.randint(3, 19)}% quarter over quarter.\n"
        f"Churn: {rng.randint(1, 6)}.{rng.randint(0, 9)}%\n\nRisks: hiring, vendor costs.\n",
    )
    rows = ["category,jan,feb,mar"] + [
        f"{c},{rng.randint(100, 2000)},{rng.randint(100, 2000)},{rng.randint(100, 2000)}"
        for c in ["rent", "groceries", "transport", "utilities", "eating_out", "savings"]
    ]
    f(reports, "budget-2026.csv", "\n".join(rows) + "\n")
    inv = d(docs, "invoices", owner=me, group=me)
    for k in range(4):
        num = 1040 + k
        f(
            inv,
            f"invoice-{num}.txt",
            f"INVOICE #{num}\nDate: 2026-0{k % 2 + 1}-{rng.randint(1, 28):02d}\nClient: "
            f"{rng.choice(['Acme Corp', 'Globex', 'Initech', 'Umbrella Ltd'])}\nAmount due: "
            f"{rng.randint(300, 4000)}.00 EUR\nStatus: {rng.choice(['paid', 'unpaid', 'overdue'])}\n",
        )
    archive = d(docs, "archive", owner=me, group=me, mode="555")
    f(
        archive,
        "2025-taxes.txt",
        f"Tax year 2025\nGross income: {rng.randint(50, 120)}000\nFiled: 2026-02-15\n",
        mode="444",
    )
    f(archive, "old-lease.pdf", binary_size=rng.randint(200_000, 400_000), mode="444")
    return docs


def _seed_notes_and_media(t: _Tree, h: str) -> None:
    """~/notes, ~/downloads and ~/pictures."""
    rng, me, d, f = t.rng, t.me, t.d, t.f
    nd = d(h, "notes", owner=me, group=me)
    f(nd, "ideas.md", "# Ideas\n\n- CLI to rename photos by date\n- Home-lab dashboard\n- Learn Rust this spring\n")
    f(
        nd,
        "reading-list.md",
        "# Reading list\n\n- Designing Data-Intensive Applications\n- The Pragmatic Programmer\n- Thinking in Systems\n",
    )
    f(nd, "shopping.txt", "milk\neggs\ncoffee beans\nolive oil\n", mode="444")
    dl = d(h, "downloads", owner=me, group=me)
    f(dl, "installer-v2.4.1.deb", binary_size=85 * 1024**2 + rng.randint(0, 999_999))
    f(dl, "dataset-2026.zip", binary_size=12 * 1024**2 + rng.randint(0, 999_999))
    f(dl, "paper-attention.pdf", binary_size=rng.randint(900_000, 2_000_000))
    f(dl, "boarding-pass.pdf", binary_size=rng.randint(80_000, 200_000))
    pics = d(h, "pictures", owner=me, group=me)
    vac = d(pics, f"{rng.choice(['lisbon', 'kyoto', 'oslo', 'porto', 'dublin'])}-2025", owner=me, group=me)
    for _k in range(rng.randint(4, 7)):
        f(vac, f"IMG_{rng.randint(1000, 9999)}.jpg", binary_size=rng.randint(1_500_000, 4_500_000))
    shots = d(pics, "screenshots", owner=me, group=me)
    for k in range(3):
        f(shots, f"screenshot-2026-02-{rng.randint(10, 28):02d}-{k}.png", binary_size=rng.randint(100_000, 600_000))


def _seed_peer_and_shared(t: _Tree, home: str) -> None:
    """The other user's home and /home/shared."""
    w, rng, me, peer, d, f = t.w, t.rng, t.me, t.peer, t.d, t.f
    ph = d(home, peer, owner=peer, group=peer)
    f(ph, "README.txt", f"Hi, this is {w.users[peer].full_name}'s home. Shared drafts are in projects/.\n", owner=peer)
    f(ph, ".bashrc", "export EDITOR=nano\n", owner=peer)
    pp = d(ph, "projects", owner=peer, group=peer)
    f(pp, "report-draft.md", "# Draft report\n\nNumbers pending from finance.\n", owner=peer)
    f(
        pp,
        "deploy-notes.md",
        "1. run migrations\n2. restart workers\n3. check /var/log/app.log for ERROR lines\n",
        owner=peer,
    )
    priv = d(ph, "private", owner=peer, group=peer, mode="700")
    f(priv, "diary.txt", "Private notes.\n", owner=peer, mode="600")
    shared = d(home, "shared", group="staff", mode="775")
    f(
        shared,
        "team-handbook.md",
        "# Team handbook\n\n## On-call\n\nRotation is weekly, hand over on Mondays.\n\n## Reviews\n\nTwo approvals needed.\n",
        owner=peer,
        group="staff",
        mode="664",
    )
    f(
        shared,
        "onboarding.md",
        "# Onboarding\n\n1. Get laptop\n2. Request VPN access\n3. Read the team handbook\n",
        owner=peer,
        group="staff",
        mode="644",
    )
    f(shared, "budget-2026.xlsx", owner=peer, group="staff", mode="664", binary_size=rng.randint(40_000, 90_000))
    f(
        shared,
        "holiday-rota.csv",
        "name,from,to\n"
        + "".join(
            f"{n},2026-0{rng.randint(4, 8)}-0{rng.randint(1, 9)},2026-0{rng.randint(4, 8)}-1{rng.randint(0, 9)}\n"
            for n in rng.sample(FIRST_NAMES, 4)
        ),
        owner=me,
        group="staff",
        mode="664",
    )


def _seed_tags_and_trash(t: _Tree, docs: str) -> None:
    """Tags on the user's files and the trash."""
    w, rng, me, f = t.w, t.rng, t.me, t.f
    # tags
    files = [n for n in w.nodes.values() if n.kind == "file" and n.owner == me]
    for n in rng.sample(files, 12):
        n.tags = sorted(rng.sample(["important", "work", "personal", "review", "archive", "taxes"], rng.randint(1, 2)))
    # the trash: one restorable item, one whose original path is taken again
    for name, parent, content in [
        ("old-resume.md", docs, "# Resume (2023)\n\nOutdated.\n"),
        ("todo.txt", docs, "- [ ] old list\n"),
    ]:
        nid = f(parent, name + ".tmp", content)
        node = w.nodes[nid]
        w.nodes[parent].children.pop(node.name)
        node.name, node.parent_id = name, None
        tid = w.new_id("TRS")
        w.trash[tid] = TrashItem(
            trash_id=tid,
            original_path=f"/home/{me}/docs/{name}",
            name=name,
            kind="file",
            size=len(content.encode()),
            trashed_at=_ts(rng, datetime(2026, 2, 1), t.recent),
            node_id=nid,
        )


def seed_world(rng: random.Random, seed: int) -> FsWorld:
    w = FsWorld(seed=seed)
    picks = rng.sample(FIRST_NAMES, 2)
    me, peer = picks[0].lower(), picks[1].lower()
    last_me, last_peer = rng.sample(LAST_NAMES, 2)
    w.user = me
    w.users = {
        "root": User(username="root", uid=0, groups=["root", "adm", "shadow"], home="/root", full_name="root"),
        "syslog": User(
            username="syslog", uid=104, groups=["syslog", "adm"], home="/nonexistent", full_name="system logger"
        ),
        "www-data": User(username="www-data", uid=33, groups=["www-data"], home="/var/www", full_name="web server"),
        me: User(
            username=me, uid=1000, groups=[me, "dev", "staff"], home=f"/home/{me}", full_name=f"{picks[0]} {last_me}"
        ),
        peer: User(
            username=peer,
            uid=1001,
            groups=[peer, "dev", "staff"],
            home=f"/home/{peer}",
            full_name=f"{picks[1]} {last_peer}",
        ),
    }
    t = _Tree(w, rng, me, peer)
    root = t.d(None, "")
    w.root_id = root
    host = _seed_etc(t, root)
    _seed_var(t, root, host)
    _seed_tmp_and_root(t, root)
    home = t.d(root, "home")
    h = t.d(home, me, owner=me, group=me)
    first_proj = _seed_dotfiles_and_projects(t, h, host)
    docs = _seed_docs(t, h)
    _seed_notes_and_media(t, h)
    t.ln(h, "current", f"projects/{first_proj}")
    t.ln(h, "old-notes", "notes/old.md")  # dangling on purpose
    _seed_peer_and_shared(t, home)
    w.cwd_id = h
    _seed_tags_and_trash(t, docs)
    return w
