-- The facts `mem capture` took from what the user said in a session: one row per (session,
-- statement), so that reading the transcript again on the next turn takes nothing twice.
-- `key` is the hash of the statement as the exact-repeat rule compares it (lower case, single
-- spaces, no final full stop), after redaction; `memory` the memory it was added as or counted
-- as a use of; `outcome` 'added', 'used' or 'superseded' (added, replacing a similar fact);
-- `at` seconds since the epoch of the statement.
CREATE TABLE facts (
    session TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    memory  TEXT    NOT NULL,
    outcome TEXT    NOT NULL,
    at      INTEGER,
    PRIMARY KEY (session, key)
);
