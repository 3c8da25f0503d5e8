import test from 'ava';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { repoRoot } from '@shorts/common/paths';
import { startCluster, waitFor, type AgentProcess, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { makeTalkVideo, TALK } from './helpers/talk-video.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';
import { fliteAvailable } from './transcribe-synth.js';
import { expectedOnnxProvider } from './helpers/onnx-provider.js';
import type { Parsed } from './helpers/parsed.js';

// A real Prometheus (Debian's package) scrapes a running coordinator and agent with deploy/'s
// scrape config and alert rules; every dashboard and alert expression must evaluate and name only
// metrics the service exports, and a job run here must show in the dashboard.

const run = promisify(execFile);
const deploy = path.join(repoRoot(), 'deploy');

let cluster: TestCluster;
let agent: AgentProcess;
let agentMetricsPort: number;
let prometheus: ChildProcess | undefined;
let promUrl: string;
let media: MediaServer;

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function promQuery(expr: string): Promise<{
  status: string;
  error?: string;
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}> {
  const res = await fetch(`${promUrl}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  return res.json() as Promise<Parsed>;
}

/** Grafana's interval variables, as Grafana would fill them for a 1 s scrape and a short range. */
const grafanaVars = (expr: string) =>
  expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '10m').replaceAll('$__interval', '5s');

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/** Metric names an expression selects: identifiers that are not functions, keywords, labels or numbers. */
export function metricNamesIn(expr: string): string[] {
  let s = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
  s = s.replace(/\{[^}]*\}/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = s[m.index! - 1] ?? '';
    if (/[0-9.]/.test(before)) continue; // 1e3, 0.5, 5m
    if (
      s
        .slice(m.index! + m[0].length)
        .trimStart()
        .startsWith('(')
    )
      continue; // function or aggregation
    if (PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Metric names in a /metrics exposition: every sample's name, and every declared family (GPU
 *  gauges are declared on every agent but have samples only where nvidia-smi answers). */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const sample = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/);
    if (sample) names.add(sample[1]!);
    const declared = line.match(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)/);
    if (declared) {
      names.add(declared[1]!);
      if (declared[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(declared[1] + suffix);
    }
  }
  return names;
}

async function dashboardExprs(): Promise<Array<{ panel: string; expr: string }>> {
  const dashboard = JSON.parse(await readFile(path.join(deploy, 'grafana/dashboards/shorts-farm.json'), 'utf8'));
  return dashboard.panels
    .filter((p: Parsed) => p.targets)
    .flatMap((p: Parsed) => p.targets.map((t: Parsed) => ({ panel: p.title, expr: t.expr })));
}

async function alertExprs(): Promise<Array<{ alert: string; expr: string }>> {
  const rules = parse(await readFile(path.join(deploy, 'prometheus/alerts.yml'), 'utf8'));
  return rules.groups.flatMap((g: Parsed) => g.rules.map((r: Parsed) => ({ alert: r.alert, expr: r.expr })));
}

test.before(async () => {
  if (!fliteAvailable()) throw new Error('flite is required (apt-get install flite)');
  cluster = await startCluster('metrics_prometheus', { webhookRetryDelaySec: 1 });
  agent = await cluster.startAgent({ AGENT_METRICS_PORT: '0', AGENT_METRICS_HOST: '127.0.0.1' });
  agentMetricsPort = JSON.parse(await agent.waitForLog(/"metrics listening"/)).port;
  const talk = await makeTalkVideo(cluster.dataDir, { phrases: TALK.slice(0, 2) });
  media = await serveFiles({ 'talk.mp4': talk.videoPath });

  // deploy/'s scrape config, pointed at this test's ports, scraping every second.
  const config = parse(await readFile(path.join(deploy, 'prometheus/prometheus.yml'), 'utf8'));
  config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' };
  config.rule_files = [path.join(deploy, 'prometheus/alerts.yml')];
  const job = (name: string) => config.scrape_configs.find((c: Parsed) => c.job_name === name);
  job('shorts-coordinator').static_configs = [{ targets: [new URL(cluster.app.httpUrl).host] }];
  job('shorts-agent').static_configs = [{ targets: [`127.0.0.1:${agentMetricsPort}`] }];
  const configPath = path.join(cluster.dataDir, 'prometheus.yml');
  await writeFile(configPath, stringify(config));
  await run('promtool', ['check', 'config', configPath]);

  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${path.join(cluster.dataDir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const promLog: string[] = [];
  prometheus.stderr!.on('data', (b) => promLog.push(String(b)));
  await waitFor(
    async () => {
      if (prometheus!.exitCode !== null) throw new Error(`prometheus exited: ${promLog.join('')}`);
      return (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok;
    },
    60_000,
    'prometheus ready',
  );
});

test.after.always(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus!.once('exit', r));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await media?.close();
  await cluster?.close();
});

test.serial("promtool accepts deploy/'s rules; Prometheus scrapes the coordinator and the agent", async (t) => {
  const rules = await run('promtool', ['check', 'rules', path.join(deploy, 'prometheus/alerts.yml')]);
  t.regex(rules.stdout, /SUCCESS/);
  const targets = await waitFor(
    async () => {
      const body = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as Parsed;
      const active = body.data.activeTargets as Array<{ labels: { job: string }; health: string; lastError: string }>;
      return active.length === 2 && active.every((a) => a.health === 'up') ? active : undefined;
    },
    30_000,
    'both targets up',
  );
  t.deepEqual(targets.map((a) => a.labels.job).sort(), ['shorts-agent', 'shorts-coordinator']);
});

test.serial(
  'a job and a render run here show in the dashboard; every dashboard and alert expression evaluates on exported metrics only',
  async (t) => {
    const { key } = await cluster.org({ plan: 'pro', credits: 10 });
    const hooks = await startWebhookReceiver();
    const created = await cluster.api('POST', '/api/jobs', {
      key,
      body: {
        functionName: 'VideoShorts',
        fileUrl: media.url('talk.mp4'),
        webhook: hooks.url(),
        options: { predefinedShorts: [{ title: 'Start', start: 0, end: 3 }] },
      },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const job = await waitFor(
      async () => {
        const r = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
        return ['COMPLETED', 'FAILED'].includes(r.body.status) ? r.body : undefined;
      },
      240_000,
      'job',
    );
    t.is(job.status, 'COMPLETED', job.message);
    const render = await cluster.api('POST', '/api/render', {
      key,
      body: { id: job.id, target: 0, preset: 'VIRAL', size: { width: 180, height: 320 } },
    });
    t.is(render.status, 201, JSON.stringify(render.body));
    const rendered = await waitFor(
      async () => {
        const r = await cluster.api('GET', `/api/render/${render.body.renderId}`, { key });
        return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
      },
      180_000,
      'render',
    );
    t.is(rendered.type, 'done', JSON.stringify(rendered));
    await waitFor(async () => hooks.received.length > 0, 30_000, 'webhook');
    await hooks.close();

    const exported = new Set([
      ...exportedNames(await (await fetch(`${cluster.app.httpUrl}/metrics`)).text()),
      ...exportedNames(await (await fetch(`http://127.0.0.1:${agentMetricsPort}/metrics`)).text()),
      'up', // Prometheus's own, per target
    ]);
    // No per-task, per-job or per-organization label anywhere.
    const text = await (await fetch(`${cluster.app.httpUrl}/metrics`)).text();
    t.notRegex(text, /(task_id|job_id|organization_id|org)="/);
    t.notRegex(text, new RegExp(job.id));
    // The job's one short was reframed: its quality figure observed once in each histogram.
    t.regex(text, /^shorts_reframe_speaker_on_screen_ratio_count 1$/m);
    t.regex(text, /^shorts_reframe_face_in_window_ratio_count 1$/m);
    t.is(typeof job.data.shorts[0].reframe.quality.speakerOnScreenShare, 'number');

    // The throughput panel shows the tasks just finished once Prometheus has scraped them.
    const dash = await dashboardExprs();
    const throughput = dash.find((d) => d.panel === 'Task throughput (completed per minute)')!;
    const series = await waitFor(
      async () => {
        const r = await promQuery(grafanaVars(throughput.expr));
        const byType = Object.fromEntries((r.data?.result ?? []).map((s) => [s.metric.type, Number(s.value[1])]));
        return byType['analyze-video']! > 0 && byType['render-short']! > 0 ? byType : undefined;
      },
      30_000,
      'throughput panel non-zero',
    );
    t.log('throughput per minute', series);
    const completed = await promQuery(grafanaVars(dash.find((d) => d.panel === 'Tasks completed (range)')!.expr));
    t.true(Number(completed.data!.result[0]!.value[1]) >= 2, JSON.stringify(completed));
    // Agents, their encoder and slots, render speed and analysis speed come from this farm too.
    const info = await promQuery('shorts_agent_info');
    const provider = (await expectedOnnxProvider()).toLowerCase();
    t.deepEqual(
      info.data!.result.map((s) => [s.metric.agent, s.metric.encoder, s.metric.onnx_provider, s.metric.face_detector_provider]),
      [[agent.name, 'x264', provider, provider]],
    );
    const fpsExpr = grafanaVars(dash.find((d) => d.panel === 'Render frames per second')!.expr);
    await waitFor(
      async () => (await promQuery(fpsExpr)).data?.result.some((s) => s.metric.encoder === 'x264' && Number(s.value[1]) > 0),
      15_000,
      'render fps',
    );
    const rtfExpr = grafanaVars(dash.find((d) => d.panel === 'Analysis real-time factor')!.expr);
    const rtf = await promQuery(rtfExpr);
    t.true(
      rtf.data!.result.some((s) => Number(s.value[1]) > 0),
      JSON.stringify(rtf.data),
    );

    const exprs = [
      ...dash.map((d) => ({ where: `panel "${d.panel}"`, expr: grafanaVars(d.expr) })),
      ...(await alertExprs()).map((a) => ({ where: `alert ${a.alert}`, expr: a.expr })),
    ];
    t.true(exprs.length >= 35, `${exprs.length} expressions`);
    for (const { where, expr } of exprs) {
      const r = await promQuery(expr);
      t.is(r.status, 'success', `${where}: ${r.error}`);
      const names = metricNamesIn(expr);
      t.true(names.length > 0, `${where} names no metric: ${expr}`);
      for (const name of names) t.true(exported.has(name), `${where} uses ${name}, which neither the coordinator nor the agent exports`);
    }

    // Prometheus itself evaluated the alert rules without error.
    const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as Parsed;
    const loaded = rules.data.groups.flatMap((g: Parsed) => g.rules);
    t.is(loaded.length, 8);
    t.true(
      loaded.some((r: Parsed) => r.name === 'ShortsDatabaseUnreachable'),
      'an unreadable database has an alert of its own',
    );
    for (const r of loaded) t.not(r.health, 'err', `${r.name}: ${r.lastError}`);
    // On a healthy farm with an agent online, no alert fires.
    const firing = loaded.filter((r: Parsed) => r.state === 'firing').map((r: Parsed) => r.name);
    t.deepEqual(firing, []);
  },
);

test('metric names are read out of PromQL without functions, labels, keywords or numbers', (t) => {
  t.deepEqual(
    metricNamesIn('histogram_quantile(0.95, sum by (type, le) (rate(shorts_task_queue_wait_seconds_bucket{type="render-short"}[5m])))'),
    ['shorts_task_queue_wait_seconds_bucket'],
  );
  t.deepEqual(metricNamesIn('a_total / ignoring(state) b{state="size"} < 1e3 and on (x) c offset 5m'), ['a_total', 'b', 'c']);
  t.deepEqual(metricNamesIn('sum(up{job=~"shorts-.*"}) by (job) == bool 0'), ['up']);
});
