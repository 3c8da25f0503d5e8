import { useEffect, useState } from 'preact/hooks';
import { signIn, type SessionInfo } from '../api.js';
import { ErrorBox, useAction } from '../ui.js';

export function SignIn({ token, onSignedIn, error }: { token: string | null; onSignedIn: (s: SessionInfo) => void; error?: unknown }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(async (body: Parameters<typeof signIn>[0]) => onSignedIn(await signIn(body)));

  // A one-time link from the admin CLI (or `npm start`) signs in by itself.
  useEffect(() => {
    if (token) void action.run({ token });
  }, [token]);

  return (
    <main class="signin">
      <div class="panel">
        <h1>Sign in to Shorts Studio</h1>
        {token && action.busy ? <p>Signing in with your link…</p> : null}
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void action.run({ email, password });
          }}
        >
          <label for="email">E-mail</label>
          <input
            id="email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
          />
          <label for="password">Password</label>
          <input
            id="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
          <p>
            <button class="primary" type="submit" disabled={action.busy}>
              Sign in
            </button>
          </p>
        </form>
        <ErrorBox error={action.error ?? error} />
        <p class="muted">
          No password yet? Ask for a sign-in link: <code>npm run -s admin -- user login-link --email you@example.com</code>
        </p>
      </div>
    </main>
  );
}
