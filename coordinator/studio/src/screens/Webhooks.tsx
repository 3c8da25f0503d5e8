import { useState } from 'preact/hooks';
import type { WebhookSecret } from '@shorts/common/api/webhooks';
import { api } from '../api.js';
import { ErrorBox, useAction, useLoad } from '../ui.js';

/** Settings → Webhooks: the organization's signing secret, shown on request, and its rotation. */
export function Webhooks() {
  const secret = useLoad(() => api<WebhookSecret>('GET', '/api/webhooks/secret'), []);
  const [shown, setShown] = useState(false);
  const [rotated, setRotated] = useState(false);
  const rotate = useAction(async () => {
    if (!confirm('Make a new webhook secret? The current one keeps signing deliveries for 24 hours, beside the new one.')) return;
    setRotated(false);
    secret.setData(await api<WebhookSecret>('POST', '/api/webhooks/secret/rotate', { body: {} }));
    setShown(true);
    setRotated(true);
  });
  const s = secret.data;
  return (
    <section class="panel" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <p class="muted">
        A job's webhook is signed the{' '}
        <a href="https://www.standardwebhooks.com/" target="_blank" rel="noopener">
          Standard Webhooks
        </a>{' '}
        way (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) and with <code>X-Signature</code>.
        Give this secret to your receiver's Standard Webhooks library.
      </p>
      <ErrorBox error={secret.error ?? rotate.error} />
      {s ? (
        <>
          <p id="webhook-secret-label">Signing secret</p>
          <div class="row">
            <code class="key-once grow" aria-labelledby="webhook-secret-label" data-testid="webhook-secret">
              {shown ? s.standardSecret : 'whsec_' + '•'.repeat(16)}
            </code>
            <button type="button" onClick={() => setShown(!shown)}>
              {shown ? 'Hide' : 'Show'}
            </button>
            <button
              type="button"
              onClick={() => {
                void navigator.clipboard?.writeText(s.standardSecret).catch(() => undefined);
              }}
            >
              Copy
            </button>
          </div>
          {s.standardSecret !== s.secret ? (
            <p class="muted">
              This secret predates Standard Webhooks: <code>X-Signature</code> is keyed by its original text,{' '}
              <code>{shown ? s.secret : 'whsec_…'}</code>.
            </p>
          ) : null}
          {s.createdAt ? <p class="muted">Made {new Date(s.createdAt).toLocaleString()}.</p> : null}
          {s.previous ? (
            <p class="notice" role="status" data-testid="webhook-previous">
              The previous secret still signs deliveries until {new Date(s.previous.expiresAt).toLocaleString()}: each delivery carries both
              signatures until then.
            </p>
          ) : null}
          {rotated ? (
            <p class="notice" role="status">
              New secret made: update your receiver within 24 hours.
            </p>
          ) : null}
          <button class="danger" type="button" disabled={rotate.busy} onClick={() => void rotate.run()}>
            Rotate secret
          </button>
        </>
      ) : null}
    </section>
  );
}
