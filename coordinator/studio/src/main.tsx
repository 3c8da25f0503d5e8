import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import { loadSession, signOut, signOutEverywhere, useSession, type SessionInfo } from './api.js';
import { go, useRoute } from './router.js';
import { ErrorBox } from './ui.js';
import { SignIn } from './screens/SignIn.js';
import { Jobs } from './screens/Jobs.js';
import { JobPage } from './screens/Job.js';
import { Presets } from './screens/Presets.js';
import { Files } from './screens/Files.js';
import { Social } from './screens/Social.js';
import { Settings } from './screens/Settings.js';

const NAV: Array<[string, string]> = [
  ['jobs', 'Jobs'],
  ['presets', 'Brand presets'],
  ['files', 'Files'],
  ['social', 'Social'],
  ['settings', 'Settings'],
];
const ORG_KEY = 'studio.organizationId';

function App() {
  const route = useRoute();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [orgId, setOrgId] = useState<string>('');
  // On a phone the header is one row with a Menu button; the sections open under it (style.css).
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [route.path[0], route.path[1]]);

  useEffect(() => {
    loadSession().then(setSession, (err) => {
      setError(err);
      setSession(null);
    });
  }, []);
  useEffect(() => {
    if (!session) return;
    const saved = localStorage.getItem(ORG_KEY);
    const id = session.organizations.find((o) => o.id === saved)?.id ?? session.organizations[0]?.id ?? '';
    useSession(session, id);
    setOrgId(id);
  }, [session]);

  if (session === undefined)
    return (
      <main>
        <p>Loading…</p>
      </main>
    );
  if (!session || route.path[0] === 'sign-in') {
    return (
      <SignIn
        token={route.params.get('token')}
        onSignedIn={(s) => {
          setSession(s);
          go('/jobs');
        }}
        error={error}
      />
    );
  }
  if (!session.organizations.length)
    return (
      <main>
        <p>Your account belongs to no organization yet. Ask an administrator to add you.</p>
      </main>
    );
  if (!orgId)
    return (
      <main>
        <p>Loading…</p>
      </main>
    );

  const section = route.path[0] ?? 'jobs';
  const org = session.organizations.find((o) => o.id === orgId)!;
  const chooseOrg = (id: string) => {
    localStorage.setItem(ORG_KEY, id);
    useSession(session, id);
    setOrgId(id);
    go('/jobs');
  };
  let screen;
  if (section === 'jobs' && route.path[1])
    screen = <JobPage key={route.path[1]} jobId={route.path[1]} shortParam={route.params.get('short')} />;
  else if (section === 'presets') screen = <Presets />;
  else if (section === 'files') screen = <Files />;
  else if (section === 'social') screen = <Social />;
  else if (section === 'settings')
    screen = (
      <Settings
        org={org}
        page={route.path[1]}
        onChanged={() => {
          loadSession().then(setSession, setError);
        }}
      />
    );
  else screen = <Jobs />;

  return (
    <>
      <a
        class="skip"
        href="#content"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('content')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Shorts Studio</span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="site-menu" onClick={() => setMenuOpen(!menuOpen)}>
          {menuOpen ? 'Close menu' : 'Menu'}
        </button>
        <div id="site-menu" class={`site-menu${menuOpen ? ' open' : ''}`}>
          <nav class="main" aria-label="Sections">
            {NAV.map(([path, label]) => (
              <a key={path} href={`#/${path}`} aria-current={section === path ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                {label}
              </a>
            ))}
            <a href="/docs" target="_blank" rel="noopener">
              API docs
            </a>
          </nav>
          {session.organizations.length > 1 ? (
            <select aria-label="Organization" value={orgId} onChange={(e) => chooseOrg((e.target as HTMLSelectElement).value)}>
              {session.organizations.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          ) : (
            <span class="muted account-detail">
              {org.name} · {org.plan}
            </span>
          )}
          <span class="muted account-detail">{session.user.email}</span>
          <button
            onClick={() => {
              void signOut().then(() => {
                setSession(null);
                go('/sign-in');
              });
            }}
          >
            Sign out
          </button>
          <button
            class="account-detail"
            title="Ends your sessions in every browser"
            onClick={() => {
              signOutEverywhere().then(() => {
                setSession(null);
                go('/sign-in');
              }, setError);
            }}
          >
            Sign out everywhere
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1} key={orgId}>
        <ErrorBox error={error} />
        {screen}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
