/**
 * Versioned schema migrations, applied in order inside one transaction each;
 * `PRAGMA user_version` records the last one applied. Never edit a migration
 * that has shipped: add the next one.
 */
export interface Migration {
  version: number;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  mode        TEXT NOT NULL,
  cwd         TEXT NOT NULL,
  todos       TEXT NOT NULL DEFAULT '[]',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE executions (
  id             TEXT PRIMARY KEY,
  session_id     TEXT NOT NULL,
  tool_use_id    TEXT NOT NULL,
  tool           TEXT NOT NULL,
  status         TEXT NOT NULL,
  input_digest   TEXT NOT NULL,
  input          TEXT,
  decision       TEXT,
  error_class    TEXT,
  is_error       INTEGER NOT NULL DEFAULT 0,
  result_id      TEXT,
  result_block   TEXT,
  preview        TEXT,
  hook_messages  TEXT,
  timings        TEXT,
  actor          TEXT,
  created_at     INTEGER NOT NULL,
  finished_at    INTEGER,
  duration_ms    REAL,
  UNIQUE (session_id, tool_use_id)
);
CREATE INDEX executions_session ON executions (session_id, created_at);
CREATE INDEX executions_tool ON executions (tool, created_at);
CREATE INDEX executions_status ON executions (status, created_at);
CREATE INDEX executions_created ON executions (created_at);

CREATE TABLE audit (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  ts             INTEGER NOT NULL,
  session_id     TEXT NOT NULL,
  tool_use_id    TEXT NOT NULL,
  execution_id   TEXT NOT NULL,
  tool           TEXT NOT NULL,
  behavior       TEXT NOT NULL,
  reason_type    TEXT NOT NULL,
  reason_detail  TEXT,
  actor          TEXT,
  input_digest   TEXT NOT NULL
);
CREATE INDEX audit_ts ON audit (ts);
CREATE INDEX audit_session ON audit (session_id, id);
CREATE INDEX audit_execution ON audit (execution_id);

CREATE TABLE results (
  id            TEXT PRIMARY KEY,
  session_id    TEXT NOT NULL,
  execution_id  TEXT,
  tool          TEXT NOT NULL,
  media_type    TEXT NOT NULL DEFAULT 'text/plain; charset=utf-8',
  total_chars   INTEGER NOT NULL DEFAULT 0,
  total_bytes   INTEGER NOT NULL DEFAULT 0,
  total_lines   INTEGER NOT NULL DEFAULT 0,
  chunk_count   INTEGER NOT NULL DEFAULT 0,
  complete      INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL
);
CREATE INDEX results_created ON results (created_at);

CREATE TABLE result_chunks (
  result_id   TEXT NOT NULL REFERENCES results (id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,
  byte_start  INTEGER NOT NULL,
  line_start  INTEGER NOT NULL,
  data        TEXT NOT NULL,
  PRIMARY KEY (result_id, seq)
) WITHOUT ROWID;
`,
  },
];
