import http from 'node:http';

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
