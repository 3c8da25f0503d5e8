import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './style.css';
import { loadSession, useSession, type Organization, type SessionInfo } from './api.js';
import { go, useRoute, type Route } from './router.js';
import { ErrorBox } from './ui.js';
import { SiteHeader } from './SiteHeader.js';
import { SignIn } from './screens/SignIn.js';
import { Jobs } from './screens/Jobs.js';
import { JobPage } from './screens/Job.js';
import { Presets } from './screens/Presets.js';
import { Files } from './screens/Files.js';
import { Social } from './screens/Social.js';
import { Settings } from './screens/Settings.js';

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
  const screen = screenOf(section, route, org, () => {
    loadSession().then(setSession, setError);
  });

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
      <SiteHeader
        section={section}
        session={session}
        org={org}
        menuOpen={menuOpen}
        setMenuOpen={setMenuOpen}
        chooseOrg={chooseOrg}
        onSignedOut={() => {
          setSession(null);
          go('/sign-in');
        }}
        onError={setError}
      />
      <main id="content" tabIndex={-1} key={orgId}>
        <ErrorBox error={error} />
        {screen}
      </main>
    </>
  );
}

/** The screen of the route's section (a job's own page under jobs/:id; the job list by default). */
function screenOf(section: string, route: Route, org: Organization, onSettingsChanged: () => void) {
  let screen;
  if (section === 'jobs' && route.path[1])
    screen = <JobPage key={route.path[1]} jobId={route.path[1]} shortParam={route.params.get('short')} />;
  else if (section === 'presets') screen = <Presets />;
  else if (section === 'files') screen = <Files />;
  else if (section === 'social') screen = <Social />;
  else if (section === 'settings') screen = <Settings org={org} page={route.path[1]} onChanged={onSettingsChanged} />;
  else screen = <Jobs />;
  return screen;
}

render(<App />, document.getElementById('app')!);
