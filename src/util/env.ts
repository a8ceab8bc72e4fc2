/**
 * The environments child processes receive: the service's own, minus its
 * secrets. Always removed: every TOOLEXEC_* variable and every variable whose
 * value is a secret value given (tokens; for Bash and hooks also the
 * credentials the configuration's headers name). `server.redact` entries
 * remove variables by name, or by value when written as `/regex/`.
 */
function redactRules(redact: readonly string[]): { names: Set<string>; patterns: RegExp[] } {
  const names = new Set<string>();
  const patterns: RegExp[] = [];
  for (const r of redact) {
    const m = /^\/(.+)\/([a-z]*)$/.exec(r);
    if (m) {
      try {
        patterns.push(new RegExp(m[1]!, m[2]!.replace(/[gy]/g, '')));
      } catch {
        /* an invalid pattern is reported by the logging setup */
      }
    } else names.add(r);
  }
  return { names, patterns };
}

export function childEnvironment(env: NodeJS.ProcessEnv, secrets: readonly string[], redact: readonly string[] = []): NodeJS.ProcessEnv {
  const secretValues = new Set(secrets.filter((s) => s.length > 0));
  const { names, patterns } = redactRules(redact);
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (k.startsWith('TOOLEXEC_')) continue;
    if (names.has(k)) continue;
    if (secretValues.has(v)) continue;
    if (patterns.some((p) => p.test(v))) continue;
    out[k] = v;
  }
  return out;
}
