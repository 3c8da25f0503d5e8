import { useState } from 'preact/hooks';
import { NETWORKS, type Network } from '@shorts/common/api/networks';
import type {
  NextSlot,
  PublishedPost,
  SocialConnect,
  SocialDisconnect,
  SocialPostChange,
  SocialPostList,
  SocialProfile,
  SocialSettingsView,
} from '@shorts/common/api/social';
import { api } from '../api.js';
import { ErrorBox, useAction, useLoad } from '../ui.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const BASE = '/api/organizations/social-posts';

type Settings = SocialSettingsView;

function Platforms({ value, onChange, idPrefix }: { value: Network[]; onChange: (v: Network[]) => void; idPrefix: string }) {
  return (
    <fieldset>
      <legend>Platforms</legend>
      {NETWORKS.map((n) => (
        <label key={n} class="inline" style={{ marginRight: '12px' }}>
          <input
            type="checkbox"
            id={`${idPrefix}-${n}`}
            checked={value.includes(n)}
            onChange={(e) => onChange((e.target as HTMLInputElement).checked ? [...value, n] : value.filter((x) => x !== n))}
          />
          {n}
        </label>
      ))}
    </fieldset>
  );
}

/** Posts a video of the organization (a render) by its file id. */
export function PostForm({ fileId, defaultCaption, onPosted }: { fileId: string; defaultCaption: string; onPosted?: () => void }) {
  const [caption, setCaption] = useState(defaultCaption);
  const [platforms, setPlatforms] = useState<Network[]>(['youtube']);
  const [mode, setMode] = useState('publish_now');
  const [when, setWhen] = useState('');
  const [result, setResult] = useState<PublishedPost['socialPost'] | null>(null);
  const post = useAction(async () => {
    const platformFields: Record<string, string> = {};
    if (platforms.includes('youtube')) platformFields.youtubeTitle = caption.slice(0, 100) || 'Short';
    const body: Record<string, unknown> = { postType: 'video', caption, platforms, publishMode: mode, fileId, platformFields };
    if (mode === 'schedule') body.scheduledAt = when ? new Date(when).toISOString() : '';
    const res = await api<PublishedPost>('POST', `${BASE}/publish`, { body });
    setResult(res.socialPost);
    onPosted?.();
  });
  return (
    <form
      class="panel"
      aria-label="Post this short"
      onSubmit={(e) => {
        e.preventDefault();
        void post.run();
      }}
    >
      <h3>Post to social accounts</h3>
      <label for="post-caption">Caption</label>
      <textarea
        id="post-caption"
        rows={2}
        style={{ width: '100%' }}
        value={caption}
        onInput={(e) => setCaption((e.target as HTMLTextAreaElement).value)}
      />
      <Platforms value={platforms} onChange={setPlatforms} idPrefix="post" />
      <label for="post-mode">When</label>
      <select id="post-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
        <option value="publish_now">Publish now</option>
        <option value="next_slot">Next queue slot</option>
        <option value="schedule">At a time…</option>
      </select>
      {mode === 'schedule' ? (
        <>
          <label for="post-when">Time</label>
          <input id="post-when" type="datetime-local" value={when} onInput={(e) => setWhen((e.target as HTMLInputElement).value)} />
        </>
      ) : null}
      <p>
        <button class="primary" type="submit" disabled={post.busy}>
          Post
        </button>
      </p>
      <ErrorBox error={post.error} />
      {result ? (
        <p class="notice" role="status">
          Post {result.status}
          {result.scheduledFor ? ` for ${new Date(result.scheduledFor).toLocaleString()}` : ''}.
        </p>
      ) : null}
    </form>
  );
}

function SettingsForm() {
  const loaded = useLoad(() => api<Settings>('GET', `${BASE}/settings`), []);
  const [draft, setDraft] = useState<Settings | null>(null);
  const s = draft ?? loaded.data;
  const save = useAction(async () => {
    loaded.setData(await api<Settings>('PUT', `${BASE}/settings`, { body: { ...draft } }));
    setDraft(null);
  });
  const [slotDay, setSlotDay] = useState(1);
  const [slotTime, setSlotTime] = useState('09:00');
  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!s) return <p>Loading…</p>;
  const set = (patch: Partial<Settings>) => setDraft({ ...s, ...patch });
  return (
    <section class="panel" aria-labelledby="queue-title">
      <h2 id="queue-title">Posting and queue settings</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <label class="inline">
          <input type="checkbox" checked={s.isEnabled} onChange={(e) => set({ isEnabled: (e.target as HTMLInputElement).checked })} />{' '}
          Social posting enabled
        </label>
        <label class="inline">
          <input
            type="checkbox"
            checked={s.approveApiPosts}
            onChange={(e) => set({ approveApiPosts: (e.target as HTMLInputElement).checked })}
          />{' '}
          Posts made through the API need approval
        </label>
        <div class="row">
          <div class="grow">
            <label for="tz">Time zone</label>
            <input id="tz" value={s.defaultTimezone} onInput={(e) => set({ defaultTimezone: (e.target as HTMLInputElement).value })} />
          </div>
          <div>
            <label for="per-slot">Posts per slot</label>
            <input
              id="per-slot"
              type="number"
              min="1"
              max="100"
              value={s.maxPostsPerSlot}
              onInput={(e) => set({ maxPostsPerSlot: Number((e.target as HTMLInputElement).value) })}
              style={{ width: '90px' }}
            />
          </div>
        </div>
        <Platforms value={s.defaultPlatforms} onChange={(v) => set({ defaultPlatforms: v })} idPrefix="default" />
        <fieldset>
          <legend>Queue slots</legend>
          {s.queueSlots.length ? (
            <ul>
              {s.queueSlots.map((q, i) => (
                <li key={i}>
                  {DAYS[q.dayOfWeek]} {q.time}{' '}
                  <button
                    type="button"
                    aria-label={`Remove ${DAYS[q.dayOfWeek]} ${q.time}`}
                    onClick={() => set({ queueSlots: s.queueSlots.filter((_, j) => j !== i) })}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No slots yet.</p>
          )}
          <div class="row">
            <div>
              <label for="slot-day">Day</label>
              <select id="slot-day" value={slotDay} onChange={(e) => setSlotDay(Number((e.target as HTMLSelectElement).value))}>
                {DAYS.map((d, i) => (
                  <option key={d} value={i}>
                    {d}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="slot-time">Time</label>
              <input id="slot-time" type="time" value={slotTime} onInput={(e) => setSlotTime((e.target as HTMLInputElement).value)} />
            </div>
            <button type="button" onClick={() => set({ queueSlots: [...s.queueSlots, { dayOfWeek: slotDay, time: slotTime }] })}>
              Add slot
            </button>
          </div>
        </fieldset>
        <button class="primary" type="submit" disabled={!draft || save.busy}>
          Save settings
        </button>
        <ErrorBox error={save.error} />
      </form>
    </section>
  );
}

function Accounts() {
  const profile = useLoad(() => api<SocialProfile>('GET', `${BASE}/profile`), []);
  const [platform, setPlatform] = useState('youtube');
  const [link, setLink] = useState<string | null>(null);
  const connect = useAction(async () => {
    setLink((await api<SocialConnect>('POST', `${BASE}/connect`, { body: { platform } })).access_url);
    profile.reload();
  });
  const disconnect = useAction(async (accountId: string) => {
    await api<SocialDisconnect>('POST', `${BASE}/disconnect-account`, { body: { accountId } });
    profile.reload();
  });
  return (
    <section class="panel" aria-labelledby="accounts-title">
      <h2 id="accounts-title">Social accounts</h2>
      <ErrorBox error={profile.error} />
      {profile.data ? (
        profile.data.accountLinks.length ? (
          <ul>
            {profile.data.accountLinks.map((a) => (
              <li key={a.accountId}>
                {a.platform} <span class="muted">({a.accountId})</span>{' '}
                <button onClick={() => void disconnect.run(a.accountId)}>Disconnect</button>
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">No account linked yet.</p>
        )
      ) : null}
      <div class="row">
        <div>
          <label for="connect-platform">Network</label>
          <select id="connect-platform" value={platform} onChange={(e) => setPlatform((e.target as HTMLSelectElement).value)}>
            {NETWORKS.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </div>
        <button onClick={() => void connect.run()} disabled={connect.busy}>
          Connect
        </button>
        <button onClick={() => profile.reload()}>Refresh</button>
      </div>
      {link ? (
        <p class="notice">
          Finish linking on the consent page:{' '}
          <a href={link} target="_blank" rel="noopener">
            open it
          </a>
          , then Refresh.
        </p>
      ) : null}
      <ErrorBox error={connect.error ?? disconnect.error} />
    </section>
  );
}

export function Social() {
  const posts = useLoad(() => api<SocialPostList>('GET', `${BASE}/posts`), []);
  const next = useLoad(() => api<NextSlot>('GET', `${BASE}/next-slot`), []);
  const remove = useAction(async (postId: string) => {
    await api<SocialPostChange>('POST', `${BASE}/remove`, { body: { postId } });
    posts.reload();
  });
  return (
    <>
      <h1>Social posting</h1>
      <Accounts />
      <SettingsForm />
      <section class="panel" aria-labelledby="posts-title">
        <h2 id="posts-title">Posts</h2>
        {next.data ? (
          <p class="muted">
            Next queue slot: {new Date(next.data.nextSlot).toLocaleString()} ({next.data.timezone})
          </p>
        ) : null}
        <ErrorBox error={posts.error ?? remove.error} />
        {posts.data && !posts.data.posts.length ? (
          <p class="muted">No posts yet. Render a short on a job's page, then post it from there.</p>
        ) : null}
        {posts.data?.posts.length ? (
          <table class="cards">
            <thead>
              <tr>
                <th>Caption</th>
                <th>Status</th>
                <th>Platforms</th>
                <th>Scheduled for</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {posts.data.posts.map((p) => (
                <tr key={p.id}>
                  <td data-label="Caption">
                    {p.caption}
                    {p.providerError ? <div class="muted">{p.providerError}</div> : null}
                  </td>
                  <td data-label="Status">
                    <span class="status">{p.status}</span>
                  </td>
                  <td data-label="Platforms">{p.platforms.join(', ')}</td>
                  <td data-label="Scheduled for">{p.scheduledFor ? new Date(p.scheduledFor).toLocaleString() : '—'}</td>
                  <td>
                    {p.status === 'scheduled' || p.status === 'draft' ? (
                      <button onClick={() => void remove.run(p.id)}>Cancel</button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </>
  );
}
