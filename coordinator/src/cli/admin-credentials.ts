import { loadConfig } from '../config.js';
import { loadSecrets } from '../secrets.js';
import { createTokenSigner } from '../tenancy/auth.js';
import { issueApiKey, listApiKeys, revokeApiKey } from '../tenancy/tenancy.js';
import { need, num, print, type AdminCommand } from './admin-command.js';

export const keyIssue: AdminCommand = async ({ db, values, json }) => {
  print(await issueApiKey(db, need(values.org, '--org'), values.name), json);
};

export const keyList: AdminCommand = async ({ db, values, json }) => {
  print(await listApiKeys(db, need(values.org, '--org')), json);
};

export const keyRevoke: AdminCommand = async ({ db, arg, json }) => {
  print(await revokeApiKey(db, need(arg, 'key id')), json);
};

export const tokenIssue: AdminCommand = async ({ values, json }) => {
  const config = loadConfig();
  const secrets = await loadSecrets(config.dataDir, { jwtSecret: config.jwtSecret });
  const ttl = num(values.ttl, 'ttl') ?? 3600;
  const token = await createTokenSigner(secrets.jwtSecret).issue(need(values.user, '--user'), ttl);
  print({ token, userId: values.user, expiresInSec: ttl }, json);
};

export const clusterToken: AdminCommand = async ({ json }) => {
  const config = loadConfig();
  const secrets = await loadSecrets(config.dataDir, { clusterToken: config.clusterToken });
  print({ clusterToken: secrets.clusterToken }, json);
};
