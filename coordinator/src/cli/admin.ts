#!/usr/bin/env node
// Admin CLI: organizations, users, API keys and tokens; agents and tasks of the farm. `--json` prints machine-readable output.
// One function per command, in admin-<noun>.ts; this file parses, opens the database and dispatches.
import pg from 'pg';
import { createLogger } from '@shorts/common/logger';
import { AppError, appErrorOf } from '../errors.js';
import { loadConfig } from '../config.js';
import { Db } from '../db/db.js';
import { migrate } from '../db/migrate.js';
import { embeddedPostgresUrl, startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { parseAdminArgs, type AdminCommand } from './admin-command.js';
import { orgCreate, orgList, orgSet, orgShow } from './admin-org.js';
import { userAddToOrg, userCreate, userLoginLink, userSetPassword } from './admin-user.js';
import { clusterToken, keyIssue, keyList, keyRevoke, tokenIssue } from './admin-credentials.js';
import { agentDrain, agentList, agentResume, taskCancel, taskShow } from './admin-farm.js';

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

const COMMANDS: Record<string, AdminCommand> = {
  'org create': orgCreate,
  'org list': orgList,
  'org show': orgShow,
  'org set': orgSet,
  'user create': userCreate,
  'user add-to-org': userAddToOrg,
  'user set-password': userSetPassword,
  'user login-link': userLoginLink,
  'key issue': keyIssue,
  'key list': keyList,
  'key revoke': keyRevoke,
  'token issue': tokenIssue,
  'cluster-token': clusterToken,
  'agent list': agentList,
  'agent drain': agentDrain,
  'agent resume': agentResume,
  'task cancel': taskCancel,
  'task show': taskShow,
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseAdminArgs(argv);
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

  const { db, embedded } = await openDatabase();
  try {
    await migrate(db);
    const cmd = `${group} ${action ?? ''}`.trim();
    const command = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
    if (!command) {
      process.stderr.write(`unknown command: ${cmd}\n\n${USAGE}\n`);
      return 2;
    }
    await command({ db, values, arg, json: values.json! });
    return 0;
  } finally {
    await db.close();
    await embedded?.stop();
  }
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
