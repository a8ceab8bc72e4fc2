// npm run openapi:write | openapi:check
// Generates the OpenAPI document from the route table and zod schemas (dist/),
// checks that every route the app registers is documented and vice versa,
// validates the document, and compares it with openapi/openapi.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildApp } from '../dist/app.js';
import { openApiText, ROUTE_DOCS } from '../dist/http/openapi/document.js';

// Assets of /docs and /console, not part of the API.
const UNDOCUMENTED = new Set(['get /docs/init.js', 'get /docs/assets/:file', 'get /console/assets/:file']);

const mode = process.argv[2];
const file = path.resolve('openapi/openapi.json');
const text = openApiText();
const problems = [];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-openapi-'));
fs.mkdirSync(path.join(dir, 'ws'));
const app = await buildApp({ logger: false, config: { workspace: { root: path.join(dir, 'ws') }, storage: { path: path.join(dir, 'db.sqlite') } } });
const registered = new Set(app.routeList.map((r) => `${r.method} ${r.url}`));
await app.close();
fs.rmSync(dir, { recursive: true, force: true });
const documented = new Set(ROUTE_DOCS.map((r) => `${r.method} ${r.path}`));
for (const r of registered) if (!documented.has(r) && !UNDOCUMENTED.has(r)) problems.push(`route ${r} is registered but not documented`);
for (const r of documented) if (!registered.has(r)) problems.push(`route ${r} is documented but not registered`);

try {
  await SwaggerParser.validate(JSON.parse(text));
} catch (e) {
  problems.push(`the document is not valid OpenAPI: ${e.message}`);
}

if (mode === '--write') {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  console.log(`wrote ${path.relative(process.cwd(), file)} (${ROUTE_DOCS.length} operations)`);
} else {
  const committed = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (committed !== text) problems.push('openapi/openapi.json differs from the routes: run npm run openapi:write and commit it');
}
if (problems.length > 0) {
  for (const p of problems) console.error(`openapi: ${p}`);
  process.exit(1);
}
if (mode !== '--write') console.log(`openapi: ok (${ROUTE_DOCS.length} operations)`);
