-- What the camera paths of a job's shorts were planned from (face tracks, speaker turns), one entry
-- per short. Kept out of `data` so that reading a job does not drag it along: only a render with
-- other director settings reads it, to plan the path again without a new detection pass.
ALTER TABLE jobs ADD COLUMN reframe_detections jsonb;
