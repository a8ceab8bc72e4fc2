/**
 * A fixed bucket layout for call durations, shared by GET /stats (percentiles)
 * and /metrics (Prometheus buckets), so that one increment per call feeds
 * both and the cost never grows with the history.
 *
 * Layout: each decade from 1 µs to 1,000 s is cut into 90 buckets of equal
 * width (1.0, 1.1, … 9.9 times the decade's start), plus one bucket below
 * 1 µs and one at or above 1,000 s: 812 buckets. A bucket is at most 10% as
 * wide as its lower bound, so a percentile reported as its bucket's midpoint
 * is within 5% of the true value (clamped to the observed min and max). The
 * 1-2.5-5 steps Prometheus users expect (and 3, 6, 12, …) are bucket
 * boundaries, so the exported cumulative buckets are exact: bucket `le=x`
 * counts durations below x.
 */

/** Stored with persisted histograms; a different layout is not merged. */
export const HISTOGRAM_LAYOUT = 'dec90:1us-1000s';

const STEPS = 90;
/** Decades covered: [1e-3 ms, 1e6 ms). */
const MIN_EXP = -3;
const MAX_EXP = 6;
const DECADES = MAX_EXP - MIN_EXP;
export const BUCKETS = DECADES * STEPS + 2;
const OVERFLOW = BUCKETS - 1;
const MIN_MS = 10 ** MIN_EXP;
const MAX_MS = 10 ** MAX_EXP;
const POW10: number[] = Array.from({ length: DECADES + 1 }, (_, i) => 10 ** (MIN_EXP + i));

/** The bucket of a duration in ms: O(1), no allocation. */
export function bucketOf(ms: number): number {
  if (!(ms >= MIN_MS)) return 0;
  if (ms >= MAX_MS) return OVERFLOW;
  let d = Math.min(DECADES - 1, Math.max(0, Math.floor(Math.log10(ms)) - MIN_EXP));
  // log10 may land one decade off next to a power of ten.
  if (ms < POW10[d]!) d -= 1;
  else if (ms >= POW10[d + 1]!) d += 1;
  const base = POW10[d]!;
  // The epsilon keeps decimal boundaries (1.2e5 / 1e5 = 1.1999…) in their own bucket.
  let step = Math.floor((ms * 10) / base - 10 + 1e-9);
  if (step < 0) step = 0;
  else if (step >= STEPS) step = STEPS - 1;
  return 1 + d * STEPS + step;
}

/** Lower bound of a bucket in ms (0 for the bucket below 1 µs). */
export function bucketLow(i: number): number {
  if (i <= 0) return 0;
  if (i >= OVERFLOW) return MAX_MS;
  const d = Math.floor((i - 1) / STEPS);
  const step = (i - 1) % STEPS;
  return POW10[d]! * (1 + step / 10);
}

/** Upper bound of a bucket in ms (Infinity for the last). */
export function bucketHigh(i: number): number {
  return i >= OVERFLOW ? Number.POSITIVE_INFINITY : bucketLow(i + 1);
}

/** The first bucket whose lower bound is `ms` (a boundary of the layout); throws otherwise. */
export function boundaryIndex(ms: number): number {
  const i = bucketOf(ms);
  const low = bucketLow(i);
  if (Math.abs(low - ms) > ms * 1e-9) throw new Error(`${ms} ms is not a bucket boundary`);
  return i;
}

/**
 * The values at quantiles `qs` (ascending, 0..1) of a histogram holding
 * `count` entries, in ms, in one pass: each is the midpoint of the bucket
 * that holds it, clamped to [min, max]. Empty: nulls.
 */
export function quantiles(counts: ArrayLike<number>, count: number, qs: readonly number[], min: number, max: number): Array<number | null> {
  const out: Array<number | null> = qs.map(() => null);
  if (count <= 0) return out;
  let k = 0;
  let rank = Math.max(1, Math.ceil(qs[0]! * count));
  let seen = 0;
  for (let i = 0; i < BUCKETS && k < qs.length; i++) {
    seen += counts[i] ?? 0;
    while (k < qs.length && seen >= rank) {
      out[k] = i === 0 ? min : i === OVERFLOW ? max : Math.min(max, Math.max(min, (bucketLow(i) + bucketHigh(i)) / 2));
      k++;
      if (k < qs.length) rank = Math.max(1, Math.ceil(qs[k]! * count));
    }
  }
  for (; k < qs.length; k++) out[k] = max;
  return out;
}

/** Sparse form for storage: [[bucket, count], …] for non-empty buckets. */
export function toSparse(counts: ArrayLike<number>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < BUCKETS; i++) {
    const n = counts[i] ?? 0;
    if (n > 0) out.push([i, n]);
  }
  return out;
}

/** Adds a sparse histogram into dense counts; entries out of range or not counts are ignored. */
export function addSparse(into: Float64Array, sparse: unknown): void {
  if (!Array.isArray(sparse)) return;
  for (const e of sparse) {
    if (!Array.isArray(e)) continue;
    const [i, n] = e as unknown[];
    if (typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < BUCKETS && typeof n === 'number' && n > 0) into[i] = (into[i] ?? 0) + n;
  }
}
