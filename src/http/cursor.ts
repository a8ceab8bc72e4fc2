/**
 * Opaque pagination cursors: the position of the last row of a page, the
 * listing it belongs to and a digest of the filters it was issued with. The
 * positions of the listings are different counters (audit ids, execution
 * sequence numbers, places among pending requests): a bare position given to
 * another listing, or with other filters, was read as one of its own and
 * answered a page from the wrong place. Such a cursor is refused instead.
 */
import { createHash } from 'node:crypto';
import { ToolexecError } from '../errors.js';

/** The listings that page by cursor, and the route each serves. */
const LISTINGS = { audit: 'GET /audit', executions: 'GET /executions', requests: 'GET /permissions/requests' } as const;
export type CursorListing = keyof typeof LISTINGS;

/** The filters of a page (limit excluded: a client may change its page size between pages). */
export type CursorFilters = Record<string, string | number | undefined>;

const CURSOR = /^c2:(audit|executions|requests):(\d{1,16}):([A-Za-z0-9_-]{11})$/;

function filterTag(filters: CursorFilters): string {
  const set = Object.keys(filters)
    .filter((k) => filters[k] !== undefined)
    .sort()
    .map((k) => [k, filters[k]]);
  return createHash('sha256').update(JSON.stringify(set)).digest('base64url').slice(0, 11);
}

export function encodeCursor(listing: CursorListing, n: number, filters: CursorFilters): string {
  return Buffer.from(`c2:${listing}:${n}:${filterTag(filters)}`, 'utf8').toString('base64url');
}

function parse(c: string): RegExpExecArray {
  const m = CURSOR.exec(Buffer.from(c, 'base64url').toString('utf8'));
  if (!m) throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', 'cursor: not a cursor this service issued; start again without a cursor');
  return m;
}

/** The position a cursor continues from, for `listing` with these filters; a 400 for any other cursor. */
export function decodeCursor(c: string | undefined, listing: CursorListing, filters: CursorFilters): number | undefined {
  if (c === undefined || c === '') return undefined;
  const m = parse(c);
  if (m[1] !== listing) {
    throw new ToolexecError(
      'TOOLEXEC_ERR_REQUEST_INVALID',
      `cursor: a cursor of ${LISTINGS[m[1] as CursorListing]}, not of ${LISTINGS[listing]}; start again without a cursor`,
    );
  }
  if (m[3] !== filterTag(filters)) {
    throw new ToolexecError(
      'TOOLEXEC_ERR_REQUEST_INVALID',
      'cursor: issued for other filters; page with the filters the cursor came with, or start again without a cursor',
    );
  }
  return Number(m[2]);
}

/** The position in a cursor of `listing`, whatever its filters (the CLI's follow mode); undefined for any other string. */
export function cursorPosition(c: string, listing: CursorListing): number | undefined {
  const m = CURSOR.exec(Buffer.from(c, 'base64url').toString('utf8'));
  return m && m[1] === listing ? Number(m[2]) : undefined;
}

/** A time given as epoch milliseconds or an ISO 8601 date. */
export function parseTime(v: string | undefined, field: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (/^\d{1,16}$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `${field}: expected epoch milliseconds or an ISO 8601 date, got "${v}"`);
  return t;
}
