import http from 'node:http';

export interface Served {
  name: string;
  range: string | undefined;
  status: number;
  /** Body bytes this answer wrote. */
  bytes: number;
}

export interface RangeServerOptions {
  /** Answers `Range: bytes=a-b` with a 206 and honours `If-Range` against the ETag. */
  ranges: boolean;
  etag?: () => string;
  /** After how many bytes the answer to `range` loses its connection (undefined: never). */
  cut?: (range: string | undefined) => number | undefined;
  /** Every request after the first is answered with this redirect. */
  redirectPart?: string;
}

/**
 * Serves files from memory on 127.0.0.1 and counts every byte it sends, with or without range
 * support; `/moved/<name>` redirects to `/<name>`.
 */
export async function serveRanged(files: Record<string, () => Buffer>, opts: RangeServerOptions) {
  const served: Served[] = [];
  const s = http.createServer((req, res) => {
    const i = served.length;
    const name = (req.url ?? '/').slice(1);
    const entry: Served = { name, range: req.headers.range, status: 200, bytes: 0 };
    served.push(entry);
    if (name.startsWith('moved/')) return void res.writeHead(302, { location: `/${name.slice(6)}` }).end();
    if (opts.redirectPart && i > 0) return void res.writeHead(302, { location: opts.redirectPart }).end();
    const body = files[name]?.();
    if (!body) return void res.writeHead((entry.status = 404)).end();
    const etag = opts.etag?.() ?? '"v1"';
    let slice = body;
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/octet-stream' };
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const current = !req.headers['if-range'] || req.headers['if-range'] === etag;
    if (opts.ranges) {
      headers['accept-ranges'] = 'bytes';
      headers.etag = etag;
    }
    if (opts.ranges && m && current) {
      const start = Number(m[1]);
      const end = Math.min(m[2] ? Number(m[2]) + 1 : body.length, body.length);
      slice = body.subarray(start, end);
      headers['content-range'] = `bytes ${start}-${end - 1}/${body.length}`;
      entry.status = 206;
    }
    headers['content-length'] = slice.length;
    res.writeHead(entry.status, headers);
    const cutAt = opts.cut?.(req.headers.range);
    const send = cutAt === undefined ? slice : slice.subarray(0, cutAt);
    entry.bytes = send.length;
    if (cutAt === undefined) return void res.end(send);
    // The connection drops mid-body, as a flaky network or a restarted server does.
    res.write(send, () => setTimeout(() => res.socket?.destroy(), 20));
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  return {
    served,
    url: (name: string) => `http://127.0.0.1:${port}/${name}`,
    /** Body bytes sent for `name` (all files when not given). */
    total: (name?: string) => served.filter((e) => !name || e.name === name).reduce((sum, e) => sum + e.bytes, 0),
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}
