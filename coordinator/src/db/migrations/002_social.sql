-- Social posting (contract 2.10-2.12, 4.5): settings, each organization's profile at the social
-- provider, posts, and the state the built-in local provider keeps in place of a real one.

CREATE TABLE social_settings (
  organization_id                text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  is_enabled                     boolean NOT NULL,
  approve_api_posts              boolean NOT NULL,
  default_timezone               text NOT NULL,
  default_platforms              text[] NOT NULL DEFAULT '{}',
  queue_slots                    jsonb NOT NULL DEFAULT '[]',
  max_posts_per_slot             integer NOT NULL CHECK (max_posts_per_slot BETWEEN 1 AND 100),
  max_shorts_of_same_video       integer NOT NULL CHECK (max_shorts_of_same_video >= 0),
  max_shorts_per_week            integer NOT NULL CHECK (max_shorts_per_week >= 0),
  minimum_video_duration_seconds double precision NOT NULL CHECK (minimum_video_duration_seconds >= 0),
  process_only_playlist_id       text,
  created_at                     timestamptz NOT NULL DEFAULT now(),
  updated_at                     timestamptz NOT NULL DEFAULT now()
);

-- One profile per organization at the configured provider. provider_key is the provider's
-- credential for the profile (Ayrshare's Profile-Key) and never leaves the coordinator.
CREATE TABLE social_profiles (
  organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  id              text NOT NULL UNIQUE,
  provider        text NOT NULL,
  provider_key    text NOT NULL,
  provider_ref    text,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE social_posts (
  id                        text PRIMARY KEY,
  organization_id           text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  status                    text NOT NULL CHECK (status IN ('draft', 'pending_approval', 'scheduled', 'published', 'failed', 'cancelled')),
  post_type                 text NOT NULL CHECK (post_type IN ('video', 'photo', 'text', 'document')),
  publish_mode              text NOT NULL CHECK (publish_mode IN ('draft', 'publish_now', 'schedule', 'next_slot')),
  title                     text,
  caption                   text NOT NULL,
  platforms                 text[] NOT NULL,
  media                     jsonb NOT NULL DEFAULT '{}',
  platform_fields           jsonb NOT NULL DEFAULT '{}',
  timezone                  text NOT NULL,
  scheduled_for             timestamptz,
  provider                  text NOT NULL,
  provider_job_id           text,
  provider_post_id          text,
  preview_url               text,
  thumbnail_url             text,
  provider_error            text,
  provider_platforms        jsonb NOT NULL DEFAULT '[]',
  provider_last_event       text,
  is_published_on_platform  boolean NOT NULL DEFAULT false,
  created_by_api_key        boolean NOT NULL DEFAULT false,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX social_posts_org_created ON social_posts (organization_id, created_at DESC, id DESC);
CREATE INDEX social_posts_org_job ON social_posts (organization_id, provider_job_id);
-- next-slot counts the posts holding a queue place.
CREATE INDEX social_posts_queue ON social_posts (organization_id, scheduled_for) WHERE status IN ('scheduled', 'pending_approval');

-- The local provider: linked accounts (one per network per profile, as at real providers),
-- pending account-link consents, and the posts it "publishes".
CREATE TABLE social_local_accounts (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  profile_id      text NOT NULL,
  platform        text NOT NULL,
  display_name    text NOT NULL,
  linked_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (profile_id, platform)
);

CREATE TABLE social_local_links (
  token_hash      text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  profile_id      text NOT NULL,
  platform        text NOT NULL,
  redirect_url    text,
  expires_at      timestamptz NOT NULL,
  completed_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE social_local_jobs (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  profile_id      text NOT NULL,
  post_id         text NOT NULL,
  status          text NOT NULL CHECK (status IN ('held', 'scheduled', 'published', 'cancelled')),
  scheduled_for   timestamptz,
  platforms       text[] NOT NULL,
  payload         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX social_local_jobs_due ON social_local_jobs (organization_id, scheduled_for) WHERE status = 'scheduled';
