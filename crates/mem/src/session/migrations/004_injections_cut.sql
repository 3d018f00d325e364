-- The injection ledger says whether each memory's line went whole or cut: `cut` 1 where the
-- line held only the start of the memory's body (cut to fit one line of the context block,
-- ending with "`get ID` for the rest"), 0 where it held the whole body. Rows written before
-- this column are taken as whole: what they sent is not sent again.
ALTER TABLE injections ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;
