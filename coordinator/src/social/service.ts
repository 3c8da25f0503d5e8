import type { Organization } from '../tenancy/tenancy.js';
import type { Network } from './networks.js';
import type { EditBody, PublishBody } from './publish-input.js';
import type { SocialCore, SocialServiceDeps } from './service-core.js';
import { connect, disconnect, profileOf } from './service-accounts.js';
import { list, nextSlot } from './service-queue.js';
import { publish } from './service-publish.js';
import { edit, remove } from './service-edit.js';

export type { SocialServiceDeps } from './service-core.js';

type PostRef = { postId?: string; jobId?: string };

/** The social posting operations over one provider; each lives in a service-*.ts file. */
export function createSocialService(deps: SocialServiceDeps) {
  const core: SocialCore = { ...deps, now: deps.now ?? Date.now };
  return {
    profile: (organizationId: string) => profileOf(core, organizationId),
    connect: (org: Organization, platform: Network, redirectUrl?: string) => connect(core, org, platform, redirectUrl),
    disconnect: (organizationId: string, accountId: string) => disconnect(core, organizationId, accountId),
    nextSlot: (organizationId: string, timezone: string | undefined, count: number) => nextSlot(core, organizationId, timezone, count),
    list: (organizationId: string, limit: number, offset: number) => list(core, organizationId, limit, offset),
    /** `ownVideoUrl`: the signed URL of the organization's own file named by `fileId`, reachable by construction. */
    publish: (org: Organization, body: PublishBody, viaApiKey: boolean, ownVideoUrl?: string) =>
      publish(core, org, body, viaApiKey, ownVideoUrl),
    edit: (org: Organization, body: EditBody, ref: PostRef, viaApiKey: boolean) => edit(core, org, body, ref, viaApiKey),
    remove: (organizationId: string, ref: PostRef) => remove(core, organizationId, ref),
  };
}

export type SocialService = ReturnType<typeof createSocialService>;
