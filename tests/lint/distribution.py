#!/usr/bin/env python3
"""distribution.py — the PostgreSQL schema stays ready for a distributed PostgreSQL (Citus).

docs/scale-out.md ("Running on a distributed PostgreSQL (Citus)") gives each table a role:
distributed by a column (tables that share a co-location group keep equal values of that column
on one shard), a reference table (a copy on every node) or local (one table on the coordinator).
ROLES below holds those roles; this lint reads the schema as the migrations leave it (the
statements of mn_pg_migrations in src/store/postgres/schema.h, in order, then the tables the
other files of src/store/postgres/ create) and checks the rules a distributed table needs:

  column    the distribution column exists            null      it is NOT NULL
  type      the tables of a group share its type
  key       it is in every primary key, unique constraint and unique index of the table
  fk        a foreign key between distributed tables maps the distribution column to the
            referenced table's, in one group; none from a reference or local table to a
            distributed one, none from a distributed table to a local one
  sequence  a column whose default draws from a sequence (serial, identity, nextval) only names
            rows (IDENTITY below): nothing orders one distribution key's rows by it, since
            Citus nodes other than the coordinator draw from ranges of their own

A rule the schema breaks today and cannot yet keep is in EXCEPTIONS with the reason; an exception
the schema no longer needs fails too, so the list only shrinks. A statement the lint does not
understand fails rather than being skipped.

Usage: distribution.py ROOT               check the schema under ROOT
       distribution.py --list ROOT        print each table's role and the exceptions
       distribution.py --self-test ROOT   check that broken copies of the schema fail
"""
import glob
import os
import re
import sys

DIST, REFERENCE, LOCAL = "distributed", "reference", "local"

# table: (DIST, group, column) or (REFERENCE | LOCAL, why)
ROLES = {
    # a session's rows share its sid: append, context, history, checkpoints stay on one shard
    "sessions": (DIST, "session", "sid"),
    "messages": (DIST, "session", "session_sid"),
    "file_hashes": (DIST, "session", "session_sid"),
    "summaries": (DIST, "session", "session_sid"),
    "events": (DIST, "session", "session_sid"),
    "checkpoints": (DIST, "session", "session_sid"),
    "checkpoint_writes": (DIST, "session", "session_sid"),
    "embeddings": (DIST, "session", "session_sid"),
    "embed_queue": (DIST, "session", "session_sid"),
    # a session's id and key are unique through these (schema 17), each distributed by its key
    "session_ids": (DIST, "session_id", "id"),
    "session_keys": (DIST, "session_key", "namespace"),
    # a memory's versions share its id: a write reads and closes the earlier ones on one shard
    "memories": (DIST, "memory", "id"),
    "memory_vectors": (DIST, "memory", "memory_id"),
    # a namespace's documents on one shard (its primary key leads with ns)
    "documents": (DIST, "document", "ns"),
    "meta": (LOCAL, "written by every append group (its connection's commit token) and every extraction run:"
                    " a reference table would make each of those a write on every node"),
    "mnemo_schema": (LOCAL, "read once by each node when it opens the database, written by migrations"),
    "embed_log": (LOCAL, "one counter in commit order is what it is for: each node's vector index follows it"),
    "memory_vector_log": (LOCAL, "one counter in commit order, as embed_log"),
}

# (table, column) drawn from a sequence that only names rows
IDENTITY = {
    ("sessions", "sid"): "listing orders by updated_at; sid only breaks ties",
    ("messages", "id"): "a message's place in its session is seq; id names it (and breaks score ties)",
    ("memories", "vid"): "versions are ordered by version; vid names one (and breaks ties)",
    ("summaries", "id"): "a session's summaries are ordered by n (the latest has the highest); id names one",
    ("events", "id"): "a session's events are ordered by n (listed newest first); id names one",
}

# (table, rule, constraint, index or column): why the schema breaks the rule today
EXCEPTIONS = {
}

SCHEMA = "src/store/postgres/schema.h"
CONSTRAINT_WORDS = {"CONSTRAINT", "NOT", "NULL", "PRIMARY", "UNIQUE", "REFERENCES", "DEFAULT", "GENERATED",
                    "CHECK", "COLLATE"}
TYPES = {"bigserial": "bigint", "serial8": "bigint", "int8": "bigint", "serial": "integer", "serial4": "integer",
         "int": "integer", "int4": "integer", "smallserial": "smallint", "serial2": "smallint", "int2": "smallint"}
SERIAL_TYPES = {"bigserial", "serial8", "serial", "serial4", "smallserial", "serial2"}


class NotUnderstood(Exception):
    pass


# ---- C source: the SQL texts -----------------------------------------------------------------

# a string literal, a comment, a name, spaces, anything else (a character literal is one thing)
C_TOKEN = re.compile(r'"((?:[^"\\\n]|\\.)*)"|/\*.*?\*/|//[^\n]*|([A-Za-z_]\w*)|(\s+)|(\'(?:\\.|[^\'\\\n])+\'|.)',
                     re.S)


def c_unescape(s):
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), s)


def c_texts(source):
    """The string literals of C source, adjacent ones (with macro names between) joined. A macro
    name stays in the text as its name: the lint needs no value of one."""
    texts, run, pending = [], None, ""
    for m in C_TOKEN.finditer(source):
        lit, ident, other = m.group(1), m.group(2), m.group(4)
        if lit is not None:
            run = (run or "") + pending + c_unescape(lit)
            pending = ""
        elif ident is not None:
            pending += ident if run is not None else ""
        elif other is not None:  # not a space or a comment: the run of literals ends
            if run is not None:
                texts.append(run)
            run, pending = None, ""
    if run is not None:
        texts.append(run)
    return texts


def migrations(source):
    """The entries of mn_pg_migrations, each one SQL text."""
    m = re.search(r"mn_pg_migrations\[\]\s*=\s*\{(.*?)\n\};", source, re.S)
    if not m:
        raise NotUnderstood(f"{SCHEMA}: no mn_pg_migrations array")
    entries, depth, current = [], 0, []
    for t in C_TOKEN.finditer(m.group(1)):
        lit, ident, other = t.group(1), t.group(2), t.group(4)
        if lit is not None:
            current.append(c_unescape(lit))
        elif ident is not None:
            current.append(ident)
        elif other == "(":
            depth += 1
        elif other == ")":
            depth -= 1
        elif other == "," and depth == 0:
            entries.append("".join(current))
            current = []
    if "".join(current).strip():
        entries.append("".join(current))
    return entries


# ---- SQL: statements and tokens --------------------------------------------------------------

SQL_TOKEN = re.compile(r"""
    (?P<dollar>\$(?P<tag>[A-Za-z_]*)\$.*?\$(?P=tag)\$)
  | (?P<str>[Ee]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*')
  | (?P<quoted>"(?:[^"]|"")*")
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<word>[A-Za-z_][\w$]*)
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<space>\s+)
  | (?P<punct>::|.)
""", re.S | re.X)


def sql_tokens(sql):
    out = []
    for m in SQL_TOKEN.finditer(sql):
        kind = next(k for k in ("dollar", "str", "quoted", "comment", "word", "num", "space", "punct") if m.group(k))
        if kind not in ("space", "comment"):
            out.append((kind, m.group(0)))
    return out


def statements(sql):
    """Token lists, one per statement (split on ; outside strings and dollar quotes)."""
    out, cur = [], []
    for tok in sql_tokens(sql):
        if tok == ("punct", ";"):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(tok)
    if cur:
        out.append(cur)
    return out


def up(tok):
    return tok[1].upper() if tok[0] == "word" else tok[1]


def ident(tok):
    if tok[0] == "quoted":
        return tok[1][1:-1].replace('""', '"')
    if tok[0] != "word":
        raise NotUnderstood(f"expected a name, found {tok[1]!r}")
    return tok[1].lower()


def split_commas(toks):
    """Top-level comma-separated items of a token list."""
    items, cur, depth = [], [], 0
    for t in toks:
        if t == ("punct", "(") or t == ("punct", "["):
            depth += 1
        elif t == ("punct", ")") or t == ("punct", "]"):
            depth -= 1
        if t == ("punct", ",") and depth == 0:
            items.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        items.append(cur)
    return items


def group_at(toks, i):
    """The tokens inside the parenthesis that opens at toks[i], and the index after it."""
    if i >= len(toks) or toks[i] != ("punct", "("):
        raise NotUnderstood(f"expected '(' at {' '.join(t[1] for t in toks[i:i + 3])!r}")
    depth = 0
    for j in range(i, len(toks)):
        depth += toks[j] == ("punct", "(")
        depth -= toks[j] == ("punct", ")")
        if depth == 0:
            return toks[i + 1:j], j + 1
    raise NotUnderstood("unbalanced parenthesis")


def words_at(toks, i, *words):
    return [up(t) for t in toks[i:i + len(words)]] == list(words)


def name_list(toks):
    return [ident(item[0]) for item in split_commas(toks)]


# ---- the schema model ------------------------------------------------------------------------

class Column:
    def __init__(self, type_, serial):
        self.type, self.serial, self.not_null = type_, serial, False


class Table:
    def __init__(self, name):
        self.name = name
        self.cols = {}  # name -> Column
        self.keys = {}  # constraint or unique index name -> columns
        self.fks = {}  # constraint name -> (columns, referenced table, referenced columns)


class Schema:
    def __init__(self):
        self.tables = {}
        self.indexes = {}  # index name -> table (unique or not: DROP INDEX names either)

    def table(self, name):
        if name not in self.tables:
            raise NotUnderstood(f"table {name} is not in the schema")
        return self.tables[name]

    # -- column and table constraints, shared by CREATE TABLE and ALTER TABLE ADD

    def add_column(self, t, toks):
        name = ident(toks[0])
        i, type_words = 1, []
        while i < len(toks) and up(toks[i]) not in CONSTRAINT_WORDS:
            if toks[i] == ("punct", "("):
                _, i = group_at(toks, i)
                continue
            type_words.append(toks[i][1].lower())
            i += 1
        type_ = " ".join(type_words)
        col = t.cols[name] = Column(TYPES.get(type_, type_), type_ in SERIAL_TYPES)
        cname = None
        while i < len(toks):
            w = up(toks[i])
            if w == "CONSTRAINT":
                cname, i = ident(toks[i + 1]), i + 2
                continue
            if words_at(toks, i, "NOT", "NULL"):
                col.not_null, i = True, i + 2
            elif w == "NULL":
                i += 1
            elif words_at(toks, i, "PRIMARY", "KEY"):
                col.not_null = True
                t.keys[cname or f"{t.name}_pkey"] = [name]
                i += 2
            elif w == "UNIQUE":
                t.keys[cname or f"{t.name}_{name}_key"] = [name]
                i += 1
            elif w == "REFERENCES":
                ref, refcols, i = self.reference(toks, i + 1)
                t.fks[cname or f"{t.name}_{name}_fkey"] = ([name], ref, refcols)
            elif w == "DEFAULT":
                i += 1
                start = i
                while i < len(toks) and up(toks[i]) not in CONSTRAINT_WORDS:
                    i = group_at(toks, i)[1] if toks[i] == ("punct", "(") else i + 1
                col.serial |= any(up(x) == "NEXTVAL" for x in toks[start:i])
            elif w == "GENERATED":
                j = i + 1
                while j < len(toks) and up(toks[j]) != "AS":
                    j += 1
                if j + 1 < len(toks) and up(toks[j + 1]) == "IDENTITY":
                    col.serial, col.not_null = True, True
                    i = j + 2
                    if i < len(toks) and toks[i] == ("punct", "("):
                        i = group_at(toks, i)[1]
                else:  # GENERATED ALWAYS AS (expression) STORED
                    i = group_at(toks, j + 1)[1]
                    i += i < len(toks) and up(toks[i]) == "STORED"
            elif w == "CHECK":
                i = group_at(toks, i + 1)[1]
            elif w == "COLLATE":
                i += 2
            else:
                raise NotUnderstood(f"column {t.name}.{name}: {' '.join(x[1] for x in toks[i:])!r}")
            cname = None

    def reference(self, toks, i):
        """REFERENCES table [(columns)] [ON DELETE/UPDATE action] [MATCH …] from toks[i]."""
        ref = ident(toks[i])
        i += 1
        if i < len(toks) and toks[i] == ("punct", "("):
            inner, i = group_at(toks, i)
            refcols = name_list(inner)
        else:
            refcols = self.table(ref).keys.get(f"{ref}_pkey")
            if refcols is None:
                raise NotUnderstood(f"a foreign key to {ref}, which has no primary key")
        while i < len(toks) and up(toks[i]) in ("ON", "MATCH", "DEFERRABLE", "INITIALLY", "NOT"):
            if words_at(toks, i, "ON", "DELETE") or words_at(toks, i, "ON", "UPDATE"):
                i += 2
                i += 2 if up(toks[i]) in ("SET", "NO") else 1
            else:
                i += 2 if up(toks[i]) in ("MATCH", "INITIALLY", "NOT") else 1
        return ref, refcols, i

    def add_constraint(self, t, toks):
        """A table constraint; False when toks is not one (a column definition)."""
        cname, i = None, 0
        if up(toks[0]) == "CONSTRAINT":
            cname, i = ident(toks[1]), 2
        w = up(toks[i])
        if words_at(toks, i, "PRIMARY", "KEY"):
            cols, _ = group_at(toks, i + 2)
            cols = name_list(cols)
            for c in cols:
                if c in t.cols:
                    t.cols[c].not_null = True
            t.keys[cname or f"{t.name}_pkey"] = cols
        elif w == "UNIQUE":
            j = i + 1 + (3 if words_at(toks, i + 1, "NULLS", "NOT", "DISTINCT") else 0)
            cols = name_list(group_at(toks, j)[0])
            t.keys[cname or f"{t.name}_{'_'.join(cols)}_key"] = cols
        elif words_at(toks, i, "FOREIGN", "KEY"):
            inner, j = group_at(toks, i + 2)
            cols = name_list(inner)
            if up(toks[j]) != "REFERENCES":
                raise NotUnderstood(f"{t.name}: foreign key without REFERENCES")
            ref, refcols, _ = self.reference(toks, j + 1)
            t.fks[cname or f"{t.name}_{'_'.join(cols)}_fkey"] = (cols, ref, refcols)
        elif w == "CHECK":
            pass
        elif w in ("EXCLUDE", "LIKE") or cname:
            raise NotUnderstood(f"{t.name}: {' '.join(x[1] for x in toks)!r}")
        else:
            return False
        return True

    # -- statements

    def create_table(self, toks):
        i = 2 + (3 if words_at(toks, 2, "IF", "NOT", "EXISTS") else 0)
        name = ident(toks[i])
        if name in self.tables:
            if i == 2:
                raise NotUnderstood(f"table {name} created twice")
            return  # IF NOT EXISTS
        t = self.tables[name] = Table(name)
        body, j = group_at(toks, i + 1)
        if j != len(toks):
            raise NotUnderstood(f"CREATE TABLE {name}: {' '.join(x[1] for x in toks[j:])!r} after the columns")
        for item in split_commas(body):
            if not self.add_constraint(t, item):
                self.add_column(t, item)

    def create_index(self, toks):
        unique = up(toks[1]) == "UNIQUE"
        i = 3 if unique else 2
        i += up(toks[i]) == "CONCURRENTLY"
        i += 3 if words_at(toks, i, "IF", "NOT", "EXISTS") else 0
        name = ident(toks[i])
        if up(toks[i + 1]) != "ON":
            raise NotUnderstood(f"CREATE INDEX {name}: no ON")
        j = i + 2 + (up(toks[i + 2]) == "ONLY")
        table = self.table(ident(toks[j]))
        j += 1
        if up(toks[j]) == "USING":
            j += 2
        inner, _ = group_at(toks, j)
        self.indexes[name] = table.name
        if unique:  # an expression is no column: it cannot hold the distribution column
            table.keys[name] = [ident(item[0]) if item[0][0] in ("word", "quoted") and item[1:2] != [("punct", "(")]
                                else "(expression)" for item in split_commas(inner)]

    def drop_index(self, toks):
        i = 2 + (2 if words_at(toks, 2, "IF", "EXISTS") else 0)
        for item in split_commas(toks[i:]):
            name = ident(item[0])
            table = self.indexes.pop(name, None)
            if table:
                self.tables[table].keys.pop(name, None)

    def drop_constraint(self, t, name):
        if t.keys.pop(name, None) is None and t.fks.pop(name, None) is None:
            raise NotUnderstood(f"{t.name} has no constraint {name}")

    def drop_column(self, t, name):
        del t.cols[name]
        for k in [k for k, cols in t.keys.items() if name in cols]:
            del t.keys[k]
        for k in [k for k, fk in t.fks.items() if name in fk[0]]:
            del t.fks[k]

    def alter_table(self, toks):
        i = 2 + (2 if words_at(toks, 2, "IF", "EXISTS") else 0)
        i += up(toks[i]) == "ONLY"
        t = self.table(ident(toks[i]))
        for act in split_commas(toks[i + 1:]):
            if up(act[0]) == "DROP" and up(act[-1]) in ("CASCADE", "RESTRICT"):  # not ON DELETE CASCADE
                act = act[:-1]
            w = [up(x) for x in act]
            if w[0] == "ADD":
                rest = act[1:]
                if up(rest[0]) == "COLUMN":
                    rest = rest[1:]
                    rest = rest[3:] if words_at(rest, 0, "IF", "NOT", "EXISTS") else rest
                    self.add_column(t, rest)
                elif not self.add_constraint(t, rest):
                    self.add_column(t, rest)
            elif w[:2] == ["DROP", "CONSTRAINT"]:
                self.drop_constraint(t, ident(act[-1]))
            elif w[0] == "DROP":
                self.drop_column(t, ident(act[-1]))
            elif w[0] == "ALTER":
                j = 2 if w[1] == "COLUMN" else 1
                col, op = t.cols[ident(act[j])], w[j + 1:]
                if op == ["SET", "NOT", "NULL"]:
                    col.not_null = True
                elif op == ["DROP", "NOT", "NULL"]:
                    col.not_null = False
                elif op[:2] == ["SET", "DEFAULT"]:
                    col.serial = "NEXTVAL" in op
                elif op == ["DROP", "DEFAULT"] or op[:2] == ["DROP", "IDENTITY"]:
                    col.serial = False
                elif op[:1] == ["ADD"] and "IDENTITY" in op:
                    col.serial = True
                elif op[:1] == ["TYPE"] or op[:3] == ["SET", "DATA", "TYPE"]:
                    op = op[:op.index("USING")] if "USING" in op else op
                    type_ = " ".join(x.lower() for x in op[op.index("TYPE") + 1:])
                    col.type = TYPES.get(type_, type_)
                else:
                    raise NotUnderstood(f"ALTER TABLE {t.name}: {' '.join(x[1] for x in act)!r}")
            else:
                raise NotUnderstood(f"ALTER TABLE {t.name}: {' '.join(x[1] for x in act)!r}")

    # a DO block changes the schema only as migration 9 does: it drops the foreign keys of one
    # table to another, found in pg_constraint
    FK_DROP = re.compile(r"contype\s*=\s*'f'.*conrelid\s*=\s*'(\w+)'::regclass.*confrelid\s*=\s*'(\w+)'::regclass"
                         r".*DROP\s+CONSTRAINT", re.S | re.I)
    DDL = re.compile(r"\b(ALTER\s+TABLE|CREATE\s+(UNIQUE\s+)?INDEX|CREATE\s+TABLE|DROP\s+(TABLE|INDEX|CONSTRAINT"
                     r"|COLUMN)|ADD\s+(CONSTRAINT|COLUMN|PRIMARY|UNIQUE|FOREIGN)|EXECUTE)\b", re.I)

    def do_block(self, toks):
        body = toks[1][1]
        m = self.FK_DROP.search(body)
        if m:
            t = self.table(m.group(1).lower())
            for name in [n for n, fk in t.fks.items() if fk[1] == m.group(2).lower()]:
                del t.fks[name]
        elif self.DDL.search(body):
            raise NotUnderstood(f"a DO block that changes tables: {body[:80]!r}")

    IGNORED = [("CREATE", "FUNCTION"), ("CREATE", "OR"), ("CREATE", "TRIGGER"), ("DROP", "TRIGGER"),
               ("CREATE", "TEXT"), ("ALTER", "TEXT"), ("CREATE", "SEQUENCE"), ("CREATE", "EXTENSION"),
               ("INSERT",), ("UPDATE",), ("DELETE",), ("SELECT",), ("SET",), ("WITH",)]

    def apply(self, toks):
        w = [up(x) for x in toks[:3]]
        if w[:2] == ["CREATE", "TABLE"]:
            self.create_table(toks)
        elif w[:2] == ["CREATE", "INDEX"] or w[:3] == ["CREATE", "UNIQUE", "INDEX"]:
            self.create_index(toks)
        elif w[:2] == ["DROP", "INDEX"]:
            self.drop_index(toks)
        elif w[:2] == ["DROP", "TABLE"]:
            i = 2 + (2 if words_at(toks, 2, "IF", "EXISTS") else 0)
            for item in split_commas(toks[i:]):
                self.tables.pop(ident(item[0]), None)
        elif w[:2] == ["ALTER", "TABLE"]:
            self.alter_table(toks)
        elif w[0] == "DO" and len(toks) == 2 and toks[1][0] == "dollar":
            self.do_block(toks)
        elif not any(tuple(w[:len(p)]) == p for p in self.IGNORED):
            raise NotUnderstood(f"a statement this lint does not read: {' '.join(x[1] for x in toks[:6])!r}")


TABLE_DDL = re.compile(r"^\s*(CREATE\s+(UNIQUE\s+)?INDEX|CREATE\s+TABLE|ALTER\s+TABLE|DROP\s+(TABLE|INDEX))\b", re.I)


def read_schema(sources):
    """The schema the migrations of schema.h leave, then the tables, indexes and changes to tables
    that the other files of src/store/postgres/ make (pg.c's mnemo_schema). sources: path -> text."""
    s = Schema()
    for entry in migrations(sources[SCHEMA]):
        for st in statements(entry):
            s.apply(st)
    for path in sorted(p for p in sources if p != SCHEMA):
        for text in c_texts(sources[path]):
            for st in statements(text):
                if TABLE_DDL.match(" ".join(x[1] for x in st[:3])):
                    s.apply(st)
    return s


# ---- the rules -------------------------------------------------------------------------------

def violations(s, roles, identity):
    """{(table, rule, object): message} for every rule the schema breaks."""
    out = {}
    for name in sorted(set(s.tables) - set(roles)):
        out[(name, "role", name)] = "no role: give it one in ROLES (tests/lint/distribution.py)"
    for name in sorted(set(roles) - set(s.tables)):
        out[(name, "role", name)] = "a role for a table the schema does not have"
    group_type = {}
    for name, role in roles.items():
        t = s.tables.get(name)
        if not t or role[0] != DIST:
            continue
        _, group, dcol = role
        col = t.cols.get(dcol)
        if col is None:
            out[(name, "column", dcol)] = f"no distribution column {dcol}"
        else:
            if not col.not_null:
                out[(name, "null", dcol)] = f"distribution column {dcol} may be NULL"
            if group_type.setdefault(group, (col.type, name))[0] != col.type:
                other = group_type[group]
                out[(name, "type", dcol)] = (f"{dcol} is {col.type}, {other[1]} of the same group"
                                             f" distributes by {other[0]}")
        for key, cols in sorted(t.keys.items()):
            if dcol not in cols:
                out[(name, "key", key)] = f"unique key {key} ({', '.join(cols)}) lacks the distribution column {dcol}"
        for cname, c in sorted(t.cols.items()):
            if c.serial and (name, cname) not in identity:
                out[(name, "sequence", cname)] = (f"{cname} draws from a sequence; if nothing orders a {dcol}'s rows"
                                                  " by it, say so in IDENTITY")
    for name, t in sorted(s.tables.items()):
        kind = roles.get(name, (None,))[0]
        for fk, (cols, ref, refcols) in sorted(t.fks.items()):
            rkind = roles.get(ref, (None,))[0]
            what = f"foreign key {fk} ({', '.join(cols)}) -> {ref}({', '.join(refcols)})"
            if kind == DIST and rkind == DIST:
                (_, group, dcol), (_, rgroup, rdcol) = roles[name], roles[ref]
                if group != rgroup or dcol not in cols or refcols[cols.index(dcol)] != rdcol:
                    out[(name, "fk", fk)] = f"{what} does not join {name}.{dcol} to {ref}.{rdcol}"
            elif rkind == DIST and kind in (REFERENCE, LOCAL):
                out[(name, "fk", fk)] = f"{what}: a {kind} table cannot reference a distributed one"
            elif kind == DIST and rkind == LOCAL:
                out[(name, "fk", fk)] = f"{what}: a distributed table cannot reference a local one"
    return out


def check(sources, roles=ROLES, identity=IDENTITY, exceptions=EXCEPTIONS):
    """The problems: rules broken without an exception, and exceptions no longer needed."""
    try:
        found = violations(read_schema(sources), roles, identity)
    except NotUnderstood as e:
        return [f"{e} (teach tests/lint/distribution.py to read it)"]
    problems = [f"{k[0]}: {msg}" for k, msg in sorted(found.items()) if k not in exceptions]
    problems += [f"{k[0]}: the exception for {k[1]} {k[2]} is no longer needed: remove it from EXCEPTIONS"
                 for k in sorted(exceptions) if k not in found]
    return problems


def load(root):
    paths = [SCHEMA] + sorted(os.path.relpath(p, root)
                              for p in glob.glob(os.path.join(root, "src/store/postgres/*.c")))
    out = {}
    for p in paths:
        with open(os.path.join(root, p), encoding="utf-8") as f:
            out[p] = f.read()
    return out


# ---- self-test: broken copies of the schema --------------------------------------------------

def with_migration(sources, sql):
    """sources with one more migration at the end of mn_pg_migrations."""
    text = sources[SCHEMA]
    end = re.search(r"mn_pg_migrations\[\]\s*=\s*\{.*?(\n\};)", text, re.S).start(1)
    literal = '"' + sql.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return dict(sources, **{SCHEMA: text[:end] + "\n    " + literal + "," + text[end:]})


SELF_TESTS = [
    # (what, SQL appended as a migration, extra roles, a problem that must be reported)
    ("a unique index without the distribution column",
     "CREATE UNIQUE INDEX messages_by_role ON messages(role, created_at);", {},
     "messages: unique key messages_by_role (role, created_at) lacks the distribution column session_sid"),
    ("a primary key without it",
     "CREATE TABLE notes (id BIGINT PRIMARY KEY, session_sid BIGINT NOT NULL);",
     {"notes": (DIST, "session", "session_sid")}, "notes: unique key notes_pkey (id) lacks"),
    ("a foreign key across distribution keys",
     "CREATE TABLE notes (session_sid BIGINT NOT NULL, message_id BIGINT REFERENCES messages(id),"
     " PRIMARY KEY (session_sid, message_id));",
     {"notes": (DIST, "session", "session_sid")},
     "notes: foreign key notes_message_id_fkey (message_id) -> messages(id) does not join"),
    ("a foreign key into another co-location group",
     "ALTER TABLE documents ADD COLUMN sid BIGINT REFERENCES sessions(sid);", {},
     "documents: foreign key documents_sid_fkey (sid) -> sessions(sid) does not join"),
    ("a foreign key added by ALTER TABLE, ON DELETE CASCADE",
     "ALTER TABLE file_hashes ADD FOREIGN KEY (session_sid) REFERENCES documents(ns) ON DELETE CASCADE;", {},
     "file_hashes: foreign key file_hashes_session_sid_fkey (session_sid) -> documents(ns) does not join"),
    ("a foreign key from a reference table to a distributed one",
     "CREATE TABLE tags (name TEXT PRIMARY KEY, session_sid BIGINT REFERENCES sessions(sid));",
     {"tags": (REFERENCE, "test")}, "tags: foreign key tags_session_sid_fkey (session_sid) -> sessions(sid): a"
                                    " reference table cannot reference a distributed one"),
    ("a foreign key from a distributed table to a local one",
     "ALTER TABLE checkpoints ADD COLUMN meta_key TEXT REFERENCES meta(key);", {},
     "checkpoints: foreign key checkpoints_meta_key_fkey (meta_key) -> meta(key): a distributed table"),
    ("an ordering column from a sequence",
     "ALTER TABLE checkpoints ADD COLUMN n BIGSERIAL;", {}, "checkpoints: n draws from a sequence"),
    ("an identity column",
     "ALTER TABLE file_hashes ADD COLUMN n BIGINT GENERATED ALWAYS AS IDENTITY;", {},
     "file_hashes: n draws from a sequence"),
    ("a nextval default",
     "ALTER TABLE documents ADD COLUMN n BIGINT DEFAULT nextval('s');", {}, "documents: n draws from a sequence"),
    ("a distribution column that may be NULL",
     "CREATE TABLE notes (session_sid BIGINT, n INTEGER);",
     {"notes": (DIST, "session", "session_sid")}, "notes: distribution column session_sid may be NULL"),
    ("a group of two types",
     "CREATE TABLE notes (session_sid TEXT NOT NULL);",
     {"notes": (DIST, "session", "session_sid")}, "notes: session_sid is text, sessions of the same group"),
    ("a distribution column dropped",
     "ALTER TABLE documents DROP COLUMN ns;", {}, "documents: no distribution column ns"),
    ("a table without a role",
     "CREATE TABLE notes (n INTEGER);", {}, "notes: no role"),
    ("a statement the lint cannot read",
     "ALTER TABLE messages RENAME COLUMN role TO kind;", {}, "ALTER TABLE messages: 'RENAME COLUMN"),
    ("a DO block that changes tables",
     "DO $$ BEGIN EXECUTE 'ALTER TABLE messages ADD UNIQUE (role)'; END $$;", {}, "a DO block that changes tables"),
]


def self_test(root):
    sources = load(root)
    failed = 0
    base = check(sources)
    if base:
        print("self-test: the schema as it is should pass:\n  " + "\n  ".join(base))
        failed += 1
    for what, sql, roles, expect in SELF_TESTS:
        problems = check(with_migration(sources, sql), dict(ROLES, **roles))
        if not any(expect in p for p in problems):
            print(f"self-test: {what} is not caught ({sql})\n  got: " + ("\n  ".join(problems) or "nothing"))
            failed += 1
    # an exception the schema no longer needs (the index is distributable as it is)
    problems = check(sources, exceptions={**EXCEPTIONS, ("sessions", "key", "sessions_by_key"): "a test"})
    expect = "sessions: the exception for key sessions_by_key is no longer needed"
    if not any(expect in p for p in problems):
        print("self-test: an exception the schema no longer needs is not caught\n  got: "
              + ("\n  ".join(problems) or "nothing"))
        failed += 1
    # the migration 9 DO block must count: without it messages keeps a foreign key it does not have
    s = read_schema(sources)
    if s.tables["messages"].fks:
        print("self-test: migration 9's DO block should drop messages' foreign key to sessions")
        failed += 1
    if not failed:
        print(f"distribution self-test: {len(SELF_TESTS) + 3} cases ok")
    return 1 if failed else 0


def list_roles(root):
    s = read_schema(load(root))
    found = violations(s, ROLES, IDENTITY)
    for name, role in ROLES.items():
        print(f"{name}: {role[0]} " + (f"by {role[2]} (group {role[1]})" if role[0] == DIST else f"({role[1]})"))
        for k in sorted(k for k in found if k[0] == name and k in EXCEPTIONS):
            print(f"    exception: {found[k]}\n        because {EXCEPTIONS[k]}")
    return 0


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    root = args[0] if args else "."
    if "--self-test" in argv:
        return self_test(root)
    if "--list" in argv:
        return list_roles(root)
    problems = check(load(root))
    for p in problems:
        print(f"distribution: {p}")
    if problems:
        print("distribution: the schema must stay ready for Citus (docs/scale-out.md; tests/lint/distribution.py)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
