import type { PgMigration } from './pg-migrations.js'

/**
 * The search step of the PostgreSQL schema, after the base (pg-schema.ts): the full-text index over `search_docs` and
 * the statistics its BM25 ranking reads (pg-search.ts).
 *
 * - `search_docs.tsv`: the document's tsvector, written by the derivation with `searchVector` (pg-text.ts) —
 *   FTS5's tokens with their positions, the column as weight (A body, B parts, C meta). No default: a derivation that
 *   writes no vector fails instead of leaving a document that no search finds.
 * - `term_counts` (generated): per lexeme its number of occurrences in each column, packed as
 *   `body | parts << 9 | meta << 18` (each at most 256, PostgreSQL's positions per lexeme), as jsonb so that a
 *   ranked document's term frequency is one key lookup; `token_count` (generated): its number of tokens.
 * - A GIN index on `tsv` finds the documents matching a tsquery.
 * - `search_terms` (lexeme → documents containing it) and `search_totals` (documents, tokens): BM25's document
 *   frequencies and average length without a scan. Statement triggers on `search_docs` note each added or removed
 *   vector in `search_pending`; a deferred trigger folds them into the counts once, at commit (one upsert per
 *   transaction, however many documents it wrote). Writes are serialised (pg-db.ts WRITE_LOCK): no deadlock.
 * - `mnemo_phrase_counts(tsv, lexemes, prefix)`: the packed per-column count of a phrase's occurrences (consecutive
 *   positions), the last lexeme a prefix when `prefix`, counted at the phrase's first token as FTS5 counts it.
 *
 * A store that had documents before this step gets empty vectors for them: `mnemo rebuild` indexes them.
 */
export const SEARCH_MIGRATION: PgMigration = {
  id: '0002-search',
  name: 'full-text search: tsvector with GIN index, term counts, BM25 statistics folded in at commit',
  sql: `
    CREATE FUNCTION mnemo_term_counts(v tsvector) RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT coalesce(jsonb_object_agg(u.lexeme,
        cardinality(array_positions(u.weights, 'A')) | (cardinality(array_positions(u.weights, 'B')) << 9)
          | (cardinality(array_positions(u.weights, 'C')) << 18)), '{}'::jsonb)
      FROM unnest(v) u
    $$;
    CREATE FUNCTION mnemo_token_count(v tsvector) RETURNS integer LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT coalesce(sum(cardinality(u.positions)), 0)::integer FROM unnest(v) u
    $$;
    CREATE FUNCTION mnemo_phrase_counts(v tsvector, lexemes text[], prefix boolean) RETURNS integer
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      WITH hits AS (
        SELECT k, x.pos, x.w
        FROM generate_subscripts(lexemes, 1) k
        JOIN unnest(v) u ON u.lexeme = lexemes[k] OR (prefix AND k = cardinality(lexemes) AND starts_with(u.lexeme, lexemes[k]))
        CROSS JOIN LATERAL unnest(u.positions, u.weights) AS x(pos, w)
      ), starts AS (
        SELECT min(w) FILTER (WHERE k = 1) AS w FROM hits GROUP BY pos - k HAVING count(DISTINCT k) = cardinality(lexemes)
      )
      SELECT coalesce(sum(CASE w WHEN 'A' THEN 1 WHEN 'B' THEN 512 WHEN 'C' THEN 262144 ELSE 0 END), 0)::integer FROM starts
    $$;

    ALTER TABLE search_docs ADD COLUMN tsv tsvector NOT NULL DEFAULT ''::tsvector;
    ALTER TABLE search_docs ALTER COLUMN tsv DROP DEFAULT;
    ALTER TABLE search_docs ADD COLUMN term_counts jsonb GENERATED ALWAYS AS (mnemo_term_counts(tsv)) STORED;
    ALTER TABLE search_docs ADD COLUMN token_count integer GENERATED ALWAYS AS (mnemo_token_count(tsv)) STORED;
    CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);

    CREATE TABLE search_terms (
      lexeme text COLLATE "C" PRIMARY KEY,
      docs   integer NOT NULL
    );
    -- The lexemes a delete left in no document, for the trigger to drop without scanning the table.
    CREATE INDEX search_terms_unused ON search_terms (lexeme) WHERE docs <= 0;
    CREATE TABLE search_totals (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      docs     bigint NOT NULL,
      tokens   bigint NOT NULL
    );
    INSERT INTO search_totals (docs, tokens) VALUES (0, 0);

    -- Changes to the counts waiting for the commit: +1 per document vector added, −1 per vector removed.
    CREATE TABLE search_pending (
      sign        smallint NOT NULL,
      tsv         tsvector NOT NULL,
      token_count integer NOT NULL
    );
    CREATE FUNCTION mnemo_search_pending() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM search_pending;
        DELETE FROM search_terms;
        UPDATE search_totals SET docs = 0, tokens = 0;
        RETURN NULL;
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO search_pending SELECT 1, tsv, token_count FROM new_docs;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO search_pending SELECT -1, tsv, token_count FROM old_docs;
      ELSE
        -- Only the rows whose vector changed (a memory's validity or archiving leaves it as it was).
        INSERT INTO search_pending
          SELECT x.sign, x.tsv, x.token_count FROM old_docs o JOIN new_docs n USING (doc_key)
          CROSS JOIN LATERAL (VALUES (-1::smallint, o.tsv, o.token_count), (1::smallint, n.tsv, n.token_count)) AS x(sign, tsv, token_count)
          WHERE n.tsv <> o.tsv;
      END IF;
      PERFORM set_config('mnemo.search_flushed', 'off', true);
      RETURN NULL;
    END $$;
    -- At commit, the first firing folds every pending change into the counts in one statement each; the others find
    -- the transaction's flag set and return. (Counters updated per statement would grow a chain of row versions per
    -- common lexeme in a long transaction, a rebuild's: quadratic.)
    CREATE FUNCTION mnemo_search_flush() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('mnemo.search_flushed', true) = 'on' THEN RETURN NULL; END IF;
      PERFORM set_config('mnemo.search_flushed', 'on', true);
      WITH done AS (
        DELETE FROM search_pending RETURNING sign, tsv, token_count
      ), totals AS (
        UPDATE search_totals SET docs = docs + (SELECT coalesce(sum(sign), 0) FROM done),
          tokens = tokens + (SELECT coalesce(sum(sign * token_count), 0) FROM done)
      )
      INSERT INTO search_terms (lexeme, docs)
        SELECT u.lexeme, sum(done.sign) FROM done, unnest(done.tsv) u GROUP BY u.lexeme HAVING sum(done.sign) <> 0 ORDER BY u.lexeme
        ON CONFLICT (lexeme) DO UPDATE SET docs = search_terms.docs + excluded.docs;
      DELETE FROM search_terms WHERE docs <= 0;
      RETURN NULL;
    END $$;
    CREATE TRIGGER search_docs_counts_insert AFTER INSERT ON search_docs
      REFERENCING NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_pending();
    CREATE TRIGGER search_docs_counts_delete AFTER DELETE ON search_docs
      REFERENCING OLD TABLE AS old_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_pending();
    CREATE TRIGGER search_docs_counts_update AFTER UPDATE ON search_docs
      REFERENCING OLD TABLE AS old_docs NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_pending();
    CREATE TRIGGER search_docs_counts_truncate AFTER TRUNCATE ON search_docs
      FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_pending();
    CREATE CONSTRAINT TRIGGER search_pending_flush AFTER INSERT ON search_pending
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION mnemo_search_flush();
  `,
}
