import { signOut, signOutEverywhere, type Organization, type SessionInfo } from './api.js';

const NAV: Array<[string, string]> = [
  ['jobs', 'Jobs'],
  ['presets', 'Brand presets'],
  ['files', 'Files'],
  ['social', 'Social'],
  ['settings', 'Settings'],
];
/** The studio's header: its sections (a Menu button opens them on a phone), the organization, the account and signing out. */
export function SiteHeader({
  section,
  session,
  org,
  menuOpen,
  setMenuOpen,
  chooseOrg,
  onSignedOut,
  onError,
}: {
  section: string;
  session: SessionInfo;
  /** The organization chosen. */
  org: Organization;
  menuOpen: boolean;
  setMenuOpen: (open: boolean) => void;
  chooseOrg: (id: string) => void;
  onSignedOut: () => void;
  onError: (err: unknown) => void;
}) {
  return (
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
          <select aria-label="Organization" value={org.id} onChange={(e) => chooseOrg((e.target as HTMLSelectElement).value)}>
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
            void signOut().then(onSignedOut);
          }}
        >
          Sign out
        </button>
        <button
          class="account-detail"
          title="Ends your sessions in every browser"
          onClick={() => {
            signOutEverywhere().then(onSignedOut, onError);
          }}
        >
          Sign out everywhere
        </button>
      </div>
    </header>
  );
}
