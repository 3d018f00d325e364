-- The messages logged, by the id their agent gave them (an agent may write a message that
-- changes again under its id, even after a capture read it): a later copy of a logged message,
-- read by a later import, adds nothing to the log.
CREATE TABLE messages (
    session TEXT NOT NULL,
    id      TEXT NOT NULL,
    PRIMARY KEY (session, id)
) WITHOUT ROWID;
