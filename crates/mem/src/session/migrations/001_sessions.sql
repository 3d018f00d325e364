-- The session log: agent sessions as append-only events. `at` is seconds since the Unix epoch.

-- One row per session: what the list shows, and the reading state an import continues from.
CREATE TABLE sessions (
    id           TEXT    PRIMARY KEY,
    agent        TEXT    NOT NULL,
    project      TEXT,
    started_at   INTEGER,
    last_at      INTEGER,
    turns        INTEGER NOT NULL DEFAULT 0,
    events       INTEGER NOT NULL DEFAULT 0,
    first_prompt TEXT,
    memory       TEXT,
    model        TEXT,
    mode         TEXT
);
CREATE INDEX sessions_by_last ON sessions (last_at);

-- Events, in the order they happened. `turn` is the number of the user prompt they follow
-- (0 before the first). A tool call's result has its `call_id`; `command` is the shell command
-- a call ran, `files` the files it wrote (one per line), `status` a result's exit status
-- (0 success, non-zero failure, NULL unknown); a checkpoint event has its number.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    session    TEXT    NOT NULL REFERENCES sessions (id),
    turn       INTEGER NOT NULL,
    at         INTEGER,
    kind       TEXT    NOT NULL CHECK (kind IN
                   ('prompt', 'assistant', 'tool_call', 'tool_result', 'meta', 'checkpoint')),
    tool       TEXT,
    call_id    TEXT,
    command    TEXT,
    files      TEXT,
    status     INTEGER,
    checkpoint TEXT,
    text       TEXT    NOT NULL
);
CREATE INDEX events_by_session ON events (session, seq);

-- How far each transcript has been read: `offset` is the byte just past the last line taken.
CREATE TABLE sources (
    path     TEXT    PRIMARY KEY,
    session  TEXT    NOT NULL REFERENCES sessions (id),
    offset   INTEGER NOT NULL,
    lines    INTEGER NOT NULL,
    skipped  INTEGER NOT NULL
);

-- Full-text search over the events' text (rows are never updated or deleted).
CREATE VIRTUAL TABLE events_fts USING fts5 (
    text, content = 'events', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER events_to_fts AFTER INSERT ON events BEGIN
    INSERT INTO events_fts (rowid, text) VALUES (new.seq, new.text);
END;
