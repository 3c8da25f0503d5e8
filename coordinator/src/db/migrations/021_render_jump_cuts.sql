-- The jump cuts a render made, as its agent planned them (on the source's frames, with the voice
-- activity it heard itself when analysis stored none): its caption files are re-timed by exactly these.
ALTER TABLE renders ADD COLUMN jump_cuts jsonb;
