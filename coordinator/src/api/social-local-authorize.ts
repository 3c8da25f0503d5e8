import { z } from 'zod';
import type { Api } from './http.js';
import { LOCAL_AUTHORIZE_PATH, type LocalProvider } from '../social/local-provider.js';
import { TAG } from './social-common.js';
import { NETWORKS } from '@shorts/common/api/networks';

/** What a client that asks for JSON gets (a browser gets a page saying the same). */
const linkedSchema = z.object({ ok: z.literal(true), platform: z.enum(NETWORKS), accountId: z.string(), message: z.string() });

/** The built-in provider's consent page behind access_url (only when that provider is in use). */
export function registerLocalAuthorizeRoute(api: Api, local: LocalProvider): void {
  api.route(
    {
      method: 'get',
      path: LOCAL_AUTHORIZE_PATH,
      tag: TAG,
      auth: false,
      summary: 'Local provider only: the consent page behind access_url; opening it links the account',
      query: z.object({ token: z.string({ error: 'token is required' }).min(1, 'token is required') }),
      // Without a redirectUrl; with one the browser is sent there instead (302).
      response: linkedSchema,
      example: {
        ok: true,
        platform: 'youtube',
        accountId: 'acc_51f0a3',
        message: 'Your youtube account is linked; you can close this window.',
      },
    },
    async (ctx, { query }) => {
      const linked = await local.completeLink(query.token);
      if (linked.redirectUrl) {
        ctx.redirect(linked.redirectUrl);
        return undefined;
      }
      const message = `Your ${linked.platform} account is linked; you can close this window.`;
      // A person opens access_url in a browser: they get a page in plain words, not the JSON a
      // client that asks for it (or for anything) still gets.
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.type = 'html';
        ctx.body = consentPage(linked.platform, message);
        return undefined;
      }
      return { ok: true as const, platform: linked.platform, accountId: linked.accountId, message };
    },
  );
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function consentPage(platform: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(platform)} account linked</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#1f2328}h1{font-size:1.4rem}</style>
</head><body><h1>Account linked</h1><p>${escapeHtml(message)}</p></body></html>`;
}
