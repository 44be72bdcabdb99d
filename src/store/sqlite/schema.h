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
};

#define MN_SQLITE_SCHEMA_VERSION ((int)(sizeof mn_sqlite_migrations / sizeof mn_sqlite_migrations[0]))

#endif
