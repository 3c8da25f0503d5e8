import { useState } from 'preact/hooks';
import type { ApiKeyList, ApiKeyView, IssuedApiKey } from '@shorts/common/api/api-keys';
import { api } from '../api.js';
import { ErrorBox, useAction, useLoad } from '../ui.js';
import '../workbench.css';

/** Settings → API keys: the organization's keys for its own programs; a new key is shown once. */
export function ApiKeys() {
  const keys = useLoad(() => api<ApiKeyList>('GET', '/api/organizations/api-keys'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<IssuedApiKey | null>(null);
  const [copied, setCopied] = useState(false);
  const create = useAction(async () => {
    setCopied(false);
    setCreated(await api<IssuedApiKey>('POST', '/api/organizations/api-keys', { body: { name } }));
    setName('');
    await keys.refresh();
  });
  const revoke = useAction(async (k: ApiKeyView) => {
    if (!confirm(`Revoke "${k.name ?? k.prefix + '…' + k.last4}"? Programs using it stop working at once.`)) return;
    await api<ApiKeyView>('DELETE', `/api/organizations/api-keys/${k.id}`);
    if (created?.id === k.id) setCreated(null);
    await keys.refresh();
  });
  return (
    <section class="panel" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p class="muted">
        A key lets your own programs use the API in this organization's name (send it as <code>Authorization: Bearer …</code>). Try every
        route with it in the{' '}
        <a href="/docs" target="_blank" rel="noopener">
          API explorer
        </a>{' '}
        (Authorize, then "Try it out").
      </p>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <div class="grow">
          <label for="key-name">Name of the new key</label>
          <input
            id="key-name"
            value={name}
            maxLength={100}
            placeholder="e.g. CI uploader"
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </div>
        <button class="primary" type="submit" disabled={create.busy}>
          Create key
        </button>
      </form>
      <ErrorBox error={create.error} />
      {created ? (
        <div class="notice" role="status" data-testid="new-key">
          <p>Copy the key "{created.name}" now: it is not shown again.</p>
          <p class="key-once" data-testid="new-key-value">
            {created.key}
          </p>
          <button
            type="button"
            onClick={() => {
              void navigator.clipboard?.writeText(created.key).then(
                () => setCopied(true),
                () => undefined,
              );
            }}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>{' '}
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      ) : null}
      <ErrorBox error={keys.error ?? revoke.error} />
      {keys.data && keys.data.keys.length === 0 ? <p class="muted">No API keys yet.</p> : null}
      {keys.data && keys.data.keys.length ? (
        <table class="cards" aria-label="API keys">
          <thead>
            <tr>
              <th>Name</th>
              <th>Key</th>
              <th>Created</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {keys.data.keys.map((k) => (
              <tr key={k.id} data-key-id={k.id}>
                <td data-label="Name">{k.name ?? 'Unnamed'}</td>
                <td data-label="Key">
                  <code>
                    {k.prefix}…{k.last4}
                  </code>
                </td>
                <td data-label="Created">{new Date(k.createdAt).toLocaleString()}</td>
                <td data-label="Status">{k.revokedAt ? `Revoked ${new Date(k.revokedAt).toLocaleString()}` : 'Active'}</td>
                <td data-label="">
                  {k.revokedAt ? null : (
                    <button
                      type="button"
                      class="danger"
                      disabled={revoke.busy}
                      aria-label={`Revoke ${k.name ?? 'key'}`}
                      onClick={() => void revoke.run(k)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
