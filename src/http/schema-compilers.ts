/**
 * Fastify's schema compilers (ajv for validation, fast-json-stringify for
 * responses), loaded when a route first declares a schema rather than when
 * the server is made. toolexec's routes declare none (bodies, queries and
 * params are zod-checked in the handlers: http/validate.ts), yet Fastify
 * requires both compilers in its constructor: 83 of ajv's modules and
 * fast-json-stringify's, about a tenth of serve's time to ready.
 *
 * A route that declares a schema gets the same compilers, loaded then. One
 * difference: Fastify treats compilers given here as custom ones, and does
 * not lower-case the keys of a `headers` schema for them.
 */
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<Factories['buildValidator']>;
type SerializerFactory = NonNullable<Factories['buildSerializer']>;

// Resolved from Fastify's own place: they are its dependencies, not toolexec's.
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));

// One factory each, as Fastify keeps: each pools its compilers by options.
let validator: ValidatorFactory | undefined;
let serializer: SerializerFactory | undefined;

export const lazySchemaCompilers: Factories = {
  buildValidator: (externalSchemas, options) => {
    validator ??= (fastifyRequire('@fastify/ajv-compiler') as () => ValidatorFactory)();
    return validator(externalSchemas, options);
  },
  buildSerializer: (externalSchemas, options) => {
    serializer ??= (fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerFactory)();
    return serializer(externalSchemas, options);
  },
};
