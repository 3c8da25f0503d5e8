import { useState } from 'preact/hooks';
import type { OrganizationSettings } from '@shorts/common/api/sessions';
import { api, signOutEverywhere, type Organization } from '../api.js';
import { ErrorBox, useAction } from '../ui.js';
import { ApiKeys } from './ApiKeys.js';
import { Webhooks } from './Webhooks.js';

export function Settings({ org, onChanged, page }: { org: Organization; onChanged: () => void; page?: string }) {
  const [days, setDays] = useState(org.retentionDays);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await api<OrganizationSettings>('PUT', '/api/organizations/settings', { body: { retentionDays: days } });
    setSaved(true);
    onChanged();
  });
  return (
    <>
      <h1>Settings</h1>
      <nav class="subnav" aria-label="Settings pages">
        <a href="#/settings" aria-current={page !== 'api-keys' && page !== 'webhooks' ? 'page' : undefined}>
          Organization
        </a>
        <a href="#/settings/api-keys" aria-current={page === 'api-keys' ? 'page' : undefined}>
          API keys
        </a>
        <a href="#/settings/webhooks" aria-current={page === 'webhooks' ? 'page' : undefined}>
          Webhooks
        </a>
      </nav>
      {page === 'api-keys' ? (
        <ApiKeys />
      ) : page === 'webhooks' ? (
        <Webhooks />
      ) : (
        <OrganizationSettings org={org} onChanged={onChanged} days={days} setDays={setDays} saved={saved} save={save} />
      )}
    </>
  );
}

function OrganizationSettings({
  org,
  days,
  setDays,
  saved,
  save,
}: {
  org: Organization;
  onChanged: () => void;
  days: number;
  setDays: (n: number) => void;
  saved: boolean;
  save: { run: () => Promise<unknown>; busy: boolean; error: unknown };
}) {
  return (
    <>
      <section class="panel" aria-labelledby="org-title">
        <h2 id="org-title">{org.name}</h2>
        <p class="muted">
          Plan: {org.plan} · your role: {org.role}
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save.run();
          }}
        >
          <label for="retention">Auto-archive jobs after (days, 1 to 180)</label>
          <p class="muted">An archived job disappears from the API and its videos, shorts and transcript are deleted for good.</p>
          <div class="row">
            <input
              id="retention"
              type="number"
              min="1"
              max="180"
              value={days}
              onInput={(e) => setDays(Number((e.target as HTMLInputElement).value))}
              style={{ width: '110px' }}
            />
            <button class="primary" type="submit" disabled={save.busy}>
              Save
            </button>
          </div>
        </form>
        <ErrorBox error={save.error} />
        {saved ? (
          <p class="notice" role="status">
            Saved: jobs are archived after {days} days.
          </p>
        ) : null}
      </section>
      <section class="panel" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Your sessions</h2>
        <p class="muted">Ends your sessions in every browser, this one included (also in the header on wider screens).</p>
        <button
          onClick={() => {
            void signOutEverywhere().then(() => {
              location.hash = '#/sign-in';
              location.reload();
            });
          }}
        >
          Sign out everywhere
        </button>
      </section>
    </>
  );
}
