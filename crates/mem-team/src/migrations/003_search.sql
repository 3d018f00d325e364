-- Recall that scales under row-level security. A policy's check runs before any condition of
-- the query that is not leakproof, and neither full-text match (`@@`) nor pgvector's distance
-- is: with 002's policy a granted role's search read every row and called `mem_may` on each
-- (1.6 s for 200,000 rows). Now:
-- - the policy compares the project with the array of the role's projects, computed once per
--   statement (leakproof `=`, so the table's indexes serve it);
-- - recall goes through two functions that run as the owner, search with the GIN and HNSW
--   indexes, and keep only the rows of the projects granted to the role asking (the caller's
--   `current_user`, which must be a role its login is a member of), or every row for the
--   owner, a superuser or a role that bypasses row-level security.

-- The projects granted to `who` or to a role it is a member of.
CREATE FUNCTION mem_projects_of(who name) RETURNS text[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
    SELECT coalesce(array_agg(DISTINCT g.project), '{}')
    FROM mem_grants g
    JOIN pg_catalog.pg_roles r ON r.rolname = g.role
    WHERE pg_catalog.pg_has_role($1, r.oid, 'MEMBER')
$$;

-- Whether `who` sees every row: a superuser, a role that bypasses row-level security, or a
-- member of the table's owner.
CREATE FUNCTION mem_sees_all(who name) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
    SELECT coalesce((SELECT r.rolsuper OR r.rolbypassrls FROM pg_catalog.pg_roles r
                     WHERE r.rolname = $1), false)
        OR pg_catalog.pg_has_role($1, (SELECT c.relowner FROM pg_catalog.pg_class c
                                       WHERE c.oid = 'mem_memories'::regclass), 'MEMBER')
$$;

-- The projects `who` may read, NULL for all; an error unless the login asking is `who` or a
-- member of it (a role may not ask as another).
CREATE FUNCTION mem_readable(who name) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
BEGIN
    IF NOT pg_catalog.pg_has_role(session_user, who, 'MEMBER') THEN
        RAISE EXCEPTION 'mem: % may not search as %', session_user, who
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF mem_sees_all(who) THEN
        RETURN NULL;
    END IF;
    RETURN mem_projects_of(who);
END
$$;

DROP POLICY mem_granted ON mem_memories;
CREATE POLICY mem_granted ON mem_memories
    USING (project = ANY ((SELECT mem_projects_of(current_user))::text[]))
    WITH CHECK (project = ANY ((SELECT mem_projects_of(current_user))::text[]));
DROP FUNCTION mem_may(text, name);

-- The live rows matching the words of `words` (websearch syntax), best first by `ts_rank_cd`
-- against all of its terms joined by OR, at most `lim`, of the projects `who` may read.
-- Ranking every row that holds any of the words costs about 2 us a row, and a common word is in
-- a quarter of a large store (1.8 s for one question at a million rows): the rows ranked are
-- those holding all the words, and those holding the question's rarest words, by the table's
-- statistics (`pg_stats.most_common_elems`, which ANALYZE keeps), taken rarest first while
-- they are expected in at most 5,000 rows (the rarest one always), each side at most 10,000
-- rows. A word the statistics do not list is rarer than every word they list. Without
-- statistics (a store never analyzed) every word is taken.
CREATE FUNCTION mem_search_text(words text, lim integer, who name)
    RETURNS TABLE (project text, id text, layer text, author text, title text, body text,
                   kind text, importance smallint, created text, updated text, pushed text,
                   score real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
DECLARE
    readable text[] := mem_readable(who);
    asked tsquery := websearch_to_tsquery('english', words);
    every tsquery := regexp_replace(asked::text, ' & (?!!)', ' | ', 'g')::tsquery;
    total real;
    rarest real;
    picked text[] := '{}';
    expected real := 0;
    lexeme text;
    freq real;
    narrow tsquery;
BEGIN
    IF every::text = '' THEN
        RETURN;
    END IF;
    SELECT greatest(c.reltuples, 0) INTO total FROM pg_catalog.pg_class c
        WHERE c.oid = 'mem_memories'::regclass;
    SELECT s.most_common_elem_freqs[cardinality(s.most_common_elems::text::text[]) + 1]
        INTO rarest FROM pg_catalog.pg_stats s
        WHERE s.schemaname = current_schema() AND s.tablename = 'mem_memories'
          AND s.attname = 'search';
    FOR lexeme, freq IN
        SELECT w.lexeme, coalesce(f.freq, rarest / 2, 0)
        FROM unnest(to_tsvector('english', words)) w
        LEFT JOIN (
            SELECT u.e, u.freq FROM pg_catalog.pg_stats s,
                unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) u(e, freq)
            WHERE s.schemaname = current_schema() AND s.tablename = 'mem_memories'
              AND s.attname = 'search' AND u.e IS NOT NULL
        ) f ON f.e = w.lexeme
        ORDER BY 2, 1
    LOOP
        EXIT WHEN cardinality(picked) > 0 AND expected + freq * total > 5000;
        picked := picked || lexeme;
        expected := expected + freq * total;
    END LOOP;
    narrow := coalesce(nullif(array_to_string(
        ARRAY(SELECT quote_literal(p) FROM unnest(picked) p), ' | '), ''), every::text)::tsquery;
    RETURN QUERY
        WITH found AS (
            (SELECT m.ctid AS t FROM mem_memories m
             WHERE m.state = 'live' AND m.search @@ asked
               AND (readable IS NULL OR m.project = ANY (readable)) LIMIT 10000)
            UNION
            (SELECT m.ctid FROM mem_memories m
             WHERE m.state = 'live' AND m.search @@ narrow
               AND (readable IS NULL OR m.project = ANY (readable)) LIMIT 10000)
        )
        SELECT m.project, m.id, m.layer, m.author, m.title, m.body, m.kind, m.importance,
               m.created::text, m.updated::text, m.pushed_at::text, ts_rank_cd(m.search, every)
        FROM mem_memories m
        WHERE m.ctid = ANY (ARRAY(SELECT t FROM found))
        ORDER BY 12 DESC, 1, 2
        LIMIT lim;
END
$$;

-- The live rows of model `model` nearest to `v` (its length is theirs) by cosine, at most
-- `lim`, of the projects `who` may read; the HNSW index of that length scanned iteratively,
-- so that rows left out (another state, model or project) do not shorten the list.
CREATE FUNCTION mem_search_vector(v vector, model text, lim integer, who name)
    RETURNS TABLE (project text, id text, layer text, author text, title text, body text,
                   kind text, importance smallint, created text, updated text, pushed text,
                   score real)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
    SET hnsw.iterative_scan = relaxed_order
AS $$
DECLARE
    readable text[] := mem_readable(who);
    dim integer := vector_dims(v);
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT m.project, m.id, m.layer, m.author, m.title, m.body, m.kind, m.importance,
                m.created::text, m.updated::text, m.pushed_at::text,
                (1 - (m.embedding::vector(%1$s) <=> $1))::real
         FROM mem_memories m
         WHERE m.state = ''live'' AND m.model = $2 AND m.dim = %1$s
           AND ($3::text[] IS NULL OR m.project = ANY ($3))
         ORDER BY m.embedding::vector(%1$s) <=> $1
         LIMIT $4', dim)
        USING v, model, readable, lim;
END
$$;

-- How many live rows `who` may read.
CREATE FUNCTION mem_live_count(who name) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
DECLARE
    readable text[] := mem_readable(who);
BEGIN
    RETURN (SELECT count(*) FROM mem_memories m
            WHERE m.state = 'live' AND (readable IS NULL OR m.project = ANY (readable)));
END
$$;

CREATE INDEX mem_memories_pushed ON mem_memories (pushed_at);
