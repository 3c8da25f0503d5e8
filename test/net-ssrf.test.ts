import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { safeFetch, safeDownload, checkUrl, FetchRefusedError, type FetchRefusal, type LookupFn } from '@shorts/common/net/safe-fetch';
import { isBlockedAddress, parseAllowlist } from '@shorts/common/net/address-policy';

// The guard every user-supplied URL goes through (fileUrl, waterMarkUrl, webhooks, social media).

async function server(handler: http.RequestListener) {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  return {
    port,
    url: (p = '/') => `http://127.0.0.1:${port}${p}`,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

const refusal = async (t: ExecutionContext, url: string, code: FetchRefusal, opts = {}) => {
  const err = await t.throwsAsync(safeFetch(url, { timeoutMs: 3000, ...opts }), { instanceOf: FetchRefusedError }, url);
  t.is(err?.code, code, `${url}: ${err?.message}`);
};

test('loopback, private, link-local, CGNAT, unspecified and IPv6 forms are refused', async (t) => {
  for (const url of [
    'http://127.0.0.1/',
    'http://127.1.2.3:8080/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://[64:ff9b::a00:1]/',
    'http://[2002:7f00:1::]/',
  ])
    await refusal(t, url, 'blocked_host');
});

test('decimal, hex and octal spellings of loopback are refused', async (t) => {
  for (const url of ['http://2130706433/', 'http://0x7f000001/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/']) {
    await refusal(t, url, 'blocked_host');
  }
});

test('local names, other schemes and credentials are refused', async (t) => {
  for (const url of ['http://localhost:1/', 'http://api.localhost/', 'http://printer.local/', 'http://metadata.google.internal/'])
    await refusal(t, url, 'blocked_host');
  for (const url of ['ftp://example.com/a.mp4', 'file:///etc/passwd', 'gopher://example.com/', 'not a url', 'http://user:pw@example.com/'])
    await refusal(t, url, 'invalid_url');
});

test('DNS names that resolve to private addresses are refused, even one bad address among good ones', async (t) => {
  const lookup: LookupFn = async (host) =>
    (
      ({
        'evil.example': [{ address: '10.1.2.3', family: 4 }],
        'mixed.example': [
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ],
        'v6.example': [{ address: 'fd00::5', family: 6 }],
      }) as Record<string, Array<{ address: string; family: number }>>
    )[host] ?? [];
  for (const url of ['http://evil.example/', 'http://mixed.example/', 'http://v6.example/'])
    await refusal(t, url, 'blocked_host', { lookup });
});

test('the connection goes to the address that was checked (no DNS rebinding)', async (t) => {
  const s = await server((_req, res) => res.end('from the checked address'));
  let calls = 0;
  // First answer is the (allowlisted) test server; a second resolution would say 10.0.0.1.
  const lookup: LookupFn = async () => (calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]);
  const res = await safeFetch(`http://rebind.example:${s.port}/`, {
    lookup,
    allowlist: parseAllowlist(`rebind.example:${s.port}`),
    timeoutMs: 3000,
  });
  t.is(res.body.toString(), 'from the checked address');
  t.is(calls, 1);
  await s.close();
});

test('an allowlisted server works; its redirects to blocked places are refused', async (t) => {
  const other = await server((_req, res) => res.end('other'));
  const s = await server((req, res) => {
    const to: Record<string, string> = {
      '/ok': '',
      '/to-metadata': 'http://169.254.169.254/latest',
      '/to-other-port': other.url('/'),
      '/relative': '/ok',
      '/to-localhost': `http://localhost:${other.port}/`,
      '/to-decimal': 'http://2130706433/',
    };
    const loc = to[req.url ?? ''];
    if (loc === undefined) return void res.writeHead(404).end();
    if (loc === '') return void res.end('hello');
    res.writeHead(302, { location: loc }).end();
  });
  const allowlist = parseAllowlist(`127.0.0.1:${s.port}`);
  t.is((await safeFetch(s.url('/ok'), { allowlist })).body.toString(), 'hello');
  t.is((await safeFetch(s.url('/relative'), { allowlist })).body.toString(), 'hello');
  for (const p of ['/to-metadata', '/to-other-port', '/to-localhost', '/to-decimal'])
    await refusal(t, s.url(p), 'blocked_host', { allowlist });
  await refusal(t, other.url('/'), 'blocked_host', { allowlist });
  await s.close();
  await other.close();
});

test('more than 5 redirects, oversized bodies and slow servers are refused', async (t) => {
  const s = await server((req, res) => {
    const m = req.url!.match(/^\/hop\/(\d+)$/);
    if (m) return void res.writeHead(302, { location: `/hop/${Number(m[1]) + 1}` }).end();
    if (req.url === '/big-declared') return void res.writeHead(200, { 'content-length': '2000' }).end(Buffer.alloc(2000));
    if (req.url === '/big-chunked') {
      res.writeHead(200);
      res.write(Buffer.alloc(800));
      return void res.end(Buffer.alloc(800));
    }
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 3000);
    res.end('ok');
  });
  const allowlist = parseAllowlist('127.0.0.1');
  await refusal(t, s.url('/hop/0'), 'too_many_redirects', { allowlist });
  await refusal(t, s.url('/big-declared'), 'too_large', { allowlist, maxBytes: 1000 });
  await refusal(t, s.url('/big-chunked'), 'too_large', { allowlist, maxBytes: 1000 });
  await refusal(t, s.url('/slow'), 'timeout', { allowlist, timeoutMs: 300 });
  // A failed download leaves no partial file behind.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ssrf-'));
  await t.throwsAsync(safeDownload(s.url('/big-chunked'), path.join(dir, 'x'), { allowlist, maxBytes: 1000 }), {
    instanceOf: FetchRefusedError,
  });
  t.deepEqual(await readdir(dir), []);
  await s.close();
});

test('address policy table', (t) => {
  for (const ip of ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '172.32.0.1', '100.128.0.1']) t.false(isBlockedAddress(ip), ip);
  for (const ip of [
    '127.0.0.1',
    '10.255.255.255',
    '172.20.0.1',
    '192.168.0.1',
    '169.254.1.1',
    '100.100.100.100',
    '::1',
    'fe80::abcd',
    'fc00::',
    '::ffff:10.0.0.1',
    '255.255.255.255',
    'garbage',
  ]) {
    t.true(isBlockedAddress(ip), ip);
  }
  t.deepEqual(parseAllowlist(' a.example:80, [::1]:8080 ,b.example'), [
    { host: 'a.example', port: 80 },
    { host: '::1', port: 8080 },
    { host: 'b.example', port: undefined },
  ]);
});

test('checkUrl accepts public names and addresses', async (t) => {
  const target = await checkUrl('https://videos.example.com/x.mp4', { lookup: async () => [{ address: '93.184.216.34', family: 4 }] });
  t.is(target.address, '93.184.216.34');
});
