import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import dockerignoreModule from '@balena/dockerignore';
import { repoRoot } from '@shorts/common/paths';
import { allowed, type Endpoint, type NetworkPolicy } from './helpers/network-policy.js';
import { composeCli, interpolateAll, readEnvFile } from './helpers/compose.js';
import { strictTypeErrors } from './helpers/k8s-types.js';
import { needing } from './helpers/requirements.js';
import type { Parsed } from './helpers/parsed.js';

// Every file under deploy/ parses, and what the files promise each other holds (names, paths,
// ports, secrets). No Docker engine runs here, so the images themselves are not built: what goes
// into them is checked through the build context instead.

const run = promisify(execFile);
// The package is CommonJS (`module.exports = factory`) with types written as an ES default export:
// imported by Node, the module is the factory its types call `.default`. Whichever arrives, the factory.
const dockerignore = typeof dockerignoreModule === 'function' ? dockerignoreModule : dockerignoreModule.default;
// Looked up before any test is declared: ava wants them all declared synchronously.
const cli = await composeCli();
const deploy = path.join(repoRoot(), 'deploy');
const readFileSyncUtf8 = (f: string) => readFileSync(f, 'utf8');

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out;
}

async function yamlDocs(file: string): Promise<Parsed[]> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'), { merge: true });
  for (const d of docs) if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
  return docs.map((d) => d.toJS({ maxAliasCount: 100 })).filter((d) => d != null);
}

test('every YAML and JSON file under deploy/ parses', async (t) => {
  const files = await walk(deploy);
  const yamls = files.filter((f) => /\.ya?ml$/.test(f));
  const jsons = files.filter((f) => f.endsWith('.json'));
  t.true(yamls.length >= 10, yamls.join(', '));
  for (const f of yamls) t.true((await yamlDocs(f)).length >= 1, f);
  for (const f of jsons) t.notThrows(() => JSON.parse(readFileSyncUtf8(f)), f);
});

test('promtool accepts the scrape configuration and the alert rules', async (t) => {
  const config = await run('promtool', ['check', 'config', path.join(deploy, 'prometheus/prometheus.yml')]);
  t.regex(config.stdout + config.stderr, /SUCCESS/);
  const rules = await run('promtool', ['check', 'rules', path.join(deploy, 'prometheus/alerts.yml')]);
  t.regex(rules.stdout + rules.stderr, /SUCCESS: 8 rules found/);
});

test('the alert rules cover what operators must be woken for', async (t) => {
  const [doc] = await yamlDocs(path.join(deploy, 'prometheus/alerts.yml'));
  const alerts = doc.groups.flatMap((g: Parsed) => g.rules.map((r: Parsed) => r.alert));
  for (const a of [
    'ShortsDatabaseUnreachable',
    'ShortsNoAgentsOnline',
    'ShortsQueueWaitTooLong',
    'ShortsTaskFailureRate',
    'ShortsLeaseExpiries',
    'ShortsWebhookFailures',
    'ShortsStorageNearlyFull',
  ]) {
    t.true(alerts.includes(a), a);
  }
  for (const r of doc.groups.flatMap((g: Parsed) => g.rules)) {
    t.truthy(r.annotations?.summary, r.alert);
    t.truthy(r.labels?.severity, r.alert);
  }
});

test('Grafana provisioning: the dashboard names the provisioned datasource and lives where the provider looks', async (t) => {
  const [ds] = await yamlDocs(path.join(deploy, 'grafana/provisioning/datasources/prometheus.yml'));
  const [provider] = await yamlDocs(path.join(deploy, 'grafana/provisioning/dashboards/shorts.yml'));
  const dashboard = JSON.parse(readFileSyncUtf8(path.join(deploy, 'grafana/dashboards/shorts-farm.json')));
  const uid = ds.datasources[0].uid;
  const panels = dashboard.panels.filter((p: Parsed) => p.type !== 'row');
  t.true(panels.length >= 15);
  for (const p of panels) {
    t.is(p.datasource.uid, uid, p.title);
    t.true(p.targets.length > 0 && p.targets.every((x: Parsed) => typeof x.expr === 'string' && x.expr.length > 0), p.title);
  }
  const ids = dashboard.panels.map((p: Parsed) => p.id);
  t.is(new Set(ids).size, ids.length, 'panel ids are unique');
  // compose mounts deploy/grafana/dashboards where the provider reads.
  const [compose] = await yamlDocs(path.join(deploy, 'compose.yaml'));
  const mount = compose.services.grafana.volumes.find((v: string) => v.startsWith('./grafana/dashboards:'));
  t.is(mount.split(':')[1], provider.providers[0].options.path);
});

test('compose: a small farm of Postgres, coordinator, two agents, Prometheus and Grafana that point at each other', async (t) => {
  const [compose] = await yamlDocs(path.join(deploy, 'compose.yaml'));
  const s = compose.services;
  for (const name of ['postgres', 'coordinator', 'agent-1', 'agent-2', 'prometheus', 'grafana']) t.truthy(s[name], name);
  t.regex(s.coordinator.environment.DATABASE_URL, /@postgres:5432\//);
  // Plain-text gRPC is refused off loopback unless said on purpose; compose's network is private.
  t.like(s.coordinator.environment, { GRPC_HOST: '0.0.0.0', GRPC_INSECURE: '1' });
  t.false(
    (s.coordinator.ports ?? []).some((p: string) => p.endsWith(':50051')),
    'plain-text gRPC is not published',
  );
  for (const a of ['agent-1', 'agent-2']) {
    t.is(s[a].environment.COORDINATOR_GRPC, 'coordinator:50051');
    t.is(s[a].environment.GRPC_INSECURE, '1', 'an agent refuses plain text to another host unless told');
    t.is(s[a].environment.AGENT_NAME, a);
    t.is(s[a].build.dockerfile, 'deploy/docker/agent.Dockerfile');
  }
  t.is(s['agent-gpu'].build.dockerfile, 'deploy/docker/agent-gpu.Dockerfile');
  // Prometheus scrapes exactly the services compose starts, on the ports they serve.
  const [prom] = await yamlDocs(path.join(deploy, 'prometheus/prometheus.yml'));
  const targets = (job: string) => prom.scrape_configs.find((c: Parsed) => c.job_name === job).static_configs[0].targets;
  t.deepEqual(targets('shorts-coordinator'), ['coordinator:3000']);
  t.deepEqual(targets('shorts-agent'), [
    `agent-1:${s['agent-1'].environment.AGENT_METRICS_PORT}`,
    `agent-2:${s['agent-2'].environment.AGENT_METRICS_PORT}`,
  ]);
  for (const svc of Object.values<Parsed>(s)) {
    if (svc.build) t.true(existsSync(path.join(deploy, svc.build.context, svc.build.dockerfile)), svc.build.dockerfile);
  }
  t.true(existsSync(path.join(deploy, 'farm.env.example')));
});

test('Kubernetes: coordinator Deployment and Service, agents on GPU nodes, and every Secret they read is defined', async (t) => {
  const docs = (
    await Promise.all(
      ['namespace.yaml', 'secrets.yaml', 'coordinator.yaml', 'agents.yaml'].map((f) => yamlDocs(path.join(deploy, 'k8s', f))),
    )
  ).flat();
  const [kustomize] = await yamlDocs(path.join(deploy, 'k8s/kustomization.yaml'));
  for (const f of kustomize.resources) t.true(existsSync(path.join(deploy, 'k8s', f)), f);
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
  const secrets = new Map(byKind('Secret').map((s) => [s.metadata.name, Object.keys(s.stringData)]));
  t.deepEqual([...secrets.get('shorts-database')!], ['DATABASE_URL']);
  t.deepEqual([...secrets.get('shorts-cluster')!], ['CLUSTER_TOKEN']);
  const deployments = byKind('Deployment');
  const coordinator = deployments.find((d) => d.metadata.name === 'shorts-coordinator')!;
  const agent = deployments.find((d) => d.metadata.name === 'shorts-agent-gpu')!;
  t.truthy(coordinator && agent);
  for (const d of deployments) {
    t.deepEqual(
      d.spec.selector.matchLabels,
      Object.fromEntries(Object.entries(d.spec.template.metadata.labels).filter(([k]) => k in d.spec.selector.matchLabels)),
    );
    for (const c of d.spec.template.spec.containers)
      for (const ref of c.envFrom ?? []) t.true(secrets.has(ref.secretRef.name), ref.secretRef.name);
    const volumes = new Map((d.spec.template.spec.volumes ?? []).map((v: Parsed) => [v.name, v]));
    for (const c of d.spec.template.spec.containers) {
      for (const mount of c.volumeMounts ?? []) {
        const v: Parsed = volumes.get(mount.name);
        t.truthy(v, `${d.metadata.name}: volume ${mount.name}`);
        if (v.secret) t.true(secrets.has(v.secret.secretName), v.secret.secretName);
      }
      // Files the environment names are where a mounted secret puts them.
      for (const e of c.env ?? []) {
        if (!/^GRPC_TLS_/.test(e.name)) continue;
        const mount = (c.volumeMounts ?? []).find((m: Parsed) => e.value.startsWith(m.mountPath + '/'));
        t.truthy(mount, `${e.name}=${e.value} is not under a mounted volume`);
        const key = e.value.slice(mount.mountPath.length + 1);
        t.true(secrets.get((volumes.get(mount.name) as Parsed).secret.secretName)!.includes(key), `${e.name}: ${key}`);
      }
    }
  }
  const service = byKind('Service')[0];
  t.deepEqual(service.spec.selector, coordinator.spec.selector.matchLabels);
  t.deepEqual(
    service.spec.ports.map((p: Parsed) => p.targetPort).sort(),
    coordinator.spec.template.spec.containers[0].ports.map((p: Parsed) => p.name).sort(),
  );
  const pod = agent.spec.template.spec;
  t.is(pod.containers[0].resources.limits['nvidia.com/gpu'], 1);
  t.truthy(pod.nodeSelector);
  t.true(pod.tolerations.some((x: Parsed) => x.key === 'nvidia.com/gpu'));
  const env = Object.fromEntries(pod.containers[0].env.filter((e: Parsed) => 'value' in e).map((e: Parsed) => [e.name, e.value]));
  t.regex(env.COORDINATOR_GRPC, /^shorts-coordinator\.shorts\.svc:50051$/);
  t.regex(env.NVIDIA_DRIVER_CAPABILITIES, /video/);
  t.truthy(env.GRPC_TLS_CA, 'agents dial the coordinator over TLS');
  t.false(secrets.get('shorts-grpc-ca')!.includes('tls.key'), 'agents never get the private key');
});

test('systemd units and Dockerfiles start programs that the build produces from sources that exist', async (t) => {
  const entry = (dist: string) => path.join(repoRoot(), dist.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
  for (const unit of ['shorts-coordinator.service', 'shorts-agent.service']) {
    const text = readFileSyncUtf8(path.join(deploy, 'systemd', unit));
    const exec = text.match(/^ExecStart=\S+ (?:--\S+ )*(dist\/\S+\.js)$/m);
    t.truthy(exec, unit);
    t.true(existsSync(entry(exec![1]!)), exec![1]);
    t.regex(text, /^KillSignal=SIGTERM$/m);
  }
  t.regex(readFileSyncUtf8(path.join(deploy, 'systemd/shorts-agent.service')), /^KillMode=mixed$/m);
  for (const file of ['coordinator.Dockerfile', 'agent.Dockerfile', 'agent-gpu.Dockerfile']) {
    const text = readFileSyncUtf8(path.join(deploy, 'docker', file));
    const cmd = JSON.parse(text.match(/^CMD (\[.*\])$/m)![1]!) as string[];
    t.true(existsSync(entry(cmd.at(-1)!)), `${file}: ${cmd.at(-1)}`);
    // The overrides in package.json point at models/unity-stub, which npm ci needs before COPY . .
    t.regex(text, /COPY models\/unity-stub models\/unity-stub\n(#.*\n)*RUN npm ci/);
  }
  // A current ffmpeg decodes untrusted media (the bundled 2018 build is only a fallback).
  for (const file of ['coordinator.Dockerfile', 'agent.Dockerfile']) {
    t.regex(readFileSyncUtf8(path.join(deploy, 'docker', file)), /apt-get install[^\n]* ffmpeg /, file);
  }
  const gpu = readFileSyncUtf8(path.join(deploy, 'docker/agent-gpu.Dockerfile'));
  t.regex(gpu, /NVIDIA_DRIVER_CAPABILITIES=compute,utility,video/);
  t.regex(gpu, /--onnxruntime-node-install=cuda12/);
  t.regex(gpu, /FFMPEG_PATH=\/usr\/local\/bin\/ffmpeg/);
});

// ---- What goes into an image (issue 21, item 5) ----

const root = repoRoot();
const version: string = JSON.parse(readFileSyncUtf8(path.join(root, 'package.json'))).version;
const DOCKERFILES = ['coordinator.Dockerfile', 'agent.Dockerfile', 'agent-gpu.Dockerfile'].map((f) => `deploy/docker/${f}`);

/**
 * The files `docker build -f <dockerfile> .` sends from the repository root, as Docker chooses them:
 * the Dockerfile's own `<name>.dockerignore` when there is one (BuildKit), else the root
 * .dockerignore, matched with Docker's rules (@balena/dockerignore is a port of moby's matcher).
 */
async function buildContext(dockerfile: string): Promise<{ files: string[]; ignores: (p: string) => boolean }> {
  const own = path.join(root, `${dockerfile}.dockerignore`);
  const rules = readFileSyncUtf8(existsSync(own) ? own : path.join(root, '.dockerignore'));
  const matcher = dockerignore().add(rules);
  const exceptions = rules.split('\n').some((l) => l.trim().startsWith('!'));
  const files: string[] = [];
  const visit = async (rel: string) => {
    for (const e of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      // Docker skips an excluded folder unless an exception (!pattern) could bring part of it back.
      if (e.isDirectory()) {
        if (exceptions || !matcher.ignores(p)) await visit(p);
      } else if (!matcher.ignores(p)) files.push(p);
    }
  };
  await visit('');
  return { files, ignores: (p) => matcher.ignores(p) };
}

const SECRET_PATHS = [
  /(^|\/)\.git(\/|$)/,
  /\.env$/,
  /(^|\/)\.env(\.|$)/,
  /\.(pem|key|p12|pfx)$/,
  /(^|\/)id_(rsa|ed25519)/,
  /(^|\/)secrets\.(json|ya?ml)$/,
  /^deploy\//,
  /^data\//,
];

test('image builds: the build context holds no env file, key, generated secret, deploy/ or .git, and still holds what the Dockerfiles copy', async (t) => {
  const [compose] = await yamlDocs(path.join(deploy, 'compose.yaml'));
  for (const svc of Object.values<Parsed>(compose.services).filter((s) => s.build)) {
    t.is(path.resolve(deploy, svc.build.context), root, 'compose builds from the repository root, as the Dockerfiles say');
    t.true(DOCKERFILES.includes(svc.build.dockerfile), svc.build.dockerfile);
  }
  for (const dockerfile of DOCKERFILES) {
    const { files, ignores } = await buildContext(dockerfile);
    t.true(files.length > 100, `${dockerfile}: ${files.length} files`);
    t.deepEqual(
      files.filter((f) => SECRET_PATHS.some((re) => re.test(f))),
      [],
      dockerfile,
    );
    // Where the deploy README and the examples put secrets, whether or not this checkout has them now.
    for (const p of [
      'deploy/farm.env',
      '.env',
      'deploy/.env',
      'coordinator.env',
      '.env.production',
      'coordinator/src/.env',
      'deploy/k8s/secrets.yaml',
      'data/secrets.json',
      'data/postgres/pg_hba.conf',
      'tls.key',
      'deploy/tls/tls.key',
      'certs/server.pem',
      '.git/config',
    ]) {
      t.true(ignores(p), `${dockerfile}: ${p} would be copied into the image`);
    }
    const withPrivateKeys = files.filter((f) => {
      const stat = statSync(path.join(root, f), { throwIfNoEntry: false });
      return stat?.isFile() && stat.size < 2_000_000 && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(readFileSyncUtf8(path.join(root, f)));
    });
    t.deepEqual(withPrivateKeys, [], `${dockerfile}: private keys in the build context`);
    // Still buildable: every path the Dockerfile copies by name is there, and so is the program it starts.
    const text = readFileSyncUtf8(path.join(root, dockerfile));
    for (const [, args] of text.matchAll(/^COPY (?!--from)(.+)$/gm)) {
      for (const source of args!
        .trim()
        .split(/\s+/)
        .slice(0, -1)
        .filter((s) => s !== '.')) {
        t.true(
          files.some((f) => f === source || f.startsWith(`${source}/`)),
          `${dockerfile}: COPY ${source}`,
        );
      }
    }
    const cmd = JSON.parse(text.match(/^CMD (\[.*\])$/m)![1]!) as string[];
    const entry = cmd
      .at(-1)!
      .replace(/^dist\//, '')
      .replace(/\.js$/, '.ts');
    t.true(files.includes(entry), `${dockerfile}: ${entry}`);
  }
});

// ---- Compose: secrets by interpolation, hardening (items 5 and 12) ----

const REQUIRED = ['CLUSTER_TOKEN', 'JWT_SECRET', 'URL_SIGNING_SECRET', 'POSTGRES_PASSWORD', 'GRAFANA_ADMIN_PASSWORD'];
const AGENT_SERVICES = ['agent-1', 'agent-2', 'agent-gpu'];
const AGENT_ENV = [
  'COORDINATOR_GRPC',
  'CLUSTER_TOKEN',
  'GRPC_INSECURE',
  'GRPC_TLS_CA',
  'MAX_CONCURRENT_TASKS',
  'AGENT_METRICS_PORT',
  'AGENT_NAME',
  'LOG_LEVEL',
];
/** A distinct value for every variable of the example env file, so a value found somewhere tells whose it is. */
const distinctSecrets = () =>
  Object.fromEntries(Object.keys(readEnvFile(path.join(deploy, 'farm.env.example'))).map((k) => [k, `${k.toLowerCase()}-${randomUUID()}`]));

function checkSecretsPerService(t: ExecutionContext, services: Record<string, Parsed>, env: Record<string, string>) {
  for (const name of AGENT_SERVICES) {
    const agentEnv: Record<string, string> = services[name].environment;
    t.deepEqual(
      Object.keys(agentEnv).filter((k) => !AGENT_ENV.includes(k)),
      [],
      `${name} gets only what an agent needs`,
    );
    t.is(agentEnv.CLUSTER_TOKEN, env.CLUSTER_TOKEN, name);
    for (const secret of REQUIRED.filter((k) => k !== 'CLUSTER_TOKEN')) {
      t.false(
        Object.values(agentEnv).some((v) => String(v).includes(env[secret]!)),
        `${name} holds ${secret}`,
      );
    }
  }
  const coordinator = services.coordinator.environment;
  t.like(coordinator, { CLUSTER_TOKEN: env.CLUSTER_TOKEN, JWT_SECRET: env.JWT_SECRET, URL_SIGNING_SECRET: env.URL_SIGNING_SECRET });
  t.is(new URL(coordinator.DATABASE_URL).password, env.POSTGRES_PASSWORD);
  t.is(services.postgres.environment.POSTGRES_PASSWORD, env.POSTGRES_PASSWORD);
  t.is(services.grafana.environment.GF_SECURITY_ADMIN_PASSWORD, env.GRAFANA_ADMIN_PASSWORD);
}

test('compose: each service gets only the secrets its environment names (agents: CLUSTER_TOKEN), and a missing secret or password stops it', async (t) => {
  const [compose] = await yamlDocs(path.join(deploy, 'compose.yaml'));
  const text = readFileSyncUtf8(path.join(deploy, 'compose.yaml'))
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'))
    .join('\n');
  const example = readEnvFile(path.join(deploy, 'farm.env.example'));
  // No service reads an env file whole: that is how agents used to get JWT_SECRET.
  for (const [name, svc] of Object.entries<Parsed>(compose.services)) t.is(svc.env_file, undefined, name);
  // Every variable compose insists on is in the example, and no password has a default.
  const required = [...new Set([...text.matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]!))].sort();
  t.deepEqual(required, [...REQUIRED].sort());
  for (const v of required) t.true(v in example, `farm.env.example lacks ${v}`);
  t.notRegex(text, /\$\{(?:[A-Z_]*(?:PASSWORD|SECRET|TOKEN)[A-Z_]*)(?::?-)/, 'a secret or password with a default');

  const env = distinctSecrets();
  checkSecretsPerService(t, interpolateAll(compose, env).services, env);
  for (const v of REQUIRED) {
    const { [v]: _left, ...without } = env;
    t.throws(() => interpolateAll(compose, without), { message: new RegExp(`required variable ${v} is missing`) }, `without ${v}`);
    t.throws(
      () => interpolateAll(compose, { ...env, [v]: '' }),
      { message: new RegExp(`required variable ${v} is missing`) },
      `${v} empty`,
    );
  }
});

needing({ tools: { 'a compose CLI (docker compose or docker-compose)': Boolean(cli) } })(
  "compose CLI: `config` refuses to start without the secrets and passwords, agents get none of the coordinator's, and every service keeps its resource limits",
  async (t) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'compose-config-'));
    try {
      // compose 1.x predates the compose spec's top-level `name`; everything else it checks as v2 does.
      const file = path.join(dir, 'compose.yaml');
      const text = readFileSyncUtf8(path.join(deploy, 'compose.yaml'));
      writeFileSync(file, cli!.legacy ? text.replace(/^name: .*$/m, '') : text);
      const config = (envFile: string) =>
        run(cli!.command, [...cli!.args, '--project-directory', deploy, '--env-file', envFile, '-f', file, 'config'], {
          env: { PATH: process.env.PATH },
          timeout: 60_000,
        });
      writeFileSync(path.join(dir, 'empty.env'), '');
      const refused = await t.throwsAsync(config(path.join(dir, 'empty.env')));
      t.regex(
        String((refused as Error & { stderr?: string }).stderr),
        /(POSTGRES_PASSWORD|GRAFANA_ADMIN_PASSWORD|CLUSTER_TOKEN|JWT_SECRET|URL_SIGNING_SECRET)/,
      );
      const env = distinctSecrets();
      writeFileSync(
        path.join(dir, 'farm.env'),
        Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join('\n') + '\n',
      );
      const { stdout } = await config(path.join(dir, 'farm.env'));
      const services = parseYaml(stdout).services;
      // The gpu profile is left out by compose v2's `config`; the CPU agents are enough here.
      if (!services['agent-gpu']) services['agent-gpu'] = services['agent-1'];
      checkSecretsPerService(t, services, env);
      // The limits are keys the CLI knows and keeps (an unknown key would have failed `config`).
      checkResourceLimits(t, services);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

/** A tag that names a release (a digit, a dot, a digit) or a digest; never `latest` or a bare major. */
function pinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = image.match(/:([^/:@]+)$/)?.[1];
  return Boolean(tag) && tag !== 'latest' && /\d+\.\d+/.test(tag!);
}

/** Compose's byte values (`mem_limit: 2g`, or the bytes compose v2's `config` writes) in bytes; NaN when unreadable. */
function composeBytes(value: unknown): number {
  const m = String(value)
    .trim()
    .match(/^(\d+(?:\.\d+)?)\s*([kmg]?)b?$/i);
  if (!m) return Number.NaN;
  return Number(m[1]) * 1024 ** ['', 'k', 'm', 'g'].indexOf(m[2]!.toLowerCase());
}

/** CPU, memory and process limits on every service, as a host needs them: set, finite and not "unlimited". */
function checkResourceLimits(t: ExecutionContext, services: Record<string, Parsed>) {
  for (const [name, svc] of Object.entries(services)) {
    const cpus = Number(svc.cpus);
    t.true(cpus > 0 && cpus <= 16, `${name}: cpus ${svc.cpus}`);
    const memory = composeBytes(svc.mem_limit);
    t.true(memory >= 256 * 1024 ** 2 && memory <= 64 * 1024 ** 3, `${name}: mem_limit ${svc.mem_limit}`);
    // 0 and -1 mean no limit to Docker.
    t.true(Number.isInteger(svc.pids_limit) && svc.pids_limit >= 64 && svc.pids_limit <= 8192, `${name}: pids_limit ${svc.pids_limit}`);
  }
}

test('compose: every container has a read-only root, scratch on tmpfs, no capabilities, no privilege gain, CPU, memory and process limits, and a pinned image', async (t) => {
  const [compose] = await yamlDocs(path.join(deploy, 'compose.yaml'));
  for (const [name, svc] of Object.entries<Parsed>(compose.services)) {
    t.is(svc.read_only, true, name);
    t.true(
      (svc.tmpfs ?? []).some((m: string) => m === '/tmp' || m.startsWith('/tmp:')),
      `${name}: /tmp on tmpfs`,
    );
    t.deepEqual(svc.cap_drop, ['ALL'], name);
    t.is(svc.cap_add, undefined, name);
    t.not(svc.privileged, true, name);
    t.true((svc.security_opt ?? []).includes('no-new-privileges:true'), name);
    t.true(pinned(svc.image), `${name}: ${svc.image}`);
    if (svc.build) t.is(svc.image.split(':').at(-1), version, `${name}: our images carry package.json's version`);
  }
  checkResourceLimits(t, compose.services);
  // The Postgres image's entrypoint would need capabilities to chown and switch users as root.
  t.is(compose.services.postgres.user, 'postgres');
});

test('Dockerfiles: every base image is pinned to a release', (t) => {
  for (const dockerfile of DOCKERFILES) {
    const text = readFileSyncUtf8(path.join(root, dockerfile));
    const args = Object.fromEntries([...text.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const stages = new Set([...text.matchAll(/^FROM \S+ AS (\S+)$/gim)].map((m) => m[1]!));
    const images = [...text.matchAll(/^FROM (\S+)/gm), ...text.matchAll(/--from=(\S+)/g)]
      .map((m) => m[1]!.replace(/^\$\{(\w+)\}$/, (_x, a: string) => args[a] ?? ''))
      .filter((image) => !stages.has(image));
    t.true(images.length >= 2, dockerfile);
    for (const image of images) t.true(pinned(image), `${dockerfile}: ${image}`);
  }
});

// ---- Kubernetes: schemas, hardening, who may talk to whom (item 12) ----

async function k8sResources(): Promise<Parsed[]> {
  const [kustomize] = await yamlDocs(path.join(deploy, 'k8s/kustomization.yaml'));
  return (await Promise.all(kustomize.resources.map((f: string) => yamlDocs(path.join(deploy, 'k8s', f))))).flat();
}

/** The kubernetes-models class of a manifest (the Kubernetes OpenAPI schemas, compiled for ajv). */
async function modelOf(doc: Parsed): Promise<{ validate(): void }> {
  const [group, v] = doc.apiVersion.includes('/') ? doc.apiVersion.split('/') : ['', doc.apiVersion];
  const mod = await import(`kubernetes-models/${group ? `${group}/` : ''}${v}/${doc.kind}`);
  return new mod[doc.kind](doc);
}

test('Kubernetes: every manifest validates against the Kubernetes schemas', async (t) => {
  const docs = await k8sResources();
  t.true(docs.length >= 12, `${docs.length} manifests`);
  for (const doc of docs) {
    const model = await modelOf(doc);
    t.notThrows(() => model.validate(), `${doc.kind} ${doc.metadata?.name}`);
  }
  // The validator does look: a hardening field of the wrong shape is refused.
  const broken = structuredClone(docs.find((d) => d.kind === 'Deployment'));
  broken.spec.template.spec.containers[0].securityContext.capabilities.drop = 'ALL';
  await t.throwsAsync(async () => (await modelOf(broken)).validate(), { message: /capabilities\/drop/ });
});

test('Kubernetes: no manifest has a field the Kubernetes API does not know (strict, as kubeconform -strict)', async (t) => {
  const docs = await k8sResources();
  const misspelt = structuredClone(docs.find((d) => d.kind === 'Deployment'));
  const sc = misspelt.spec.template.spec.containers[0].securityContext;
  sc.allowPrivilegeEscalaton = sc.allowPrivilegeEscalation;
  delete sc.allowPrivilegeEscalation;
  const errors = strictTypeErrors([...docs, misspelt]);
  docs.forEach((doc, i) => t.deepEqual(errors[i], [], `${doc.kind} ${doc.metadata?.name}`));
  t.regex(errors.at(-1)!.join('\n'), /allowPrivilegeEscalaton/, 'the check does look');
});

const WRITABLE_ENV = ['DATA_DIR', 'AGENT_WORK_DIR', 'XDG_CACHE_HOME', 'TMPDIR'];

test('Kubernetes: every container has a read-only root, no privilege gain, no capabilities, RuntimeDefault seccomp, no service-account token, CPU and ephemeral-storage limits, a pinned image', async (t) => {
  const docs = await k8sResources();
  const workloads = docs.filter((d) => d.spec?.template?.spec);
  t.true(workloads.length >= 2);
  // The API server refuses a pod of the namespace that would break the restricted profile.
  const namespace = docs.find((d) => d.kind === 'Namespace' && d.metadata.name === 'shorts');
  t.is(namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  for (const w of workloads) t.is(w.metadata.namespace, 'shorts', w.metadata.name);
  for (const w of workloads) {
    const pod = w.spec.template.spec;
    const where = w.metadata.name;
    t.is(pod.automountServiceAccountToken, false, where);
    t.is(pod.securityContext?.runAsNonRoot, true, where);
    const volumes = new Map<string, Parsed>((pod.volumes ?? []).map((v: Parsed) => [v.name, v]));
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
      const sc = c.securityContext ?? {};
      const name = `${where}/${c.name}`;
      t.is(sc.readOnlyRootFilesystem, true, name);
      t.is(sc.allowPrivilegeEscalation, false, name);
      t.not(sc.privileged, true, name);
      t.deepEqual(sc.capabilities?.drop, ['ALL'], name);
      t.is(sc.capabilities?.add, undefined, name);
      t.is((sc.seccompProfile ?? pod.securityContext?.seccompProfile)?.type, 'RuntimeDefault', name);
      for (const r of ['cpu', 'memory', 'ephemeral-storage']) t.truthy(c.resources?.limits?.[r], `${name}: limits.${r}`);
      // With the root read-only, every place the program writes is an emptyDir.
      const scratch = (c.volumeMounts ?? [])
        .filter((m: Parsed) => volumes.get(m.name)?.emptyDir && !m.readOnly)
        .map((m: Parsed) => m.mountPath as string);
      t.true(scratch.includes('/tmp'), `${name}: /tmp`);
      for (const e of (c.env ?? []).filter((x: Parsed) => WRITABLE_ENV.includes(x.name))) {
        t.true(
          scratch.some((m: string) => e.value === m || e.value.startsWith(`${m}/`)),
          `${name}: ${e.name}=${e.value} is not on an emptyDir`,
        );
      }
      t.true(pinned(c.image), `${name}: ${c.image}`);
      t.is(c.image.split(':').at(-1), version, `${name}: our images carry package.json's version`);
    }
  }
});

test('Kubernetes: an agent can read the cluster token and the CA, nothing that signs sessions or URLs and no database credentials', async (t) => {
  const docs = await k8sResources();
  const secrets = new Map<string, string[]>(
    docs.filter((d) => d.kind === 'Secret').map((s) => [s.metadata.name, Object.keys(s.stringData ?? s.data ?? {})]),
  );
  const readable = (d: Parsed) =>
    d.spec.template.spec.containers
      .flatMap((c: Parsed) => [
        ...(c.envFrom ?? [])
          .filter((r: Parsed) => r.secretRef)
          .flatMap((r: Parsed) => secrets.get(r.secretRef.name)!.map((k) => `${r.secretRef.name}/${k}`)),
        ...(c.env ?? [])
          .filter((e: Parsed) => e.valueFrom?.secretKeyRef)
          .map((e: Parsed) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`),
        ...(c.volumeMounts ?? [])
          .map((m: Parsed) => d.spec.template.spec.volumes.find((v: Parsed) => v.name === m.name)?.secret?.secretName)
          .filter(Boolean)
          .flatMap((name: string) => secrets.get(name)!.map((k) => `${name}/${k}`)),
      ])
      .sort();
  const deployments = docs.filter((d) => d.kind === 'Deployment');
  const agents = deployments.filter((d) => d.spec.template.metadata.labels['app.kubernetes.io/name'] === 'shorts-agent');
  t.true(agents.length >= 1);
  for (const a of agents) t.deepEqual(readable(a), ['shorts-cluster/CLUSTER_TOKEN', 'shorts-grpc-ca/ca.crt'], a.metadata.name);
  const coordinator = deployments.find((d) => d.metadata.name === 'shorts-coordinator');
  t.true(readable(coordinator).includes('shorts-signing/JWT_SECRET'), 'the check sees what a pod reads');
});

test('Kubernetes NetworkPolicies: only agents reach gRPC, only coordinators reach Postgres, the API is open, agents reach no private address', async (t) => {
  const docs = await k8sResources();
  const policies = docs.filter((d) => d.kind === 'NetworkPolicy') as NetworkPolicy[];
  const deployment = (name: string) => docs.find((d) => d.kind === 'Deployment' && d.metadata.name === name);
  const podOf = (d: Parsed, ip: string): Endpoint => ({
    namespace: d.metadata.namespace,
    labels: d.spec.template.metadata.labels,
    ip,
    ports: Object.fromEntries(
      d.spec.template.spec.containers.flatMap((c: Parsed) => (c.ports ?? []).map((p: Parsed) => [p.name, p.containerPort])),
    ),
  });
  const coordinator = podOf(deployment('shorts-coordinator'), '10.0.1.10');
  const agent = podOf(deployment('shorts-agent-gpu'), '10.0.2.20');
  const postgres: Endpoint = { namespace: 'shorts', labels: { 'app.kubernetes.io/name': 'postgres' }, ip: '10.0.3.30' };
  const debugPod: Endpoint = { namespace: 'shorts', labels: { app: 'debug' }, ip: '10.0.4.40' };
  const ingressController: Endpoint = {
    namespace: 'ingress-nginx',
    labels: { 'app.kubernetes.io/name': 'ingress-nginx' },
    ip: '10.0.5.50',
  };
  const prometheus: Endpoint = { namespace: 'monitoring', labels: { app: 'prometheus' }, ip: '10.0.6.60' };
  const dns: Endpoint = { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' }, ip: '10.96.0.10' };
  const client: Endpoint = { ip: '203.0.113.7' };
  const externalPostgres: Endpoint = { ip: '10.20.30.40' };
  const metadataService: Endpoint = { ip: '169.254.169.254' };
  const publicSource: Endpoint = { ip: '93.184.216.34' };
  const can = (from: Endpoint, to: Endpoint, port: number, protocol = 'TCP') => allowed(policies, from, to, port, protocol);

  t.true(allowed([], debugPod, coordinator, 50051), 'without policies everything is open (the evaluator does not deny by itself)');
  t.true(can(agent, coordinator, 50051), 'agent -> gRPC');
  for (const [who, from] of [
    ['a pod of the namespace', debugPod],
    ['another namespace', ingressController],
    ['a client', client],
    ['a coordinator', coordinator],
  ] as const) {
    t.false(can(from, coordinator, 50051), `${who} -> gRPC`);
  }
  for (const [who, from] of [
    ['a client', client],
    ['the ingress controller', ingressController],
    ['Prometheus', prometheus],
    ['an agent', agent],
  ] as const) {
    t.true(can(from, coordinator, 3000), `${who} -> API`);
  }
  t.true(can(coordinator, postgres, 5432), 'coordinator -> Postgres');
  for (const [who, from] of [
    ['an agent', agent],
    ['a pod of the namespace', debugPod],
    ['another namespace', ingressController],
    ['a client', client],
  ] as const) {
    t.false(can(from, postgres, 5432), `${who} -> Postgres`);
  }
  t.true(can(coordinator, externalPostgres, 5432), 'coordinator -> a Postgres outside the cluster');
  t.false(can(agent, externalPostgres, 5432), 'agent -> a Postgres outside the cluster');
  t.false(can(agent, metadataService, 80), 'agent -> cloud metadata');
  t.true(can(agent, publicSource, 443), 'agent -> a public source URL');
  t.true(can(agent, dns, 53, 'UDP'), 'agent -> DNS');
  t.true(can(prometheus, agent, 9464), 'Prometheus -> agent metrics');
  t.false(can(client, agent, 9464), 'a client -> agent metrics');
  t.false(can(coordinator, debugPod, 8080), 'nothing reaches an unlisted pod of the namespace');
});
