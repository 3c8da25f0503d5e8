import http from 'node:http';
import https from 'node:https';

// A self-signed certificate for 127.0.0.1 (valid to 2126), trusted only by this test process's
// default https agent, so video URLs can be https as the contract asks.
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgNZro/b8adzEMOpoV
b77bY9QxmJ3JS32wme+iFWrpbXWhRANCAATjIRxZ9wfdtzbAL9ZsakdmCqiFd2BJ
dn67U5zNKr1wqBtOmw9udMClyaAPyZqtiMCebxaDxi0ieGBUHaeOdsGJ
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUOqR4cWbSQAN2XIBrVB+v6ikVocMwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjE0MTUzMloYDzIxMjYxMDI5
MTQxNTMyWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATjIRxZ9wfdtzbAL9ZsakdmCqiFd2BJdn67U5zNKr1wqBtOmw9udMCl
yaAPyZqtiMCebxaDxi0ieGBUHaeOdsGJo2QwYjAdBgNVHQ4EFgQUs0P9U8EJunVh
quQPibC++VoDZ5owHwYDVR0jBBgwFoAUs0P9U8EJunVhquQPibC++VoDZ5owDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IQCflejb7/QDa+PV771K/4/4Mi+R0gZvoAFasxUwEhQblwIgNvf50XT2TE+eIVeN
JcMB2bo7gW4IMz5F/wPrt9WnQHk=
-----END CERTIFICATE-----`;

/** Serves /video.mp4, /photo-N.jpg and /doc.pdf over http and https on 127.0.0.1; anything else is 404. */
export async function startMediaServer() {
  https.globalAgent.options.ca = CERT;
  const requests: string[] = [];
  const handler: http.RequestListener = (req, res) => {
    requests.push(`${req.method} ${req.url} range=${req.headers.range ?? ''}`);
    if (!/^\/(video\.mp4|photo-\d+\.jpg|doc\.pdf)$/.test(req.url ?? '')) {
      res.writeHead(404).end('missing');
      return;
    }
    res.writeHead(req.headers.range ? 206 : 200, { 'content-type': 'application/octet-stream' }).end(Buffer.alloc(1024));
  };
  const plain = http.createServer(handler);
  const secure = https.createServer({ key: KEY, cert: CERT }, handler);
  await Promise.all([plain, secure].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  const port = (s: http.Server) => (s.address() as { port: number }).port;
  return {
    http: `http://127.0.0.1:${port(plain)}`,
    https: `https://127.0.0.1:${port(secure)}`,
    requests,
    close: async () => {
      for (const s of [plain, secure]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
