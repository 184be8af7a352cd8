-- The model catalog: connections to OpenAI-compatible servers, the models
-- discovered on them with every administrator choice about each, which
-- groups may use a model, and a marker that the environment's connection
-- was seeded once. Owned by internal/catalog.

-- api_key_sealed and the values inside headers are sealed with the
-- instance's secret key (secret.Box); '' means no key. headers is a JSON
-- object {"Header-Name": "<sealed value>"}: the names stay readable so a
-- page can list them, the values never are. Times are unix milliseconds;
-- last_checked_at 0 means never checked.
CREATE TABLE connections (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL COLLATE NOCASE UNIQUE,
    base_url         TEXT NOT NULL,
    api_key_sealed   TEXT NOT NULL DEFAULT '',
    headers          TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(headers) AND json_type(headers) = 'object'),
    enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    timeout_ms       INTEGER NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 1000 AND 300000),
    last_checked_at  INTEGER NOT NULL DEFAULT 0,
    last_status      TEXT NOT NULL DEFAULT '' CHECK (last_status IN ('', 'ok', 'error')),
    last_error       TEXT NOT NULL DEFAULT '',
    last_duration_ms INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
) STRICT;

-- One row per model a connection listed at some point. A model that stops
-- being listed keeps its row and its settings with available = 0.
--
-- position is the picker's order across all connections, kept dense
-- (0..n-1) by the catalog; pinning does not change it. Not UNIQUE: SQLite
-- checks uniqueness row by row inside an UPDATE, which would make every
-- reordering a dance through temporary values.
--
-- Capabilities are what the server stated, or what an administrator set
-- (caps_source = 'admin', after which discovery leaves them alone); never
-- guessed from a name. embedding = 1 marks a model that serves embeddings
-- rather than chat. context_length 0 means unknown, not small;
-- context_length_source says who gave the number ('' nobody, 'upstream' the
-- server, 'admin' an administrator — discovery never overwrites 'admin').
--
-- The defaults seed new chats. NULL means "no default": the catalog never
-- stores '' for effort, so NULL and 'off' (a default of no reasoning) cannot
-- be confused.
--
-- upstream_* are facts as the server last stated them, shown to the
-- administrator, never edited.
CREATE TABLE models (
    id                        TEXT PRIMARY KEY,
    connection_id             TEXT NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
    upstream_name             TEXT NOT NULL,
    display_name              TEXT NOT NULL DEFAULT '',
    description               TEXT NOT NULL DEFAULT '',
    avatar_file               TEXT NOT NULL DEFAULT '',
    position                  INTEGER NOT NULL CHECK (position >= 0),
    pinned                    INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    enabled                   INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    hidden                    INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    is_default                INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
    available                 INTEGER NOT NULL DEFAULT 1 CHECK (available IN (0, 1)),
    vision                    INTEGER NOT NULL DEFAULT 0 CHECK (vision IN (0, 1)),
    tools                     INTEGER NOT NULL DEFAULT 0 CHECK (tools IN (0, 1)),
    reasoning                 INTEGER NOT NULL DEFAULT 0 CHECK (reasoning IN (0, 1)),
    embedding                 INTEGER NOT NULL DEFAULT 0 CHECK (embedding IN (0, 1)),
    caps_source               TEXT NOT NULL DEFAULT '' CHECK (caps_source IN ('', 'upstream', 'admin')),
    context_length            INTEGER NOT NULL DEFAULT 0 CHECK (context_length >= 0),
    context_length_source     TEXT NOT NULL DEFAULT '' CHECK (context_length_source IN ('', 'upstream', 'admin')),
    temperature               REAL CHECK (temperature IS NULL OR temperature BETWEEN 0 AND 2),
    top_p                     REAL CHECK (top_p IS NULL OR top_p BETWEEN 0 AND 1),
    max_tokens                INTEGER CHECK (max_tokens IS NULL OR max_tokens BETWEEN 1 AND 1000000),
    effort                    TEXT CHECK (effort IS NULL OR effort IN ('low', 'medium', 'high', 'off')),
    system_prompt             TEXT NOT NULL DEFAULT '',
    upstream_owned_by         TEXT NOT NULL DEFAULT '',
    upstream_description      TEXT NOT NULL DEFAULT '',
    upstream_prompt_price     TEXT NOT NULL DEFAULT '',
    upstream_completion_price TEXT NOT NULL DEFAULT '',
    created_at                INTEGER NOT NULL,
    updated_at                INTEGER NOT NULL,
    UNIQUE (connection_id, upstream_name)
) STRICT;
CREATE INDEX models_position ON models(position, id);
-- At most one instance default.
CREATE UNIQUE INDEX models_one_default ON models(is_default) WHERE is_default = 1;
-- The picker's query: usable models in order.
CREATE INDEX models_picker ON models(position, id) WHERE enabled = 1 AND available = 1 AND hidden = 0 AND embedding = 0;

-- A model with no rows here is open to everyone; with rows, only to members
-- of those groups (and administrators).
CREATE TABLE model_groups (
    model_id TEXT NOT NULL REFERENCES models(id) ON DELETE CASCADE,
    group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    PRIMARY KEY (model_id, group_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX model_groups_group ON model_groups(group_id);

-- Set once when the connection from LEMBAS_OPENAI_BASE_URL was created, so
-- deleting that connection does not bring it back on the next start.
-- connection_id is a plain id, not a foreign key: the marker must outlive
-- the connection.
CREATE TABLE catalog_seed (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    connection_id TEXT NOT NULL,
    seeded_at     INTEGER NOT NULL
) STRICT;
