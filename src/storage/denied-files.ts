/**
 * The denied files met by identity, kept in SQLite (migration 5) so that the
 * memory of permissions/denied-memory.ts survives a restart. Each write is
 * its own small statement, run at once rather than through the group-commit
 * writer: it is made before the command that may take the file's denied name
 * away runs (an extractor), and a restart right after must still find it.
 * Writes happen only when a denied file is met for the first time, so they
 * are few; checks read the memory, never the table.
 */
import type { Statement } from 'better-sqlite3';
import { DeniedFileMemory, type DeniedFileStore, type MetDenied } from '../permissions/denied-memory.js';
import type { Db } from './db.js';

export class SqliteDeniedFiles implements DeniedFileStore {
  private readonly putStmt: Statement;
  private readonly removeStmt: Statement<[number, number]>;
  private readonly overflowStmt: Statement;

  constructor(private readonly db: Db) {
    this.putStmt = db.prepare(
      'INSERT INTO denied_files (dev, ino, born, path, rule, met_at) VALUES (@dev, @ino, @born, @path, @rule, @at) ' +
        'ON CONFLICT (dev, ino) DO UPDATE SET born = excluded.born, path = excluded.path, rule = excluded.rule, met_at = excluded.met_at',
    );
    this.removeStmt = db.prepare('DELETE FROM denied_files WHERE dev = ? AND ino = ?');
    this.overflowStmt = db.prepare(
      'INSERT INTO denied_files_overflow (id, born, path, at) VALUES (1, @born, @path, @at) ' +
        'ON CONFLICT (id) DO UPDATE SET born = max(born, excluded.born), path = excluded.path, at = excluded.at',
    );
  }

  put(f: MetDenied): void {
    this.putStmt.run({ ...f, at: Date.now() });
  }

  remove(dev: number, ino: number): void {
    this.removeStmt.run(dev, ino);
  }

  overflow(born: number, path: string): void {
    this.overflowStmt.run({ born, path, at: Date.now() });
  }

  /** Every remembered file, with when it was met (ms), oldest first: for an operator (toolexec denied-memory). */
  rows(): Array<MetDenied & { met_at: number }> {
    return this.db.prepare('SELECT dev, ino, born, path, rule, met_at FROM denied_files ORDER BY met_at, path').all() as Array<MetDenied & { met_at: number }>;
  }

  /** The overflow as recorded: the latest birth time of a denied file that could not be remembered, where it was met, when. */
  overflowState(): { born: number; path: string; at: number } | undefined {
    return this.db.prepare('SELECT born, path, at FROM denied_files_overflow WHERE id = 1').get() as { born: number; path: string; at: number } | undefined;
  }

  /** Forgets the overflow (an operator's decision, toolexec denied-memory --clear-overflow); whether there was one. */
  clearOverflow(): boolean {
    return this.db.prepare('DELETE FROM denied_files_overflow WHERE id = 1').run().changes > 0;
  }

  /** The memory as the last process left it, writing here from now on. */
  load(limit?: number, onError?: (e: unknown) => void, opts?: ConstructorParameters<typeof DeniedFileMemory>[4]): DeniedFileMemory {
    const files = this.db.prepare('SELECT dev, ino, born, path, rule FROM denied_files').all() as MetDenied[];
    return new DeniedFileMemory(this, { files, forgottenBorn: this.overflowState()?.born }, limit, onError, opts);
  }
}
