#!/usr/bin/env python3
"""OpenCode database fixtures, written with the real SQLite (Python's stdlib `sqlite3`).

    scripts/gen_opencode_db.py [--out fixtures/opencode]   regenerate every committed fixture
    scripts/gen_opencode_db.py live DB [--wal]             test helper: apply JSON commands

Fixtures (deterministic for a given SQLite version; WAL salts are pinned and the frame
checksums recomputed, then the result is re-opened with SQLite to prove it is valid):

  data/opencode.db          OpenCode schema, sessions for the black-box tests (rollback mode)
  wal/opencode.db(-wal)     WAL mode: the newest rows live only in the -wal file
  sqlite/types.db           every serial type, rowid alias, quoted names, ALTER TABLE ADD
                            COLUMN, generated columns, WITHOUT ROWID, an index
  sqlite/big.db             512-byte pages: a 3-level table b-tree, overflow chains, freeblocks
  sqlite/utf16.db           UTF-16le text encoding
  sqlite/wal.db(-wal)       a base state in the file and two commits only in the WAL

`live` reads one JSON object per line on stdin, applies it in its own transaction (or inside
{"op": "begin"} … {"op": "commit"}) and answers "ok" on stdout once it is committed. The
connection stays open until stdin closes, so with --wal and automatic checkpoints off, the
rows stay in the -wal file until then. Ops: schema, session, message, part, sql, begin,
commit, checkpoint.
"""
import argparse
import json
import os
import shutil
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

SCHEMA = """
CREATE TABLE `project` (
\t`id` text PRIMARY KEY,
\t`worktree` text NOT NULL,
\t`vcs` text,
\t`name` text,
\t`time_created` integer NOT NULL,
\t`time_updated` integer NOT NULL
);
CREATE TABLE `session` (
\t`id` text PRIMARY KEY,
\t`project_id` text NOT NULL,
\t`parent_id` text,
\t`slug` text NOT NULL,
\t`directory` text NOT NULL,
\t`title` text NOT NULL,
\t`version` text NOT NULL,
\t`share_url` text,
\t`summary_additions` integer,
\t`summary_deletions` integer,
\t`summary_files` integer,
\t`summary_diffs` text,
\t`revert` text,
\t`permission` text,
\t`time_created` integer NOT NULL,
\t`time_updated` integer NOT NULL,
\t`time_compacting` integer,
\t`time_archived` integer,
\tCONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `message` (
\t`id` text PRIMARY KEY,
\t`session_id` text NOT NULL,
\t`time_created` integer NOT NULL,
\t`time_updated` integer NOT NULL,
\t`data` text NOT NULL,
\tCONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
\t`id` text PRIMARY KEY,
\t`message_id` text NOT NULL,
\t`session_id` text NOT NULL,
\t`time_created` integer NOT NULL,
\t`time_updated` integer NOT NULL,
\t`data` text NOT NULL,
\tCONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE TABLE `todo` (
\t`session_id` text NOT NULL,
\t`content` text NOT NULL,
\t`status` text NOT NULL,
\t`priority` text NOT NULL,
\t`position` integer NOT NULL,
\t`time_created` integer NOT NULL,
\t`time_updated` integer NOT NULL,
\tCONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`)
);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
-- a column added by a later migration: older rows have shorter records
ALTER TABLE `session` ADD `agent` text;
"""

T0 = 1767225600000  # 2026-01-01T00:00:00Z
MODEL = {"providerID": "anthropic", "modelID": "claude-sonnet-4"}


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def add_session(c, id, directory, title, created, parent=None, project="proj_alpha",
                slug=None, updated=None, agent=None):
    c.execute("INSERT OR IGNORE INTO project VALUES (?,?,?,?,?,?)",
              (project, directory or "/", "git", None, created, created))
    c.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
        " time_created, time_updated, agent) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (id, project, parent, slug or id.replace("_", "-"), directory, title, "1.2.10",
         created, updated or created, agent))


def add_message(c, id, session, data, created=None, updated=None):
    created = created if created is not None else data.get("time", {}).get("created", T0)
    raw = data if isinstance(data, str) else dumps(data)
    c.execute("INSERT INTO message VALUES (?,?,?,?,?)",
              (id, session, created, updated or created, raw))


def add_part(c, id, message, session, data, created=T0, updated=None):
    raw = data if isinstance(data, str) else dumps(data)
    c.execute("INSERT INTO part VALUES (?,?,?,?,?,?)",
              (id, message, session, created, updated or created, raw))


def user(t, agent="build"):
    return {"role": "user", "time": {"created": t}, "agent": agent, "model": MODEL}


def assistant(t, parent, cwd):
    return {"role": "assistant", "time": {"created": t, "completed": t + 500},
            "parentID": parent, "modelID": MODEL["modelID"], "providerID": MODEL["providerID"],
            "mode": "build", "agent": "build", "path": {"cwd": cwd, "root": cwd},
            "cost": 0.01, "tokens": {"input": 10, "output": 20, "reasoning": 0,
                                     "cache": {"read": 0, "write": 0}}, "finish": "stop"}


def text(t, s, **flags):
    return {"type": "text", "text": s, "time": {"start": t, "end": t}, **flags}


def tool(name, call, inp, status="completed", output="", **extra):
    state = {"status": status, "input": inp, "time": {"start": T0, "end": T0 + 1}}
    if status == "completed":
        state.update(output=output, title=name, metadata=extra.pop("metadata", {}))
    elif status == "error":
        state.update(error=extra.pop("error", "failed"))
    return {"type": "tool", "callID": call, "tool": name, "state": state, **extra}


def fill_main(c):
    """The black-box fixture: see tests/format_opencode.rs for what each piece checks."""
    alpha, cwd = "ses_alpha", "/home/dev/alphaproj"
    add_session(c, alpha, cwd, "Refactor the zanzibar parser", T0, updated=T0 + 20000)
    # inserted out of order: turns must follow time_created, parts their ids
    add_message(c, "msg_a04", alpha, user(T0 + 10000))
    add_part(c, "prt_a04_1", "msg_a04", alpha, text(T0 + 10000, "Now document the marmalade module"))
    add_message(c, "msg_a01", alpha, user(T0 + 1000))
    add_part(c, "prt_a01_4", "msg_a01", alpha, {"type": "file", "mime": "text/markdown",
             "filename": "notes.md", "url": "file:///home/dev/alphaproj/notes.md"})
    add_part(c, "prt_a01_3", "msg_a01", alpha, text(T0, "ignoredzebraword", ignored=True))
    add_part(c, "prt_a01_2", "msg_a01", alpha,
             text(T0, "Called the Read tool with the following input: synthetiqueword",
                  synthetic=True))
    add_part(c, "prt_a01_1", "msg_a01", alpha,
             text(T0, "Please refactor the zanzibar parser so it handles quokka tokens"))
    add_message(c, "msg_a02", alpha, assistant(T0 + 2000, "msg_a01", cwd))
    for pid, data in [
        ("prt_a02_1", {"type": "step-start"}),
        ("prt_a02_2", {"type": "reasoning", "text": "reasoningpelicanword thinking hard",
                       "time": {"start": T0, "end": T0}}),
        ("prt_a02_3", text(T0, "I will inspect the parser module first")),
        ("prt_a02_4", tool("read", "call_r1", {"filePath": cwd + "/src/parser.rs"},
                           output="outputplatypusword fn parse()")),
        ("prt_a02_5", tool("bash", "call_b1", {"command": "cargo test --quiet",
                                               "description": "Run the tests"},
                           output="bashoutputwombatword",
                           metadata={"exit": 101, "output": "metadataechidnaword"})),
        ("prt_a02_6", tool("grep", "call_g1", {"pattern": "fn parse_", "path": "src"},
                           status="error", error="errorkoalaword")),
        ("prt_a02_7", {"type": "step-finish", "reason": "tool-calls", "cost": 0,
                       "tokens": {"input": 1, "output": 1, "reasoning": 0,
                                  "cache": {"read": 0, "write": 0}}}),
    ]:
        add_part(c, pid, "msg_a02", alpha, data)
    add_message(c, "msg_a03", alpha, assistant(T0 + 3000, "msg_a01", cwd))
    for pid, data in [
        ("prt_a03_1", tool("write", "call_w1", {"filePath": cwd + "/src/lexer.rs",
                                                "content": "x" * 1234})),
        ("prt_a03_2", tool("edit", "call_e1", {"filePath": cwd + "/src/parser.rs",
                                               "oldString": "a", "newString": "b"})),
        ("prt_a03_3", tool("glob", "call_gl", {"pattern": "**/*.rs"})),
        ("prt_a03_4", tool("list", "call_ls", {"path": cwd + "/src"})),
        ("prt_a03_5", tool("webfetch", "call_wf", {"url": "https://example.com/zanzibar-spec",
                                                   "format": "markdown"})),
        ("prt_a03_6", tool("websearch", "call_ws", {"query": "zanzibar grammar"})),
        ("prt_a03_7", tool("task", "call_t1", {"description": "Investigate flaky test",
                                               "prompt": "Look at the tokenizer tests",
                                               "subagent_type": "general"},
                           output="task_id: ses_alpha_child",
                           metadata={"sessionId": "ses_alpha_child"})),
        ("prt_a03_8", tool("multiedit", "call_me", {"filePath": cwd + "/src/ast.rs",
                                                    "edits": [{"oldString": "x"}]})),
        ("prt_a03_9", tool("todowrite", "call_td", {"todos": []})),
        ("prt_a03_a", text(T0, "The parser refactor is done")),
    ]:
        add_part(c, pid, "msg_a03", alpha, data)
    add_message(c, "msg_a05", alpha, assistant(T0 + 11000, "msg_a04", cwd))
    add_part(c, "prt_a05_1", "msg_a05", alpha,
             text(T0, "lorem ipsum " * 500 + "longtextnarwhalword"))
    add_part(c, "prt_a05_2", "msg_a05", alpha,
             tool("bash", "call_b2", {"command": "cat big.log"},
                  output="noise " * 4000 + "overflowoutputword"))

    child = "ses_alpha_child"
    add_session(c, child, cwd, "Investigate flaky test (@general subagent)", T0 + 3100,
                parent=alpha)
    add_message(c, "msg_c01", child, user(T0 + 3200, agent="general"))
    add_part(c, "prt_c01_1", "msg_c01", child,
             text(T0, "Look at the tokenizer tests for the flaky childsloth case"))
    add_message(c, "msg_c02", child, assistant(T0 + 3300, "msg_c01", cwd))
    add_part(c, "prt_c02_1", "msg_c02", child,
             text(T0, "The flakiness comes from a race in the childsloth setup"))

    beta = "ses_beta"
    add_session(c, beta, "/srv/betaproj", "New session - 2026-01-02T10:00:00.000Z",
                T0 + 86400000, project="proj_beta")
    b = T0 + 86400000
    add_message(c, "msg_b01", beta, user(b + 1000))
    add_part(c, "prt_b01_1", "msg_b01", beta,
             text(b, "Why does the betaproj build fail with gnarwhal errors?"))
    add_message(c, "msg_b02", beta, assistant(b + 2000, "msg_b01", "/srv/betaproj"))
    add_part(c, "prt_b02_1", "msg_b02", beta, text(b, "Because of a missing feature flag."))
    add_message(c, "msg_b03", beta, user(b + 3000))
    add_part(c, "prt_b03_1", "msg_b03", beta,
             text(b, "syntheticcontinuationword", synthetic=True))
    add_message(c, "msg_b04", beta, assistant(b + 4000, "msg_b03", "/srv/betaproj"))
    add_part(c, "prt_b04_1", "msg_b04", beta,
             text(b, "Continuing after the synthetic prompt about gnarwhal"))
    add_message(c, "msg_b05", beta, "{not json", created=b + 5000)
    add_part(c, "prt_b04_2", "msg_b04", beta, "[broken")

    add_session(c, "ses_empty", "/home/dev/alphaproj", "An empty session", T0 + 500)

    nodir = "ses_nodir"
    add_session(c, nodir, "", "Session with assistant cwd", T0 + 200000, project="global")
    add_message(c, "msg_n01", nodir, user(T0 + 200001))
    add_part(c, "prt_n01_1", "msg_n01", nodir, text(T0, "where is the cwdfallback directory"))
    add_message(c, "msg_n02", nodir, assistant(T0 + 200002, "msg_n01", "/opt/cwdfromassistant"))
    add_part(c, "prt_n02_1", "msg_n02", nodir, text(T0, "It is under opt."))


def fill_wal_base(c):
    add_session(c, "ses_walbase", "/home/dev/walproj", "WAL base session", T0)
    add_message(c, "msg_w01", "ses_walbase", user(T0 + 1))
    add_part(c, "prt_w01_1", "msg_w01", "ses_walbase", text(T0, "baseline pangolin question"))
    add_message(c, "msg_w02", "ses_walbase", assistant(T0 + 2, "msg_w01", "/home/dev/walproj"))
    add_part(c, "prt_w02_1", "msg_w02", "ses_walbase", text(T0, "baseline answer"))


def wal_commit_new_session(c):
    add_session(c, "ses_walnew", "/home/dev/walproj", "Only in the WAL", T0 + 100)
    add_message(c, "msg_x01", "ses_walnew", user(T0 + 101))
    add_part(c, "prt_x01_1", "msg_x01", "ses_walnew", text(T0, "walonly ocelot question"))
    add_message(c, "msg_x02", "ses_walnew", assistant(T0 + 102, "msg_x01", "/home/dev/walproj"))
    add_part(c, "prt_x02_1", "msg_x02", "ses_walnew", text(T0, "walonly answer"))


def wal_commit_second_turn(c):
    add_message(c, "msg_w03", "ses_walbase", user(T0 + 200))
    add_part(c, "prt_w03_1", "msg_w03", "ses_walbase", text(T0, "second turn about the tapir"))
    c.execute("UPDATE session SET title = 'WAL updated title', time_updated = ? "
              "WHERE id = 'ses_walbase'", (T0 + 200,))


# ---------------------------------------------------------------- unit-test databases

TYPES_SCHEMA = """
        CREATE TABLE types(id INTEGER PRIMARY KEY, v, note TEXT);
        CREATE INDEX types_note ON types(note);
        CREATE TABLE "odd table" ([first col] TEXT, `second` INTEGER, "third" TEXT);
        CREATE TABLE grown(a TEXT, b TEXT);
        CREATE TABLE gen(a INTEGER, b INTEGER, c INTEGER AS (a + b) VIRTUAL,
                         d INTEGER AS (a * b) STORED, e TEXT);
        CREATE TABLE wr(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
        CREATE TABLE pk_table(x INTEGER, y TEXT, PRIMARY KEY(x));
"""


def fill_types(c):
    values = [None, 0, 1, 127, -128, 32767, -32768, 8388607, 2147483647, -2147483648,
              140737488355327, -9223372036854775808, 9223372036854775807, 1.5, -0.25,
              "text ünïcødé ✓", b"\x00\xff\x10", "", b""]
    for i, v in enumerate(values, start=1):
        c.execute("INSERT INTO types VALUES (?, ?, ?)", (i, v, f"n{i}"))
    c.execute('INSERT INTO "odd table" VALUES (?, ?, ?)', ("a", 1, "x"))
    c.execute("INSERT INTO grown VALUES ('old', 'row')")
    c.execute("ALTER TABLE grown ADD COLUMN c TEXT")
    c.execute("INSERT INTO grown VALUES ('new', 'row', 'c3')")
    c.execute("INSERT INTO gen (a, b, e) VALUES (2, 3, 'five')")
    c.execute("INSERT INTO wr VALUES ('k', 1)")
    c.execute("INSERT INTO pk_table VALUES (42, 'answer')")


def blob(i, n):
    return bytes((i * 31 + j) % 256 for j in range(n))


def fill_big(c):
    c.execute("CREATE TABLE other(x)")
    c.execute("CREATE TABLE big(id INTEGER PRIMARY KEY, k TEXT NOT NULL, v BLOB)")
    c.execute("INSERT INTO other VALUES ('first')")
    for i in range(1, 2001):
        c.execute("INSERT INTO big VALUES (?, ?, ?)", (i, f"key-{i:05d}", blob(i, i * 7 % 40)))
    for i, n in [(5000, 3000), (5001, 10000), (5002, 497), (5003, 498), (5004, 1500)]:
        c.execute("INSERT INTO big VALUES (?, ?, ?)", (i, "long-" + "k" * n, blob(i, n)))
    c.execute("DELETE FROM big WHERE id % 10 = 3")


def fill_utf16(c):
    c.execute("CREATE TABLE t(a TEXT, b)")
    c.execute("INSERT INTO t VALUES ('héllo wörld ✓', 7)")


def fill_wal_unit_base(c):
    c.execute("CREATE TABLE w(id INTEGER PRIMARY KEY, v TEXT)")
    for i in range(1, 41):
        c.execute("INSERT INTO w VALUES (?, ?)", (i, f"base-{i}"))


def wal_unit_commit_a(c):
    for i in range(41, 81):
        c.execute("INSERT INTO w VALUES (?, ?)", (i, f"a-{i}"))
    c.execute("UPDATE w SET v = 'a-3' WHERE id = 3")


def wal_unit_commit_b(c):
    c.execute("DELETE FROM w WHERE id <= 10")
    c.execute("UPDATE w SET v = 'b-20' WHERE id = 20")
    c.execute("INSERT INTO w VALUES (81, ?)", ("b" * 3000,))


# ---------------------------------------------------------------- writing files

def connect(path, wal=False, page_size=None, encoding=None):
    c = sqlite3.connect(path, isolation_level=None)
    if page_size:
        c.execute(f"PRAGMA page_size={page_size}")
    if encoding:
        c.execute(f"PRAGMA encoding='{encoding}'")
    if wal:
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA wal_autocheckpoint=0")
    return c


def transaction(c, fill, script=None):
    if script:
        c.executescript(script)  # commits on its own
    c.execute("BEGIN")
    fill(c)
    c.execute("COMMIT")


def write_db(out, fill, script=None, **kw):
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.db"
        c = connect(path, **kw)
        transaction(c, fill, script)
        c.close()
        shutil.copyfile(path, out)


def wal_checksum(data, big, s0, s1):
    fmt = ">" if big else "<"
    for i in range(0, len(data), 8):
        a, b = struct.unpack(fmt + "II", data[i:i + 8])
        s0 = (s0 + a + s1) & 0xFFFFFFFF
        s1 = (s1 + b + s0) & 0xFFFFFFFF
    return s0, s1


def pin_salts(wal_path, salt1=0x5EED0001, salt2=0x5EED0002):
    """Rewrites the WAL's random salts to fixed values and recomputes every checksum."""
    b = bytearray(wal_path.read_bytes())
    magic, _, page_size = struct.unpack(">III", b[:12])
    big = magic & 1 == 1
    struct.pack_into(">II", b, 16, salt1, salt2)
    s = wal_checksum(bytes(b[:24]), big, 0, 0)
    struct.pack_into(">II", b, 24, *s)
    frame = 24 + page_size
    for off in range(32, len(b) - frame + 1, frame):
        struct.pack_into(">II", b, off + 8, salt1, salt2)
        s = wal_checksum(bytes(b[off:off + 8]), big, *s)
        s = wal_checksum(bytes(b[off + 24:off + frame]), big, *s)
        struct.pack_into(">II", b, off + 16, *s)
    wal_path.write_bytes(bytes(b))


def write_wal_db(out, base, commits, script=None, page_size=None, check=None):
    """`out` and `out-wal`: `base` checkpointed into the file, `commits` only in the WAL."""
    out.parent.mkdir(parents=True, exist_ok=True)
    wal_out = Path(str(out) + "-wal")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.db"
        c = connect(path, wal=True, page_size=page_size)
        transaction(c, base, script)
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for fill in commits:
            transaction(c, fill)
        # copy while the connection is open: closing would checkpoint and delete the WAL
        shutil.copyfile(path, out)
        shutil.copyfile(Path(str(path) + "-wal"), wal_out)
        c.close()
    pin_salts(wal_out)
    if check:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "check.db"
            shutil.copyfile(out, db)
            shutil.copyfile(wal_out, Path(str(db) + "-wal"))
            c = sqlite3.connect(db)
            check(c)
            c.close()


def check_wal_main(c):
    titles = dict(c.execute("SELECT id, title FROM session"))
    assert titles == {"ses_walbase": "WAL updated title", "ses_walnew": "Only in the WAL"}, titles


def check_wal_unit(c):
    rows = dict(c.execute("SELECT id, v FROM w"))
    assert len(rows) == 71 and rows[20] == "b-20" and 3 not in rows, len(rows)


def generate(out):
    write_db(out / "data/opencode.db", fill_main, SCHEMA)
    write_wal_db(out / "wal/opencode.db", fill_wal_base,
                 [wal_commit_new_session, wal_commit_second_turn], SCHEMA, check=check_wal_main)
    write_db(out / "sqlite/types.db", fill_types, TYPES_SCHEMA)
    write_db(out / "sqlite/big.db", fill_big, page_size=512)
    write_db(out / "sqlite/utf16.db", fill_utf16, encoding="UTF-16le")
    write_wal_db(out / "sqlite/wal.db", fill_wal_unit_base,
                 [wal_unit_commit_a, wal_unit_commit_b], page_size=1024, check=check_wal_unit)


# ---------------------------------------------------------------- live helper for tests

def live(db, wal):
    c = connect(db, wal=wal)
    in_tx = False
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        op = cmd.pop("op")
        if op == "begin":
            c.execute("BEGIN")
            in_tx = True
        elif op == "commit":
            c.execute("COMMIT")
            in_tx = False
        elif op == "schema":
            c.executescript(SCHEMA)
        elif op == "checkpoint":
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        elif op == "sql":
            c.execute(cmd["sql"], cmd.get("args", []))
        else:
            if not in_tx:
                c.execute("BEGIN")
            {"session": add_session, "message": add_message, "part": add_part}[op](c, **cmd)
            if not in_tx:
                c.execute("COMMIT")
        print("ok", flush=True)
    c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    lv = sub.add_parser("live")
    lv.add_argument("db")
    lv.add_argument("--wal", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "fixtures/opencode"))
    args = ap.parse_args()
    if args.cmd == "live":
        live(args.db, args.wal)
        return
    out = Path(args.out)
    generate(out)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({total // 1024} KiB, SQLite {sqlite3.sqlite_version})")


if __name__ == "__main__":
    os.umask(0o022)
    main()
