-- A render keeps the caption script it burned in (the agent's .ass), beside its video and thumbnail:
-- what the captions said can be read back as text. Like a thumbnail it belongs to one file row.
ALTER TABLE files ADD COLUMN captions_key text;
CREATE UNIQUE INDEX files_captions_key_unique ON files (captions_key) WHERE captions_key IS NOT NULL;
