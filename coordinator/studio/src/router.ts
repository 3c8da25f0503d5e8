import { useEffect, useState } from 'preact/hooks';

// Hash routes (#/jobs/ID): the server serves one page, and a sign-in link's token never reaches a
// server log because the fragment is not sent.
export interface Route {
  path: string[];
  params: URLSearchParams;
}

function read(): Route {
  const raw = location.hash.replace(/^#\/?/, '');
  const [p = '', q = ''] = raw.split('?');
  return { path: p.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(q) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const go = (path: string) => {
  location.hash = path;
};
