/*
 * schema.h — the PostgreSQL schema of a mnemo database: the SQLite schema (sqlite/schema.h)
 * translated, with the same columns (INTEGER → BIGINT, AUTOINCREMENT → BIGSERIAL, BLOB → BYTEA).
 * The two lists started as one but have their own version numbers since (store.h: SQLite's
 * steps for its files and layout, PostgreSQL's for a distributed database, below). The table
 * mnemo_schema holds the version; a migration list entry i turns version i into version i+1;
 * migrations are never edited once released, only appended.
 *
 * Why it differs from SQLite where it does:
 *   - keyword search is a generated tsvector column (messages.tsv) with a GIN index, kept in
 *     step by the insert itself: no msg_log, fts_sync has nothing to do. Its configuration
 *     `mnemo` is 'simple' (lower case, no stop words, any language) with English Snowball
 *     stemming for ASCII words and no stop word list — what SQLite's porter unicode61 tokenizer
 *     does ("pooling" finds "pool"); mn_fold() takes diacritics off Latin letters first, as
 *     SQLite's remove_diacritics does ("cafe" finds "café");
 *   - triggers are PL/pgSQL functions (pinned to the search_path they were created under);
 *   - embed_log: BIGSERIAL values are handed out in nextval order, not commit order, so a
 *     reader that has seen seq 11 committed could later see seq 10 commit and skip it. Every
 *     transaction that writes embed_log therefore takes pg_advisory_xact_lock(
 *     MN_PG_LOCK_EMBED_LOG) before it draws a seq — the log trigger takes it, and vec_put /
 *     queue_fill take it first thing — and holds it until it commits: writers of the log run
 *     one at a time, so seq order is commit order and "changes after N" never misses a row;
 *   - embed_queue.claimed_until / claimed_by: queue_peek claims rows (FOR UPDATE SKIP LOCKED)
 *     for 60 s so that several nodes never embed one message twice; vec_put deletes them.
 *
 * Version 5 (long-term memory): memories as in SQLite, with a generated tsvector column
 *   (memories.tsv, GIN) instead of memories_fts; memory_vectors as in SQLite (BYTEA).
 * Version 7 (the memory vector index): memory_vector_log as in SQLite, written by a trigger
 *   that takes pg_advisory_xact_lock(MN_PG_LOCK_MEMORY_LOG) first, as embed_log's does (memory
 *   writes with a vector and forget take it first thing).
 * Version 12 (graph checkpoints): checkpoints and checkpoint_writes as in SQLite version 15,
 *   their name columns COLLATE "C", so that ids compare and sort as bytes (as in SQLite) and the
 *   indexes are in that order; and checkpoints_by_id (id, session_sid, checkpoint_ns), which
 *   the planner takes, by its statistics, to list a namespace's newest without sorting them all.
 * Version 13 (documents): documents as in SQLite version 16, ns, path and key COLLATE "C" (byte
 *   order, as in SQLite, for the scans' order and the prefix range on the primary key), value
 *   TEXT rather than jsonb (kept byte for byte: key order, spacing), vectors BYTEA; no foreign key
 *   (a Citus cluster may distribute the table by ns, which leads its primary key).
 * Version 14 (Citus-ready summaries and events): primary keys (session_sid, id) in place of (id),
 *   events.session_sid NOT NULL, and a column n, a session's summaries and events numbered 1, 2, …
 *   in the order they were written (unique index (session_sid, n)): the latest summary and the
 *   newest events are found by n, not by id (SQLite keeps id order: one writer, ids in order).
 * Version 15 (Citus-ready memories): memories keyed by (id, vid) in place of (vid), the memory's
 *   id a column of memory_vectors (memory_id), keyed by (memory_id, vid) with its foreign key to
 *   memories(id, vid), and of memory_vector_log, which the log's readers join on both; indexes
 *   memories_by_vid and memory_vectors_by_vid keep the lookups and the scan by vid.
 *
 * Migrations run in one transaction holding pg_advisory_xact_lock(MN_PG_LOCK_MIGRATE), which
 * re-reads the version under the lock: the first node to start migrates, the others wait and
 * find the work done.
 */
#ifndef MN_STORE_PG_SCHEMA_H
#define MN_STORE_PG_SCHEMA_H

/* Latin letters with diacritics (U+00C0-U+024F, U+1E00-U+1EFF whose canonical decomposition is
 * an ASCII letter and combining marks) and those letters: mn_fold() maps one to the other, so
 * that "cafe" finds "café" as with SQLite's remove_diacritics. Same length in characters. */
#define MN_PG_FOLD_FROM \
    "ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöù" \
    "úûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮ" \
    "įİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭ" \
    "ŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬ" \
    "ǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯ" \
    "ȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫ" \
    "ḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛ" \
    "ṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋ" \
    "ẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀề" \
    "ỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰự" \
    "ỲỳỴỵỶỷỸỹ"
#define MN_PG_FOLD_TO \
    "AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooou" \
    "uuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiI" \
    "iIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUu" \
    "UuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoO" \
    "ojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOo" \
    "OoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHh" \
    "IiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRr" \
    "RrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXx" \
    "XxYyZzZzZzhtwyAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEe" \
    "EeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUu" \
    "YyYyYyYy"

static const char *const mn_pg_migrations[] = {
    /* 0 → 1 */
    "CREATE TABLE sessions ("
    "  sid BIGSERIAL PRIMARY KEY,"
    "  id TEXT NOT NULL UNIQUE,"
    "  namespace TEXT NOT NULL DEFAULT 'default',"
    "  title TEXT,"
    "  system_prompt TEXT,"
    "  metadata TEXT,"
    "  state TEXT,"
    "  tool_name TEXT,"
    "  parent_id TEXT,"
    "  created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL DEFAULT 0,"
    "  ttl_ms BIGINT NOT NULL DEFAULT 0,"
    "  max_turns BIGINT NOT NULL DEFAULT 0,"
    "  last_seq BIGINT NOT NULL DEFAULT 0,"
    "  message_count BIGINT NOT NULL DEFAULT 0,"
    "  token_count BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX sessions_by_ns_updated ON sessions(namespace, updated_at);"
    "CREATE INDEX sessions_by_updated ON sessions(updated_at);"
    "CREATE INDEX sessions_by_created ON sessions(created_at, id);"
    "CREATE TABLE messages ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  session_sid BIGINT NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  seq BIGINT NOT NULL,"
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
    "  tokens BIGINT NOT NULL,"
    "  pinned INTEGER NOT NULL DEFAULT 0,"
    "  created_at BIGINT NOT NULL,"
    "  UNIQUE (session_sid, seq));"
    "CREATE UNIQUE INDEX messages_by_idem ON messages(session_sid, idem_key) WHERE idem_key IS NOT NULL;"
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    /* 1 → 2 */
    "ALTER TABLE sessions ADD COLUMN turn_count BIGINT NOT NULL DEFAULT 0;"
    "ALTER TABLE sessions ADD COLUMN busy_until BIGINT NOT NULL DEFAULT 0;"
    "UPDATE sessions SET turn_count ="
    "  (SELECT count(*) FROM messages WHERE session_sid = sessions.sid AND role = 'user');"
    "ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;"
    "CREATE INDEX sessions_by_expiry ON sessions(expires_at) WHERE expires_at > 0;"
    "CREATE TABLE file_hashes ("
    "  session_sid BIGINT NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  path TEXT NOT NULL,"
    "  sha256 TEXT NOT NULL,"
    "  first_seen BIGINT NOT NULL,"
    "  PRIMARY KEY (session_sid, path, sha256));"
    "CREATE TABLE summaries ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  session_sid BIGINT NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  covers_upto BIGINT NOT NULL,"
    "  folded BIGINT NOT NULL,"
    "  text TEXT NOT NULL,"
    "  tokens BIGINT NOT NULL,"
    "  model TEXT,"
    "  summarizer TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX summaries_by_session ON summaries(session_sid, id);"
    "CREATE TABLE events ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  session_sid BIGINT REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  kind TEXT NOT NULL,"
    "  data TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL);"
    "CREATE INDEX events_by_session ON events(session_sid, id);",
    /* 2 → 3 */
    "ALTER TABLE sessions ADD COLUMN inactive_count BIGINT NOT NULL DEFAULT 0;"
    "UPDATE sessions SET inactive_count ="
    "  (SELECT count(*) FROM messages WHERE session_sid = sessions.sid AND active = 0);",
    /* 3 → 4 */
    "CREATE TEXT SEARCH DICTIONARY mnemo_english (TEMPLATE = snowball, Language = english);"
    "CREATE TEXT SEARCH CONFIGURATION mnemo (COPY = simple);"
    "ALTER TEXT SEARCH CONFIGURATION mnemo ALTER MAPPING FOR asciiword, asciihword, hword_asciipart"
    "  WITH mnemo_english;"
    /* translate() scans its whole FROM list for every character (45% of an append's database
     * time when it ran on all text): ASCII text, the common case, has nothing to fold */
    "CREATE FUNCTION mn_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE"
    "  AS $$ SELECT CASE WHEN octet_length(t) = char_length(t) THEN t"
    "  ELSE translate(t, '" MN_PG_FOLD_FROM "', '" MN_PG_FOLD_TO "') END $$;"
    "ALTER TABLE messages ADD COLUMN tsv tsvector"
    "  GENERATED ALWAYS AS (to_tsvector('mnemo', mn_fold(coalesce(content, '')))) STORED;"
    "CREATE INDEX messages_fts ON messages USING GIN (tsv);"
    "CREATE TABLE embeddings ("
    "  message_id BIGINT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,"
    "  embedder TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  dim INTEGER NOT NULL,"
    "  vector BYTEA NOT NULL,"
    "  created_at BIGINT NOT NULL);"
    "CREATE TABLE embed_log ("
    "  seq BIGSERIAL PRIMARY KEY,"
    "  message_id BIGINT NOT NULL,"
    "  op INTEGER NOT NULL);"
    "CREATE FUNCTION mn_embed_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  PERFORM pg_advisory_xact_lock(" MN_PG_LOCK_EMBED_LOG ");"
    "  IF TG_OP = 'DELETE' THEN"
    "   INSERT INTO embed_log (message_id, op) VALUES (OLD.message_id, 0);"
    "  ELSE"
    "   INSERT INTO embed_log (message_id, op) VALUES (NEW.message_id, 1);"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER embeddings_log AFTER INSERT OR UPDATE OR DELETE ON embeddings"
    "  FOR EACH ROW EXECUTE FUNCTION mn_embed_log();"
    "CREATE TABLE embed_queue ("
    "  message_id BIGINT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,"
    "  claimed_until BIGINT NOT NULL DEFAULT 0,"
    "  claimed_by TEXT);"
    "CREATE FUNCTION mn_embed_queue() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  IF NEW.content IS NOT NULL AND (SELECT value FROM meta WHERE key = 'embed.queue') = '1' THEN"
    "   INSERT INTO embed_queue (message_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER messages_embed_queue AFTER INSERT ON messages"
    "  FOR EACH ROW EXECUTE FUNCTION mn_embed_queue();",
    /* 4 → 5: the clear cursor (sqlite/schema.h version 5) */
    "ALTER TABLE sessions ADD COLUMN cleared_seq BIGINT NOT NULL DEFAULT 0;",
    /* 5 → 6: long-term memories (sqlite/schema.h version 6) */
    "CREATE TABLE memories ("
    "  vid BIGSERIAL PRIMARY KEY,"
    "  id TEXT NOT NULL,"
    "  version BIGINT NOT NULL,"
    "  text TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  namespace TEXT NOT NULL,"
    "  user_id TEXT,"
    "  agent_id TEXT,"
    "  session_id TEXT,"
    "  metadata TEXT NOT NULL DEFAULT '{}',"
    "  sources TEXT NOT NULL DEFAULT '[]',"
    "  pinned INTEGER NOT NULL DEFAULT 0,"
    "  token_cap BIGINT NOT NULL DEFAULT 0,"
    "  valid_from BIGINT NOT NULL,"
    "  valid_to BIGINT NOT NULL DEFAULT 0,"
    "  recorded_at BIGINT NOT NULL,"
    "  superseded_at BIGINT NOT NULL DEFAULT 0,"
    "  change TEXT NOT NULL,"
    "  actor TEXT NOT NULL,"
    "  reason TEXT,"
    "  tsv tsvector GENERATED ALWAYS AS (to_tsvector('mnemo', mn_fold(text))) STORED,"
    "  UNIQUE (id, version));"
    "CREATE INDEX memories_current ON memories(namespace, superseded_at, recorded_at);"
    "CREATE INDEX memories_by_user ON memories(user_id) WHERE user_id IS NOT NULL;"
    "CREATE INDEX memories_fts ON memories USING GIN (tsv);"
    "CREATE TABLE memory_vectors ("
    "  vid BIGINT PRIMARY KEY REFERENCES memories(vid) ON DELETE CASCADE,"
    "  dim INTEGER NOT NULL,"
    "  vector BYTEA NOT NULL);",
    /* 6 → 7: the memory vectors' change log (sqlite/schema.h version 8); its writers take
     * MN_PG_LOCK_MEMORY_LOG as embed_log's take MN_PG_LOCK_EMBED_LOG */
    "CREATE TABLE memory_vector_log ("
    "  seq BIGSERIAL PRIMARY KEY,"
    "  vid BIGINT NOT NULL,"
    "  op INTEGER NOT NULL);"
    "CREATE FUNCTION mn_memory_vector_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  PERFORM pg_advisory_xact_lock(" MN_PG_LOCK_MEMORY_LOG ");"
    "  IF TG_OP = 'DELETE' THEN"
    "   INSERT INTO memory_vector_log (vid, op) VALUES (OLD.vid, 0);"
    "  ELSE"
    "   INSERT INTO memory_vector_log (vid, op) VALUES (NEW.vid, 1);"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER memory_vectors_log AFTER INSERT OR UPDATE OR DELETE ON memory_vectors"
    "  FOR EACH ROW EXECUTE FUNCTION mn_memory_vector_log();",
    /* 7 → 8: the embedding queue's trigger exists only while the queue is on (search.c
     * queue_enable creates and drops it), and no longer reads meta on every insert: a PL/pgSQL
     * call per append was about half of an insert's time (bench/pg/README.md) */
    "CREATE OR REPLACE FUNCTION mn_embed_queue() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  IF NEW.content IS NOT NULL THEN"
    "   INSERT INTO embed_queue (message_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "DO $$ BEGIN"
    "  IF (SELECT value FROM meta WHERE key = 'embed.queue') IS DISTINCT FROM '1' THEN"
    "   DROP TRIGGER messages_embed_queue ON messages;"
    "  END IF;"
    " END $$;"
    /* sessions that chose an extractor before: they opt in to background extraction now (a
     * metadata text that is not JSON cannot stop the migration) */
    "DO $$ BEGIN"
    "  IF EXISTS (SELECT 1 FROM sessions WHERE metadata LIKE '%memory_scope%'"
    "             AND (metadata::jsonb #>> '{memory_scope,extract}') IN ('offline', 'llm')) THEN"
    "   INSERT INTO meta (key, value) VALUES ('memory.extract.optin', '1')"
    "    ON CONFLICT (key) DO UPDATE SET value = '1';"
    "  END IF;"
    " EXCEPTION WHEN others THEN NULL;"
    " END $$;",
    /* 8 → 9: an append's session update in place (a HOT update: no index entries) where it
     * made new entries in all six of the session's indexes, since updated_at was indexed. The
     * indexes for listing and pruning now key on the minute of updated_at, which an append
     * changes at most once a minute. The messages' foreign key to their session goes: its check
     * ran a query per inserted row, under the session row lock the append already holds; a
     * statement trigger deletes a deleted session's messages as ON DELETE CASCADE did.
     * bench/pg/README.md has the figures. */
    "ALTER TABLE sessions ADD COLUMN updated_minute BIGINT GENERATED ALWAYS AS (updated_at / 60000) STORED;"
    "DROP INDEX sessions_by_ns_updated;"
    "DROP INDEX sessions_by_updated;"
    "CREATE INDEX sessions_by_ns_updated ON sessions(namespace, updated_minute);"
    "CREATE INDEX sessions_by_updated ON sessions(updated_minute);"
    "DO $$ DECLARE c name; BEGIN"
    "  FOR c IN SELECT conname FROM pg_constraint WHERE contype = 'f'"
    "           AND conrelid = 'messages'::regclass AND confrelid = 'sessions'::regclass LOOP"
    "   EXECUTE format('ALTER TABLE messages DROP CONSTRAINT %I', c);"
    "  END LOOP;"
    " END $$;"
    "CREATE FUNCTION mn_sessions_gone() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  DELETE FROM messages m USING gone g WHERE m.session_sid = g.sid;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER sessions_gone AFTER DELETE ON sessions REFERENCING OLD TABLE AS gone"
    "  FOR EACH STATEMENT EXECUTE FUNCTION mn_sessions_gone();",
    /* 9 → 10: inactive_count recounted from the messages (sqlite/schema.h version 13: an import
     * or `mnemo migrate` before this version counted no inactive message),
     * sessions.cleared_from (the oldest seq the clears since the last undo moved out) and
     * sessions.title_seq (the seq of the message the title was taken from, 0: none). */
    "ALTER TABLE sessions ADD COLUMN cleared_from BIGINT NOT NULL DEFAULT 0;"
    "UPDATE sessions s SET inactive_count = 0 WHERE inactive_count <> 0"
    "  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_sid = s.sid AND m.active = 0);"
    "UPDATE sessions s SET inactive_count = x.n FROM (SELECT session_sid, count(*) AS n FROM messages"
    "  WHERE active = 0 GROUP BY session_sid) x WHERE s.sid = x.session_sid AND s.inactive_count <> x.n;"
    /* sessions.title_seq (sqlite/schema.h version 13): the first user message whose title
     * (mn__message_title) is the session's is taken for its source */
    "ALTER TABLE sessions ADD COLUMN title_seq BIGINT NOT NULL DEFAULT 0;"
    "UPDATE sessions s SET title_seq = coalesce((SELECT min(m.seq) FROM messages m WHERE m.session_sid = s.sid"
    "  AND m.role = 'user' AND left(translate(ltrim(m.content, E' \\n\\t\\r'), E'\\n\\r\\t', '   '), 100) = s.title), 0)"
    "  WHERE s.title IS NOT NULL;",
    /* 10 → 11: sessions.key (sqlite/schema.h version 14), unique in its namespace */
    ("ALTER TABLE sessions ADD COLUMN key TEXT;"
     "CREATE UNIQUE INDEX sessions_by_key ON sessions(namespace, key) WHERE key IS NOT NULL;"),
    /* 11 → 12: graph checkpoints (sqlite/schema.h version 15) */
    "CREATE TABLE checkpoints ("
    "  session_sid BIGINT NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  checkpoint_ns TEXT COLLATE \"C\" NOT NULL,"
    "  id TEXT COLLATE \"C\" NOT NULL,"
    "  parent_id TEXT,"
    "  type TEXT NOT NULL,"
    "  data TEXT NOT NULL,"
    "  metadata TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  PRIMARY KEY (session_sid, checkpoint_ns, id));"
    "CREATE INDEX checkpoints_by_id ON checkpoints(id, session_sid, checkpoint_ns);"
    "CREATE TABLE checkpoint_writes ("
    "  session_sid BIGINT NOT NULL REFERENCES sessions(sid) ON DELETE CASCADE,"
    "  checkpoint_ns TEXT COLLATE \"C\" NOT NULL,"
    "  checkpoint_id TEXT COLLATE \"C\" NOT NULL,"
    "  task_id TEXT COLLATE \"C\" NOT NULL,"
    "  idx BIGINT NOT NULL,"
    "  channel TEXT NOT NULL,"
    "  type TEXT NOT NULL,"
    "  value TEXT,"
    "  task_path TEXT COLLATE \"C\" NOT NULL DEFAULT '',"
    "  PRIMARY KEY (session_sid, checkpoint_ns, checkpoint_id, task_id, idx));",
    /* 12 → 13: documents (sqlite/schema.h version 16) */
    "CREATE TABLE documents ("
    "  ns TEXT COLLATE \"C\" NOT NULL,"
    "  path TEXT COLLATE \"C\" NOT NULL,"
    "  key TEXT COLLATE \"C\" NOT NULL,"
    "  value TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL DEFAULT 0,"
    "  ttl_ms BIGINT NOT NULL DEFAULT 0,"
    "  dim INTEGER NOT NULL DEFAULT 0,"
    "  vectors BYTEA,"
    "  PRIMARY KEY (ns, path, key));"
    "CREATE INDEX documents_by_expiry ON documents(expires_at) WHERE expires_at > 0;",
    /* 13 → 14: summaries and events keyed by (session_sid, id), as a distributed PostgreSQL
     * (Citus) needs (docs/scale-out.md); the keys replace summaries_by_session and
     * events_by_session. A session's rows are ordered by n, which the store writes (its max + 1
     * under the session row's lock), not by the BIGSERIAL id: on Citus, nodes draw ids from
     * ranges of their own. n is backfilled in id order, the order before. Events without a
     * session go: no writer makes them (every event names its session) and no read finds them. */
    "DELETE FROM events WHERE session_sid IS NULL;"
    "ALTER TABLE summaries ADD COLUMN n BIGINT;"
    "UPDATE summaries s SET n = x.n FROM (SELECT id, row_number() OVER (PARTITION BY session_sid ORDER BY id) AS n"
    "  FROM summaries) x WHERE s.id = x.id;"
    "ALTER TABLE summaries ALTER COLUMN n SET NOT NULL, DROP CONSTRAINT summaries_pkey,"
    "  ADD PRIMARY KEY (session_sid, id);"
    "DROP INDEX summaries_by_session;"
    "CREATE UNIQUE INDEX summaries_by_n ON summaries(session_sid, n);"
    "ALTER TABLE events ADD COLUMN n BIGINT;"
    "UPDATE events e SET n = x.n FROM (SELECT id, row_number() OVER (PARTITION BY session_sid ORDER BY id) AS n"
    "  FROM events) x WHERE e.id = x.id;"
    "ALTER TABLE events ALTER COLUMN n SET NOT NULL, ALTER COLUMN session_sid SET NOT NULL,"
    "  DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (session_sid, id);"
    "DROP INDEX events_by_session;"
    "CREATE UNIQUE INDEX events_by_n ON events(session_sid, n);",
    /* 14 → 15: a memory's versions and their vectors keyed by the memory's id, as a distributed
     * PostgreSQL (Citus) needs (docs/scale-out.md): memories (id, vid), memory_vectors gains
     * memory_id, filled from memories, and is keyed by (memory_id, vid) with its foreign key to
     * memories(id, vid). The log gets memory_id too, filled where the memory still is (a row
     * whose memory is gone has no vector to join); the log trigger is dropped while the vectors
     * are filled, so that the step logs no change, and made again writing memory_id. The vid
     * indexes serve the lookups by vid (searches, the vector index's scan and reads). */
    "DROP TRIGGER memory_vectors_log ON memory_vectors;"
    "ALTER TABLE memory_vectors ADD COLUMN memory_id TEXT;"
    "UPDATE memory_vectors v SET memory_id = m.id FROM memories m WHERE m.vid = v.vid;"
    "ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_vid_fkey, DROP CONSTRAINT memory_vectors_pkey,"
    "  ALTER COLUMN memory_id SET NOT NULL;"
    "ALTER TABLE memories DROP CONSTRAINT memories_pkey, ADD PRIMARY KEY (id, vid);"
    "CREATE INDEX memories_by_vid ON memories(vid);"
    "ALTER TABLE memory_vectors ADD PRIMARY KEY (memory_id, vid),"
    "  ADD FOREIGN KEY (memory_id, vid) REFERENCES memories(id, vid) ON DELETE CASCADE;"
    "CREATE INDEX memory_vectors_by_vid ON memory_vectors(vid);"
    "ALTER TABLE memory_vector_log ADD COLUMN memory_id TEXT;"
    "UPDATE memory_vector_log l SET memory_id = m.id FROM memories m WHERE m.vid = l.vid;"
    "CREATE OR REPLACE FUNCTION mn_memory_vector_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  PERFORM pg_advisory_xact_lock(" MN_PG_LOCK_MEMORY_LOG ");"
    "  IF TG_OP = 'DELETE' THEN"
    "   INSERT INTO memory_vector_log (memory_id, vid, op) VALUES (OLD.memory_id, OLD.vid, 0);"
    "  ELSE"
    "   INSERT INTO memory_vector_log (memory_id, vid, op) VALUES (NEW.memory_id, NEW.vid, 1);"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER memory_vectors_log AFTER INSERT OR UPDATE OR DELETE ON memory_vectors"
    "  FOR EACH ROW EXECUTE FUNCTION mn_memory_vector_log();",
    /* 15 → 16: a message's vector and queue row keyed with its session, as a distributed
     * PostgreSQL (Citus) needs (docs/scale-out.md): messages (id, session_sid), embeddings and
     * embed_queue gain session_sid, filled from messages, in their keys (message_id,
     * session_sid) and their foreign keys to messages(id, session_sid). The keys lead with the
     * message id, so that what names a message by its id alone (the vector index's reads, a
     * queue claim, an edit's dropped vector) still finds it by the key. The log trigger is
     * dropped while the vectors are filled, so that the step logs no change; the queue's trigger
     * function writes session_sid. */
    "DROP TRIGGER embeddings_log ON embeddings;"
    "ALTER TABLE embeddings ADD COLUMN session_sid BIGINT;"
    "UPDATE embeddings e SET session_sid = m.session_sid FROM messages m WHERE m.id = e.message_id;"
    "ALTER TABLE embed_queue ADD COLUMN session_sid BIGINT;"
    "UPDATE embed_queue q SET session_sid = m.session_sid FROM messages m WHERE m.id = q.message_id;"
    "ALTER TABLE embeddings DROP CONSTRAINT embeddings_message_id_fkey, DROP CONSTRAINT embeddings_pkey,"
    "  ALTER COLUMN session_sid SET NOT NULL;"
    "ALTER TABLE embed_queue DROP CONSTRAINT embed_queue_message_id_fkey, DROP CONSTRAINT embed_queue_pkey,"
    "  ALTER COLUMN session_sid SET NOT NULL;"
    "ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (id, session_sid);"
    "ALTER TABLE embeddings ADD PRIMARY KEY (message_id, session_sid),"
    "  ADD FOREIGN KEY (message_id, session_sid) REFERENCES messages(id, session_sid) ON DELETE CASCADE;"
    "ALTER TABLE embed_queue ADD PRIMARY KEY (message_id, session_sid),"
    "  ADD FOREIGN KEY (message_id, session_sid) REFERENCES messages(id, session_sid) ON DELETE CASCADE;"
    "CREATE TRIGGER embeddings_log AFTER INSERT OR UPDATE OR DELETE ON embeddings"
    "  FOR EACH ROW EXECUTE FUNCTION mn_embed_log();"
    "CREATE OR REPLACE FUNCTION mn_embed_queue() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  IF NEW.content IS NOT NULL THEN"
    "   INSERT INTO embed_queue (message_id, session_sid) VALUES (NEW.id, NEW.session_sid) ON CONFLICT DO NOTHING;"
    "  END IF;"
    "  RETURN NULL;"
    " END $$;",
    /* 16 → 17: a session's id and key unique through tables of their own, as a distributed
     * PostgreSQL (Citus) needs (docs/scale-out.md): sessions is distributed by sid, so it cannot
     * keep its text id or (namespace, key) unique; session_ids (keyed by id) and session_keys
     * (keyed by namespace, key) can, each distributed by its key. sessions keeps plain indexes
     * for the lookups. A new session's rows there are written by the trigger sessions_claim
     * before the session's own: an id or key taken skips the session's row, as ON CONFLICT DO
     * NOTHING did with the unique keys (an insert reports "taken" and aborts nothing); a key
     * taken gives back the id claimed before it. sessions_gone deletes a deleted session's rows
     * there, as it deletes its messages. */
    "CREATE TABLE session_ids (id TEXT PRIMARY KEY, sid BIGINT NOT NULL);"
    "CREATE TABLE session_keys (namespace TEXT NOT NULL, key TEXT NOT NULL, sid BIGINT NOT NULL,"
    "  PRIMARY KEY (namespace, key));"
    "INSERT INTO session_ids (id, sid) SELECT id, sid FROM sessions;"
    "INSERT INTO session_keys (namespace, key, sid) SELECT namespace, key, sid FROM sessions WHERE key IS NOT NULL;"
    "ALTER TABLE sessions DROP CONSTRAINT sessions_id_key;"
    "CREATE INDEX sessions_by_id ON sessions(id);"
    "DROP INDEX sessions_by_key;"
    "CREATE INDEX sessions_by_key ON sessions(namespace, key) WHERE key IS NOT NULL;"
    "CREATE FUNCTION mn_session_claim() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  INSERT INTO session_ids (id, sid) VALUES (NEW.id, NEW.sid) ON CONFLICT DO NOTHING;"
    "  IF NOT FOUND THEN RETURN NULL; END IF;"
    "  IF NEW.key IS NOT NULL THEN"
    "   INSERT INTO session_keys (namespace, key, sid) VALUES (NEW.namespace, NEW.key, NEW.sid) ON CONFLICT DO NOTHING;"
    "   IF NOT FOUND THEN DELETE FROM session_ids WHERE id = NEW.id AND sid = NEW.sid; RETURN NULL; END IF;"
    "  END IF;"
    "  RETURN NEW;"
    " END $$;"
    "CREATE TRIGGER sessions_claim BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION mn_session_claim();"
    "CREATE OR REPLACE FUNCTION mn_sessions_gone() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$"
    " BEGIN"
    "  DELETE FROM messages m USING gone g WHERE m.session_sid = g.sid;"
    "  DELETE FROM session_ids i USING gone g WHERE i.id = g.id AND i.sid = g.sid;"
    "  DELETE FROM session_keys k USING gone g WHERE k.namespace = g.namespace AND k.key = g.key AND k.sid = g.sid;"
    "  RETURN NULL;"
    " END $$;",
};

#define MN_PG_SCHEMA_VERSION ((int)(sizeof mn_pg_migrations / sizeof mn_pg_migrations[0]))

#endif
