import { z } from 'zod';
import { AppError } from '../errors.js';
import { FLAG_WORDS, parseEnvFlag } from '@shorts/common/env-flag';

// Social posting's part of the coordinator's configuration (config.ts reads it with the rest, once):
//   SOCIAL_PROVIDER            local (default) | ayrshare
//   SOCIAL_API_URL             provider API base, default https://api.ayrshare.com/api
//   SOCIAL_API_KEY             provider API key (ayrshare: the Primary Profile's API key)
//   SOCIAL_AYRSHARE_DOMAIN     ayrshare: the app domain given at onboarding (for generateJWT)
//   SOCIAL_AYRSHARE_PRIVATE_KEY ayrshare: the integration private key (PEM; "\n" escapes allowed)
//   SOCIAL_TIMEOUT_MS          per provider request, default 15000
//   SOCIAL_LOCAL_AUTO_LINK     local: true links an account at connect time, without the consent page
const schema = z.discriminatedUnion(
  'provider',
  [
    z.object({
      provider: z.literal('local'),
      autoLink: z.boolean(),
      timeoutMs: z.number(),
    }),
    z.object({
      provider: z.literal('ayrshare'),
      apiUrl: z.url({ protocol: /^https?$/ }),
      apiKey: z.string().min(1, 'SOCIAL_API_KEY is required for the ayrshare provider'),
      domain: z.string().min(1, 'SOCIAL_AYRSHARE_DOMAIN is required for the ayrshare provider'),
      privateKey: z.string().min(1, 'SOCIAL_AYRSHARE_PRIVATE_KEY is required for the ayrshare provider'),
      timeoutMs: z.number(),
    }),
  ],
  { error: 'SOCIAL_PROVIDER must be local or ayrshare' },
);

export type SocialConfig = z.infer<typeof schema>;

export function loadSocialConfig(env: NodeJS.ProcessEnv): SocialConfig {
  const timeoutMs = Number(env.SOCIAL_TIMEOUT_MS || 15_000);
  const autoLink = env.SOCIAL_LOCAL_AUTO_LINK ? parseEnvFlag(env.SOCIAL_LOCAL_AUTO_LINK) : false;
  if (autoLink === undefined) {
    throw new AppError(
      500,
      'Invalid configuration',
      `SOCIAL_LOCAL_AUTO_LINK: expected ${FLAG_WORDS}, got ${JSON.stringify(env.SOCIAL_LOCAL_AUTO_LINK)}`,
    );
  }
  const parsed = schema.safeParse({
    provider: env.SOCIAL_PROVIDER || 'local',
    autoLink,
    apiUrl: (env.SOCIAL_API_URL || 'https://api.ayrshare.com/api').replace(/\/+$/, ''),
    apiKey: env.SOCIAL_API_KEY ?? '',
    domain: env.SOCIAL_AYRSHARE_DOMAIN ?? '',
    privateKey: (env.SOCIAL_AYRSHARE_PRIVATE_KEY ?? '').replace(/\\n/g, '\n'),
    timeoutMs: Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 15_000,
  });
  if (!parsed.success) {
    throw new AppError(500, 'Invalid configuration', parsed.error.issues.map((i) => i.message).join('; '));
  }
  return parsed.data;
}
