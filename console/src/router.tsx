// Client-side routes on the History API: the server answers index.html for every console path, so a link can be
// opened, reloaded or shared. Routes the server serves itself (/cli-login, /api/...) are left to full navigation.
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const current = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });
const listeners = new Set<() => void>();

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.scrollTo(0, 0);
  for (const listener of [...listeners]) listener();
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return location;
}

/** Replaces one query parameter of the current address (a tab, a selected team) without a new history entry. */
export function setQuery(name: string, value: string | undefined): void {
  const query = new URLSearchParams(window.location.search);
  if (value === undefined) query.delete(name);
  else query.set(name, value);
  const search = query.toString();
  navigate(`${window.location.pathname}${search ? `?${search}` : ''}`, { replace: true });
}

/** A return path is only ever a path on this host (`/x`, never `//host` or a URL). */
export function safeReturnPath(value: string | null): string {
  return value && value.startsWith('/') && !value.startsWith('//') && !value.startsWith('/\\') ? value : '/';
}

export function Link({ to, children, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const click = (event: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={to} onClick={click}>
      {children}
    </a>
  );
}

/** Matches `pattern` (segments, `:name` for a parameter) against `path`; the parameters, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(have[i]);
    else if (want[i] !== have[i]) return undefined;
  }
  return params;
}
