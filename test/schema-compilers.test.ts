/**
 * Fastify's schema compilers loaded on first use (http/schema-compilers.ts):
 * a route that declares a schema is validated and serialized as with
 * Fastify's own, eagerly loaded compilers.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { lazySchemaCompilers } from '../src/http/schema-compilers.js';

async function appWith(lazy: boolean): Promise<FastifyInstance> {
  const app = Fastify(lazy ? { schemaController: { compilersFactory: lazySchemaCompilers } } : {});
  app.post(
    '/echo/:n',
    {
      schema: {
        params: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] },
        querystring: { type: 'object', properties: { flag: { type: 'boolean' } } },
        body: { type: 'object', properties: { name: { type: 'string', maxLength: 5 } }, required: ['name'], additionalProperties: false },
        response: { 200: { type: 'object', properties: { name: { type: 'string' }, n: { type: 'integer' }, flag: { type: 'boolean' } } } },
      },
    },
    // `secret` is not in the response schema: the serializer leaves it out.
    async (req) => ({ ...(req.body as object), ...(req.params as object), ...(req.query as object), secret: 'x' }),
  );
  await app.ready();
  return app;
}

describe('Fastify schema compilers loaded on first use', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close();
  });

  it('validates and serializes as Fastify’s own compilers do', async () => {
    const [eager, lazy] = await Promise.all([appWith(false), appWith(true)]);
    apps.push(eager, lazy);
    const requests = [
      { url: '/echo/3?flag=true', payload: { name: 'abc' } },
      { url: '/echo/0', payload: { name: 'abc' } },
      { url: '/echo/2', payload: { name: 'toolong' } },
      { url: '/echo/2', payload: { name: 'a', extra: 1 } },
      { url: '/echo/2?flag=maybe', payload: { name: 'a' } },
      { url: '/echo/2', payload: {} },
    ];
    for (const r of requests) {
      const [a, b] = await Promise.all([eager.inject({ method: 'POST', ...r }), lazy.inject({ method: 'POST', ...r })]);
      expect({ status: b.statusCode, body: b.json() }, r.url).toEqual({ status: a.statusCode, body: a.json() });
    }
    const ok = await lazy.inject({ method: 'POST', url: '/echo/3?flag=true', payload: { name: 'abc' } });
    expect(ok.json()).toEqual({ name: 'abc', n: 3, flag: true });
    expect((await lazy.inject({ method: 'POST', url: '/echo/0', payload: { name: 'abc' } })).statusCode).toBe(400);
  });
});
