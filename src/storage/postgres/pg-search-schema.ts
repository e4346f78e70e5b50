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
 * - `search_terms` (lexeme → documents containing it) and `search_totals` (documents, tokens), kept by statement
 *   triggers on `search_docs` from their transition tables: BM25's document frequencies and average length without a
 *   scan. Writes are serialised (pg-db.ts WRITE_LOCK), so the counters never deadlock.
 * - `mnemo_phrase_counts(tsv, lexemes, prefix)`: the packed per-column count of a phrase's occurrences (consecutive
 *   positions), the last lexeme a prefix when `prefix`, counted at the phrase's first token as FTS5 counts it.
 *
 * A store that had documents before this step gets empty vectors for them: `mnemo rebuild` indexes them.
 */
/** Adds the documents `docs` selects (tsv, token_count) to the counts. */
const add = (docs: string): string => `
        WITH docs AS (${docs}), counted AS (
          INSERT INTO search_terms (lexeme, docs)
          SELECT u.lexeme, count(*) FROM docs, unnest(docs.tsv) u GROUP BY u.lexeme ORDER BY u.lexeme
          ON CONFLICT (lexeme) DO UPDATE SET docs = search_terms.docs + excluded.docs
        )
        UPDATE search_totals SET docs = docs + (SELECT count(*) FROM docs), tokens = tokens + (SELECT coalesce(sum(token_count), 0) FROM docs);`

/** Takes the documents `docs` selects (tsv, token_count) off the counts; a lexeme no document holds any more goes. */
const remove = (docs: string): string => `
        WITH docs AS (${docs}), terms AS (
          SELECT u.lexeme, count(*) AS n FROM docs, unnest(docs.tsv) u GROUP BY u.lexeme ORDER BY u.lexeme
        )
        UPDATE search_terms t SET docs = t.docs - terms.n FROM terms WHERE t.lexeme = terms.lexeme;
        DELETE FROM search_terms WHERE docs <= 0;
        WITH docs AS (${docs})
        UPDATE search_totals SET docs = docs - (SELECT count(*) FROM docs), tokens = tokens - (SELECT coalesce(sum(token_count), 0) FROM docs);`

export const SEARCH_MIGRATION: PgMigration = {
  id: '0002-search',
  name: 'full-text search: tsvector with GIN index, term counts, BM25 statistics kept by triggers',
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

    CREATE FUNCTION mnemo_search_counts() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM search_terms;
        UPDATE search_totals SET docs = 0, tokens = 0;
      ELSIF TG_OP = 'INSERT' THEN
        ${add('SELECT tsv, token_count FROM new_docs')}
      ELSIF TG_OP = 'DELETE' THEN
        ${remove('SELECT tsv, token_count FROM old_docs')}
      ELSE
        -- Only the rows whose vector changed (a memory's validity or archiving leaves it as it was).
        ${remove('SELECT o.tsv, o.token_count FROM old_docs o JOIN new_docs n USING (doc_key) WHERE n.tsv <> o.tsv')}
        ${add('SELECT n.tsv, n.token_count FROM new_docs n JOIN old_docs o USING (doc_key) WHERE n.tsv <> o.tsv')}
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER search_docs_counts_insert AFTER INSERT ON search_docs
      REFERENCING NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_counts();
    CREATE TRIGGER search_docs_counts_delete AFTER DELETE ON search_docs
      REFERENCING OLD TABLE AS old_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_counts();
    CREATE TRIGGER search_docs_counts_update AFTER UPDATE ON search_docs
      REFERENCING OLD TABLE AS old_docs NEW TABLE AS new_docs FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_counts();
    CREATE TRIGGER search_docs_counts_truncate AFTER TRUNCATE ON search_docs
      FOR EACH STATEMENT EXECUTE FUNCTION mnemo_search_counts();
  `,
}
