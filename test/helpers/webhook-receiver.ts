import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';

export interface ReceivedHook {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A local webhook receiver; `failFirst` answers 500 to that many deliveries before accepting. */
export async function startWebhookReceiver(failFirst = 0) {
  const received: ReceivedHook[] = [];
  let failures = failFirst;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const status = failures-- > 0 ? 500 : 200;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    received,
    url: (p = '/hook') => `http://127.0.0.1:${port}${p}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface ReceiverRequest {
  method: string;
  path: string;
  query: string;
  /** When it arrived (ms since the epoch, this machine's clock). */
  at: number;
  /** Requests to the same path held open when it arrived, this one included. */
  open: number;
  body: string;
  attempt?: string;
}

/** The receiver of webhook-receiver-main.ts in its own process: paths /ok, /stall, /big, /redirect. */
export async function startReceiverProcess() {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'test/helpers/webhook-receiver-main.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const requests: ReceiverRequest[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    let pending = '';
    proc.once('exit', (code) => reject(new Error(`webhook receiver exited with ${code} before listening`)));
    proc.stdout!.on('data', (buf: Buffer) => {
      pending += buf.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = JSON.parse(pending.slice(0, nl)) as ReceiverRequest | { listening: number };
        pending = pending.slice(nl + 1);
        if ('listening' in line) resolve(line.listening);
        else requests.push(line);
      }
    });
  });
  return {
    requests,
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    close: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
