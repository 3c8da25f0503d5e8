// A webhook receiver run as its own process (test/helpers/webhook-receiver.ts starts it), so a
// receiver that stalls holds real sockets in another process, as a tenant's server would. The path
// picks how it answers:
//   /ok         200 at once
//   /stall?ms=N answers 200 after N ms (the coordinator gives up first when N is over its limit)
//   /big?kb=N   200 with an N KB body
//   /redirect?status=S&to=U  answers S with Location U
// Each request is one JSON line on stdout as it arrives: { method, path, at, open } (`open`: requests
// to the same path name held open at that moment, this one included).
import http from 'node:http';

const openByPath = new Map<string, number>();

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://receiver');
  const open = (openByPath.get(url.pathname) ?? 0) + 1;
  openByPath.set(url.pathname, open);
  res.on('close', () => openByPath.set(url.pathname, (openByPath.get(url.pathname) ?? 1) - 1));
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    process.stdout.write(
      `${JSON.stringify({
        method: req.method,
        path: url.pathname,
        query: url.search,
        at: Date.now(),
        open,
        body: Buffer.concat(chunks).toString(),
        attempt: req.headers['x-webhook-attempt'],
      })}\n`,
    );
    switch (url.pathname) {
      case '/stall': {
        const timer = setTimeout(() => res.writeHead(200).end(), Number(url.searchParams.get('ms') ?? 10_000));
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case '/big': {
        const body = Buffer.alloc(Number(url.searchParams.get('kb') ?? 1024) * 1024, 0x61);
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) }).end(body);
        return;
      }
      case '/redirect':
        res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/ok' }).end();
        return;
      default:
        res.writeHead(200).end();
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
