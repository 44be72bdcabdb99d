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
 *   file_hashes (session_sid, path, sha256): the path each content was first seen under in that session.
 *   summaries id, session_sid, covers_upto (message seq), folded (messages covered), text,
 *             tokens, model, summarizer, created_at. The latest is the session's summary.
 *   events    id, session_sid (NULL: database-wide), kind, data JSON, created_at.
 *
 * Version 3:
 *   sessions  + inactive_count (messages past the turn limit, kept for search), so that a
 *             context knows how many active messages there are without counting them.
 *
 * Version 5 (clear; mn_session_clear):
 *   sessions  + cleared_seq (the newest seq a clear moved out of the active history, 0 = none;
 *             summaries covering no more than it are not the session's summary).
 *
 * Version 4 (search; docs/search.md):
 *   messages_fts  FTS5 over messages.content (external content, porter + unicode61), BM25.
 *             Kept in sync from msg_log: triggers on messages log each insert and each delete
 *             (with the old content, which an external-content delete needs); the log is
 *             applied in chunks as messages arrive (search.fts_drain, search.c) and the next
 *             search applies and empties the rest in one transaction. (FTS5 itself cannot be
 *             written from a trigger: the store runs with trusted_schema off.) meta
 *             'fts.deletes' counts the applies that changed it out of id order (deletes; since
 *             version 7 also edits and imports below the watermark): handles keep phrase
 *             document counts only while it stays the same (search.c; no schema change: a
 *             missing key reads as 0).
 *   embeddings message_id → messages ON DELETE CASCADE, embedder, model, dim, vector (dim
 *             little-endian f32, unit length), created_at. meta 'embed.identity' holds the
 *             "embedder/model/dim" of every stored vector (one identity per database).
 *   embed_log  seq AUTOINCREMENT, message_id, op (1 stored, 0 removed): written by triggers on
 *             embeddings (session deletes cascade into it), read by each process to bring its
 *             in-memory index up to date.
 *   embed_queue  messages waiting for a vector; filled by a trigger on messages while meta
 *             'embed.queue' is '1' (set by a handle with an embedder), and by backfill.
 *
 * Version 5 (long-term memory; docs/memory.md):
 *   memories  vid INTEGER PK AUTOINCREMENT (one row per version), id TEXT (UUIDv7, the same for
 *             every version), version (1..; unique with id), text, kind, namespace, user_id,
 *             agent_id, session_id (NULL: unset; a scope, not a reference: sessions may go),
 *             metadata JSON, sources JSON array of message ids, pinned, token_cap, valid_from,
 *             valid_to (0 = still true), recorded_at, superseded_at (0 = current version),
 *             change (add/update/delete), actor, reason.
 *   memories_fts  FTS5 over memories.text (its own copy; rowid = vid), written by the store
 *             beside each version and deleted with it (porter + unicode61, as messages_fts).
 *   memory_vectors  vid → memories ON DELETE CASCADE, dim, vector (dim little-endian f32,
 *             unit length) from the configured embedder.
 *
 * Version 7 (appends at the raw insert's cost; docs/search.md):
 *   the trigger logging each inserted message goes: meta 'fts.indexed_upto' is the id up to
 *             which messages are in messages_fts (ids only grow), and msg_log keeps only what
 *             changed at or below it: deletes (trigger), edits and imports (written by the store).

 * Version 9 (appends without the embedding queue's trigger while no embedder queues):
 *   messages_embed_queue exists only while meta 'embed.queue' is '1': queue_enable creates and
 *             drops it with the setting, and its body no longer reads meta on every insert.
 *
 * Version 10 (a window that does not grow with the store; docs/format.md):
 *   messages  + pos INTEGER PRIMARY KEY = session_sid * 2^32 + seq: the table is ordered by
 *             session, so a session's messages lie on adjacent pages and a window or a history
 *             reads a few pages instead of one a message (a rowid key rather than WITHOUT ROWID:
 *             rows up to ~4 KB stay on their page). id stays the public, never reused id
 *             (UNIQUE; the keyword index's rowid, the key of embeddings); a new one is one
 *             past the largest stored or the largest a delete took away (meta
 *             'messages.last_id', kept by the trigger messages_keep_last_id), so an append
 *             writes no counter (AUTOINCREMENT wrote sqlite_sequence). No index on
 *             (session_sid, seq) and no foreign key to sessions: the trigger
 *             sessions_delete_messages deletes a session's range.
 *
 * Version 8 (the memory vector index; docs/memory.md):
 *   memory_vector_log  seq AUTOINCREMENT, vid, op (1 stored, 0 removed): written by triggers on
 *             memory_vectors (a forget's delete cascades into it), read by each process to keep
 *             its memory vector index ("<db>.memories.hnsw") current, as embed_log for messages.
 *
 * Version 11 (the keyword index in a file of its own, "<db>.keywords"; fts_file.c):
 *   messages_fts  moves to that file, attached as "kw", as a contentless FTS5 table (external
 *             content must be in the same file; the log's deletes carry the old text a
 *             contentless delete needs), its segments copied as they are (the same tokenizer, so
 *             the same terms and bm25 scores). The file's fts_meta holds 'fts.indexed_upto' and
 *             'fts.deletes' (moved from meta) and 'fts.file', the id of the database it belongs
 *             to (meta 'fts.file', new). msg_log stays in the database; fts_applied (seq) in
 *             the index's file marks the log rows applied in the index's own transaction (the
 *             two files commit one after the other), which leave msg_log after it committed.
 *
 * Version 12 (appends that leave the sessions indexes alone):
 *   sessions  + updated_minute = updated_at / 60000, kept by two triggers (after an insert, and
 *             after an update of updated_at, each only when the minute differs); the indexes
 *             sessions_by_ns_updated and sessions_by_updated key on it instead of updated_at. An
 *             append writes updated_at, so with updated_at in them both indexes were rewritten
 *             by every append (two more pages a commit); now only when the minute changes. The
 *             listing orders by updated_minute, updated_at, sid (the same order: the minute is
 *             monotone in updated_at), and prune adds updated_minute <= before / 60000.
 *
 * Version 13: sessions.inactive_count recounted from the messages; sessions + cleared_from (the
 *             oldest seq the clears since the last undo moved out of the active history);
 *             sessions + title_seq (the seq of the message the title was taken from; 0: set by
 *             the user, or none), so that a delete or an edit of that message, and of no other,
 *             clears or re-derives the title.
 *
 * Version 14: sessions + key, the caller's own name for a session (any string, unique in its
 *             namespace: sessions_by_key), so that a framework's session ids ("user-42-chat")
 *             name mnemo sessions; NULL for a session made without one.
 *
 * Version 15 (graph checkpoints; docs/checkpoints.md, store_checkpoint.h):
 *   checkpoints  session_sid → sessions ON DELETE CASCADE, checkpoint_ns ("" for the root
 *             graph), id (the framework's; ids sort by time as bytes), parent_id, type (the
 *             serializer's tag), data (its text), metadata (a JSON object), created_at; primary
 *             key (session_sid, checkpoint_ns, id). A scan sorts the keys of the matching
 *             rows (from that key's index: a namespace's through its sessions) and reads the
 *             rows it hands over (checkpoints.c); an index on id would save the sort of a
 *             namespace's keys only by walking every namespace's (PostgreSQL has one, which its
 *             planner takes or leaves by its statistics).
 *   checkpoint_writes  the pending writes of a checkpoint: session_sid → sessions ON DELETE
 *             CASCADE, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value,
 *             task_path ('' when none); primary key (session_sid, checkpoint_ns, checkpoint_id,
 *             task_id, idx).
 *
 * Version 16 (documents; docs/documents.md, store_document.h):
 *   documents  JSON documents keyed by (ns, path, key), the primary key (byte order: BINARY);
 *             value (the JSON text as written), created_at (the first put; a put over the row
 *             keeps it), updated_at, expires_at (0 = never), ttl_ms (0 = none), dim (0 = no
 *             vectors) and vectors (NULL when none: n vectors of dim little-endian f32 one after
 *             another, n = length / (4 * dim); vecblob.h). A rowid table, not WITHOUT ROWID: a
 *             value may be up to 1 MiB. A prefix scan is one range of the key (path from prefix
 *             to prefix || '/', '/' being '.' + 1); documents_by_expiry (expires_at > 0) serves
 *             the purge of expired rows. No reference to another table: documents belong to
 *             their namespace only.
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
    /* 3 → 4 */
    "CREATE TABLE msg_log ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  message_id INTEGER NOT NULL,"
    "  op INTEGER NOT NULL,"
    "  content TEXT);"
    "CREATE INDEX msg_log_by_message ON msg_log(message_id);"
    "CREATE TRIGGER messages_log_insert AFTER INSERT ON messages WHEN new.content IS NOT NULL"
    "  BEGIN INSERT INTO msg_log (message_id, op) VALUES (new.id, 1); END;"
    "CREATE TRIGGER messages_log_delete AFTER DELETE ON messages WHEN old.content IS NOT NULL"
    "  BEGIN INSERT INTO msg_log (message_id, op, content) VALUES (old.id, 0, old.content); END;"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id',"
    "  tokenize='porter unicode61 remove_diacritics 2');"
    "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages WHERE content IS NOT NULL;"
    "CREATE TABLE embeddings ("
    "  message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,"
    "  embedder TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  dim INTEGER NOT NULL,"
    "  vector BLOB NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE TABLE embed_log ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  message_id INTEGER NOT NULL,"
    "  op INTEGER NOT NULL);"
    "CREATE TRIGGER embeddings_log_insert AFTER INSERT ON embeddings"
    "  BEGIN INSERT INTO embed_log (message_id, op) VALUES (new.message_id, 1); END;"
    "CREATE TRIGGER embeddings_log_update AFTER UPDATE ON embeddings"
    "  BEGIN INSERT INTO embed_log (message_id, op) VALUES (new.message_id, 1); END;"
    "CREATE TRIGGER embeddings_log_delete AFTER DELETE ON embeddings"
    "  BEGIN INSERT INTO embed_log (message_id, op) VALUES (old.message_id, 0); END;"
    "CREATE TABLE embed_queue (message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE);"
    "CREATE TRIGGER messages_embed_queue AFTER INSERT ON messages"
    "  WHEN new.content IS NOT NULL AND (SELECT value FROM meta WHERE key = 'embed.queue') = '1'"
    "  BEGIN INSERT OR IGNORE INTO embed_queue (message_id) VALUES (new.id); END;",
    /* 4 → 5 */
    "ALTER TABLE sessions ADD COLUMN cleared_seq INTEGER NOT NULL DEFAULT 0;",
    /* 5 → 6: long-term memories (docs/memory.md) */
    "CREATE TABLE memories ("
    "  vid INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  id TEXT NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  text TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  namespace TEXT NOT NULL,"
    "  user_id TEXT,"
    "  agent_id TEXT,"
    "  session_id TEXT,"
    "  metadata TEXT NOT NULL DEFAULT '{}',"
    "  sources TEXT NOT NULL DEFAULT '[]',"
    "  pinned INTEGER NOT NULL DEFAULT 0,"
    "  token_cap INTEGER NOT NULL DEFAULT 0,"
    "  valid_from INTEGER NOT NULL,"
    "  valid_to INTEGER NOT NULL DEFAULT 0,"
    "  recorded_at INTEGER NOT NULL,"
    "  superseded_at INTEGER NOT NULL DEFAULT 0,"
    "  change TEXT NOT NULL,"
    "  actor TEXT NOT NULL,"
    "  reason TEXT,"
    "  UNIQUE (id, version));"
    "CREATE INDEX memories_current ON memories(namespace, superseded_at, recorded_at);"
    "CREATE INDEX memories_by_user ON memories(user_id) WHERE user_id IS NOT NULL;"
    "CREATE VIRTUAL TABLE memories_fts USING fts5(text, tokenize='porter unicode61 remove_diacritics 2');"
    "CREATE TABLE memory_vectors ("
    "  vid INTEGER PRIMARY KEY REFERENCES memories(vid) ON DELETE CASCADE,"
    "  dim INTEGER NOT NULL,"
    "  vector BLOB NOT NULL);",
    /* 6 → 7: appends write nothing for the keyword index; messages past the watermark
     * 'fts.indexed_upto' are what it lacks (search.c). The log is applied first, as a search
     * would, so that every message at or below the watermark is indexed. */
    "DELETE FROM msg_log WHERE seq IN ("
    " SELECT a.seq FROM msg_log a JOIN msg_log b ON b.message_id = a.message_id AND b.op = 0 AND b.seq > a.seq"
    "  WHERE a.op = 1"
    " UNION SELECT b.seq FROM msg_log a JOIN msg_log b ON b.message_id = a.message_id AND b.op = 0 AND b.seq > a.seq"
    "  WHERE a.op = 1);"
    "INSERT INTO messages_fts (messages_fts, rowid, content)"
    " SELECT 'delete', message_id, content FROM msg_log WHERE op = 0 AND content IS NOT NULL ORDER BY seq;"
    "INSERT INTO messages_fts (rowid, content) SELECT m.id, m.content FROM msg_log l JOIN messages m"
    " ON m.id = l.message_id WHERE l.op = 1 AND m.content IS NOT NULL ORDER BY l.seq;"
    "DELETE FROM msg_log;"
    "DROP TRIGGER messages_log_insert;"
    "INSERT OR REPLACE INTO meta (key, value) VALUES ('fts.indexed_upto',"
    " (SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0)));",
    /* 7 → 8: the memory vectors' change log (docs/memory.md); the vectors stored before it need no
     * rows: a memory index is built from a full scan when there is none */
    "CREATE TABLE memory_vector_log ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  vid INTEGER NOT NULL,"
    "  op INTEGER NOT NULL);"
    "CREATE TRIGGER memory_vectors_log_insert AFTER INSERT ON memory_vectors"
    "  BEGIN INSERT INTO memory_vector_log (vid, op) VALUES (new.vid, 1); END;"
    "CREATE TRIGGER memory_vectors_log_update AFTER UPDATE ON memory_vectors"
    "  BEGIN INSERT INTO memory_vector_log (vid, op) VALUES (new.vid, 1); END;"
    "CREATE TRIGGER memory_vectors_log_delete AFTER DELETE ON memory_vectors"
    "  BEGIN INSERT INTO memory_vector_log (vid, op) VALUES (old.vid, 0); END;",
    /* 8 → 9: the embedding queue's trigger exists only while the queue is on (search.c
     * queue_enable); sqlite.c's migrate puts it back after this step when meta says it is on */
    "DROP TRIGGER IF EXISTS messages_embed_queue;"
    /* sessions that chose an extractor before: they opt in to background extraction now */
    "INSERT OR REPLACE INTO meta (key, value) SELECT 'memory.extract.optin', '1' WHERE EXISTS (SELECT 1 FROM sessions"
    " WHERE CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.memory_scope.extract') END"
    " IN ('offline', 'llm'));",
    /* 9 → 10: messages clustered by session. This entry makes the new table; sqlite.c's migrate
     * then copies the rows session by session (reporting progress) and runs
     * MN_SQLITE_CLUSTER_SWAP, all in the migration's one transaction, with foreign keys off so
     * that dropping the old table does not cascade into embeddings and the embedding queue */
    "CREATE TABLE messages_clustered ("
    "  pos INTEGER PRIMARY KEY," /* session_sid * 2^32 + seq (MN_SQLITE_POS) */
    "  id INTEGER NOT NULL UNIQUE,"
    "  session_sid INTEGER NOT NULL,"
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
    "  active INTEGER NOT NULL DEFAULT 1,"
    "  CHECK (pos = session_sid * 4294967296 + seq AND seq BETWEEN 0 AND 4294967295));"
    /* the largest id given (AUTOINCREMENT's, which only the rowid can have): see
     * MN_SQLITE_LAST_ID; from now on written only when a delete takes the largest id away */
    "INSERT OR REPLACE INTO meta (key, value) SELECT 'messages.last_id', max("
    "  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0),"
    "  coalesce((SELECT max(id) FROM messages), 0));",
    /* 10 → 11: the keyword index into its own file, attached read-write as kw during the
     * migration (fts_file.c). A file left by an earlier attempt is replaced. */
    "CREATE TABLE IF NOT EXISTS kw.fts_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "DELETE FROM kw.fts_meta;"
    "CREATE TABLE IF NOT EXISTS kw.fts_applied (seq INTEGER PRIMARY KEY);"
    "DELETE FROM kw.fts_applied;"
    "DROP TABLE IF EXISTS kw.messages_fts;"
    "CREATE VIRTUAL TABLE kw.messages_fts USING fts5(content, content = '',"
    " tokenize = 'porter unicode61 remove_diacritics 2');"
    "DELETE FROM kw.messages_fts_data;"
    "INSERT INTO kw.messages_fts_data SELECT * FROM main.messages_fts_data;"
    "DELETE FROM kw.messages_fts_idx;"
    "INSERT INTO kw.messages_fts_idx SELECT * FROM main.messages_fts_idx;"
    "DELETE FROM kw.messages_fts_docsize;"
    "INSERT INTO kw.messages_fts_docsize SELECT * FROM main.messages_fts_docsize;"
    "DELETE FROM kw.messages_fts_config;"
    "INSERT INTO kw.messages_fts_config SELECT * FROM main.messages_fts_config;"
    "INSERT OR REPLACE INTO main.meta (key, value) VALUES ('fts.file', lower(hex(randomblob(16))));"
    "INSERT INTO kw.fts_meta (key, value) SELECT key, value FROM main.meta"
    " WHERE key IN ('fts.indexed_upto', 'fts.deletes', 'fts.file');"
    "DELETE FROM main.meta WHERE key IN ('fts.indexed_upto', 'fts.deletes');"
    "DROP TABLE main.messages_fts;",
    /* 11 → 12: the sessions indexes key on the minute of updated_at (above) */
    "ALTER TABLE sessions ADD COLUMN updated_minute INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET updated_minute = updated_at / 60000;"
    "DROP INDEX sessions_by_ns_updated;"
    "DROP INDEX sessions_by_updated;"
    "CREATE INDEX sessions_by_ns_updated ON sessions(namespace, updated_minute);"
    "CREATE INDEX sessions_by_updated ON sessions(updated_minute);"
    "CREATE TRIGGER sessions_minute_insert AFTER INSERT ON sessions"
    "  WHEN new.updated_minute IS NOT new.updated_at / 60000"
    "  BEGIN UPDATE sessions SET updated_minute = new.updated_at / 60000 WHERE sid = new.sid; END;"
    "CREATE TRIGGER sessions_minute_update AFTER UPDATE OF updated_at ON sessions"
    "  WHEN new.updated_minute IS NOT new.updated_at / 60000"
    "  BEGIN UPDATE sessions SET updated_minute = new.updated_at / 60000 WHERE sid = new.sid; END;",
    /* 12 → 13: inactive_count recounted from the messages. An import or `mnemo migrate` before
     * this version counted no inactive message (the copy said 0), which a context takes as part
     * of the active history's size. Only the sessions whose count is wrong are written. And
     * sessions.cleared_from: the oldest seq the clears since the last undo moved out, so that an
     * undo brings back those only (0: not recorded, for the clears made before). */
    "ALTER TABLE sessions ADD COLUMN cleared_from INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET inactive_count = 0 WHERE inactive_count <> 0 AND NOT EXISTS (SELECT 1 FROM messages"
    "  WHERE pos BETWEEN sessions.sid * 4294967296 AND sessions.sid * 4294967296 + 4294967295 AND active = 0);"
    "UPDATE sessions SET inactive_count = x.n FROM (SELECT session_sid, count(*) AS n FROM messages WHERE active = 0"
    "  GROUP BY session_sid) AS x WHERE sessions.sid = x.session_sid AND sessions.inactive_count <> x.n;"
    /* sessions.title_seq: where a title came from was not recorded before; the first user
     * message whose title (mn__message_title: its first 100 characters with leading whitespace
     * gone, line breaks and tabs made spaces) is the session's is taken for its source */
    "ALTER TABLE sessions ADD COLUMN title_seq INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sessions SET title_seq = coalesce((SELECT seq FROM messages WHERE pos BETWEEN sessions.sid * 4294967296"
    "  AND sessions.sid * 4294967296 + 4294967295 AND role = 'user' AND substr(replace(replace(replace(ltrim(content,"
    "  ' ' || char(10) || char(9) || char(13)), char(10), ' '), char(13), ' '), char(9), ' '), 1, 100) = sessions.title"
    "  ORDER BY pos LIMIT 1), 0) WHERE title IS NOT NULL;",
    /* 13 → 14: sessions.key */
    ("ALTER TABLE sessions ADD COLUMN key TEXT;"
     "CREATE UNIQUE INDEX sessions_by_key ON sessions(namespace, key) WHERE key IS NOT NULL;"),
    /* 14 → 15: graph checkpoints (above) */
    "CREATE TABLE checkpoints ("
    "  session_sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  checkpoint_ns TEXT NOT NULL,"
    "  id TEXT NOT NULL,"
    "  parent_id TEXT,"
    "  type TEXT NOT NULL,"
    "  data TEXT NOT NULL,"
    "  metadata TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL,"
    "  PRIMARY KEY (session_sid, checkpoint_ns, id));"
    "CREATE TABLE checkpoint_writes ("
    "  session_sid INTEGER NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  checkpoint_ns TEXT NOT NULL,"
    "  checkpoint_id TEXT NOT NULL,"
    "  task_id TEXT NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  channel TEXT NOT NULL,"
    "  type TEXT NOT NULL,"
    "  value TEXT,"
    "  task_path TEXT NOT NULL DEFAULT '',"
    "  PRIMARY KEY (session_sid, checkpoint_ns, checkpoint_id, task_id, idx));",
    /* 15 → 16: documents (above) */
    "CREATE TABLE documents ("
    "  ns TEXT NOT NULL,"
    "  path TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL,"
    "  expires_at INTEGER NOT NULL DEFAULT 0,"
    "  ttl_ms INTEGER NOT NULL DEFAULT 0,"
    "  dim INTEGER NOT NULL DEFAULT 0,"
    "  vectors BLOB,"
    "  PRIMARY KEY (ns, path, key));"
    "CREATE INDEX documents_by_expiry ON documents(expires_at) WHERE expires_at > 0;",
};

/* The copy of one session's messages in step 9 → 10 (?1 = its sid), in key order. */
#define MN_SQLITE_CLUSTER_COPY                                                                                   \
    "INSERT INTO messages_clustered (pos, id, session_sid, seq, role, content, tool_calls, tool_call_id, name,"  \
    " tool_name, model, files, metadata, idem_key, tokens, pinned, created_at, active)"                          \
    " SELECT " MN_SQLITE_POS("session_sid", "seq") ", id, session_sid, seq, role, content, tool_calls,"         \
    " tool_call_id, name, tool_name, model, files, metadata, idem_key, tokens, pinned, created_at, active"        \
    " FROM messages WHERE session_sid = ?1 ORDER BY seq"

/* The end of step 9 → 10: the new table takes the old one's name, indexes and delete trigger
 * (the keyword index's external content and the foreign keys of embeddings and embed_queue name
 * "messages" and follow; the embedding queue's trigger is put back by queue_trigger_sync). A
 * session's delete removes its messages by a trigger over their key range: a foreign key would
 * need an index on session_sid, one more page written by every append. */
#define MN_SQLITE_CLUSTER_SWAP                                                                                   \
    "DROP TABLE messages;"                                                                                       \
    "DELETE FROM sqlite_sequence WHERE name = 'messages';"                                                       \
    "ALTER TABLE messages_clustered RENAME TO messages;"                                                         \
    "CREATE UNIQUE INDEX messages_by_idem ON messages(session_sid, idem_key) WHERE idem_key IS NOT NULL;"        \
    "CREATE TRIGGER messages_log_delete AFTER DELETE ON messages WHEN old.content IS NOT NULL"                   \
    "  BEGIN INSERT INTO msg_log (message_id, op, content) VALUES (old.id, 0, old.content); END;"                \
    "CREATE TRIGGER messages_keep_last_id AFTER DELETE ON messages"                                              \
    "  WHEN old.id > coalesce((SELECT max(id) FROM messages), 0) AND old.id > coalesce((SELECT"                 \
    "  CAST(value AS INTEGER) FROM meta WHERE key = 'messages.last_id'), 0)"                                    \
    "  BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('messages.last_id', old.id); END;"                 \
    "CREATE TRIGGER sessions_delete_messages AFTER DELETE ON sessions"                                           \
    "  BEGIN DELETE FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "old.sid") "; END;"

#define MN_SQLITE_SCHEMA_VERSION ((int)(sizeof mn_sqlite_migrations / sizeof mn_sqlite_migrations[0]))

#endif
