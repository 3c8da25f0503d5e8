-- Uploads that any coordinator can resume: the bytes are part objects in the object store, each
-- listed here once accepted (the row, not the store, says which bytes count), and the one writer at
-- a time holds a lease on the upload's row, so a writer that died lets go without anyone's help.
ALTER TABLE uploads ADD COLUMN writer_token text, ADD COLUMN writer_until timestamptz;

CREATE TABLE upload_parts (
  upload_id    text NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
  offset_bytes bigint NOT NULL,
  size_bytes   bigint NOT NULL CHECK (size_bytes > 0),
  object_key   text NOT NULL,
  PRIMARY KEY (upload_id, offset_bytes)
);

-- The scheduled sweep looks only at uploads still receiving.
CREATE INDEX uploads_receiving_since ON uploads (updated_at) WHERE state = 'receiving';

-- Bytes received before this change sit in one coordinator's DATA_DIR/uploads, which no part row
-- names: such an upload could never be finished, so its client is told at once (HEAD answers 410)
-- and starts again, instead of sending the rest for nothing.
UPDATE uploads SET state = 'failed', error_message = 'interrupted by an upgrade: start the upload again', updated_at = now()
WHERE state = 'receiving' AND offset_bytes > 0;
