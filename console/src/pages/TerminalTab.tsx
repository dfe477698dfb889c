// A shell in the workspace (xterm.js): a login shell in /data/app of the editor pod, or in a replica of a service,
// over the API's exec WebSocket with the session cookie (docs/api.md, "Shells and forwarded ports"). Frames are
// Kubernetes' `v5.channel.k8s.io`: 0 stdin, 1 stdout, 2 stderr, 3 the final status, 4 the terminal size. The
// terminal fills its box and sends its new size whenever the box changes.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'react';
import { streamAddress, streamProtocols } from '../../../sdk/src/index.ts';
import { answer, svcApi } from '../api.ts';
import { useResource } from '../hooks.ts';
import type { Workspace } from '../types.ts';
import { Button, Section } from '../ui.tsx';

const PROTOCOL = streamProtocols['/api/v1/workspaces/{ws}/exec'];
const Channel = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4 } as const;

type Target = { service?: string; replica?: number };
type Link = { state: 'connecting' } | { state: 'open' } | { state: 'ended'; text: string };

export default function TerminalTab({ ws }: { ws: Workspace }) {
  const landscape = useResource(() => answer(svcApi.GET('/api/v1/workspaces/{ws}/landscape', { params: { path: { ws: ws.id } } })), [ws.id]);
  const [target, setTarget] = useState<Target>({});
  const [session, setSession] = useState(0);
  const [link, setLink] = useState<Link>({ state: 'connecting' });
  const pods = (landscape.data?.services ?? []).filter((s) => (s.type === 'steps' || s.type === 'container') && s.replicas.desired > 0);
  const choices: [string, string][] = [['', 'Workspace (editor pod)']];
  for (const service of pods) {
    for (let i = 0; i < service.replicas.desired; i++) choices.push([`${service.name}/${i}`, service.replicas.desired > 1 ? `${service.name}, replica ${i}` : service.name]);
  }
  const chosen = target.service === undefined ? '' : `${target.service}/${target.replica ?? 0}`;
  // a terminal that ended while the workspace did not run (its editor died and restarts) connects again once it runs
  const ended = link.state === 'ended';
  useEffect(() => {
    if (ws.state === 'running' && ended) setSession((n) => n + 1);
  }, [ws.state]);

  return (
    <Section
      title="Terminal"
      actions={
        <>
          <label className="inline">
            Shell in
            <select
              value={chosen}
              aria-label="Shell in"
              onChange={(e) => {
                const [service, replica] = e.target.value.split('/');
                setTarget(service ? { service, replica: Number(replica) } : {});
              }}
            >
              {choices.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </label>
          <Button onClick={() => setSession((n) => n + 1)}>{link.state === 'ended' ? 'Reconnect' : 'Restart'}</Button>
        </>
      }
    >
      <p className="muted small" data-testid="terminal-state" data-state={link.state}>
        {link.state === 'connecting' && (ws.state === 'sleeping' ? 'Connecting: the workspace wakes up first…' : 'Connecting…')}
        {link.state === 'open' && `A login shell in /data/app${target.service ? ` of ${target.service}, replica ${target.replica ?? 0}` : ''}, as the workspace user.`}
        {link.state === 'ended' && link.text}
      </p>
      <TerminalView key={`${chosen}#${session}`} ws={ws} target={target} onLink={setLink} />
    </Section>
  );
}

function TerminalView({ ws, target, onLink }: { ws: Workspace; target: Target; onLink: (link: Link) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const report = useRef(onLink);
  report.current = onLink;
  // the workspace as the console shows it now: a refused connection says the same as its status
  const workspace = useRef(ws);
  workspace.current = ws;

  useEffect(() => {
    const element = box.current!;
    const terminal = new Terminal({ cursorBlink: true, fontSize: 13, scrollback: 5000, theme: { background: '#10141f', foreground: '#d7deea', cursor: '#8fc1ff' } });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    const styles = adoptStyles(element);
    terminal.open(element);
    fit.fit();
    // The size the shell was told, for people reading the page's markup and for tests.
    const mark = () => Object.assign(element.dataset, { cols: String(terminal.cols), rows: String(terminal.rows) });
    mark();
    report.current({ state: 'connecting' });

    const socket = new WebSocket(execUrl(ws.id, target, terminal.cols, terminal.rows), [PROTOCOL]);
    socket.binaryType = 'arraybuffer';
    const encoder = new TextEncoder();
    const send = (channel: number, data: Uint8Array) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      const message = new Uint8Array(data.length + 1);
      message[0] = channel;
      message.set(data, 1);
      socket.send(message);
    };
    let ended: string | undefined;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      report.current({ state: 'open' });
      terminal.focus();
    };
    socket.onmessage = (event: MessageEvent<ArrayBuffer>) => {
      const bytes = new Uint8Array(event.data);
      if (bytes.length === 0) return;
      const data = bytes.subarray(1);
      if (bytes[0] === Channel.stdout || bytes[0] === Channel.stderr) terminal.write(data);
      else if (bytes[0] === Channel.status) ended = statusText(new TextDecoder().decode(data));
    };
    socket.onclose = () => {
      const now = workspace.current;
      const refused = now.state !== 'running' && now.state !== 'sleeping' && now.state !== 'waking_up' ? `The terminal could not connect: ${now.status_detail}` : 'The terminal could not connect: the workspace may be stopped or failed, or the service has no running replica.';
      const text = ended ?? (opened ? 'The connection to the workspace closed.' : refused);
      terminal.write(`\r\n\x1b[2m[${text}]\x1b[0m\r\n`);
      report.current({ state: 'ended', text });
    };
    const input = terminal.onData((text) => send(Channel.stdin, encoder.encode(text)));
    const binary = terminal.onBinary((text) => send(Channel.stdin, Uint8Array.from(text, (c) => c.charCodeAt(0))));
    const resize = terminal.onResize(({ cols, rows }) => {
      mark();
      send(Channel.resize, encoder.encode(JSON.stringify({ Width: cols, Height: rows })));
    });
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(element);
    return () => {
      observer.disconnect();
      input.dispose();
      binary.dispose();
      resize.dispose();
      socket.onclose = null;
      socket.close();
      terminal.dispose();
      styles();
    };
  }, [ws.id, target]);

  return <div className="terminal" ref={box} data-testid="terminal" />;
}

function execUrl(id: number, target: Target, cols: number, rows: number): string {
  const service = target.service ? { service: target.service, replica: target.replica ?? 0 } : {};
  const query = { tty: true, stdin: true, cols: Math.max(1, cols), rows: Math.max(1, rows), ...service };
  return streamAddress('', '/api/v1/workspaces/{ws}/exec', { path: { ws: id }, query }).url.toString();
}

/** The final status (a Kubernetes Status) as a line for people. */
function statusText(json: string): string {
  try {
    const status = JSON.parse(json) as { status?: string; reason?: string; message?: string; details?: { causes?: { reason: string; message: string }[] } };
    if (status.status === 'Success') return 'The shell exited (exit code 0).';
    const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
    if (status.reason === 'NonZeroExitCode' && code) return `The shell exited (exit code ${code}).`;
    return `The shell did not run: ${status.message ?? 'unknown failure'}.`;
  } catch {
    return 'The shell ended.';
  }
}

/**
 * xterm.js writes its per-terminal rules (cell sizes, colours) into <style> elements, which the console's
 * Content-Security-Policy (style-src 'self', no inline styles) blocks. The same rules are adopted as constructed
 * style sheets instead, which the policy allows because only this page's own script can make them.
 */
function adoptStyles(root: HTMLElement): () => void {
  const sheets = new Map<HTMLStyleElement, CSSStyleSheet>();
  const sync = () => {
    for (const element of root.querySelectorAll('style')) {
      let sheet = sheets.get(element);
      if (!sheet) {
        sheet = new CSSStyleSheet();
        sheets.set(element, sheet);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      }
      sheet.replaceSync(element.textContent ?? '');
    }
  };
  const observer = new MutationObserver(sync);
  observer.observe(root, { subtree: true, childList: true, characterData: true });
  return () => {
    observer.disconnect();
    const mine = new Set(sheets.values());
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((sheet) => !mine.has(sheet));
  };
}
