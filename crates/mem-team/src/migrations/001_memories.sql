-- The team store's first schema: one row per published memory, with its full text and its
-- vector (any model: `model` and `dim` say which; only equal ones are compared).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE mem_memories (
    project      text        NOT NULL,
    id           text        NOT NULL,
    layer        text        NOT NULL,
    author       text        NOT NULL,
    machine      text        NOT NULL,
    path         text        NOT NULL,
    kind         text        NOT NULL,
    importance   smallint    NOT NULL,
    created      timestamptz NOT NULL,
    updated      timestamptz,
    state        text        NOT NULL,
    front_matter jsonb       NOT NULL,
    title        text        NOT NULL,
    body         text        NOT NULL,
    hash         text        NOT NULL,
    model        text,
    dim          integer,
    embedding    vector,
    pushed_at    timestamptz NOT NULL DEFAULT now(),
    search       tsvector GENERATED ALWAYS AS (
        to_tsvector('english', title || ' ' || body)
    ) STORED,
    PRIMARY KEY (project, id),
    CHECK (state IN ('live', 'forgotten', 'superseded', 'archived')),
    CHECK (layer IN ('project', 'user')),
    CHECK ((embedding IS NULL) = (model IS NULL) AND (model IS NULL) = (dim IS NULL)),
    CHECK (embedding IS NULL OR vector_dims(embedding) = dim)
);

CREATE INDEX mem_memories_search ON mem_memories USING gin (search);
CREATE INDEX mem_memories_author ON mem_memories (author);
