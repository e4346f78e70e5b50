import type DatabaseModule from 'better-sqlite3'
import { MnemoError } from '../../core/errors.js'

/**
 * Versioned schema migrations for the SQLite store. Each entry runs once, in
 * order, inside a transaction; `PRAGMA user_version` records the last one
 * applied. Never edit a released migration: append a new one.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'event log, sessions, observations, memories, full-text index',
    sql: `
      -- The changelog: append-only, one row per captured event. Everything else is derived from it.
      CREATE TABLE events (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        idem_key     TEXT NOT NULL UNIQUE,
        agent        TEXT NOT NULL,
        format       TEXT NOT NULL,
        type         TEXT NOT NULL,
        session_key  TEXT NOT NULL,
        project_root TEXT NOT NULL,
        project_name TEXT NOT NULL,
        ts           INTEGER NOT NULL,
        session_started_at INTEGER,
        received_at  INTEGER NOT NULL,
        payload      TEXT NOT NULL
      );

      CREATE TABLE projects (
        id   TEXT PRIMARY KEY,
        root TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL
      );
      CREATE INDEX projects_name ON projects(name);

      CREATE TABLE sessions (
        id            TEXT PRIMARY KEY,
        project_id    TEXT NOT NULL REFERENCES projects(id),
        agent         TEXT NOT NULL,
        session_key   TEXT NOT NULL,
        started_at    INTEGER NOT NULL,
        last_event_at INTEGER NOT NULL,
        ended_at      INTEGER,
        title         TEXT,
        -- A session that moves between projects is one session per project: nothing crosses scopes.
        UNIQUE (agent, session_key, project_id)
      );
      CREATE INDEX sessions_project_time ON sessions(project_id, last_event_at);

      -- rowid is shared with search_fts (positive rowids are observations).
      CREATE TABLE observations (
        rowid      INTEGER PRIMARY KEY,
        id         TEXT NOT NULL UNIQUE,
        event_seq  INTEGER NOT NULL REFERENCES events(seq),
        session_id TEXT NOT NULL REFERENCES sessions(id),
        project_id TEXT NOT NULL REFERENCES projects(id),
        kind       TEXT NOT NULL,
        role       TEXT NOT NULL,
        tool       TEXT,
        files      TEXT,
        source_ref TEXT,
        ts         INTEGER NOT NULL,
        text       TEXT NOT NULL,
        flags      TEXT
      );
      CREATE INDEX observations_session_time ON observations(session_id, ts);
      CREATE INDEX observations_project_time ON observations(project_id, ts);

      -- search_fts rowid = -memories.rowid (negative rowids are memories).
      CREATE TABLE memories (
        rowid      INTEGER PRIMARY KEY,
        id         TEXT NOT NULL UNIQUE,
        event_seq  INTEGER NOT NULL REFERENCES events(seq),
        project_id TEXT NOT NULL REFERENCES projects(id),
        kind       TEXT NOT NULL,
        text       TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        seen_count INTEGER NOT NULL DEFAULT 1,
        flags      TEXT,
        -- Write guard and history: same content_key in a project = the same memory;
        -- same subject_key with other content = a newer version that supersedes it.
        content_key   TEXT NOT NULL,
        subject_key   TEXT,
        last_seen_at  INTEGER NOT NULL,
        valid_from    INTEGER NOT NULL,
        valid_to      INTEGER,
        supersedes    TEXT,
        superseded_by TEXT,
        review        TEXT,
        pinned        INTEGER NOT NULL DEFAULT 0,
        archived_at   INTEGER,
        -- Provenance: JSON array of the observation ids it was derived from.
        sources       TEXT
      );
      -- Use of memories (injected into context, shown after a recall), at most once a day each:
      -- the reinforcement term of the retention score.
      CREATE TABLE memory_usage (
        memory_id TEXT NOT NULL,
        day       TEXT NOT NULL,
        PRIMARY KEY (memory_id, day)
      ) WITHOUT ROWID;
      CREATE INDEX memories_project ON memories(project_id, created_at);
      CREATE INDEX memories_content ON memories(project_id, content_key) WHERE valid_to IS NULL;
      CREATE INDEX memories_subject ON memories(project_id, kind, subject_key) WHERE valid_to IS NULL;

      -- Idempotency keys of events deleted on purpose: a re-import or replay never brings them back.
      CREATE TABLE tombstones (
        idem_key     TEXT PRIMARY KEY,
        at           INTEGER NOT NULL,
        project_root TEXT
      );

      -- Full-text index over observations and memories. body: text with CJK bigrams;
      -- parts: identifier parts, file paths, tool names; meta: who said it (role or
      -- speaker), its kind, and its date in words. Porter stemming over unicode61.
      -- Entity graph: entities extracted at capture, and which documents mention them
      -- (doc_key as in search_fts). Co-occurrence edges are read from mentions, so a
      -- forgotten document takes its edges with it.
      CREATE TABLE entities (
        id         INTEGER PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id),
        type       TEXT NOT NULL,
        name       TEXT NOT NULL,
        UNIQUE (project_id, type, name)
      );
      CREATE TABLE entity_mentions (
        entity_id INTEGER NOT NULL REFERENCES entities(id),
        doc_key   INTEGER NOT NULL,
        PRIMARY KEY (entity_id, doc_key)
      ) WITHOUT ROWID;
      CREATE INDEX entity_mentions_doc ON entity_mentions(doc_key, entity_id);

      -- Vectors beside their documents, one row per (vector space, document). A space is
      -- one embedder's output (builtin LSA per project, or a configured provider/model/dim),
      -- so switching embedders never mixes vectors. Derived: rebuild and reindex recompute them.
      CREATE TABLE doc_vectors (
        space   TEXT NOT NULL,
        doc_key INTEGER NOT NULL,
        vec     BLOB NOT NULL,
        PRIMARY KEY (space, doc_key)
      ) WITHOUT ROWID;
      CREATE INDEX doc_vectors_doc ON doc_vectors(doc_key);
      -- Fitted builtin (LSA) models, one per project; refitted as the project grows.
      CREATE TABLE lsa_models (
        project_id TEXT PRIMARY KEY REFERENCES projects(id),
        space      TEXT NOT NULL,
        doc_count  INTEGER NOT NULL,
        built_at   INTEGER NOT NULL,
        model      BLOB NOT NULL
      );

      -- What was done to the store by whom: rescans, deletes. Never derived, never rebuilt.
      CREATE TABLE audit_log (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        at      INTEGER NOT NULL,
        actor   TEXT NOT NULL,
        action  TEXT NOT NULL,
        target  TEXT NOT NULL,
        count   INTEGER NOT NULL,
        details TEXT
      );

      CREATE VIRTUAL TABLE search_fts USING fts5(
        body, parts, meta,
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
    `,
  },
  {
    version: 2,
    name: 'observations by event: deletes find the rows of an event; live tails and the viewer page a project by event',
    sql: `
      CREATE INDEX observations_event ON observations(event_seq);
      CREATE INDEX observations_project_event ON observations(project_id, event_seq);
    `,
  },
  {
    version: 3,
    name: 'memories carry the confidence of the extraction that derived them',
    sql: `
      -- 0–1 for derived memories (consolidation); NULL for what a person or agent stated with remember.
      ALTER TABLE memories ADD COLUMN confidence REAL;
    `,
  },
  {
    version: 4,
    name: 'user and agent scopes: rows carry whose they are, so every read can be confined to one user and one agent',
    sql: `
      -- The user an event was captured for (MNEMO_USER on the client, or the server's per-user token); NULL = no user (shared).
      ALTER TABLE events ADD COLUMN user_id TEXT;
      ALTER TABLE sessions ADD COLUMN user_id TEXT;
      -- Denormalised onto the searchable rows so every retrieval channel filters inside its own query.
      ALTER TABLE observations ADD COLUMN user_id TEXT;
      ALTER TABLE observations ADD COLUMN agent TEXT;
      UPDATE observations SET agent = (SELECT s.agent FROM sessions s WHERE s.id = observations.session_id);
      ALTER TABLE memories ADD COLUMN user_id TEXT;
      -- The agent whose work a memory came from; NULL = stated by a person or drawn from several agents (shared).
      ALTER TABLE memories ADD COLUMN agent TEXT;
      CREATE INDEX events_user ON events(user_id) WHERE user_id IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: 'observations carry their capture path, so a session captured both by hooks and by an imported transcript stores each step once',
    sql: `
      -- The format of the event an observation was derived from (a folded event's original format): 'claude-hook', 'claude-transcript', …
      ALTER TABLE observations ADD COLUMN origin TEXT;
      -- For a tool call's observations (with a source_ref): 'call' (its input), 'result' (its output or error), or 'whole' (both, as a hook's PostToolUse gives them).
      ALTER TABLE observations ADD COLUMN part TEXT;
      UPDATE observations SET origin = (
        SELECT CASE WHEN e.format = 'folded' THEN coalesce(json_extract(e.payload, '$.from'), 'folded') ELSE e.format END
        FROM events e WHERE e.seq = observations.event_seq
      );
      UPDATE observations SET part = CASE
        WHEN source_ref IS NULL THEN NULL
        WHEN origin = 'claude-hook' THEN 'whole'
        WHEN kind = 'tool' THEN 'call'
        WHEN kind IN ('tool_result', 'error') THEN 'result'
        ELSE 'whole' END;
      CREATE INDEX observations_session_ref ON observations(session_id, source_ref) WHERE source_ref IS NOT NULL;
      -- Whether a session has rows of another capture path at all: most have one path, and then nothing needs matching.
      CREATE INDEX observations_session_origin ON observations(session_id, origin);
      -- A copy of a stored observation that another capture path carried (event_seq, of that origin) and that was not stored again:
      -- forgetting the observation forgets those events too, and a copy is matched to one stored observation only.
      CREATE TABLE observation_copies (
        observation_rowid INTEGER NOT NULL,
        event_seq INTEGER NOT NULL,
        origin TEXT NOT NULL
      );
      CREATE INDEX observation_copies_observation ON observation_copies(observation_rowid, origin);
      CREATE INDEX observation_copies_event ON observation_copies(event_seq);
    `,
  },
  {
    version: 6,
    name: 'a session or project keeps the id it was first given when its first events are deleted and it is re-derived',
    sql: `
      -- The id given to a project or session, by its identity (see keptIdentity in sqlite-write.ts): a project 'project' NUL root;
      -- a session 'session' NUL agent NUL stored session key NUL project root. Not derived from the log, so a rebuild keeps it;
      -- pruned when its project or session is gone after a rebuild or re-derivation.
      CREATE TABLE kept_ids (
        identity TEXT PRIMARY KEY,
        id TEXT NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO kept_ids (identity, id) SELECT 'project' || char(0) || root, id FROM projects;
      INSERT INTO kept_ids (identity, id)
        SELECT 'session' || char(0) || s.agent || char(0) || s.session_key || char(0) || p.root, s.id FROM sessions s JOIN projects p ON p.id = s.project_id;
    `,
  },
  {
    version: 7,
    name: 'the store records which derivation its rows were made with, so status can say when a rebuild would change them',
    sql: `
      -- Facts about the store as a whole. 'derived_with': the DERIVATION_VERSION (engine/index-event.ts) the derived rows were
      -- made with; a store holding events when this table was made was derived before versions were kept: 1.
      CREATE TABLE store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO store_meta (key, value) SELECT 'derived_with', '1' WHERE EXISTS (SELECT 1 FROM events);
    `,
  },
  {
    version: 8,
    name: 'typed fact collections and records, derived from fact events of the log (docs/FACTS.md)',
    sql: `
      -- Each logged declaration of a collection (its spec as JSON: fields, identity, time field); the current spec is
      -- their union in log order. Scoped by project root and user (NULL: no user), never read across users.
      CREATE TABLE fact_schema (
        project_root TEXT NOT NULL,
        user_id TEXT,
        collection TEXT NOT NULL,
        event_seq INTEGER NOT NULL,
        spec TEXT NOT NULL
      );
      CREATE INDEX fact_schema_scope ON fact_schema(project_root, collection, event_seq);
      CREATE INDEX fact_schema_event ON fact_schema(event_seq);
      -- Every version of every record (bitemporal: valid_from/valid_to are world time, recorded_at record time, all epoch ms;
      -- superseded_at: record time a newer version replaced it). action: 'assert' or 'retract'.
      CREATE TABLE fact_versions (
        record_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        project_root TEXT NOT NULL,
        user_id TEXT,
        collection TEXT NOT NULL,
        action TEXT NOT NULL,
        data TEXT NOT NULL,
        status TEXT NOT NULL,
        valid_from INTEGER,
        valid_to INTEGER,
        recorded_at INTEGER NOT NULL,
        superseded_at INTEGER,
        provenance TEXT NOT NULL,
        event_seq INTEGER NOT NULL,
        PRIMARY KEY (record_id, version)
      ) WITHOUT ROWID;
      CREATE INDEX fact_versions_event ON fact_versions(event_seq);
      CREATE INDEX fact_versions_scope ON fact_versions(project_root, collection, recorded_at);
      -- The current version of each live record: what queries read. identity: its identity key's values (JSON), if any.
      CREATE TABLE fact_records (
        id TEXT PRIMARY KEY,
        project_root TEXT NOT NULL,
        user_id TEXT,
        collection TEXT NOT NULL,
        identity TEXT,
        data TEXT NOT NULL,
        status TEXT NOT NULL,
        valid_from INTEGER,
        valid_to INTEGER,
        retracted_at INTEGER,
        recorded_at INTEGER NOT NULL,
        version INTEGER NOT NULL,
        provenance TEXT NOT NULL,
        event_seq INTEGER NOT NULL
      );
      CREATE INDEX fact_records_scope ON fact_records(project_root, collection, user_id);
      CREATE INDEX fact_records_identity ON fact_records(project_root, collection, identity) WHERE identity IS NOT NULL;
      -- What is left of a deleted record: its id, collection and when (no values), from the delete event.
      CREATE TABLE fact_tombstones (
        record_id TEXT NOT NULL,
        project_root TEXT NOT NULL,
        user_id TEXT,
        collection TEXT NOT NULL,
        -- The identity key's values (JSON) of the deleted record, so "what is X?" can answer that X was forgotten.
        identity TEXT,
        deleted_at INTEGER NOT NULL,
        event_seq INTEGER NOT NULL
      );
      CREATE INDEX fact_tombstones_record ON fact_tombstones(record_id);
      CREATE INDEX fact_tombstones_identity ON fact_tombstones(project_root, collection, identity) WHERE identity IS NOT NULL;
      CREATE INDEX fact_tombstones_event ON fact_tombstones(event_seq);
    `,
  },
  {
    version: 9,
    name: 'an index of whose each document is, so counting the documents of a scope (the graph channel asks on every recall) reads no text',
    sql: `
      -- countDocs: project_id IN (…) AND user_id IS NULL (no user set) or = ?, AND agent: without it, a count scans every row.
      CREATE INDEX observations_scope ON observations(user_id, project_id, agent);
      CREATE INDEX memories_scope ON memories(user_id, project_id, agent);
    `,
  },
  {
    version: 10,
    name: 'what each agent session was shown (context block, per-prompt recall, file hints), so a later prompt never repeats it and can correct it',
    sql: `
      -- One row per item shown to one session of one agent (and user, '' for none): item_id is an obs_/mem_/ses_ id, what
      -- 'item' (shown), 'correction' (a correction of it was shown) or 'file' (item_id names a file whose hints were shown).
      -- Not derived from the event log: a rebuild keeps it. Ids only, never text.
      CREATE TABLE context_injections (
        agent TEXT NOT NULL,
        session_key TEXT NOT NULL,
        user TEXT NOT NULL,
        item_id TEXT NOT NULL,
        what TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (agent, session_key, user, item_id, what)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 11,
    name: 'the full-text index keeps no copy of the text it indexes: each text is stored once in the log and once in its row',
    sql: `
      -- Contentless (content=''), so FTS5 stores the index and each document's column sizes (what bm25 needs) but not the
      -- body, parts and meta columns themselves: nothing reads them back (retrieval reads the text from observations and
      -- memories, a rebuild derives them again from the log). contentless_delete=1 (SQLite >= 3.43) keeps DELETE by rowid
      -- working, as forget and re-derivation need. The old table's content is indexed again as it is: the same tokens,
      -- the same scores. 1.1 KB less per observation at 100k observations (docs/STORAGE.md).
      CREATE VIRTUAL TABLE search_fts_v11 USING fts5(
        body, parts, meta,
        tokenize = 'porter unicode61 remove_diacritics 2',
        content = '', contentless_delete = 1
      );
      INSERT INTO search_fts_v11 (rowid, body, parts, meta) SELECT rowid, body, parts, meta FROM search_fts ORDER BY rowid;
      DROP TABLE search_fts;
      ALTER TABLE search_fts_v11 RENAME TO search_fts;
    `,
  },
  {
    version: 12,
    name: 'a session lists the capture paths of its observations, instead of an index of every observation by path',
    sql: `
      -- The capture paths (observations.origin) a session's observations came through, comma-separated, in the order first
      -- stored: what the one-copy rule asks first (does another path hold observations of this session?). Written as
      -- observations are stored; a delete leaves it (a listed path whose rows are gone only costs the rule a look at
      -- the rows); a rebuild makes it again. It replaces observations_session_origin, 62 bytes per observation at 100k.
      ALTER TABLE sessions ADD COLUMN origins TEXT;
      UPDATE sessions SET origins = (
        SELECT group_concat(origin, ',') FROM (SELECT DISTINCT origin FROM observations o WHERE o.session_id = sessions.id AND o.origin IS NOT NULL)
      );
      DROP INDEX observations_session_origin;
    `,
  },
  {
    version: 13,
    name: 'the time of the last capture is read from an index, not from a scan of the whole log',
    sql: `
      -- StoreStats.lastEventAt (what \`mnemo status\` and the status of MCP and REST report) is MAX(received_at): without an
      -- index SQLite reads every event row, payloads included (20 ms warm, ~45 ms from disk at 81k events). The index
      -- answers it from its last entry; it costs about 20 bytes per event.
      CREATE INDEX events_received_at ON events (received_at);
    `,
  },
  {
    version: 14,
    name: 'the time channel reads a time range of the whole store in time order from an index',
    sql: `
      -- The time channel's query ("what happened in 2026", no project named) is a range of ts under one user's scope
      -- (user_id IS NULL without MNEMO_USER), newest or oldest first, LIMIT n: observations_scope (user_id, project_id,
      -- agent) gave it every row of the user and a sort (22 ms at 100k); this index gives it the first n in order
      -- (0.02 ms). About 16 bytes per observation.
      CREATE INDEX observations_user_time ON observations (user_id, ts);
    `,
  },
]

/**
 * @throws {MnemoError} `STORE_UNAVAILABLE` — the file was written by a newer mnemo (a schema version this one does not know):
 *   writing to it could store rows the newer version reads wrongly.
 */
export function refuseNewerSchema(db: DatabaseModule.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number
  const known = MIGRATIONS.at(-1)?.version ?? 0
  if (version <= known) return
  throw new MnemoError(
    'STORE_UNAVAILABLE',
    `the database ${path} was written by a newer mnemo (schema version ${version}; this mnemo knows up to ${known})`,
    {
      details: { dialect: 'sqlite', operation: 'open' },
      hint: 'upgrade mnemo (npm install mnemo@latest), or point MNEMO_HOME at another data directory',
    },
  )
}

/** Applies the migrations `db` has not had, in order, in one IMMEDIATE transaction (see `MIGRATIONS`). */
export function migrate(db: DatabaseModule.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current >= MIGRATIONS.length) return
  // IMMEDIATE takes the write lock first, so two processes opening a fresh file do not both migrate.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    for (const m of MIGRATIONS) {
      if (m.version <= version) continue
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    }
  }).immediate()
}
