// The console's building blocks, so every page looks and behaves the same: sections, badges, buttons with a busy
// state, inline confirmation, problems as their title, detail and field errors, times for people.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { ApiProblem } from './api.ts';
import { errorPlace, type Label } from './labels.ts';

export function Section({ title, actions, children, id }: { title: ReactNode; actions?: ReactNode; children: ReactNode; id?: string }) {
  return (
    <section className="section" id={id} aria-label={typeof title === 'string' ? title : undefined}>
      <header className="section-head">
        <h2>{title}</h2>
        {actions && <div className="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Badge({ label, title }: { label: Label; title?: string }) {
  return (
    <span className={`badge tone-${label.tone}`} title={title}>
      {label.tone === 'busy' && <span className="pulse" aria-hidden="true" />}
      {label.text}
    </span>
  );
}

export function Spinner() {
  return <span className="spinner" role="status" aria-label="Working" />;
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading">
      <Spinner /> Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A problem as a person reads it: its title, its detail, and each field error with its place. */
export function ProblemNotice({ problem, onDismiss }: { problem?: ApiProblem; onDismiss?: () => void }) {
  if (!problem) return null;
  return (
    <div className="problem" role="alert">
      <div className="problem-text">
        <strong>{problem.title}</strong>
        {problem.detail && <span> {problem.detail}</span>}
        {problem.errors.length > 0 && (
          <ul>
            {problem.errors.map((error, index) => (
              <li key={index}>
                <span className="place">{errorPlace(error)}</span>: {error.message}
              </li>
            ))}
          </ul>
        )}
        {problem.secrets.length > 0 && <p>Secrets without a value: {problem.secrets.join(', ')}</p>}
      </div>
      {onDismiss && (
        <button type="button" className="link" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}

export function FieldHint({ problem, pointer }: { problem?: ApiProblem; pointer: string }) {
  const message = problem?.fieldError(pointer);
  return message ? <span className="field-error">{message}</span> : null;
}

type Variant = 'primary' | 'secondary' | 'danger' | 'quiet';

export function Button({
  children,
  onClick,
  busy,
  variant = 'secondary',
  disabled,
  type = 'button',
  title,
}: {
  children: ReactNode;
  onClick?: () => void;
  busy?: boolean;
  variant?: Variant;
  disabled?: boolean;
  type?: 'button' | 'submit';
  title?: string;
}) {
  return (
    <button type={type} className={`button ${variant}`} onClick={onClick} disabled={disabled || busy} title={title} aria-busy={busy || undefined}>
      {busy && <Spinner />}
      {children}
    </button>
  );
}

/** A destructive action asks once more in place: "Delete shop?" with the action and Cancel. */
export function ConfirmButton({ children, question, confirmText, onConfirm, busy, disabled }: { children: ReactNode; question: string; confirmText: string; onConfirm: () => void; busy?: boolean; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <Button variant="quiet" onClick={() => setAsking(true)} busy={busy} disabled={disabled}>
        {children}
      </Button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <Button
        variant="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmText}
      </Button>
      <Button variant="quiet" onClick={() => setAsking(false)}>
        Cancel
      </Button>
    </span>
  );
}

export function CopyButton({ text, label = 'Copy', title, variant = 'secondary' }: { text: string; label?: string; title?: string; variant?: Variant }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the clipboard API (pages outside a secure context) the browser's copy command still works.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
  };
  return (
    <Button onClick={() => void copy()} title={title} variant={variant}>
      {copied ? 'Copied' : label}
    </Button>
  );
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['week', 7 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
];

/** "3 minutes ago" / "in 6 days", with the exact time on hover. */
export function Time({ at, empty = '—' }: { at?: string | null; empty?: string }) {
  if (!at) return <span className="muted">{empty}</span>;
  const date = new Date(at);
  const seconds = (date.getTime() - Date.now()) / 1000;
  const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) ?? ['second', 1];
  const text = unit === 'second' ? 'just now' : relative.format(Math.round(seconds / size), unit);
  return (
    <time dateTime={at} title={date.toLocaleString()}>
      {text}
    </time>
  );
}

export function Tabs<T extends string>({ tabs, current, onSelect }: { tabs: [T, string][]; current: T; onSelect: (tab: T) => void }) {
  return (
    <nav className="tabs" role="tablist">
      {tabs.map(([value, text]) => (
        <button key={value} type="button" role="tab" aria-selected={value === current} className={value === current ? 'tab active' : 'tab'} onClick={() => onSelect(value)}>
          {text}
        </button>
      ))}
    </nav>
  );
}

/** A small menu of rarer actions; it closes on a click elsewhere, on Escape, and when an action calls `close`. */
export function Menu({ label, children }: { label: string; children: (close: () => void) => ReactNode }) {
  const menu = useRef<HTMLDetailsElement>(null);
  const closeMenu = () => {
    if (menu.current) menu.current.open = false;
  };
  useEffect(() => {
    const close = (event: Event) => {
      const element = menu.current;
      if (!element?.open) return;
      // The path as dispatched: React may already have replaced the clicked button (an inline confirmation).
      if (event instanceof KeyboardEvent ? event.key === 'Escape' : !event.composedPath().includes(element)) element.open = false;
    };
    document.addEventListener('click', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('click', close);
      document.removeEventListener('keydown', close);
    };
  }, []);
  return (
    <details className="menu" ref={menu}>
      <summary className="button quiet" aria-label={label}>
        More
      </summary>
      <div className="menu-items">{children(closeMenu)}</div>
    </details>
  );
}
