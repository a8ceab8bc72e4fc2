// The per-request work every durable variant of the bare route shares (the
// floor bench, ../floor.bench.mjs): the execution row and the audit row that
// bare-durable.mjs writes, built the same way (same columns, same values,
// same JSON.stringify calls), and the answer of bare.mjs. Kept in one place so
// that the variants differ only in how they make the rows durable.
import { hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const EXECUTION_COLUMNS = `seq, id, session_id, tool_use_id, tool, status, input_digest, input, actor, created_at,
  decision, error_class, is_error, result_id, result_block, hook_messages, timings, finished_at, duration_ms, input_key`;
export const AUDIT_COLUMNS = 'ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest';

/** A temp directory for a server's files, removed by the returned function (kept with FLOOR_KEEP=1, to look at the rows). */
export function benchDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (process.env.FLOOR_KEEP === '1') console.error(`FLOOR_KEEP ${dir}`);
  return { dir, remove: () => process.env.FLOOR_KEEP === '1' || fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Seven step timings, as toolexec records them (rounded to the microsecond):
 * seven distinct doubles, since V8 caches the string of a number it has just
 * converted and one value seven times would cost a seventh of the conversions.
 */
const us = (ms) => Math.round(ms * 1000) / 1000;
function timings(started) {
  return {
    lookup: us(performance.now() - started),
    parse: us(performance.now() - started),
    validate: us(performance.now() - started),
    pre_hooks: us(performance.now() - started),
    permission: us(performance.now() - started),
    call: us(performance.now() - started),
    post_hooks: us(performance.now() - started),
  };
}

const DECISION = { behavior: 'allow', reason: { type: 'rule', detail: 'Noop' } };
let seq = 0;

/**
 * What a request records, with its JSON columns still objects (decision,
 * result block, timings), and its answer. `rowsOf` makes the rows of it.
 */
export function requestRecord(body) {
  const started = performance.now();
  const createdAt = Date.now();
  const use = body.tool_uses[0];
  const input = JSON.stringify(use.input);
  const digest = hash('sha256', input);
  seq += 1;
  const id = `ex_${seq.toString(36).padStart(11, '0')}${hash('sha256', `${createdAt}${seq}`).slice(0, 8)}`;
  const block = { type: 'tool_result', tool_use_id: use.id, content: 'ok' };
  const duration = performance.now() - started;
  const finishedAt = Date.now();
  const record = {
    seq,
    id,
    session_id: body.session_id,
    tool_use_id: use.id,
    tool: use.name,
    input_digest: digest,
    input,
    created_at: createdAt,
    decision: { ...DECISION, chain: [{ layer: 'tool', outcome: 'passthrough', detail: 'tool: passthrough' }, { layer: 'rules', outcome: 'allow', detail: 'Noop' }] },
    block,
    timings: timings(started),
    finished_at: finishedAt,
    duration_ms: duration,
  };
  const answer = {
    session_id: body.session_id,
    tool_results: [block],
    messages: [],
    executions: [
      {
        id,
        session_id: body.session_id,
        tool_use_id: use.id,
        tool: use.name,
        status: 'succeeded',
        decision: DECISION,
        duration_ms: +duration.toFixed(3),
        error_class: null,
        result_id: null,
      },
    ],
  };
  return { seq, record, answer };
}

/** The record's two rows as parameter arrays (execution: 20 columns in EXECUTION_COLUMNS order; audit: 10 in AUDIT_COLUMNS order). */
export function rowsOf(r) {
  const execution = [
    r.seq,
    r.id,
    r.session_id,
    r.tool_use_id,
    r.tool,
    'succeeded',
    r.input_digest,
    r.input,
    'bench',
    r.created_at,
    JSON.stringify(r.decision),
    null,
    0,
    null,
    JSON.stringify(r.block),
    null,
    JSON.stringify(r.timings),
    r.finished_at,
    r.duration_ms,
    null,
  ];
  const audit = [r.finished_at, r.session_id, r.tool_use_id, r.id, r.tool, 'allow', 'rule', 'Noop', 'bench', r.input_digest];
  return { execution, audit };
}

/** The request's two rows, built as bare-durable.mjs builds them, and its answer. */
export function requestRows(body) {
  const { seq, record, answer } = requestRecord(body);
  const { execution, audit } = rowsOf(record);
  return { seq, execution, audit, answer };
}
