-- A webhook receiver that answers 3xx is not followed (issue 36); where it pointed is kept with the
-- failed attempt so the tenant can correct the URL.
ALTER TABLE webhook_deliveries ADD COLUMN redirect_location text;
