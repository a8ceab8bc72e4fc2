/** GET /ws: the websocket (contract §9); the hub does the rest. */
import type { FastifyInstance } from 'fastify';
import { ToolexecError } from '../../errors.js';
import type { Services } from '../../services.js';

export function wsRoutes(app: FastifyInstance, svc: Services): void {
  app.route({
    method: 'GET',
    url: '/ws',
    config: { scope: 'any' },
    // A plain GET gets an error with a code (the plugin's default is an empty 404).
    handler: async () => {
      throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', 'GET /ws is a websocket: send it as an Upgrade: websocket request');
    },
    wsHandler: (socket, req) => {
      svc.hub.attach(socket, req.principal ?? { name: 'anonymous', scopes: new Set(['execute', 'read', 'approve', 'admin']) });
    },
  });
}
