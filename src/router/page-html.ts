// The HTML form of a router page: one self-contained document (inline CSS, no script, no external assets) that
// reads well in light and dark mode and inside the console's frame. Everything placed into it is escaped here.
import { WAITING_SCRIPT } from './waiting.ts';

/** What a page shows; every string is plain text, escaped on the way in. */
export interface PageView {
  status: number;
  title: string;
  explanation: string;
  detail?: string;
  /** A link styled as the page's main button (sign-in, open in a new tab). */
  action?: { label: string; href: string; newTab: boolean };
  /** A "Try again" link that reloads the address. */
  retry: boolean;
  /** The page reloads itself after this many seconds (waiting pages), showing `statusText` while it waits. */
  refreshSeconds?: number;
  /** A waiting page that reloads as soon as what it waits for answers (waiting.ts); the refresh stays for no script. */
  reloadWhenReady?: boolean;
  statusText?: string;
  requestId?: string;
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => entities[char]);
}

const style = `:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--text:#1c2230;--muted:#5f6877;--line:#dfe3e9;
--accent:#2457d6;--accent-text:#fff;--note:#f0f3f8;--warn:#b3261e;--ok:#1f7a45}
@media (prefers-color-scheme:dark){:root{--bg:#12151b;--card:#1b2029;--text:#e6e9ef;--muted:#9aa3b2;--line:#2c3340;
--accent:#7ea3ff;--accent-text:#0d1220;--note:#222935;--warn:#ff8a80;--ok:#6fd39b}}
*{box-sizing:border-box}
html,body{height:100%}
body{margin:0;display:flex;align-items:center;justify-content:center;padding:24px;background:var(--bg);color:var(--text);
font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{width:100%;max-width:560px;background:var(--card);border:1px solid var(--line);border-radius:12px;padding:32px 36px;
box-shadow:0 1px 2px rgb(0 0 0/.04),0 8px 24px rgb(0 0 0/.06)}
.status{display:inline-block;margin:0 0 12px;padding:2px 10px;border-radius:999px;border:1px solid var(--line);
color:var(--muted);font:600 13px/1.6 ui-monospace,SFMono-Regular,Menlo,monospace;letter-spacing:.04em}
.status.problem{color:var(--warn)}.status.fine{color:var(--ok)}.status.waiting{color:var(--accent)}
h1{margin:0 0 10px;font-size:24px;line-height:1.25;font-weight:650;overflow-wrap:anywhere}
p{margin:0 0 14px}
.explanation{color:var(--muted)}
.detail{padding:10px 14px;border-radius:8px;background:var(--note);border-left:3px solid var(--accent);
overflow-wrap:anywhere;white-space:pre-wrap}
.actions{display:flex;flex-wrap:wrap;gap:10px;margin:22px 0 4px}
.button{display:inline-block;padding:9px 18px;border-radius:8px;border:1px solid var(--accent);font-weight:600;
text-decoration:none;color:var(--accent)}
.button.primary{background:var(--accent);color:var(--accent-text)}
.button:hover{filter:brightness(1.08)}.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.waiting{display:flex;align-items:center;gap:12px;color:var(--muted)}
.spinner{flex:none;width:18px;height:18px;border-radius:50%;border:2.5px solid var(--line);border-top-color:var(--accent);
animation:spin .9s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.spinner{animation:none}}
footer{margin-top:26px;padding-top:14px;border-top:1px solid var(--line);color:var(--muted);font-size:13px;
display:flex;justify-content:space-between;gap:12px;flex-wrap:wrap}
footer code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}`;

function statusClass(view: PageView): string {
  if (view.refreshSeconds !== undefined) return 'waiting';
  return view.status < 400 ? 'fine' : 'problem';
}

function actionsHtml(view: PageView): string {
  const links: string[] = [];
  if (view.action) {
    const target = view.action.newTab ? ' target="_blank" rel="noopener noreferrer"' : '';
    links.push(`<a class="button primary" href="${escapeHtml(view.action.href)}"${target}>${escapeHtml(view.action.label)}</a>`);
  }
  // An empty href is the document's own address: reloading needs no script.
  if (view.retry) links.push(`<a class="button${view.action ? '' : ' primary'}" href="">Try again</a>`);
  return links.length > 0 ? `<div class="actions">${links.join('')}</div>` : '';
}

export function pageHtml(view: PageView): string {
  const meta = `<meta http-equiv="refresh" content="${view.refreshSeconds}">`;
  const refresh = view.refreshSeconds === undefined ? '' : view.reloadWhenReady ? `<noscript>${meta}</noscript>\n<script>${WAITING_SCRIPT}</script>\n` : `${meta}\n`;
  const detail = view.detail ? `<p class="detail">${escapeHtml(view.detail)}</p>\n` : '';
  const waiting =
    view.refreshSeconds !== undefined
      ? `<p class="waiting" role="status"><span class="spinner" aria-hidden="true"></span>${escapeHtml(view.statusText ?? 'This page reloads by itself.')}</p>\n`
      : '';
  const requestId = view.requestId ? `<code>Request ${escapeHtml(view.requestId)}</code>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
${refresh}<title>${escapeHtml(view.title)}</title>
<style>${style}</style>
</head>
<body>
<main>
<p class="status ${statusClass(view)}">${view.status}</p>
<h1>${escapeHtml(view.title)}</h1>
<p class="explanation">${escapeHtml(view.explanation)}</p>
${detail}${waiting}${actionsHtml(view)}
<footer><span>svc router</span>${requestId}</footer>
</main>
</body>
</html>
`;
}
