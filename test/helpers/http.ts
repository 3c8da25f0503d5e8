import type http from 'node:http';

/**
 * An async request handler as the listener http.createServer takes: node does not wait for the
 * handler's promise, so it is left to run (a rejection still reports as unhandled, as before).
 */
export function listener(handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>): http.RequestListener {
  return (req, res) => {
    void handler(req, res);
  };
}
