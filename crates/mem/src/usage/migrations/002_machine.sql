-- Facts about this log: `machine` names this log's file in the root's usage/ folder. A new
-- log gets a new name, so its event numbers never mix with those of an older log's file.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
