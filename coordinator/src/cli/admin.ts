#!/usr/bin/env node
// Admin CLI: organizations, users, API keys and tokens; agents and tasks of the farm. `--json` prints machine-readable output.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLogger } from '@shorts/common/logger';
import { AppError, appErrorOf } from '../errors.js';
import { loadConfig } from '../config.js';
import { Db } from '../db/db.js';
import { migrate } from '../db/migrate.js';
import { embeddedPostgresUrl, startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { loadSecrets } from '../secrets.js';
import { createTokenSigner } from '../tenancy/auth.js';
import { listAgents, requestTaskCancel, setDraining, showTask, type AgentView, type TaskView } from '../cluster/agents.js';
import { createLoginLink, findUserIdByEmail, LOGIN_LINK_TTL_SEC, MIN_PASSWORD_LENGTH, setPassword } from '../tenancy/sessions.js';
import {
  addMembership,
  createOrganization,
  createUser,
  issueApiKey,
  listApiKeys,
  listOrganizations,
  requireOrganization,
  revokeApiKey,
  updateOrganization,
} from '../tenancy/tenancy.js';

const USAGE = `Usage: shorts-admin <command> [options] [--json]

  org create --name NAME [--plan free|starter|pro|business] [--credits N]
  org list
  org show ID                 (includes the webhook signing secret)
  org set ID [--plan P] [--credits N] [--retention-days 1-180] [--phone-verification on|off] [--name NAME]
  user create --email EMAIL [--name NAME] [--org ORG_ID] [--role owner|admin|member] [--phone NUMBER] [--phone-verified]
  user add-to-org --user USER_ID --org ORG_ID [--role ROLE]
  user set-password (--user USER_ID | --email EMAIL)   the password from stdin, or typed at a prompt;
                              ends the user's sessions and unused sign-in links
  user login-link (--user USER_ID | --email EMAIL) [--ttl 60-3600]   one-time web studio sign-in link
                              (default 900 s); revokes the user's earlier unused links
  key issue --org ORG_ID [--name NAME]
  key list --org ORG_ID
  key revoke KEY_ID
  token issue --user USER_ID [--ttl SECONDS]
  cluster-token
  agent list [--all]          online, draining and recently offline agents (--all: every one)
  agent drain AGENT_ID        finishes what it runs, takes nothing new (told on its next heartbeat)
  agent resume AGENT_ID       lifts a drain
  task cancel ID              a task, or the tasks of a job or render: queued ones end at once,
                              running ones when their agent next reports (it stops its work)
  task show ID                a task (or a job's or render's) and its child tasks (fan-out): state,
                              attempts, progress and the agent running each

Connects to DATABASE_URL, or to the embedded Postgres under DATA_DIR (default ./data).`;

async function openDatabase(): Promise<{ db: Db; embedded?: EmbeddedDatabase }> {
  const config = loadConfig();
  if (config.databaseUrl) return { db: new Db(config.databaseUrl, 2) };
  // A running coordinator's embedded Postgres answers on its port; otherwise start it here.
  const url = embeddedPostgresUrl(config.dataDir, config.embeddedPostgresPort);
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await probe.connect();
    await probe.end();
    return { db: new Db(url, 2) };
  } catch {
    const embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, createLogger({ service: 'admin' }, 'warn'));
    return { db: new Db(embedded.url, 2), embedded };
  }
}

function print(value: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(JSON.stringify(value, null, 2) + '\n');
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  for (const row of rows) {
    for (const [k, v] of Object.entries(row as object))
      process.stdout.write(`${k.padEnd(28)} ${v instanceof Date ? v.toISOString() : v}\n`);
    process.stdout.write('\n');
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      'retention-days': { type: 'string' },
      'phone-verification': { type: 'string' },
      email: { type: 'string' },
      org: { type: 'string' },
      role: { type: 'string' },
      phone: { type: 'string' },
      'phone-verified': { type: 'boolean' },
      user: { type: 'string' },
      ttl: { type: 'string' },
      password: { type: 'string' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, arg] = positionals;
  // Kept as an option only to be refused by name: a password in argv stays in shell history and is
  // readable by every user of the machine in the process list while the command runs.
  if (values.password !== undefined) {
    throw new AppError(
      400,
      'Bad Request',
      'Passwords are not taken on the command line (shell history and the process list keep them): pipe the password on stdin, or run the command in a terminal and type it at the prompt',
    );
  }
  if (values.help || !group) {
    process.stdout.write(USAGE + '\n');
    return group ? 0 : 2;
  }
  const num = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new AppError(400, 'Bad Request', `--${name} must be a number`);
    return n;
  };
  const need = (v: string | undefined, name: string) => {
    if (!v) throw new AppError(400, 'Bad Request', `${name} is required`);
    return v;
  };

  const { db, embedded } = await openDatabase();
  try {
    await migrate(db);
    const json = values.json!;
    const cmd = `${group} ${action ?? ''}`.trim();
    switch (cmd) {
      case 'org create':
        print(
          strip(
            await createOrganization(db, { name: need(values.name, '--name'), plan: values.plan, credits: num(values.credits, 'credits') }),
          ),
          json,
        );
        break;
      case 'org list':
        print((await listOrganizations(db)).map(strip), json);
        break;
      case 'org show':
        print(await requireOrganization(db.pool, need(arg, 'organization id')), json);
        break;
      case 'org set': {
        const pv = values['phone-verification'];
        print(
          strip(
            await updateOrganization(db, need(arg, 'organization id'), {
              plan: values.plan,
              credits: num(values.credits, 'credits'),
              retentionDays: num(values['retention-days'], 'retention-days'),
              phoneVerificationRequired: pv === undefined ? undefined : pv === 'on' || pv === 'true',
              name: values.name,
            }),
          ),
          json,
        );
        break;
      }
      case 'user create':
        print(
          await createUser(db, {
            email: need(values.email, '--email'),
            name: values.name,
            organizationId: values.org,
            role: values.role,
            phoneNumber: values.phone,
            phoneVerified: values['phone-verified'],
          }),
          json,
        );
        break;
      case 'user add-to-org':
        await addMembership(db, need(values.user, '--user'), need(values.org, '--org'), values.role);
        print({ userId: values.user, organizationId: values.org, role: values.role ?? 'member' }, json);
        break;
      case 'user set-password': {
        const userId = await userArg(db, values.user, values.email);
        const password = await readPassword();
        const { sessionsEnded } = await setPassword(db, userId, password);
        print({ userId, passwordSet: true, sessionsEnded }, json);
        break;
      }
      case 'user login-link': {
        const userId = await userArg(db, values.user, values.email);
        const ttl = num(values.ttl, 'ttl') ?? LOGIN_LINK_TTL_SEC;
        const token = await createLoginLink(db, userId, ttl);
        const config = loadConfig();
        const base = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
        print({ userId, url: `${base}/studio/#/sign-in?token=${token}`, expiresInSec: ttl }, json);
        break;
      }
      case 'key issue':
        print(await issueApiKey(db, need(values.org, '--org'), values.name), json);
        break;
      case 'key list':
        print(await listApiKeys(db, need(values.org, '--org')), json);
        break;
      case 'key revoke':
        print(await revokeApiKey(db, need(arg, 'key id')), json);
        break;
      case 'token issue': {
        const config = loadConfig();
        const secrets = await loadSecrets(config.dataDir, { jwtSecret: config.jwtSecret });
        const ttl = num(values.ttl, 'ttl') ?? 3600;
        const token = await createTokenSigner(secrets.jwtSecret).issue(need(values.user, '--user'), ttl);
        print({ token, userId: values.user, expiresInSec: ttl }, json);
        break;
      }
      case 'cluster-token': {
        const config = loadConfig();
        const secrets = await loadSecrets(config.dataDir, { clusterToken: config.clusterToken });
        print({ clusterToken: secrets.clusterToken }, json);
        break;
      }
      case 'agent list': {
        const agents = await listAgents(db, { all: values.all });
        if (json) print(agents, true);
        else process.stdout.write(agentTable(agents));
        break;
      }
      case 'agent drain':
        print(await setDraining(db, need(arg, 'agent id'), true), json);
        break;
      case 'agent resume':
        print(await setDraining(db, need(arg, 'agent id'), false), json);
        break;
      case 'task cancel':
        print(await requestTaskCancel(db, need(arg, 'task, job or render id')), json);
        break;
      case 'task show': {
        const family = await showTask(db, need(arg, 'task, job or render id'));
        if (json) print(family, true);
        else process.stdout.write(taskTable([family.task, ...family.children]));
        break;
      }
      default:
        process.stderr.write(`unknown command: ${cmd}\n\n${USAGE}\n`);
        return 2;
    }
    return 0;
  } finally {
    await db.close();
    await embedded?.stop();
  }
}

function agentTable(agents: AgentView[]): string {
  if (!agents.length) return 'no agents\n';
  const ago = (d: Date) => `${Math.max(0, Math.round((Date.now() - new Date(d).getTime()) / 1000))}s ago`;
  const gb = (b: number | null) => (b == null ? '-' : `${(b / 1e9).toFixed(1)} GB`);
  const rows = [['ID', 'NAME', 'STATE', 'RUNNING', 'FREE DISK', 'LAST SEEN', 'TASK TYPES', 'CAPABILITIES']];
  for (const a of agents) {
    rows.push([
      a.id,
      a.name,
      a.state,
      `${a.runningTasks}/${a.slots}`,
      gb(a.freeDiskBytes),
      ago(a.lastSeenAt),
      a.taskTypes.join(','),
      a.capabilities.join(','),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

function taskTable(tasks: TaskView[]): string {
  const rows = [['ID', 'TYPE', 'PART', 'STATE', 'ATTEMPTS', 'PROGRESS', 'STAGE', 'AGENT', 'LAST ERROR']];
  for (const t of tasks) {
    rows.push([
      t.id,
      t.type,
      t.childIndex === null ? '-' : String(t.childIndex + 1),
      t.state,
      String(t.attempts),
      `${Math.round(t.progress * 100)}%`,
      t.stage ?? '-',
      t.agent ?? '-',
      t.lastError ?? '',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

async function userArg(db: Db, userId: string | undefined, email: string | undefined): Promise<string> {
  if (userId) return userId;
  if (!email) throw new AppError(400, 'Bad Request', '--user or --email is required');
  const found = await findUserIdByEmail(db, email);
  if (!found) throw new AppError(404, 'Not Found', `No user with e-mail ${email}`);
  return found;
}

/** The new password: piped on stdin (its first line), or typed twice at a prompt that does not echo. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0]!;
  }
  const first = await promptHidden(`New password (at least ${MIN_PASSWORD_LENGTH} characters): `);
  const again = await promptHidden('Again: ');
  if (first !== again) throw new AppError(400, 'Bad Request', 'The two passwords differ; nothing was changed');
  return first;
}

function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the question shows: what is typed (or pasted) as soon as it appears is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.setEncoding('utf8');
  stdin.resume();
  let value = '';
  return new Promise((resolve, reject) => {
    const finish = (result: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      result();
    };
    const onData = (text: string) => {
      for (const ch of text) {
        if (ch === '\r' || ch === '\n') return finish(() => resolve(value));
        if (ch === '\u0003' || ch === '\u0004')
          return finish(() => reject(new AppError(400, 'Bad Request', 'Cancelled; nothing was changed')));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

function strip<T extends { webhookSecret?: string }>(org: T): Omit<T, 'webhookSecret'> {
  const { webhookSecret: _secret, ...rest } = org;
  return rest;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    const appErr = appErrorOf(err);
    const message = appErr ? appErr.message : (err?.message ?? String(err));
    process.stderr.write(JSON.stringify({ error: appErr ? appErr.error : 'Error', message }) + '\n');
    process.exit(1);
  },
);
