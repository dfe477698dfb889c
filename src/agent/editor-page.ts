// The built-in editor's single page: the file tree of /data/app on the left, the open file in a textarea on the
// right, Save (or Ctrl+S) writes it back. Plain HTML and script, no build step; the real code-server comes later.

export function editorPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
  body { margin: 0; font: 14px system-ui, sans-serif; display: grid; grid-template-columns: 280px 1fr; height: 100vh; }
  nav { overflow: auto; border-right: 1px solid #ccc; padding: 8px 0; background: #f6f6f6; }
  nav a { display: block; padding: 2px 8px; color: #222; text-decoration: none; white-space: nowrap; cursor: pointer; }
  nav a.dir { color: #666; cursor: default; }
  nav a.open { background: #dde7f5; }
  main { display: grid; grid-template-rows: auto 1fr; min-width: 0; }
  header { display: flex; gap: 8px; align-items: center; padding: 6px 8px; border-bottom: 1px solid #ccc; }
  header span { flex: 1; font-family: monospace; }
  textarea { width: 100%; height: 100%; box-sizing: border-box; border: 0; padding: 8px; font: 13px monospace; resize: none; }
</style>
</head>
<body>
<nav id="tree" aria-label="Files"></nav>
<main>
  <header>
    <span id="current">No file open</span>
    <em id="status" role="status"></em>
    <button id="new">New file</button>
    <button id="save" disabled>Save</button>
  </header>
  <textarea id="text" spellcheck="false" disabled aria-label="File content"></textarea>
</main>
<script type="module">
const tree = document.getElementById('tree');
const text = document.getElementById('text');
const save = document.getElementById('save');
const current = document.getElementById('current');
const status = document.getElementById('status');
let openPath = null;
const fileUrl = (p) => 'api/file?path=' + encodeURIComponent(p);

async function loadTree() {
  const answer = await fetch('api/tree');
  const { entries, truncated } = await answer.json();
  tree.replaceChildren(...entries.map((entry) => {
    const link = document.createElement('a');
    const depth = entry.path.split('/').length - 1;
    link.textContent = entry.path.split('/').pop() + (entry.type === 'dir' ? '/' : '');
    link.style.paddingLeft = 8 + depth * 14 + 'px';
    link.className = entry.type === 'dir' ? 'dir' : (entry.path === openPath ? 'open' : '');
    link.dataset.path = entry.path;
    if (entry.type === 'file') link.onclick = () => openFile(entry.path);
    return link;
  }));
  if (truncated) tree.append(Object.assign(document.createElement('p'), { textContent: '(more files not shown)' }));
}

async function openFile(path) {
  const answer = await fetch(fileUrl(path));
  if (!answer.ok) { status.textContent = await answer.text(); return; }
  openPath = path;
  text.value = await answer.text();
  text.disabled = false;
  save.disabled = false;
  current.textContent = path;
  status.textContent = '';
  for (const link of tree.querySelectorAll('a')) link.classList.toggle('open', link.dataset.path === path);
}

async function saveFile() {
  if (openPath === null) return;
  const answer = await fetch(fileUrl(openPath), { method: 'PUT', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: text.value });
  status.textContent = answer.ok ? 'Saved' : 'Not saved: ' + await answer.text();
}

save.onclick = saveFile;
document.getElementById('new').onclick = async () => {
  const path = prompt('Path of the new file, relative to the workspace:');
  if (!path) return;
  const answer = await fetch(fileUrl(path), { method: 'PUT', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' });
  if (!answer.ok) { status.textContent = 'Not created: ' + await answer.text(); return; }
  await loadTree();
  await openFile(path);
};
document.addEventListener('keydown', (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === 's') { event.preventDefault(); saveFile(); }
});
loadTree();
</script>
</body>
</html>
`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
