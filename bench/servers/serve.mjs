// What every bench server does once its app is built: listen on a free loopback
// port and say which (startServer in ../lib.mjs waits for the line), report its
// CPU time on SIGUSR2 (the benches compare CPU per request, which a shared,
// noisy machine disturbs less than throughput), and close on SIGTERM.

/** Listens, then answers SIGUSR2 with `CPU total user system` (µs) and SIGTERM with close, `cleanup`, exit 0. */
export async function serveBench(app, cleanup = () => {}) {
  await app.listen({ host: '127.0.0.1', port: 0 });
  // The handler before the line: the bench asks for the CPU time as soon as
  // it reads the line, and a SIGUSR2 that came first would kill the server
  // (its default action), which the bench then only saw as no answer.
  process.on('SIGUSR2', () => {
    const u = process.cpuUsage();
    console.log(`CPU ${u.user + u.system} ${u.user} ${u.system}`);
  });
  console.log(`LISTENING ${app.server.address().port}`);
  process.on('SIGTERM', () =>
    app.close().then(() => {
      cleanup();
      process.exit(0);
    }),
  );
}
