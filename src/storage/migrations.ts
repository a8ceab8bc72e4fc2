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

-- An execution's id carries its row number (seq), so the id needs no index of
-- its own, and every index below grows at its end: random keys (such as the
-- callers' tool_use ids) in an index cost a random page write each, and each
-- page a commit touches is a write to the WAL (measured: a commit of one call
-- costs 60-80 µs of CPU here, most of it per page). Idempotency on
-- (session_id, tool_use_id) is kept in memory per session instead, loaded
-- through executions_session. executions_unfinished holds only calls that have
-- not finished: a fast call, written once finished, never enters it.
CREATE TABLE executions (
  seq            INTEGER PRIMARY KEY,
  id             TEXT NOT NULL,
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
  hook_messages  TEXT,
  timings        TEXT,
  actor          TEXT,
  created_at     INTEGER NOT NULL,
  finished_at    INTEGER,
  duration_ms    REAL
);
CREATE INDEX executions_session ON executions (session_id, seq);
CREATE INDEX executions_unfinished ON executions (seq) WHERE finished_at IS NULL;

CREATE TABLE audit (
  id             INTEGER PRIMARY KEY,
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
  {
    version: 2,
    sql: `
CREATE TABLE permission_requests (
  id             TEXT PRIMARY KEY,
  session_id     TEXT NOT NULL,
  execution_id   TEXT NOT NULL,
  tool_use_id    TEXT NOT NULL,
  tool           TEXT NOT NULL,
  input          TEXT NOT NULL,
  input_digest   TEXT NOT NULL,
  summary        TEXT NOT NULL,
  suggested_rule TEXT NOT NULL,
  reason_type    TEXT NOT NULL,
  reason_detail  TEXT,
  message        TEXT,
  status         TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  resolved_at    INTEGER,
  resolved_by    TEXT,
  answer_message TEXT,
  remember       TEXT
);
CREATE INDEX permission_requests_status ON permission_requests (status, created_at);
CREATE INDEX permission_requests_created ON permission_requests (created_at);

CREATE TABLE rules (
  id          TEXT PRIMARY KEY,
  source      TEXT NOT NULL,
  session_id  TEXT,
  behavior    TEXT NOT NULL,
  rule        TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  created_by  TEXT
);
CREATE INDEX rules_session ON rules (session_id);
`,
  },
  {
    version: 3,
    sql: `
-- Running aggregates behind GET /stats and /metrics, flushed every few
-- seconds, so that neither ever scans executions or audit. One row per tool:
-- counts per (status, error class) and a sparse latency histogram, as JSON.
-- The layout column names the histogram's bucket layout; rows of another
-- layout are not loaded.
CREATE TABLE call_stats (
  tool        TEXT PRIMARY KEY,
  layout      TEXT NOT NULL,
  calls       INTEGER NOT NULL,
  outcomes    TEXT NOT NULL,
  histogram   TEXT NOT NULL,
  sum_ms      REAL NOT NULL,
  min_ms      REAL,
  max_ms      REAL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE decision_stats (
  reason_type TEXT NOT NULL,
  behavior    TEXT NOT NULL,
  count       INTEGER NOT NULL,
  PRIMARY KEY (reason_type, behavior)
) WITHOUT ROWID;

CREATE TABLE stats_meta (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
) WITHOUT ROWID;

-- One row, rewritten by the readiness probe: a real committed write.
CREATE TABLE health_probe (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  ts  INTEGER NOT NULL
);
`,
  },
  {
    version: 4,
    sql: `
-- For an input stored cut, the digest of its keys-sorted JSON: a retry of the
-- call whose keys come back in another order is told from another call.
ALTER TABLE executions ADD COLUMN input_key TEXT;
`,
  },
  {
    version: 5,
    sql: `
-- The denied files met by identity (permissions/denied-memory.ts), so that a
-- file that lost its denied name while the service ran (a tar member N linked
-- to .env, then a member .env) is still known after a restart. One row per
-- inode: an inode reused by another denied file replaces its row; born (the
-- birth time, in ms, 0 where the file system keeps none) tells a reused inode
-- from the file met. path and rule say where and as what it was met. Written
-- only when a denied file is met for the first time (or moved), and at most
-- DENIED_MEMORY_LIMIT rows.
CREATE TABLE denied_files (
  dev     INTEGER NOT NULL,
  ino     INTEGER NOT NULL,
  born    REAL NOT NULL,
  path    TEXT NOT NULL,
  rule    TEXT NOT NULL,
  met_at  INTEGER NOT NULL,
  PRIMARY KEY (dev, ino)
) WITHOUT ROWID;

-- Set once a denied file was met past that limit: born is the latest birth
-- time of such a file, whose files may be denied ones no longer remembered.
CREATE TABLE denied_files_overflow (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  born    REAL NOT NULL,
  path    TEXT NOT NULL,
  at      INTEGER NOT NULL
);
`,
  },
];
