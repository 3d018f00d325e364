-- Who sees what: row-level security on the memories. A role reads and writes the rows of a
-- project only when `mem_grants` grants that project to it, or to a role it is a member of.
-- The table's owner (who ran `mem team init`) and superusers are not held by the policy.
CREATE TABLE mem_grants (
    role    name NOT NULL,
    project text NOT NULL,
    PRIMARY KEY (role, project)
);

-- Whether role `who` may see `project`. It runs as its owner, so that a role needs no right
-- to read the grants (and cannot list the projects granted to others); a grant naming a role
-- that no longer exists grants nothing.
CREATE FUNCTION mem_may(project text, who name) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path FROM CURRENT
AS $$
    SELECT EXISTS (
        SELECT 1
        FROM mem_grants g
        JOIN pg_catalog.pg_roles r ON r.rolname = g.role
        WHERE g.project = $1 AND pg_catalog.pg_has_role($2, r.oid, 'MEMBER')
    )
$$;

ALTER TABLE mem_memories ENABLE ROW LEVEL SECURITY;

CREATE POLICY mem_granted ON mem_memories
    USING (mem_may(project, current_user))
    WITH CHECK (mem_may(project, current_user));
