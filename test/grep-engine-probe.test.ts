/**
 * Whether ripgrep is installed is probed once per PATH and kept; a probe cut
 * short by its 5 s timeout (a loaded machine) is not kept, or the process
 * would search with the JS engine for good. The rg here is a script that
 * stalls on its first run and then hands over to the real rg.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseEngine, rgAvailable } from '../src/grep/engine.js';
import { cleanupTmp, tmpDir } from './helpers.js';

afterAll(cleanupTmp);

describe('the rg probe', () => {
  it('does not keep a probe that timed out: the next search asks again and finds rg', () => {
    const realRg = execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
    const bin = tmpDir();
    const marker = path.join(bin, 'stalled-once');
    fs.writeFileSync(path.join(bin, 'rg'), `#!/bin/sh\nif [ ! -e ${marker} ]; then : > ${marker}; exec sleep 8; fi\nexec ${realRg} "$@"\n`, { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin` };
    expect(rgAvailable(env)).toBe(false);
    expect(fs.existsSync(marker)).toBe(true);
    expect(rgAvailable(env)).toBe(true);
    expect(chooseEngine('auto', env)).toBe('rg');
  });

  it('keeps a definite answer: no rg on the PATH is the JS engine, without probing again', () => {
    const bin = tmpDir();
    const env = { ...process.env, PATH: bin };
    expect(chooseEngine('auto', env)).toBe('js');
    // An rg that appears later on that PATH is not seen: the answer was kept.
    fs.writeFileSync(path.join(bin, 'rg'), '#!/bin/sh\necho "ripgrep 14.0.0"\n', { mode: 0o755 });
    expect(rgAvailable(env)).toBe(false);
  });
});
