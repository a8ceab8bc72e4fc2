/**
 * GET /openapi.json (the generated document, byte-identical to
 * openapi/openapi.json) and GET /docs (Swagger UI, its assets served from the
 * swagger-ui-dist npm package: no CDN).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolexec API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});
`;

export function docsRoutes(app: FastifyInstance): void {
  // Generated on first request: converting every schema costs start-up time.
  let doc: Promise<string> | undefined;
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  app.get('/openapi.json', async (_req, reply) => {
    doc ??= import('../openapi/document.js').then((m) => m.openApiText());
    return reply.type('application/json; charset=utf-8').send(await doc);
  });
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(PAGE));
  app.get('/docs/init.js', async (_req, reply) => reply.type('application/javascript; charset=utf-8').send(INIT));
  app.get('/docs/assets/:file', async (req, reply) => {
    const file = (req.params as { file: string }).file;
    // Own keys only: "constructor" or "toString" must not name an asset.
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return reply.status(404).send({ error: { code: 'TOOLEXEC_ERR_ROUTE_NOT_FOUND', message: `No asset ${file}` } });
    reply.type(type).header('cache-control', 'public, max-age=86400');
    return reply.send(fs.createReadStream(path.join(dir, file)));
  });
}
