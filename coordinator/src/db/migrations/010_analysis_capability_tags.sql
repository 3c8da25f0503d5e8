-- Analysis now requires the `transcriber` and `face-detector` tags and prefers `face-detector:cuda`
-- (common/src/placement.ts). Agents registered before this version sent those capabilities but were
-- not given the tags; derive them here, so that after an upgrade their analysis work is not refused
-- as unplaceable until each agent registers again. Running it twice changes nothing.
UPDATE agents SET capability_tags = ARRAY(
  SELECT DISTINCT tag FROM unnest(
    capability_tags
    || CASE WHEN COALESCE(capabilities->>'transcriber', '') <> '' THEN ARRAY['transcriber'] ELSE '{}'::text[] END
    || CASE WHEN COALESCE(capabilities->>'face_detector', '') <> '' THEN
         ARRAY['face-detector'] || CASE capabilities->>'face_detector_provider'
           WHEN 'EXECUTION_PROVIDER_CUDA' THEN ARRAY['face-detector:cuda']
           WHEN 'EXECUTION_PROVIDER_CPU' THEN ARRAY['face-detector:cpu']
           ELSE '{}'::text[] END
       ELSE '{}'::text[] END
  ) AS tag ORDER BY tag
);
