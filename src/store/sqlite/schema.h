/*
 * schema.h — the SQLite schema of a mnemo database, version by version (docs/format.md
 * describes every column). PRAGMA user_version holds the version; PRAGMA application_id marks
 * the file as mnemo's. A migration list entry i turns version i into version i+1; migrations
 * are never edited once released, only appended.
 *
 * Version 1:
 *   sessions  sid INTEGER PK (internal), id TEXT UUID (public), namespace, title, system_prompt,
 *             metadata JSON, state JSON, tool_name, parent_id, created_at/updated_at/expires_at
 *             (ms since epoch; expires_at 0 = never), ttl_ms, max_turns, last_seq,
 *             message_count, token_count (maintained by every append).
 *   messages  id INTEGER PK AUTOINCREMENT (never reused), session_sid → sessions ON DELETE
 *             CASCADE, seq (1.. per session, unique), role TEXT, content, tool_calls JSON,
 *             tool_call_id, name, tool_name, model, files JSON, metadata JSON (NULL = {}),
 *             idem_key (unique per session), tokens, pinned, created_at.
 *   meta      key/value settings of the database (tokenizer name).
 *
 * Version 2 (threads, state, summaries):
 *   sessions  + turn_count (user messages appended), busy_until (ms; a summarisation claimed
 *             the session until then).
 *   messages  + active (0 = left the active history past the turn limit; kept for search).
 *   file_hashes (session_sid, path, sha256): content already sent in that session.
 *   summaries id, session_sid, covers_upto (message seq), folded (messages covered), text,
 *             tokens, model, summarizer, created_at. The latest is the session's summary.
 *   events    id, session_sid (NULL: database-wide), kind, data JSON, created_at.
 *
 * Version 3:
 *   sessions  + inactive_count (messages past the turn limit, kept for search), so that a
 *             context knows how many active messages there are without counting them.
 */
#ifndef MN_STORE_SQLITE_SCHEMA_H
#define MN_STORE_SQLITE_SCHEMA_H

#define MN_SQLITE_APPLICATION_ID 0x6D6E656D /* "mnem" */

static const char *const mn_sqlite_migrations[] = {
    /* 0 → 1 */
    "CREATE TABLE sessions ("
    "  sid INTEGER PRIMARY KEY,"
    "  id TEXT NOT NULL UNIQUE,"
    "  namespace TEXT NOT NULL DEFAULT 'default',"
    "  title TEXT,"
    "  system_prompt TEXT,"
    "  metadata TEXT,"
    "  state TEXT,"
    "  tool_name TEXT,"
    "  parent_id TEXT,"
    "  created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL,"
    "  expires_at INTEGER NOT NULL DEFAULT 0,"
    "  ttl_ms INTEGER NOT NULL DEFAULT 0,"
    "  max_turns INTEGER NOT NULL DEFAULT 0,"
    "  last_seq INTEGER NOT NULL DEFAULT 0,"
    "  message_count INTEGER NOT NULL DEFAULT 0,"
    "  token_count INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX sessions_by_ns_updated ON sessions(namespace, updated_at);"
    "CREATE INDEX sessions_by_updated ON sessions(updated_at);"
    "CREATE INDEX sessions_by_created ON sessions(created_at, id);"
    "CREATE TABLE messages ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  seq INTEGER NOT NULL,"
    "  role TEXT NOT NULL,"
    "  content TEXT,"
    "  tool_calls TEXT,"
    "  tool_call_id TEXT,"
    "  name TEXT,"
    "  tool_name TEXT,"
    "  model TEXT,"
    "  files TEXT,"
    "  metadata TEXT,"
    "  idem_key TEXT,"
    "  tokens INTEGER NOT NULL,"
    "  pinned INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL,"
    "  UNIQUE (session_sid, seq));"
    "CREATE UNIQUE INDEX messages_by_idem ON messages(session_sid, idem_key) WHERE idem_key IS NOT NULL;"
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    /* 1 → 2 */
    "ALTER TABLE sessions ADD COLUMN turn_count INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sessions ADD COLUMN busy_until INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET turn_count ="
    "  (SELECT count(*) FROM messages WHERE session_sid = sessions.sid AND role = 'user');"
    "ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;"
    "CREATE INDEX sessions_by_expiry ON sessions(expires_at) WHERE expires_at > 0;"
    "CREATE TABLE file_hashes ("
    "  session_sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  sha256 TEXT NOT NULL,"
    "  first_seen INTEGER NOT NULL,"
    "  PRIMARY KEY (session_sid, path, sha256)) WITHOUT ROWID;"
    "CREATE TABLE summaries ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  covers_upto INTEGER NOT NULL,"
    "  folded INTEGER NOT NULL,"
    "  text TEXT NOT NULL,"
    "  tokens INTEGER NOT NULL,"
    "  model TEXT,"
    "  summarizer TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE INDEX summaries_by_session ON summaries(session_sid, id);"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  session_sid INTEGER REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  kind TEXT NOT NULL,"
    "  data TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE INDEX events_by_session ON events(session_sid, id);",
    /* 2 → 3 */
    "ALTER TABLE sessions ADD COLUMN inactive_count INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET inactive_count ="
    "  (SELECT count(*) FROM messages WHERE session_sid = sessions.sid AND active = 0);",
};

#define MN_SQLITE_SCHEMA_VERSION ((int)(sizeof mn_sqlite_migrations / sizeof mn_sqlite_migrations[0]))

#endif
