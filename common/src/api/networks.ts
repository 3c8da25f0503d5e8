/** The social networks of the contract (2.10). No imports: the web studio bundles this list. */
export const NETWORKS = ['youtube', 'facebook', 'instagram', 'linkedin', 'tiktok', 'x'] as const;
export type Network = (typeof NETWORKS)[number];
