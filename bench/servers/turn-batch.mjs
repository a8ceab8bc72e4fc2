// Gathers what the requests of one turn of the event loop queue, and hands the
// batch to `flush` at setImmediate. Every request of a turn awaits the same
// promise (one promise per turn rather than one, with its two closures, per
// request): they are all answered at once, when the batch is durable.
export function turnBatcher(flush) {
  let executions = [];
  let audits = [];
  let seqs = [];
  let pending;
  let settle;
  const run = () => {
    const batch = { executions, audits, seqs };
    const done = settle;
    executions = [];
    audits = [];
    seqs = [];
    pending = undefined;
    flush(batch, done);
  };
  /** Queues a request's rows; resolves once `flush` calls done() for its batch (or rejects with done(error)). */
  return function queue(seq, execution, audit) {
    if (pending === undefined) {
      pending = new Promise((resolve, reject) => {
        settle = (e) => (e === undefined ? resolve() : reject(e));
      });
      setImmediate(run);
    }
    executions.push(execution);
    audits.push(audit);
    seqs.push(seq);
    return pending;
  };
}
