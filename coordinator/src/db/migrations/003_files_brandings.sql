-- Lookups the files and archive features make often enough to want an index.

-- The orphan sweeper asks, per stored object, whether a row names it as a thumbnail.
CREATE INDEX files_thumbnail_key ON files (thumbnail_key) WHERE thumbnail_key IS NOT NULL;

-- The file list's tags filter (any of) is an array overlap.
CREATE INDEX files_tags ON files USING gin (tags);

-- The daily archive run looks for old, unarchived jobs across organizations.
CREATE INDEX jobs_archive_due ON jobs (created_at) WHERE archived_at IS NULL;
