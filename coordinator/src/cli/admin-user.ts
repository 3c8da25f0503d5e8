import { AppError } from '../errors.js';
import { loadConfig } from '../config.js';
import type { Db } from '../db/db.js';
import { createLoginLink, findUserIdByEmail, LOGIN_LINK_TTL_SEC, MIN_PASSWORD_LENGTH, setPassword } from '../tenancy/sessions.js';
import { addMembership, createUser } from '../tenancy/tenancy.js';
import { need, num, print, type AdminCommand } from './admin-command.js';

export const userCreate: AdminCommand = async ({ db, values, json }) => {
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
};

export const userAddToOrg: AdminCommand = async ({ db, values, json }) => {
  await addMembership(db, need(values.user, '--user'), need(values.org, '--org'), values.role);
  print({ userId: values.user, organizationId: values.org, role: values.role ?? 'member' }, json);
};

export const userSetPassword: AdminCommand = async ({ db, values, json }) => {
  const userId = await userArg(db, values.user, values.email);
  const password = await readPassword();
  const { sessionsEnded } = await setPassword(db, userId, password);
  print({ userId, passwordSet: true, sessionsEnded }, json);
};

export const userLoginLink: AdminCommand = async ({ db, values, json }) => {
  const userId = await userArg(db, values.user, values.email);
  const ttl = num(values.ttl, 'ttl') ?? LOGIN_LINK_TTL_SEC;
  const token = await createLoginLink(db, userId, ttl);
  const config = loadConfig();
  const base = config.publicUrl ?? `http://127.0.0.1:${config.port}`;
  print({ userId, url: `${base}/studio/#/sign-in?token=${token}`, expiresInSec: ttl }, json);
};

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
