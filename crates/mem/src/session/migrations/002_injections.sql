-- The injection ledger: what each context hook put into each session's context, one row per
-- memory sent (`memory` its id, `hash` the hash of its title and body, `chars` the length of
-- its line as sent), and one row with `memory` NULL where the context started again (`event`
-- 'reset': a compaction or a clear, after which what was sent before is no longer in the
-- model's context). `turn` is the prompt the context went with (0: the session's start). `at`
-- is seconds since the epoch.
CREATE TABLE injections (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT    NOT NULL,
    turn    INTEGER NOT NULL,
    at      INTEGER,
    event   TEXT    NOT NULL,
    memory  TEXT,
    hash    TEXT,
    chars   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX injections_by_session ON injections (session, seq);
