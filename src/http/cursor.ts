/** Opaque pagination cursors: the position of the last row of a page. */
import { ToolexecError } from '../errors.js';

export function encodeCursor(n: number): string {
  return Buffer.from(`c1:${n}`, 'utf8').toString('base64url');
}

export function decodeCursor(c: string | undefined): number | undefined {
  if (c === undefined || c === '') return undefined;
  const m = /^c1:(\d{1,16})$/.exec(Buffer.from(c, 'base64url').toString('utf8'));
  if (!m) throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', 'cursor: not a cursor this service issued');
  return Number(m[1]);
}

/** A time given as epoch milliseconds or an ISO 8601 date. */
export function parseTime(v: string | undefined, field: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (/^\d{1,16}$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `${field}: expected epoch milliseconds or an ISO 8601 date, got "${v}"`);
  return t;
}
