-- A thumbnail belongs to one file row: deleting one file must never remove another's thumbnail.
CREATE UNIQUE INDEX files_thumbnail_key_unique ON files (thumbnail_key) WHERE thumbnail_key IS NOT NULL;
