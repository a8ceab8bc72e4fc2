// The baseline: a bare Fastify route that parses the same JSON body and returns
// JSON of the same shape and size as toolexec's answer for the no-op tool.
import Fastify from 'fastify';
import { serveBench } from './serve.mjs';

const app = Fastify({ logger: false });
app.post('/execute', async (req) => {
  const use = req.body.tool_uses[0];
  return {
    session_id: req.body.session_id,
    tool_results: [{ type: 'tool_result', tool_use_id: use.id, content: 'ok' }],
    messages: [],
    executions: [
      {
        id: 'ex_0123456789abcdef0123456789abcdef',
        session_id: req.body.session_id,
        tool_use_id: use.id,
        tool: use.name,
        status: 'succeeded',
        decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Noop' } },
        duration_ms: 0.123,
        error_class: null,
        result_id: null,
      },
    ],
  };
});
await serveBench(app);
