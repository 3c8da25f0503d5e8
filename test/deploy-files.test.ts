import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../common/src/paths.js';

// Every file under deploy/ parses, and what the files promise each other holds (names, paths,
// ports, secrets). Docker cannot run here, so the images themselves are not built.

const run = promisify(execFile);
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

async function yamlDocs(file: string): Promise<any[]> {
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
  const alerts = doc.groups.flatMap((g: any) => g.rules.map((r: any) => r.alert));
  for (const a of ['ShortsDatabaseUnreachable', 'ShortsNoAgentsOnline', 'ShortsQueueWaitTooLong', 'ShortsTaskFailureRate', 'ShortsLeaseExpiries', 'ShortsWebhookFailures', 'ShortsStorageNearlyFull']) {
    t.true(alerts.includes(a), a);
  }
  for (const r of doc.groups.flatMap((g: any) => g.rules)) {
    t.truthy(r.annotations?.summary, r.alert);
    t.truthy(r.labels?.severity, r.alert);
  }
});

test('Grafana provisioning: the dashboard names the provisioned datasource and lives where the provider looks', async (t) => {
  const [ds] = await yamlDocs(path.join(deploy, 'grafana/provisioning/datasources/prometheus.yml'));
  const [provider] = await yamlDocs(path.join(deploy, 'grafana/provisioning/dashboards/shorts.yml'));
  const dashboard = JSON.parse(readFileSyncUtf8(path.join(deploy, 'grafana/dashboards/shorts-farm.json')));
  const uid = ds.datasources[0].uid;
  const panels = dashboard.panels.filter((p: any) => p.type !== 'row');
  t.true(panels.length >= 15);
  for (const p of panels) {
    t.is(p.datasource.uid, uid, p.title);
    t.true(p.targets.length > 0 && p.targets.every((x: any) => typeof x.expr === 'string' && x.expr.length > 0), p.title);
  }
  const ids = dashboard.panels.map((p: any) => p.id);
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
  t.false((s.coordinator.ports ?? []).some((p: string) => p.endsWith(':50051')), 'plain-text gRPC is not published');
  for (const a of ['agent-1', 'agent-2']) {
    t.is(s[a].environment.COORDINATOR_GRPC, 'coordinator:50051');
    t.is(s[a].environment.AGENT_NAME, a);
    t.is(s[a].build.dockerfile, 'deploy/docker/agent.Dockerfile');
  }
  t.is(s['agent-gpu'].build.dockerfile, 'deploy/docker/agent-gpu.Dockerfile');
  // Prometheus scrapes exactly the services compose starts, on the ports they serve.
  const [prom] = await yamlDocs(path.join(deploy, 'prometheus/prometheus.yml'));
  const targets = (job: string) => prom.scrape_configs.find((c: any) => c.job_name === job).static_configs[0].targets;
  t.deepEqual(targets('shorts-coordinator'), ['coordinator:3000']);
  t.deepEqual(targets('shorts-agent'), [`agent-1:${s['agent-1'].environment.AGENT_METRICS_PORT}`, `agent-2:${s['agent-2'].environment.AGENT_METRICS_PORT}`]);
  for (const svc of Object.values<any>(s)) {
    if (svc.build) t.true(existsSync(path.join(deploy, svc.build.context, svc.build.dockerfile)), svc.build.dockerfile);
  }
  t.true(existsSync(path.join(deploy, 'farm.env.example')));
});

test('Kubernetes: coordinator Deployment and Service, agents on GPU nodes, and every Secret they read is defined', async (t) => {
  const docs = (await Promise.all(['namespace.yaml', 'secrets.yaml', 'coordinator.yaml', 'agents.yaml'].map((f) => yamlDocs(path.join(deploy, 'k8s', f))))).flat();
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
    t.deepEqual(d.spec.selector.matchLabels, Object.fromEntries(Object.entries(d.spec.template.metadata.labels).filter(([k]) => k in d.spec.selector.matchLabels)));
    for (const c of d.spec.template.spec.containers) for (const ref of c.envFrom ?? []) t.true(secrets.has(ref.secretRef.name), ref.secretRef.name);
    const volumes = new Map((d.spec.template.spec.volumes ?? []).map((v: any) => [v.name, v]));
    for (const c of d.spec.template.spec.containers) {
      for (const mount of c.volumeMounts ?? []) {
        const v: any = volumes.get(mount.name);
        t.truthy(v, `${d.metadata.name}: volume ${mount.name}`);
        if (v.secret) t.true(secrets.has(v.secret.secretName), v.secret.secretName);
      }
      // Files the environment names are where a mounted secret puts them.
      for (const e of c.env ?? []) {
        if (!/^GRPC_TLS_/.test(e.name)) continue;
        const mount = (c.volumeMounts ?? []).find((m: any) => e.value.startsWith(m.mountPath + '/'));
        t.truthy(mount, `${e.name}=${e.value} is not under a mounted volume`);
        const key = e.value.slice(mount.mountPath.length + 1);
        t.true(secrets.get((volumes.get(mount.name) as any).secret.secretName)!.includes(key), `${e.name}: ${key}`);
      }
    }
  }
  const service = byKind('Service')[0];
  t.deepEqual(service.spec.selector, coordinator.spec.selector.matchLabels);
  t.deepEqual(service.spec.ports.map((p: any) => p.targetPort).sort(), coordinator.spec.template.spec.containers[0].ports.map((p: any) => p.name).sort());
  const pod = agent.spec.template.spec;
  t.is(pod.containers[0].resources.limits['nvidia.com/gpu'], 1);
  t.truthy(pod.nodeSelector);
  t.true(pod.tolerations.some((x: any) => x.key === 'nvidia.com/gpu'));
  const env = Object.fromEntries(pod.containers[0].env.filter((e: any) => 'value' in e).map((e: any) => [e.name, e.value]));
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
