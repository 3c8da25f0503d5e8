import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomToken } from './ids.js';

export interface Secrets {
  clusterToken: string;
  jwtSecret: string;
  urlSigningSecret: string;
}

/** Secrets not given in the environment are generated once and kept in dataDir, so a restart keeps
 *  issued tokens, signed URLs and agents valid. */
export async function loadSecrets(dataDir: string, given: Partial<Secrets>): Promise<Secrets> {
  const file = path.resolve(dataDir, 'secrets.json');
  let stored: Partial<Secrets> = {};
  try {
    stored = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    /* first start */
  }
  const secrets: Secrets = {
    clusterToken: given.clusterToken ?? stored.clusterToken ?? randomToken(32),
    jwtSecret: given.jwtSecret ?? stored.jwtSecret ?? randomToken(48),
    urlSigningSecret: given.urlSigningSecret ?? stored.urlSigningSecret ?? randomToken(48),
  };
  const missing = (Object.keys(secrets) as Array<keyof Secrets>).some((k) => stored[k] !== secrets[k]);
  if (missing) {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return secrets;
}
