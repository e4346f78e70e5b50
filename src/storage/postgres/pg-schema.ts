import type { PgMigration } from './pg-migrations.js'

/**
 * The base schema of the PostgreSQL store: the same tables as the SQLite schema (src/storage/sqlite/migrations.ts,
 * versions 1–10), in PostgreSQL's types, without the full-text index, the vector specifics and the fact tables, which
 * their own steps add (`pg-search*.ts`, `pg-facts*.ts`).
 *
 * Differences from SQLite, each on purpose:
 * - Times are epoch ms in `bigint`; the pool reads `bigint` back as a JS number (see pg-db.ts).
 * - Keys, names and roots are `COLLATE "C"`: byte order and ASCII-only `lower()`, as SQLite's BINARY collation, so
 *   every ORDER BY and comparison gives SQLite's answer whatever the database's default collation is.
 * - `observations.rowid` and `memories.rowid` are identity columns; a document key (`docKey`) is an observation's
 *   rowid or minus a memory's, as in SQLite.
 * - `search_docs` holds one row per document (observation or memory), with whose it is and its indexed text
 *   (`IndexedText` of src/retrieval/search-text.ts): it is what SQLite's `search_fts` holds plus the scope columns, so
 *   the search channel ranks and filters in one table. Written by the derivation in the append's transaction; a
 *   memory's `valid_to` and `archived_at` follow its row by trigger.
 * - `kept_ids.identity` is a JSON array (`["session", agent, key, root]`, `["project", root]`): PostgreSQL text
 *   cannot hold the NUL that SQLite's identities use as a separator.
 * - Event payloads are the JSON text, uncompressed: PostgreSQL compresses large values itself (TOAST).
 */
export const BASE_MIGRATION: PgMigration = {
  id: '0001-base',
  name: 'event log, projects, sessions, observations, memories, search documents, entities, vectors, audit, injections',
  sql: `
    -- The changelog: append-only, one row per captured event. Everything else is derived from it.
    CREATE TABLE events (
      seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      idem_key     text COLLATE "C" NOT NULL UNIQUE,
      agent        text COLLATE "C" NOT NULL,
      format       text COLLATE "C" NOT NULL,
      type         text COLLATE "C" NOT NULL,
      session_key  text COLLATE "C" NOT NULL,
      project_root text COLLATE "C" NOT NULL,
      project_name text COLLATE "C" NOT NULL,
      ts           bigint NOT NULL,
      session_started_at bigint,
      received_at  bigint NOT NULL,
      payload      text NOT NULL,
      user_id      text COLLATE "C"
    );
    CREATE INDEX events_user ON events (user_id) WHERE user_id IS NOT NULL;
    CREATE INDEX events_session ON events (project_root, agent, session_key);

    CREATE TABLE projects (
      id   text COLLATE "C" PRIMARY KEY,
      root text COLLATE "C" NOT NULL UNIQUE,
      name text COLLATE "C" NOT NULL
    );
    CREATE INDEX projects_name ON projects (name);

    CREATE TABLE sessions (
      id            text COLLATE "C" PRIMARY KEY,
      project_id    text COLLATE "C" NOT NULL REFERENCES projects (id),
      agent         text COLLATE "C" NOT NULL,
      session_key   text COLLATE "C" NOT NULL,
      started_at    bigint NOT NULL,
      last_event_at bigint NOT NULL,
      ended_at      bigint,
      title         text COLLATE "C",
      user_id       text COLLATE "C",
      -- A session that moves between projects is one session per project: nothing crosses scopes.
      UNIQUE (agent, session_key, project_id)
    );
    CREATE INDEX sessions_project_time ON sessions (project_id, last_event_at);

    -- rowid is the document key of an observation (positive).
    CREATE TABLE observations (
      rowid      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id         text COLLATE "C" NOT NULL UNIQUE,
      event_seq  bigint NOT NULL REFERENCES events (seq),
      session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
      project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
      kind       text COLLATE "C" NOT NULL,
      role       text COLLATE "C" NOT NULL,
      tool       text COLLATE "C",
      files      text COLLATE "C",
      source_ref text COLLATE "C",
      ts         bigint NOT NULL,
      text       text COLLATE "C" NOT NULL,
      flags      text COLLATE "C",
      user_id    text COLLATE "C",
      agent      text COLLATE "C",
      -- The capture path (the event's format, a folded event's original format) and, for a tool call's rows, which part.
      origin     text COLLATE "C",
      part       text COLLATE "C"
    );
    CREATE INDEX observations_session_time ON observations (session_id, ts);
    CREATE INDEX observations_project_time ON observations (project_id, ts);
    CREATE INDEX observations_event ON observations (event_seq);
    CREATE INDEX observations_project_event ON observations (project_id, event_seq);
    CREATE INDEX observations_session_ref ON observations (session_id, source_ref) WHERE source_ref IS NOT NULL;
    CREATE INDEX observations_session_origin ON observations (session_id, origin);
    CREATE INDEX observations_scope ON observations (user_id, project_id, agent);

    -- The document key of a memory is -rowid (negative).
    CREATE TABLE memories (
      rowid      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id         text COLLATE "C" NOT NULL UNIQUE,
      event_seq  bigint NOT NULL REFERENCES events (seq),
      project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
      kind       text COLLATE "C" NOT NULL,
      text       text COLLATE "C" NOT NULL,
      created_at bigint NOT NULL,
      seen_count integer NOT NULL DEFAULT 1,
      flags      text COLLATE "C",
      -- Write guard and history: same content_key in a project = the same memory;
      -- same subject_key with other content = a newer version that supersedes it.
      content_key   text COLLATE "C" NOT NULL,
      subject_key   text COLLATE "C",
      last_seen_at  bigint NOT NULL,
      valid_from    bigint NOT NULL,
      valid_to      bigint,
      supersedes    text COLLATE "C",
      superseded_by text COLLATE "C",
      review        text COLLATE "C",
      pinned        integer NOT NULL DEFAULT 0,
      archived_at   bigint,
      -- Provenance: JSON array of the observation ids it was derived from.
      sources       text COLLATE "C",
      -- 0–1 for derived memories (consolidation); NULL for what a person or agent stated.
      confidence    double precision,
      user_id       text COLLATE "C",
      agent         text COLLATE "C"
    );
    CREATE INDEX memories_project ON memories (project_id, created_at);
    CREATE INDEX memories_content ON memories (project_id, content_key) WHERE valid_to IS NULL;
    -- A hash index: a subject is up to five words of any length, past what a b-tree entry holds (about 2.7 kB).
    CREATE INDEX memories_subject ON memories USING hash (subject_key) WHERE valid_to IS NULL;
    CREATE INDEX memories_event ON memories (event_seq);
    CREATE INDEX memories_scope ON memories (user_id, project_id, agent);

    -- Use of memories (injected into context, shown after a recall), at most once a day each.
    CREATE TABLE memory_usage (
      memory_id text COLLATE "C" NOT NULL,
      day       text COLLATE "C" NOT NULL,
      PRIMARY KEY (memory_id, day)
    );

    -- One row per searchable document: doc_key = observations.rowid or -memories.rowid. What SQLite's search_fts
    -- holds (body: text with CJK bigrams; parts: identifier parts, paths, tool names; meta: role or speaker, kind,
    -- date in words) beside whose the document is and when, so each channel filters by scope in the same table.
    -- The search step (pg-search*.ts) adds its tsvector columns and indexes over it.
    CREATE TABLE search_docs (
      doc_key     bigint PRIMARY KEY,
      type        text COLLATE "C" NOT NULL CHECK (type IN ('observation', 'memory')),
      id          text COLLATE "C" NOT NULL UNIQUE,
      kind        text COLLATE "C" NOT NULL,
      -- Observation role or speaker; the memory kind for memories.
      role        text COLLATE "C" NOT NULL,
      project_id  text COLLATE "C" NOT NULL,
      session_id  text COLLATE "C",
      user_id     text COLLATE "C",
      agent       text COLLATE "C",
      -- Epoch ms: observation time, or memory creation (valid_from).
      ts          bigint NOT NULL,
      body        text NOT NULL,
      parts       text NOT NULL,
      meta        text NOT NULL,
      flags       text COLLATE "C",
      -- Memories only: when it stopped being current (superseded), and when it was archived.
      valid_to    bigint,
      archived_at bigint,
      CHECK ((type = 'observation') = (doc_key > 0))
    );
    CREATE INDEX search_docs_scope ON search_docs (user_id, project_id, agent);
    CREATE INDEX search_docs_time ON search_docs (project_id, ts);
    CREATE INDEX search_docs_session_time ON search_docs (session_id, ts) WHERE session_id IS NOT NULL;

    -- A memory's search document follows its validity and archiving.
    CREATE FUNCTION mnemo_memory_validity() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE search_docs SET valid_to = NEW.valid_to, archived_at = NEW.archived_at WHERE doc_key = -NEW.rowid;
      RETURN NULL;
    END $$;
    CREATE TRIGGER memories_validity AFTER UPDATE OF valid_to, archived_at ON memories
      FOR EACH ROW WHEN (OLD.valid_to IS DISTINCT FROM NEW.valid_to OR OLD.archived_at IS DISTINCT FROM NEW.archived_at)
      EXECUTE FUNCTION mnemo_memory_validity();

    -- Idempotency keys of events deleted on purpose: a re-import or replay never brings them back.
    CREATE TABLE tombstones (
      idem_key     text COLLATE "C" PRIMARY KEY,
      at           bigint NOT NULL,
      project_root text COLLATE "C"
    );

    -- Entity graph: entities extracted at capture, and which documents mention them (doc_key as in search_docs).
    CREATE TABLE entities (
      id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      project_id text COLLATE "C" NOT NULL REFERENCES projects (id),
      type       text COLLATE "C" NOT NULL,
      name       text COLLATE "C" NOT NULL,
      UNIQUE (project_id, type, name)
    );
    CREATE TABLE entity_mentions (
      entity_id bigint NOT NULL REFERENCES entities (id),
      doc_key   bigint NOT NULL,
      PRIMARY KEY (entity_id, doc_key)
    );
    CREATE INDEX entity_mentions_doc ON entity_mentions (doc_key, entity_id);

    -- Vectors beside their documents, one row per (vector space, document): little-endian float32, as SQLite stores them.
    CREATE TABLE doc_vectors (
      space   text COLLATE "C" NOT NULL,
      doc_key bigint NOT NULL,
      vec     bytea NOT NULL,
      PRIMARY KEY (space, doc_key)
    );
    CREATE INDEX doc_vectors_doc ON doc_vectors (doc_key);
    -- Fitted builtin (LSA) models, one per project.
    CREATE TABLE lsa_models (
      project_id text COLLATE "C" PRIMARY KEY REFERENCES projects (id),
      space      text COLLATE "C" NOT NULL,
      doc_count  integer NOT NULL,
      built_at   bigint NOT NULL,
      model      bytea NOT NULL
    );

    -- What was done to the store by whom. Never derived, never rebuilt.
    CREATE TABLE audit_log (
      id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at      bigint NOT NULL,
      actor   text COLLATE "C" NOT NULL,
      action  text COLLATE "C" NOT NULL,
      target  text COLLATE "C" NOT NULL,
      count   integer NOT NULL,
      details text
    );

    -- A copy of a stored observation that another capture path carried (event_seq, of that origin) and was not stored again.
    CREATE TABLE observation_copies (
      observation_rowid bigint NOT NULL,
      event_seq bigint NOT NULL,
      origin text COLLATE "C" NOT NULL
    );
    CREATE INDEX observation_copies_observation ON observation_copies (observation_rowid, origin);
    CREATE INDEX observation_copies_event ON observation_copies (event_seq);

    -- The id first given to a project or session, by its identity (a JSON array, see pg-write.ts): a rebuild keeps it.
    CREATE TABLE kept_ids (
      identity text COLLATE "C" PRIMARY KEY,
      id text COLLATE "C" NOT NULL
    );

    -- Facts about the store as a whole ('derived_with': the derivation version the rows were made with).
    CREATE TABLE store_meta (
      key text COLLATE "C" PRIMARY KEY,
      value text NOT NULL
    );

    -- What each agent session was shown. Not derived from the log: a rebuild keeps it. Ids only, never text.
    CREATE TABLE context_injections (
      agent text COLLATE "C" NOT NULL,
      session_key text COLLATE "C" NOT NULL,
      "user" text COLLATE "C" NOT NULL,
      item_id text COLLATE "C" NOT NULL,
      what text COLLATE "C" NOT NULL,
      at bigint NOT NULL,
      PRIMARY KEY (agent, session_key, "user", item_id, what)
    );
  `,
}

/**
 * The indexes SQLite's schema versions 13 and 14 added, on the base tables (applied after the search and fact steps,
 * `PG_PARTS.migrations`):
 * - `events_received_at`: `StoreStats.lastEventAt` (`mnemo status`, MCP and REST status) is `MAX(received_at)` of the
 *   log, which PostgreSQL otherwise answers by reading every event row; with the index, from its last entry.
 * - `observations_user_time (user_id, ts, rowid)` and `observations_unowned_time (ts, rowid) WHERE user_id IS NULL`:
 *   the time channel's query over the whole store ("what happened in 2026", no project named) is a range of `ts` under
 *   one user's scope in (ts, rowid) order, `LIMIT n`. `observations_scope` gave it every row of the scope and a sort
 *   (31 ms at 100k rows with no user, 52 ms under a named user); these give it the first n in order (0.06 / 0.09 ms).
 *   PostgreSQL orders by an index's columns only after equalities, and `user_id IS NULL` is none, so the rows of no
 *   user have their own partial index, and a named user's scope reads both sides and merges them (`docsInTimeRange`).
 *   SQLite's one index serves both (it ends in the rowid by itself, and takes IS NULL as an equality).
 * On a store that already holds rows, the step builds the indexes in its transaction (writes wait meanwhile).
 */
export const READ_INDEX_MIGRATION: PgMigration = {
  id: '0004-read-indexes',
  name: 'indexes for the time of the last capture and for the time channel over the whole store',
  sql: `
    CREATE INDEX events_received_at ON events (received_at);
    CREATE INDEX observations_user_time ON observations (user_id, ts, rowid);
    CREATE INDEX observations_unowned_time ON observations (ts, rowid) WHERE user_id IS NULL;
  `,
}
