-- Usage events, append-only. `at` is seconds since the Unix epoch.
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id  TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('retrieved', 'used')),
    at         INTEGER NOT NULL,
    rank       INTEGER,
    query_hash TEXT
);
CREATE INDEX events_by_memory ON events (memory_id, seq);

-- Events up to `seq` are folded into the memory file's `access` by `mem sync`.
CREATE TABLE synced (
    memory_id TEXT    PRIMARY KEY,
    seq       INTEGER NOT NULL
);

-- A sync in progress: the file is being rewritten to the content with this hash. A crash
-- between writing the file and moving the watermark is resolved on the next sync by comparing
-- the file with `hash`.
CREATE TABLE pending_sync (
    memory_id TEXT    PRIMARY KEY,
    seq       INTEGER NOT NULL,
    hash      BLOB    NOT NULL
);
