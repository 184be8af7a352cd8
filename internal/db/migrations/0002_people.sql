-- Groups and their members, usage per person per month, and two per-account
-- preferences. Owned by internal/auth.

-- A group widens what its members may do; it never narrows it.
-- permissions is a JSON array of the permission keys the group grants, in
-- the registry's order. limits is a JSON object of quota axes: a key that is
-- absent means the group has no opinion about that axis, 0 means no limit,
-- a positive number is a ceiling. Keys the code does not know are ignored on
-- read and dropped on the next write.
--
-- Anything that names a group must cascade from groups(id) or be cleared by
-- auth's DeleteGroup.
CREATE TABLE groups (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL COLLATE NOCASE UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    permissions TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(permissions) AND json_type(permissions) = 'array'),
    limits      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(limits) AND json_type(limits) = 'object'),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE group_members (
    group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX group_members_user ON group_members(user_id);

-- Tokens charged to a person, one row per calendar month in UTC
-- ('YYYY-MM'): a quota that reset at a different instant for each member of
-- a group would be one nobody can reason about. estimated_tokens is the part
-- of prompt_tokens + completion_tokens that was estimated because the
-- endpoint reported no usage; a total with any estimate in it is shown as
-- approximate.
CREATE TABLE usage (
    user_id           TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    period            TEXT NOT NULL CHECK (period GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]'),
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    replies           INTEGER NOT NULL DEFAULT 0,
    estimated_tokens  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, period)
) STRICT, WITHOUT ROWID;

-- An IANA zone name; '' means the person has not chosen one and the
-- browser's zone is used.
ALTER TABLE users ADD COLUMN timezone TEXT NOT NULL DEFAULT '';

-- The id of the model new chats start with; '' means none chosen. There is
-- no foreign key because models arrive in a later migration, so a value
-- naming a model that no longer exists is possible and reads as "none".
ALTER TABLE users ADD COLUMN default_model_id TEXT NOT NULL DEFAULT '';
