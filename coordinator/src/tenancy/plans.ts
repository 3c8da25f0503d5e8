export const PLANS = ['free', 'starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

const MB = 1_000_000;

/** What each plan gets; the contract's section 8 in one place. */
export const PLAN_LIMITS: Record<
  Plan,
  {
    storageBytes: number;
    maxPredefinedShortSec: number;
    pricePerMinute: number;
    maxDownloadBytes: number;
    /** Largest render: short and long side in pixels, any orientation; null = the default 720x1280 only. */
    renderSides: { short: number; long: number } | null;
  }
> = {
  free: { storageBytes: 100 * MB, maxPredefinedShortSec: 90, pricePerMinute: 0.03, maxDownloadBytes: 500 * MB, renderSides: null },
  starter: { storageBytes: 100 * MB, maxPredefinedShortSec: 90, pricePerMinute: 0.03, maxDownloadBytes: 1000 * MB, renderSides: null },
  pro: {
    storageBytes: 1000 * MB,
    maxPredefinedShortSec: 300,
    pricePerMinute: 0.026,
    maxDownloadBytes: 4000 * MB,
    renderSides: { short: 1080, long: 1920 },
  },
  business: {
    storageBytes: 10_000 * MB,
    maxPredefinedShortSec: 300,
    pricePerMinute: 0.023,
    maxDownloadBytes: 10_000 * MB,
    renderSides: { short: 2160, long: 3840 },
  },
};

export const toMB = (bytes: number) => Math.round((bytes / MB) * 100) / 100;
