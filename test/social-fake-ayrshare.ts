import http from 'node:http';
import type { Parsed } from './helpers/parsed.js';

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Parsed;
}
type Reply = { status?: number; body: unknown } | ((req: SeenRequest) => { status?: number; body: unknown });

/** A stand-in for api.ayrshare.com on 127.0.0.1: records every request and answers from a table
 *  keyed by "METHOD /path"; tests swap answers to make the provider fail. */
export async function startFakeAyrshare() {
  const seen: SeenRequest[] = [];
  const replies = new Map<string, Reply>();
  let postSeq = 0;
  const posts = new Map<string, { platforms: string[]; scheduleDate?: string }>();
  const linked = new Set<string>();
  const defaults: Record<string, Reply> = {
    'POST /api/profiles': { body: { status: 'success', title: 'org', refId: 'ref-1', profileKey: 'PK-123' } },
    'POST /api/profiles/generateJWT': {
      body: { status: 'success', token: 'jwt', url: 'https://profile.ayrshare.com?domain=acme&jwt=abc' },
    },
    'GET /api/user': () => ({
      body: {
        activeSocialAccounts: [...linked, 'pinterest'],
        displayNames: [...linked].map((p) => ({ platform: p, id: `${p}-id`, displayName: p })),
      },
    }),
    'DELETE /api/profiles/social': (r) => {
      linked.delete(r.body.platform);
      return { body: { status: 'success', platform: r.body.platform } };
    },
    'POST /api/post': (r) => {
      const id = `ayr-${++postSeq}`;
      posts.set(id, { platforms: r.body.platforms, scheduleDate: r.body.scheduleDate });
      if (r.body.scheduleDate)
        return { body: { status: 'scheduled', scheduleDate: r.body.scheduleDate, id, refId: 'ref-1', post: r.body.post } };
      if (r.body.requiresApproval) return { body: { status: 'awaiting approval', id, post: r.body.post } };
      return {
        body: {
          status: 'success',
          errors: [],
          id,
          refId: 'ref-1',
          post: r.body.post,
          postIds: r.body.platforms.map((p: string) => ({
            status: 'success',
            id: `${p}-${id}`,
            platform: p,
            postUrl: `https://social.example/${p}/${id}`,
          })),
        },
      };
    },
    'PATCH /api/post': (r) => {
      const p = posts.get(r.body.id);
      if (p && r.body.scheduleDate) p.scheduleDate = r.body.scheduleDate;
      return { body: { status: 'success' } };
    },
    // A scheduled post goes out at its time, as Ayrshare's scheduler would.
    'GET /api/post/:id': (r) => {
      const id = decodeURIComponent(r.path.split('/').pop()!);
      const p = posts.get(id);
      if (!p) return { status: 404, body: { status: 'error', code: 141, message: 'Post not found' } };
      const due = !p.scheduleDate || Date.parse(p.scheduleDate) <= Date.now();
      return {
        body: {
          id,
          status: due ? 'success' : 'pending',
          postIds: due
            ? p.platforms.map((platform) => ({
                status: 'success',
                id: `${platform}-${id}`,
                platform,
                postUrl: `https://social.example/${platform}/${id}`,
              }))
            : [],
        },
      };
    },
    'DELETE /api/post': { body: { status: 'success' } },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const r: SeenRequest = { method: req.method!, path: req.url!, headers: req.headers, body: text ? JSON.parse(text) : undefined };
      seen.push(r);
      const key = `${r.method} ${r.path.split('?')[0]!.replace(/^\/api\/post\/[^/]+$/, '/api/post/:id')}`;
      const reply = replies.get(key) ?? defaults[key];
      const answer =
        typeof reply === 'function' ? reply(r) : (reply ?? { status: 404, body: { status: 'error', message: `no route ${key}` } });
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`;
  return {
    url,
    seen,
    /** Simulates the user finishing the OAuth link on Ayrshare's page. */
    link: (platform: string) => linked.add(platform),
    reply: (key: string, r: Reply) => replies.set(key, r),
    reset: () => replies.clear(),
    last: (key: string) => [...seen].reverse().find((s) => `${s.method} ${s.path.split('?')[0]}` === key),
    /** Ayrshare's own record of a post, as its scheduler sees it. */
    post: (id: string) => posts.get(id),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
