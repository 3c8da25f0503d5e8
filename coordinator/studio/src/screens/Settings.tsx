import { useState } from 'preact/hooks';
import { api, type Organization } from '../api.js';
import { ErrorBox, useAction } from '../ui.js';

export function Settings({ org, onChanged }: { org: Organization; onChanged: () => void }) {
  const [days, setDays] = useState(org.retentionDays);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await api('PUT', '/api/organizations/settings', { body: { retentionDays: days } });
    setSaved(true);
    onChanged();
  });
  return (
    <>
      <h1>Settings</h1>
      <section class="panel" aria-labelledby="org-title">
        <h2 id="org-title">{org.name}</h2>
        <p class="muted">Plan: {org.plan} · your role: {org.role}</p>
        <form onSubmit={(e) => { e.preventDefault(); save.run(); }}>
          <label for="retention">Auto-archive jobs after (days, 1 to 180)</label>
          <p class="muted">An archived job disappears from the API and its videos, shorts and transcript are deleted for good.</p>
          <div class="row">
            <input id="retention" type="number" min="1" max="180" value={days} onInput={(e) => setDays(Number((e.target as HTMLInputElement).value))} style={{ width: '110px' }} />
            <button class="primary" type="submit" disabled={save.busy}>Save</button>
          </div>
        </form>
        <ErrorBox error={save.error} />
        {saved ? <p class="notice" role="status">Saved: jobs are archived after {days} days.</p> : null}
      </section>
    </>
  );
}
