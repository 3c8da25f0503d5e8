import type { Api } from './http.js';
import type { Coordinator } from '../coordinator.js';

const DOCS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Video Shorts API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}code,pre{background:#f5f5f5;border-radius:4px}
pre{padding:.6rem;overflow:auto;font-size:13px}.m{display:inline-block;min-width:4.5rem;font-weight:700}
.get{color:#0a7}.post{color:#07c}.put{color:#a60}.delete{color:#c22}details{margin:.3rem 0 .8rem 1rem}</style></head>
<body><h1>Video Shorts API</h1><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).
Authenticate with <code>Authorization: Bearer &lt;API key or JWT&gt;</code> or <code>X-API-Key</code>.</p><div id="ops">Loading…</div>
<script>
fetch('/openapi.json').then(r=>r.json()).then(doc=>{const byTag={};
for(const [p,ops] of Object.entries(doc.paths))for(const [m,op] of Object.entries(ops))(byTag[op.tags[0]]??=[]).push({p,m,op});
const esc=s=>String(s).replace(/[&<>]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
document.getElementById('ops').innerHTML=Object.entries(byTag).map(([tag,list])=>'<h2>'+esc(tag)+'</h2>'+list.map(({p,m,op})=>
'<div><span class="m '+m+'">'+m.toUpperCase()+'</span><code>'+esc(p)+'</code> — '+esc(op.summary)+
'<details><summary>schema</summary><pre>'+esc(JSON.stringify({parameters:op.parameters,requestBody:op.requestBody,responses:op.responses},null,2))+'</pre></details></div>').join('')).join('');});
</script></body></html>`;

export function registerSystemRoutes(api: Api, app: Coordinator): void {
  api.router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  api.router.get('/readyz', async (ctx) => {
    try {
      await app.db.query('SELECT 1');
      ctx.body = { status: 'ready', agentsConnected: app.registry.connectedCount() };
    } catch {
      ctx.status = 503;
      ctx.body = { error: 'Service Unavailable', message: 'database unreachable' };
    }
  });
  api.router.get('/metrics', async (ctx) => {
    ctx.type = app.metrics.registry.contentType;
    ctx.body = await app.metrics.registry.metrics();
  });
  api.router.get('/openapi.json', (ctx) => {
    ctx.body = api.openApiDocument({
      title: 'Video Shorts API',
      version: '1.0.0',
      description: 'Jobs, renders, brand presets, files and social posting. See docs/api.md for contract decisions.',
    });
  });
  api.router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = DOCS_PAGE;
  });
}
