-- Chats and their messages.
--
-- A chat is created together with its first message (there is no empty
-- chat). Its model, system prompt, effort and sampling parameters are the
-- chat's own: the model's defaults are copied in at creation and never
-- consulted again, so clearing one here means "send nothing".

CREATE TABLE chats (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title           TEXT NOT NULL DEFAULT '',
    -- '' until named; 'auto' when a model named it, 'prompt' when the
    -- first prompt had to stand in, 'user' when a person renamed it.
    title_source    TEXT NOT NULL DEFAULT '' CHECK (title_source IN ('', 'auto', 'prompt', 'user')),
    kind            TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'agent')),
    -- Our model id. Not a foreign key: deleting a model must leave its
    -- chats readable; a chat whose model is gone asks for another.
    model_id        TEXT NOT NULL DEFAULT '',
    system_prompt   TEXT NOT NULL DEFAULT '',
    -- NULL: no effort is sent. 'off' is a real choice.
    effort          TEXT CHECK (effort IS NULL OR effort IN ('low', 'medium', 'high', 'off')),
    -- 1 once the person chose an effort here, clearing included: a model
    -- change then never seeds one underneath their choice.
    effort_chosen   INTEGER NOT NULL DEFAULT 0 CHECK (effort_chosen IN (0, 1)),
    temperature     REAL,
    top_p           REAL,
    max_tokens      INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    last_message_at INTEGER NOT NULL
) STRICT;
CREATE INDEX chats_user_recent ON chats(user_id, last_message_at DESC, id);

CREATE TABLE messages (
    id                TEXT PRIMARY KEY,
    chat_id           TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    role              TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    -- What was written: the person's text, or the reply's Markdown.
    content           TEXT NOT NULL DEFAULT '',
    -- The reply rendered once, sanitised, when it finished.
    html              TEXT NOT NULL DEFAULT '',
    -- Never sent back to a model.
    reasoning         TEXT NOT NULL DEFAULT '',
    reasoning_ms      INTEGER NOT NULL DEFAULT 0,
    -- The reasoning rendered once, sanitised, when the reply finished.
    reasoning_html    TEXT NOT NULL DEFAULT '',
    -- user: done or queued. assistant: streaming, done, stopped, error,
    -- interrupted (the server stopped while it was being written).
    status            TEXT NOT NULL CHECK (status IN ('done', 'queued', 'streaming', 'stopped', 'error', 'interrupted')),
    error             TEXT NOT NULL DEFAULT '',
    model_id          TEXT NOT NULL DEFAULT '',
    model_name        TEXT NOT NULL DEFAULT '',
    -- Metrics; NULL when unknown.
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    -- What the conversation occupies after this reply: the last request's
    -- prompt plus what it wrote.
    context_tokens    INTEGER,
    tokens_estimated  INTEGER NOT NULL DEFAULT 0 CHECK (tokens_estimated IN (0, 1)),
    context_length    INTEGER NOT NULL DEFAULT 0,
    ttft_ms           INTEGER,
    duration_ms       INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
) STRICT;
CREATE INDEX messages_chat_order ON messages(chat_id, created_at, id);
CREATE INDEX messages_status ON messages(status) WHERE status IN ('streaming', 'queued');
