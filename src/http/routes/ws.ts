/** GET /ws: the websocket (contract §9); the hub does the rest. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function wsRoutes(app: FastifyInstance, svc: Services): void {
  app.get('/ws', { websocket: true, config: { scope: 'any' } }, (socket, req) => {
    svc.hub.attach(socket, req.principal ?? { name: 'anonymous', scopes: new Set(['execute', 'read', 'approve', 'admin']) });
  });
}
