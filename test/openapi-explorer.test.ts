import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import type { Parsed } from './helpers/parsed.js';

// What the /docs explorer is built from: the OpenAPI document's allowed values, examples and
// security schemes, and the explorer's own files served by this server (no other origin).

let cluster: TestCluster;

test.before(async () => {
  cluster = await startCluster('openapi_explorer');
});
test.after.always(() => cluster?.close());

test('the document names allowed values and carries request examples that the API itself accepts', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  const createJob = doc.paths['/api/jobs'].post.requestBody.content['application/json'];
  t.deepEqual(createJob.schema.properties.functionName.enum, ['VideoShorts']);
  t.is(createJob.example.functionName, 'VideoShorts');
  const render = doc.paths['/api/render'].post.requestBody.content['application/json'];
  t.true(render.schema.properties.preset.enum.includes('HORMOZI'));
  t.deepEqual(render.schema.properties.type.enum, ['shortVideo']);
  for (const [path, method] of [
    ['/api/jobs', 'post'],
    ['/api/render', 'post'],
    ['/api/organizations/brandings', 'post'],
    ['/api/organizations/social-posts/publish', 'post'],
    ['/api/organizations/api-keys', 'post'],
  ] as const) {
    const op = doc.paths[path]?.[method];
    t.truthy(op, `${method} ${path} is documented`);
    t.truthy(op?.requestBody.content['application/json'].example, `${method} ${path} has a request example`);
  }
  t.truthy(doc.paths['/api/jobs/{jobId}'].delete.responses['200'].content['application/json'].example);
  t.deepEqual(doc.components.securitySchemes.bearer, {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (vsk_…) or a JWT access token',
  });
  t.deepEqual(doc.paths['/api/jobs'].get.security, [{ bearer: [] }, { apiKey: [] }]);

  // The job example is a request the API takes as it stands (here with a reachable fileUrl in place of
  // the YouTube id, and no webhook, since this test has no network).
  const { key } = await cluster.org({ credits: 5 });
  const { youtubeVideoId, webhook, ...rest } = createJob.example;
  t.truthy(youtubeVideoId && webhook);
  const r = await cluster.api('POST', '/api/jobs', { key, body: { ...rest, fileUrl: 'http://127.0.0.1:9/talk.mp4' } });
  t.is(r.status, 201, JSON.stringify(r.body));
});

test('every route has an example of its success response, and of its request body where it takes one', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Parsed>> };
  const missing: string[] = [];
  let routes = 0;
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      routes++;
      const request = op.requestBody?.content as Record<string, { example?: unknown }> | undefined;
      if (request && !Object.values(request).every((m) => m.example !== undefined)) missing.push(`${method} ${path}: request body`);
      const [status, success] =
        Object.entries(op.responses as Record<string, { content?: Record<string, { example?: unknown }> }>).find(([s]) =>
          /^[23]/.test(s),
        ) ?? [];
      if (!success?.content || !Object.values(success.content).some((m) => m.example !== undefined))
        missing.push(`${method} ${path}: ${status ?? 'no'} success response`);
    }
  }
  t.true(routes >= 40, `${routes} routes documented`);
  t.deepEqual(missing, [], 'routes without examples');
});

test('/docs serves the explorer from this server with its own CSP; nothing else under node_modules is reachable', async (t) => {
  const page = await fetch(`${cluster.app.httpUrl}/docs`);
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /\/docs\/assets\/swagger-ui-bundle\.js/);
  t.notRegex(html, /https?:\/\//, 'no asset from another origin');
  const csp = page.headers.get('content-security-policy') ?? '';
  t.regex(csp, /script-src 'self'/);
  t.notRegex(csp, /unsafe-eval/);
  for (const asset of ['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css', 'init.js']) {
    const res = await fetch(`${cluster.app.httpUrl}/docs/assets/${asset}`);
    t.is(res.status, 200, asset);
    t.true((await res.arrayBuffer()).byteLength > 100, asset);
  }
  for (const probe of ['package.json', '..%2Fpackage.json', 'index.html', 'swagger-ui-bundle.js.map']) {
    t.is((await fetch(`${cluster.app.httpUrl}/docs/assets/${probe}`)).status, 404, probe);
  }
  const icon = await fetch(`${cluster.app.httpUrl}/favicon.ico`);
  t.is(icon.status, 200);
  t.is(icon.headers.get('content-type'), 'image/svg+xml');
  t.regex(await icon.text(), /^<svg /);
});
