/**
 * The environment child processes (Bash, hooks, stdio MCP servers) receive:
 * the service's own, minus its secrets. Removed: every TOOLEXEC_* variable,
 * every variable whose value is one of the configured tokens, and the names
 * listed in `server.redact` that are environment variable names.
 */
export function childEnvironment(env: NodeJS.ProcessEnv, secrets: readonly string[], extraNames: readonly string[] = []): NodeJS.ProcessEnv {
  const secretValues = new Set(secrets.filter((s) => s.length > 0));
  const names = new Set(extraNames);
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (k.startsWith('TOOLEXEC_')) continue;
    if (names.has(k)) continue;
    if (secretValues.has(v)) continue;
    out[k] = v;
  }
  return out;
}
